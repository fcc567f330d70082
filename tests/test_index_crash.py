"""A crash during ``index add`` or ``index build --overwrite`` leaves the index
readable at its previous state (or, for a build, at its new one).

The ``add`` runs in a subprocess (the real CLI code path) with the test hook
``REPETEND_INDEX_TEST_PAUSE``: it sleeps after the new segment is
written and before the manifest is replaced; the test kills it with SIGKILL
in that window (and, in a second case, while the segment itself is being
written) and then checks the index.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from repetend.index import NearDupIndex
from repetend.errors import ParameterError
from repetend.index.format import BUILDING, SLEEP_ENV, clean_leftovers, writer_lock
from repetend.neardup import NearDupConfig


def _texts(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [f"c{i}" for i in range(500)]
    return [" ".join(rng.choice(words, 30)) for _ in range(n)]


def _write_jsonl(path: Path, texts: list[str], prefix: str) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i, t in enumerate(texts):
            f.write(json.dumps({"id": f"{prefix}{i}", "text": t}) + "\n")
    return path


def _start_add(index: Path, inp: Path, sleep: str | None) -> subprocess.Popen:
    env = dict(os.environ)
    if sleep is not None:
        env[SLEEP_ENV] = sleep
    return subprocess.Popen([sys.executable, "-m", "repetend.cli.index_cmd", "index", "add",
                             str(index), str(inp), "-q"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for(cond, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    t0 = time.monotonic()
    while not cond():
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"add finished before the kill point: {out!r} {err!r}")
        if time.monotonic() - t0 > timeout:
            proc.kill()
            raise AssertionError("timed out waiting for the kill point")
        time.sleep(0.02)


def _state(idx: NearDupIndex, probes: list[str]):
    res = idx.query(probes, fragments=False)
    return idx.n_docs, idx.generation, [sorted(m["doc_index"] for m in d["near_duplicates"])
                                        for d in res.documents]


@pytest.mark.parametrize("where", ["before_manifest", "inside_segment"])
def test_kill_during_add_keeps_previous_state(tmp_path, where):
    old = _texts(1, 60)
    new = _texts(2, 40) + old[:5]  # includes copies of old documents
    idx = NearDupIndex.build(old, tmp_path / "idx", NearDupConfig(threshold=0.7))
    probes = old[:3] + new[:3]
    before = _state(idx, probes)
    segdir = tmp_path / "idx" / "segments"
    names_before = {p.name for p in segdir.iterdir()}
    inp = _write_jsonl(tmp_path / "new.jsonl", new, "n")

    if where == "before_manifest":
        proc = _start_add(tmp_path / "idx", inp, "manifest=60")
        # the finished segment directory (renamed into place) appears, then the pause
        _wait_for(lambda: any(not p.name.startswith(".") and p.name not in names_before
                              for p in segdir.iterdir()), proc)
    else:
        proc = _start_add(tmp_path / "idx", inp, "segment=60")
        # the segment's temporary directory holds its files, then the pause
        _wait_for(lambda: any(p.name.startswith(".") and (p / "meta.json").is_file()
                              for p in segdir.iterdir()), proc)
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)  # reaps it and closes the pipes
    assert proc.returncode == -signal.SIGKILL

    # the index opens at its previous state and answers as before
    reopened = NearDupIndex.open(tmp_path / "idx")
    assert _state(reopened, probes) == before
    assert reopened.n_docs == 60

    # the next add succeeds, removes the leftover, and finds the copies of old documents
    r = reopened.add(new, ids=[f"n{i}" for i in range(len(new))])
    assert reopened.n_docs == 105 and reopened.n_segments == 2
    found = {(row["a_index"], row["b_index"]) for row in r.pairs.to_pylist()}
    assert {(i, 60 + 40 + i) for i in range(5)} <= found
    names = {p.name for p in segdir.iterdir()}
    assert len(names) == 2 and not any(n.startswith(".") for n in names)


def test_add_in_subprocess_commits(tmp_path):
    """Without the kill the same subprocess commits: the kill above was what stopped it."""
    old = _texts(3, 20)
    NearDupIndex.build(old, tmp_path / "idx")
    inp = _write_jsonl(tmp_path / "new.jsonl", _texts(4, 10) + old[:2], "n")
    proc = _start_add(tmp_path / "idx", inp, None)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    assert "12 documents added (20 -> 32" in out.decode()
    assert NearDupIndex.open(tmp_path / "idx").n_docs == 32


# -- `index build --overwrite`: the new index is built aside and swapped in ------------------

N_DOCS, SEGMENT_DOCS, TRIALS = 240, 20, 12


def _start_build(index: Path, inp: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "repetend", "index", "build", str(inp),
                             "-o", str(index), "--overwrite", "-q",
                             "--segment-docs", str(SEGMENT_DOCS)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _which(index: Path, texts: dict[str, list[str]]) -> str:
    """Which corpus the index at *index* holds, checked by opening it and querying
    it: all of one corpus's documents, in order, and nothing else."""
    idx = NearDupIndex.open(index)
    ids = idx.doc_ids(np.arange(idx.n_docs))
    held = [k for k, t in texts.items() if ids == [f"{k}{i}" for i in range(len(t))]]
    assert len(held) == 1, f"the index holds neither corpus: {idx.n_docs} documents {ids[:3]}…"
    (k,), other = held, next(o for o in texts if o != held[0])
    res = idx.query(texts[k][:2] + texts[other][:2], fragments=False)
    found = [[m["doc_id"] for m in d["near_duplicates"]] for d in res.documents]
    assert found == [[f"{k}0"], [f"{k}1"], [], []]
    return k


