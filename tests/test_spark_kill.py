"""A Spark scan killed (SIGKILL of the driver) at any moment: `clean` refuses the
directory or writes exactly the whole scan's corpus; a rerun with --reuse finishes
(reusing a complete corpus dataset, removing a half-written one), and the driver's
JVM does not outlive the killed process."""

from __future__ import annotations

import filecmp
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("pyspark")
if shutil.which("java") is None:  # pragma: no cover - depends on the machine
    pytest.skip("the Spark tests need a Java runtime", allow_module_level=True)

from test_scan_kill import clean_outcome  # noqa: E402
from test_spark_scan import _rows, shuffled_and_reference  # noqa: E402

CLI = [sys.executable, "-m", "repetend.cli"]
SPARK = ["--engine", "spark", "--spark-master", "local[2]", "--min-docs", "4", "-q"]


def _run(*args):
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, timeout=600)


def test_a_killed_spark_scan_never_makes_clean_write_a_wrong_corpus(tmp_path):
    import psutil

    shuffled, _ = shuffled_and_reference(tmp_path, _rows(80, seed=13), seed=2)
    whole = tmp_path / "whole"
    t0 = time.perf_counter()
    assert _run("scan", shuffled, "-o", whole, *SPARK).returncode == 0
    seconds = time.perf_counter() - t0
    ref = tmp_path / "ref.jsonl"
    assert _run("clean", shuffled, "--scan", whole, "-o", ref, "-q").returncode == 0
    rng = random.Random(5)
    outcomes = []
    for trial in range(2):
        k = tmp_path / f"k{trial}"
        proc = subprocess.Popen([*CLI, "scan", str(shuffled), "-o", str(k), *SPARK],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        me = psutil.Process(proc.pid)
        deadline = time.monotonic() + rng.uniform(0.15, 0.6) * seconds   # (a loaded machine slows the killed run too)
        kids: set[int] = set()
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                kids |= {c.pid for c in me.children(recursive=True)}
            except psutil.Error:
                pass
            time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        outcomes.append(clean_outcome(shuffled, k, tmp_path / f"c{trial}.jsonl", ref, trial,
                                      run=_run))
        # the driver JVM (a child of the killed process) ends with it
        end = time.monotonic() + 30
        while time.monotonic() < end and any(psutil.pid_exists(p) and
                                             psutil.Process(p).status() != psutil.STATUS_ZOMBIE
                                             for p in kids):
            time.sleep(0.5)
        alive = [p for p in kids if psutil.pid_exists(p)
                 and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        for p in alive:   # do not leave them to the next test
            os.kill(p, signal.SIGKILL)
        assert not alive, f"trial {trial}: processes of the killed scan still run: {alive}"
        # what a kill in the middle of the datasets' writes leaves (the kill above
        # may or may not have landed there): --reuse removes it
        # (the corpus dataset's, and the scratch datasets of the one-task stages)
        left = (".corpus.tmp-planted", ".phrases-islands.tmp-planted", ".templates-widened.tmp-planted")
        for name in left:
            (k / name).mkdir(parents=True, exist_ok=True)
            (k / name / "part-00000.parquet").write_bytes(b"PAR1")
        again = _run("scan", shuffled, "-o", k, "--reuse", *SPARK)
        assert again.returncode == 0, again.stderr
        assert not [p for name in left for p in k.glob(name.replace("planted", "*"))]
        out2 = tmp_path / f"d{trial}.jsonl"
        assert _run("clean", shuffled, "--scan", k, "-o", out2, "-q").returncode == 0
        assert filecmp.cmp(out2, ref, shallow=False), f"trial {trial}: --reuse after the kill"
    print("outcomes:", outcomes)
    assert "refused" in outcomes, outcomes     # the kills did land mid-scan
