"""``repetend scan`` on a real Spark standalone cluster: a master and two workers
started with pyspark's ``spark-class`` on free ports (session fixture), an unsorted
corpus, every table equal to the local scan; a Python worker killed mid-run is
retried by Spark and the tables do not change."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark_cluster
if shutil.which("java") is None:  # pragma: no cover - depends on the machine
    pytest.skip("a Spark standalone cluster needs a Java runtime", allow_module_level=True)

from test_spark_scan import _rows, assert_same_tables, shuffled_and_reference  # noqa: E402

from repetend.jobs import ScanConfig, scan  # noqa: E402
from repetend.phrases import PhraseConfig  # noqa: E402


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    """``spark://127.0.0.1:P`` of a master with two one-core workers."""
    from repetend.spark.standalone import standalone_cluster

    try:
        with standalone_cluster(2, cores=1, memory="1g",
                                workdir=tmp_path_factory.mktemp("cluster")) as url:
            yield url
    except RuntimeError as exc:  # pragma: no cover - a machine that cannot run daemons
        pytest.skip(f"no standalone cluster: {exc}")


def _scan_cli(corpus, out, master, extra=()):
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen(
        [sys.executable, "-c", "from repetend.cli import main; main()", "scan", str(corpus),
         "--out", str(out), "--engine", "spark", "--spark-master", master, "--no-report",
         "--min-docs", "4", "-q", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _python_workers() -> list:
    """pyspark Python workers of this machine's executors (children of a
    ``pyspark.daemon`` whose executor JVM a Worker of the fixture started)."""
    import psutil

    out = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            cmd = " ".join(p.info["cmdline"] or [])
            if "pyspark.daemon" in cmd:
                out.extend(p.children())
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


def test_scan_on_a_standalone_cluster_equals_the_local_scan(spark_cluster, tmp_path):
    shuffled, ref = shuffled_and_reference(tmp_path, _rows(80, seed=7), seed=3)
    scan([ref], tmp_path / "local", ScanConfig(phrases=PhraseConfig(min_docs=4), report=False))
    run = _scan_cli(shuffled, tmp_path / "cluster", spark_cluster)
    # kill Python workers of the executors while the job runs: Spark retries the tasks
    killed: list[int] = []

    def killer():
        deadline = time.monotonic() + 240
        while run.poll() is None and time.monotonic() < deadline and len(killed) < 2:
            for w in _python_workers():
                if w.pid not in killed:
                    try:
                        w.kill()
                        killed.append(w.pid)
                    except Exception:  # noqa: BLE001 - it may have ended meanwhile
                        pass
                    time.sleep(3)
                    break
            time.sleep(0.3)

    th = threading.Thread(target=killer, daemon=True)
    th.start()
    stdout, stderr = run.communicate(timeout=600)
    th.join(timeout=5)
    assert run.returncode == 0, stderr
    assert stderr.strip() == "", stderr          # -q on a cluster: nothing either
    assert killed, "no Python worker was killed during the run"
    assert_same_tables(tmp_path / "cluster", tmp_path / "local")
