"""A crash during ``index add`` leaves the index readable at its previous state.

The ``add`` runs in a subprocess (the real CLI code path) with the test hook
``REPETEND_INDEX_TEST_PAUSE``: it sleeps after the new segment is
written and before the manifest is replaced; the test kills it with SIGKILL
in that window (and, in a second case, while the segment itself is being
written) and then checks the index.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from repetend.index import NearDupIndex
from repetend.index.format import SLEEP_ENV
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
