"""A Spark standalone cluster on this machine: one master, N workers.

pyspark's wheel has no ``sbin/start-*.sh`` scripts, but its ``bin/spark-class``
starts the standalone daemons.  :func:`standalone_cluster` starts a master and
*workers* workers on free ports of 127.0.0.1, waits until every worker has
registered with the master, yields the master URL and stops the daemons again
(their own process groups, by pid).  The tests and ``benchmarks/bench_spark.py``
use it; on a real cluster the daemons are the cluster manager's business.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

__all__ = ["spark_home", "standalone_cluster"]


def spark_home() -> Path:
    """The pyspark package directory (it holds ``bin/spark-class`` and the jars)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)


@contextlib.contextmanager
def standalone_cluster(workers: int = 2, *, cores: int = 1, memory: str = "1g",
                       timeout: float = 120.0, workdir: str | os.PathLike | None = None
                       ) -> Iterator[str]:
    """Start a master and *workers* workers (each *cores* cores, *memory*), yield the
    master URL ``spark://127.0.0.1:PORT``, stop them on exit.

    Raises
    ------
    RuntimeError
        Java is missing, a daemon exits, or the workers have not all registered
        within *timeout* seconds (the message has the end of the master's log).
    """
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise RuntimeError("a Spark standalone cluster needs a Java runtime (java not found)")
    home = spark_home()
    spark_class = home / "bin" / "spark-class"
    own_tmp = workdir is None
    base = Path(tempfile.mkdtemp(prefix="repetend-spark-")) if own_tmp else Path(workdir)
    base.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_PYTHON=sys.executable, SPARK_WORKER_DIR=str(base / "work"))
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen] = []
    logs: list[Path] = []

    def launch(name: str, args: list[str]) -> None:
        log = base / f"{name}.log"
        logs.append(log)
        with open(log, "wb") as f:
            procs.append(subprocess.Popen([str(spark_class), *args], stdout=f,
                                          stderr=subprocess.STDOUT, env=env,
                                          start_new_session=True))

    try:
        launch("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                          "--port", str(port), "--webui-port", "0"])
        for i in range(workers):
            launch(f"worker{i}", ["org.apache.spark.deploy.worker.Worker", url, "--cores",
                                  str(cores), "--memory", memory, "--webui-port", "0",
                                  "--host", "127.0.0.1",
                                  "--work-dir", str(base / f"work{i}")])
        deadline = time.monotonic() + timeout
        while True:
            text = logs[0].read_text(errors="replace") if logs[0].exists() else ""
            if text.count("Registering worker") >= workers:
                break
            dead = [p for p in procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                why = "a daemon exited" if dead else f"not registered within {timeout:g} s"
                raise RuntimeError(f"Spark standalone cluster: {why}; master log:\n"
                                   + "\n".join(text.splitlines()[-15:]))
            time.sleep(0.5)
        yield url
    finally:
        _stop(procs[::-1])
        if own_tmp:
            shutil.rmtree(base, ignore_errors=True)