def _siblings(index: Path) -> list[str]:
    return sorted(p.name for p in index.parent.iterdir() if p.name.startswith(f".{index.name}."))


def test_overwrite_killed_at_random_moments_leaves_old_or_new(tmp_path):
    """SIGKILL a real `index build --overwrite` at random moments: the index then
    always opens and answers with all of the old corpus or all of the new one."""
    texts = {"a": _texts(11, N_DOCS), "b": _texts(12, N_DOCS)}
    inputs = {k: _write_jsonl(tmp_path / f"{k}.jsonl", t, k) for k, t in texts.items()}
    index = tmp_path / "idx"
    NearDupIndex.build(texts["a"], index, ids=[f"a{i}" for i in range(N_DOCS)])
    t0 = time.monotonic()
    proc = _start_build(index, inputs["b"])  # reference run: how long a whole build takes
    _, err = proc.communicate(timeout=300)
    duration = time.monotonic() - t0
    assert proc.returncode == 0, err.decode()
    state = _which(index, texts)
    assert state == "b"

    rng = np.random.default_rng(20240611)
    outcomes, aside = [], 0
    trial = -1
    # the trials, then (a fast machine can finish before every kill) earlier kills
    # until one lands while a build is in progress
    while trial + 1 < TRIALS or (aside == 0 and trial + 1 < 2 * TRIALS):
        trial += 1
        target = "a" if state == "b" else "b"
        proc = _start_build(index, inputs[target])
        delay = (rng.uniform(0.3, 1.05) if trial < TRIALS else rng.uniform(0.45, 0.8)) * duration
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.005)
        killed = proc.poll() is None
        if killed:
            aside += any(n.endswith(".tmp") for n in _siblings(index))  # a build in progress
            os.kill(proc.pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
        got = _which(index, texts)
        assert got in (state, target)
        if not killed:
            assert proc.returncode == 0 and got == target, err.decode()
        outcomes.append((round(delay, 2), killed, got == target))
        state = got
    print(f"reference build {duration:.2f} s; (kill time, killed, new index): {outcomes}")
    assert aside >= 1, f"no kill landed while a build was in progress: {outcomes}"

    # leftovers of killed builds are never the index; once they are old, the next
    # build removes them
    for name in _siblings(index):
        os.utime(index.parent / name, (time.time() - 3600,) * 2)
    target = "a" if state == "b" else "b"
    proc = _start_build(index, inputs[target])
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    assert _which(index, texts) == target
    assert _siblings(index) == []


def _aside(tmp_path: Path, texts: list[str], prefix: str) -> Path:
    """A complete new index in a build's temporary sibling of tmp_path/idx."""
    tmp = tmp_path / ".idx.k3x9q2ab.tmp"
    NearDupIndex.build(texts, tmp, ids=[f"{prefix}{i}" for i in range(len(texts))])
    (tmp / BUILDING).touch()
    return tmp


def test_open_recovers_a_swap_killed_between_its_renames(tmp_path):
    """The kill between the two renames, simulated by doing the first one only."""
    texts = {"a": _texts(21, 30), "b": _texts(22, 30)}
    index = tmp_path / "idx"
    NearDupIndex.build(texts["a"], index, ids=[f"a{i}" for i in range(30)])
    tmp = _aside(tmp_path, texts["b"], "b")
    os.replace(index, tmp_path / ".idx.old")  # INDEX -> .INDEX.old; the kill comes here

    assert _which(index, texts) == "a"  # open put the old index back
    assert not (tmp_path / ".idx.old").exists()
    assert tmp.is_dir()  # the new one stays aside, ignored ...
    assert clean_leftovers(index, grace=0) == [tmp]  # ... until the next build cleans it
    # the next overwrite works, from the recovered old index
    NearDupIndex.build(texts["b"], index, ids=[f"b{i}" for i in range(30)], overwrite=True)
    assert _which(index, texts) == "b"
    assert _siblings(index) == []


def test_a_killed_swap_is_recovered_by_the_next_build(tmp_path):
    texts = {"a": _texts(23, 20), "b": _texts(24, 20)}
    index = tmp_path / "idx"
    NearDupIndex.build(texts["a"], index, ids=[f"a{i}" for i in range(20)])
    _aside(tmp_path, texts["b"], "b")
    os.replace(index, tmp_path / ".idx.old")
    with pytest.raises(ParameterError, match="already exists"):  # the old index is back
        NearDupIndex.build(texts["b"], index)
    assert _which(index, texts) == "a"


def test_open_waits_for_a_live_swap_instead_of_undoing_it(tmp_path):
    """Between the renames of a live build (it holds the old index's writer lock)
    a reader waits for the new index rather than putting the old one back."""
    texts = {"a": _texts(25, 20), "b": _texts(26, 20)}
    index = tmp_path / "idx"
    NearDupIndex.build(texts["a"], index, ids=[f"a{i}" for i in range(20)])
    tmp = _aside(tmp_path, texts["b"], "b")
    got: list = []
    with writer_lock(index):
        os.replace(index, tmp_path / ".idx.old")
        reader = threading.Thread(target=lambda: got.append(_which(index, texts)))
        reader.start()
        time.sleep(0.3)
        assert got == [] and not index.exists()  # waiting, not recovering
        os.replace(tmp, index)
    reader.join(timeout=30)
    assert got == ["b"]


def test_writer_waiting_through_a_swap_locks_the_new_index(tmp_path):
    """A writer that waited on the old index's lock while a build swapped the
    directory takes the new index's lock, so it excludes the new index's writers."""
    index = tmp_path / "idx"
    NearDupIndex.build(_texts(27, 10), index)
    tmp = _aside(tmp_path, _texts(28, 10), "b")
    acquired = threading.Event()

    def writer():
        with writer_lock(index):
            acquired.set()

    with contextlib.ExitStack() as new_lock:
        with writer_lock(index):  # the build's lock on the old index
            t = threading.Thread(target=writer)
            t.start()
            time.sleep(0.2)
            os.replace(index, tmp_path / ".idx.old")
            os.replace(tmp, index)
            new_lock.enter_context(writer_lock(index))  # a writer of the new index
        time.sleep(0.3)
        assert not acquired.is_set()  # the waiting writer did not slip in on the old lock
    t.join(timeout=30)
    assert acquired.is_set()


def test_overwrite_still_refuses_what_is_not_an_index(tmp_path):
    d = tmp_path / "notes"
    d.mkdir()
    (d / "keep.txt").write_text("mine")
    with pytest.raises(ParameterError, match="replaces only an index"):
        NearDupIndex.build(["a b c d e f"], d, overwrite=True)
    assert [p.name for p in d.iterdir()] == ["keep.txt"]
    assert _siblings(d) == []


def test_failed_build_leaves_the_old_index_and_no_temporary(tmp_path):
    index = tmp_path / "idx"
    NearDupIndex.build(["a b c d e f g"], index)
    with pytest.raises(ParameterError):
        NearDupIndex.build([1, 2], index, overwrite=True)  # fails inside the build
    assert NearDupIndex.open(index).n_docs == 1
    assert _siblings(index) == []
