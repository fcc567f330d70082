"""A scan killed (SIGKILL) at any moment over an earlier scan of another corpus
never makes `clean` write a wrong corpus: it writes exactly what a clean from a
whole scan writes, or it stops with an error (the directory mixes two runs, or the
input is not the scanned one).  A rerun with --reuse then gives the whole scan."""

from __future__ import annotations

import filecmp
import random
import signal
import subprocess
import sys
import time

import pytest

from repetend.synth import weblike

CLI = [sys.executable, "-m", "repetend.cli"]


def _run(*args, **kw):
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, timeout=300, **kw)


def clean_outcome(corpus, scan_dir, out, ref, trial, run=None) -> str:
    """`clean` of a scan directory a kill may have left: "same" (it wrote exactly the
    whole scan's corpus *ref*) or "refused" (exit 2, an error, nothing written)."""
    r = (run or _run)("clean", corpus, "--scan", scan_dir, "-o", out, "-q")
    if r.returncode == 0:
        assert filecmp.cmp(out, ref, shallow=False), f"trial {trial}: a wrong corpus"
        return "same"
    assert r.returncode == 2 and b"error: " in r.stderr, r.stderr
    assert not out.exists()
    return "refused"


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    root = tmp_path_factory.mktemp("kill")
    a = weblike(300, seed=21).write(root / "a")["corpus"]
    b = weblike(150, seed=22).write(root / "b")["corpus"]
    whole = root / "whole"
    t0 = time.perf_counter()
    assert _run("scan", a, "-o", whole, "-q").returncode == 0
    seconds = time.perf_counter() - t0
    ref = root / "ref.jsonl"
    assert _run("clean", a, "--scan", whole, "-o", ref, "-q").returncode == 0
    return a, b, ref, seconds


def test_a_killed_scan_never_makes_clean_write_a_wrong_corpus(corpora, tmp_path):
    a, b, ref, seconds = corpora
    rng = random.Random(7)
    outcomes = []
    for trial in range(5):
        k = tmp_path / f"k{trial}"
        assert _run("scan", b, "-o", k, "-q").returncode == 0
        proc = subprocess.Popen([*CLI, "scan", str(a), "-o", str(k), "-q"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.1, 1.1 * seconds))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        outcomes.append(clean_outcome(a, k, tmp_path / f"c{trial}.jsonl", ref, trial))
        again = _run("scan", a, "-o", k, "--reuse", "-q")
        assert again.returncode == 0, again.stderr
        out2 = tmp_path / f"d{trial}.jsonl"
        assert _run("clean", a, "--scan", k, "-o", out2, "-q").returncode == 0
        assert filecmp.cmp(out2, ref, shallow=False), f"trial {trial}: --reuse after the kill"
    print("outcomes:", outcomes)
    assert "refused" in outcomes, outcomes     # some kills did land mid-scan


def test_a_killed_first_scan_is_refused_by_clean(corpora, tmp_path):
    """A first scan killed after some stages (near-duplicates written, phrases not
    yet) leaves a directory `clean` must not take for a whole scan: it would drop
    the duplicates and cut no boilerplate."""
    a, _, ref, seconds = corpora
    rng = random.Random(11)
    outcomes = []
    for trial in range(4):
        k = tmp_path / f"first{trial}"
        proc = subprocess.Popen([*CLI, "scan", str(a), "-o", str(k), "-q"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 0.9 * seconds))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        outcomes.append(clean_outcome(a, k, tmp_path / f"f{trial}.jsonl", ref, trial))
    print("outcomes:", outcomes)
    assert "refused" in outcomes, outcomes


def test_the_running_mark_names_an_unfinished_scan(corpora, tmp_path):
    from repetend.scandir import RUNNING, unfinished_scan

    a, _, ref, _ = corpora
    k = tmp_path / "whole"
    assert _run("scan", a, "-o", k, "-q").returncode == 0
    assert not (k / RUNNING).exists() and unfinished_scan(k) is None
    (k / RUNNING).touch()                         # what a kill after the last stage leaves
    assert "did not finish" in unfinished_scan(k)
    out = tmp_path / "c.jsonl"
    r = _run("clean", a, "--scan", k, "-o", out, "-q")
    assert r.returncode == 2 and b"did not finish" in r.stderr and not out.exists()
    page = tmp_path / "r.html"
    r = _run("report", k, "-o", page)
    assert r.returncode == 2 and b"did not finish" in r.stderr and not page.exists()
    assert _run("scan", a, "-o", k, "--reuse", "-q").returncode == 0
    assert _run("report", k, "-o", page).returncode == 0 and page.exists()
    assert not (k / RUNNING).exists()
    assert _run("clean", a, "--scan", k, "-o", out, "-q").returncode == 0
    assert filecmp.cmp(out, ref, shallow=False)
