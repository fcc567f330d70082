"""`clean` and `index add` killed (SIGKILL) at random moments leave the old state or
the new one, never a mix: clean's ``-o`` file (and its removal log) is the earlier
file or the complete new one, and the next clean leaves no temporary file behind;
the index opens and answers with the old documents or with old and new, and the next
``add`` works (the writer lock died with the process).

The kill moments are spread over the run from the end of the interpreter's start-up
(measured with ``--help``) to a little past the end of an unkilled run."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from repetend._atomic import LEFTOVER_GRACE
from repetend.index import NearDupIndex
from repetend.neardup import NearDupConfig
from repetend.synth import weblike

CLI = [sys.executable, "-m", "repetend.cli"]
TRIALS = 6


def _run(*args):
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, timeout=300)


def _timed(*args) -> float:
    t0 = time.perf_counter()
    r = _run(*args)
    assert r.returncode == 0, r.stderr
    return time.perf_counter() - t0


def _kill_at(args, seconds: float, after=None) -> int:
    """Run the command; SIGKILL it *seconds* after its start, or with *after* (a
    condition on the files, polled) *seconds* after the condition holds."""
    proc = subprocess.Popen([*CLI, *map(str, args)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    if after is not None:
        t0 = time.monotonic()
        while not after() and proc.poll() is None and time.monotonic() - t0 < 120:
            time.sleep(0.005)
    time.sleep(seconds)
    proc.send_signal(signal.SIGKILL)
    return proc.wait(timeout=60)


def _moment(rng, trial, startup, seconds):
    """(delay, condition) of a trial: even trials at a random time of the whole run,
    odd ones a random part of a second after the command began to write."""
    if trial % 2 == 0:
        return rng.uniform(0.8 * startup, 1.05 * seconds), None
    return rng.uniform(0.0, 0.4), True


@pytest.fixture(scope="module")
def startup() -> float:
    return _timed("--help")


@pytest.mark.slow
def test_a_killed_clean_leaves_the_old_output_or_the_new_one(tmp_path, startup):
    corpus = weblike(200, seed=31).write(tmp_path / "c")["corpus"]
    scan = tmp_path / "scan"
    assert _run("scan", corpus, "-o", scan, "--min-docs", "5", "--no-templates", "--no-report",
                "-q").returncode == 0
    new, old = tmp_path / "new.jsonl", tmp_path / "old.jsonl"
    _timed("clean", corpus, "--scan", scan, "-o", new, "-q")
    seconds = _timed("clean", corpus, "--scan", scan, "-o", new, "-q")   # warm
    assert _run("clean", corpus, "--scan", scan, "-o", old, "--keep-boilerplate",
                "-q").returncode == 0
    log = ".removed.jsonl"
    want = {"old": (old.read_bytes(), old.with_name(old.name + log).read_bytes()),
            "new": (new.read_bytes(), new.with_name(new.name + log).read_bytes())}
    assert want["old"][0] != want["new"][0]
    rng = random.Random(11)
    outcomes = []
    trial = -1
    # the trials, then (a fast machine can finish before every kill) earlier and
    # earlier kills until one lands before the end
    while trial + 1 < TRIALS or ("old" not in outcomes and trial + 1 < 2 * TRIALS):
        trial += 1
        d = tmp_path / f"t{trial}"
        d.mkdir()
        out = d / "x.jsonl"
        shutil.copy(old, out)
        shutil.copy(old.with_name(old.name + log), out.with_name(out.name + log))
        if trial < TRIALS:
            delay, event = _moment(rng, trial, startup, seconds)
        else:
            delay, event = (0.9 - 0.12 * (trial - TRIALS)) * seconds, None
        writing = (lambda: any(p.suffix == ".tmp" for p in d.iterdir())) if event else None
        _kill_at(["clean", corpus, "--scan", scan, "-o", out, "-q"], delay, writing)
        got_out = out.read_bytes()
        got_log = out.with_name(out.name + log).read_bytes()
        state = [k for k, (o, _) in want.items() if o == got_out]
        assert state, f"trial {trial}: the output is neither the old file nor the new one"
        assert got_log in (want["old"][1], want["new"][1]), f"trial {trial}: a partial log"
        outcomes.append(state[0])
        if trial < 2:
            time.sleep(LEFTOVER_GRACE)       # then a killed writer's temporary is removable
            again = _run("clean", corpus, "--scan", scan, "-o", out, "-q")
            assert again.returncode == 0, again.stderr
            assert out.read_bytes() == want["new"][0]
            assert sorted(p.name for p in d.iterdir()) == ["x.jsonl", "x.jsonl" + log]
    print(f"clean {seconds:.1f} s, start-up {startup:.1f} s; outcomes:", outcomes)
    assert "old" in outcomes, outcomes          # some kills did land before the end


def _texts(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [f"k{i}" for i in range(3000)]
    return [" ".join(rng.choice(words, 200)) for _ in range(n)]


@pytest.mark.slow
def test_a_killed_index_add_leaves_the_old_set_or_the_new_one(tmp_path, startup):
    old_texts, new_texts = _texts(1, 300), _texts(2, 3000)
    base = tmp_path / "base"
    NearDupIndex.build(old_texts, base, NearDupConfig(threshold=0.7),
                       ids=[f"old{i}" for i in range(300)])
    batch = tmp_path / "new.jsonl"
    batch.write_text("".join(json.dumps({"id": f"new{i}", "text": t}) + "\n"
                             for i, t in enumerate(new_texts)), encoding="utf-8")
    probe = tmp_path / "probe"
    shutil.copytree(base, probe)
    seconds = _timed("index", "add", probe, batch, "-q")
    before = {p.name for p in base.rglob("*")}
    want_new = NearDupIndex.open(probe)
    new_ids = want_new.doc_ids(range(want_new.n_docs))
    old_ids = new_ids[:300]
    rng = random.Random(12)
    outcomes = []
    for trial in range(TRIALS):
        idx = tmp_path / f"i{trial}"
        shutil.copytree(base, idx)
        delay, event = _moment(rng, trial, startup, seconds)
        writing = (lambda: {p.name for p in idx.rglob("*")} - before) if event else None
        _kill_at(["index", "add", idx, batch, "-q"], delay, writing)
        got = NearDupIndex.open(idx)
        ids = got.doc_ids(range(got.n_docs))
        assert ids in (old_ids, new_ids), f"trial {trial}: {got.n_docs} documents"
        state = "new" if ids == new_ids else "old"
        outcomes.append(state)
        r = got.query([new_texts[7], old_texts[5]], fragments=False, phrases=False)
        ans = [[m["doc_id"] for m in d["near_duplicates"]] for d in r.documents]
        assert ans == [["new7"] if state == "new" else [], ["old5"]], (trial, ans)
        if trial < 2:
            assert _run("index", "add", idx, batch, "-q").returncode == 0   # the lock is free
            assert NearDupIndex.open(idx).n_docs == len(ids) + 3000
    print(f"add {seconds:.1f} s, start-up {startup:.1f} s; outcomes:", outcomes)
    assert "old" in outcomes, outcomes
