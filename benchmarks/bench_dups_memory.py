"""Near-duplicate memory side by side: ``repetend dups`` (in memory) vs a rensa pipeline.

Usage::

    .venv/bin/python benchmarks/bench_dups_memory.py --go /usr/share/go-1.19/src \
        --store /work/scratch/memdups/go.store

Each side runs in a fresh subprocess (its own peak), on the same files:

* repetend: ``find_near_duplicates(store, NearDupConfig())`` (MinHash OPH K = 128,
  k = 5 tokens, J >= 0.8, every candidate verified exactly) and its tables written
  (``res.write``), from the token store of the files;
* rensa 0.5: the same files' text tokenized by a regex (words and punctuation),
  5-token shingles, ``RMinHash(128)`` per file, ``RMinHashLSH(0.8, 128, 16)``
  inserted and queried, every candidate verified exactly (shingle sets rebuilt
  for the candidates only).

``--timeline`` runs only the repetend side in this process and prints its private
memory at each stage boundary of the streamed path (where the peak sits).

Printed: wall seconds, peak RSS (VmHWM, the kernel's peak of private + mapped
pages), peak private memory (RssAnon, sampled every 5 ms), pairs found, and the
ratios.  Needs ``pip install rensa``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _status() -> dict:
    out = {}
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("RssAnon", "VmHWM"):
                out[k] = int(v.split()[0]) * 1024
    return out


class Sampler:
    """RssAnon sampled every 5 ms in a thread (no repetend import: the rensa side
    must not pay for loading repetend)."""

    def __enter__(self):
        import threading

        self.peak_anon = _status()["RssAnon"]
        self._stop = threading.Event()

        def run():
            while not self._stop.wait(0.005):
                self.peak_anon = max(self.peak_anon, _status()["RssAnon"])

        self._t = threading.Thread(target=run, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()
        self.peak_anon = max(self.peak_anon, _status()["RssAnon"])


def _peaks(sampler) -> dict:
    return {"hwm_mb": _status()["VmHWM"] / 2**20, "anon_mb": sampler.peak_anon / 2**20}


def run_repetend(store: str) -> dict:
    from repetend.corpus.store import TokenStore
    from repetend.neardup import NearDupConfig, find_near_duplicates
    import tempfile

    with Sampler() as mb:
        t = time.perf_counter()
        st = TokenStore.open(store)
        res = find_near_duplicates(st, NearDupConfig())
        with tempfile.TemporaryDirectory() as d:
            res.write(Path(d) / "dups")
        wall = time.perf_counter() - t
    return {"wall": wall, "pairs": len(res.pairs), **_peaks(mb)}


def _go_files(root: Path) -> list[Path]:
    """go_scene.py's file list (non-test .go files outside testdata/), without importing it."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "testdata")
        for f in sorted(filenames):
            if f.endswith(".go") and not f.endswith("_test.go"):
                out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return [root / p for p in sorted(out)]


def run_rensa(go_root: str) -> dict:
    import re

    import rensa

    tok = re.compile(r"\w+|[^\w\s]")

    def shingles(path: Path) -> list[str]:
        w = tok.findall(path.read_text(encoding="utf-8", errors="replace"))
        return [" ".join(w[i:i + 5]) for i in range(max(1, len(w) - 4))] if w else []

    with Sampler() as mb:
        t = time.perf_counter()
        files = _go_files(Path(go_root))
        lsh = rensa.RMinHashLSH(0.8, 128, 16)
        sigs = []
        for i, f in enumerate(files):
            m = rensa.RMinHash(128, 42)
            sh = shingles(f)
            if len(sh) >= 3:
                m.update(sh)
                lsh.insert(i, m)
            sigs.append(m if len(sh) >= 3 else None)
        cand = set()
        for i, m in enumerate(sigs):
            if m is not None:
                for j in lsh.query(m):
                    if j != i:
                        cand.add((min(i, j), max(i, j)))
        pairs = 0
        for a, b in cand:
            sa, sb = set(shingles(files[a])), set(shingles(files[b]))
            if len(sa & sb) / len(sa | sb) >= 0.8:
                pairs += 1
        wall = time.perf_counter() - t
    return {"wall": wall, "pairs": pairs, "candidates": len(cand), **_peaks(mb)}


def run_timeline(store: str) -> None:
    """Private memory at the streamed path's stage boundaries (one process): imports,
    opening the store, each stage's start and end, writing; the peak since the mark
    before is sampled every 2 ms."""
    import tempfile
    import threading

    samples: list[tuple[float, int]] = []
    marks: list[tuple[float, str, int]] = []
    stop = threading.Event()

    def sample():
        while not stop.wait(0.002):
            samples.append((time.perf_counter(), _status()["RssAnon"]))

    def mark(label):
        marks.append((time.perf_counter(), label, _status()["RssAnon"]))

    threading.Thread(target=sample, daemon=True).start()
    from repetend.corpus.store import TokenStore
    from repetend.neardup import NearDupConfig, find_near_duplicates
    import repetend.neardup.find as find_mod
    import repetend.neardup.streamed as streamed

    for name in ("streamed_signatures", "verify_streamed", "sets_of"):
        inner = getattr(streamed, name)

        def wrapped(*a, _inner=inner, _name=name, **k):
            mark(f"{_name} start")
            out = _inner(*a, **k)
            mark(f"{_name} end")
            return out

        setattr(streamed, name, wrapped)
        if hasattr(find_mod, name):
            setattr(find_mod, name, wrapped)
    mark("imports")
    st = TokenStore.open(store)
    mark("store opened")
    res = find_near_duplicates(st, NearDupConfig())
    mark("found")
    with tempfile.TemporaryDirectory() as d:
        res.write(Path(d) / "dups")
    mark("tables written")
    stop.set()
    prev = 0.0
    print(f"{'after':28} {'private MB':>10} {'peak since the mark before':>27}")
    for t, label, now in marks:
        peak = max([v for (ts, v) in samples if prev <= ts <= t] + [now])
        print(f"{label:28} {now / 2**20:10.1f} {peak / 2**20:27.1f}")
        prev = t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--go", default="/usr/share/go-1.19/src")
    ap.add_argument("--store", required=True, help="token store of the same files "
                    "(TokenStore.from_texts(texts, ids=names, unit='code', lang='go'))")
    ap.add_argument("--one", choices=["repetend", "rensa"], help=argparse.SUPPRESS)
    ap.add_argument("--timeline", action="store_true",
                    help="only repetend, in this process: private memory at each stage boundary")
    a = ap.parse_args()
    if a.timeline:
        run_timeline(a.store)
        return
    if a.one:
        out = run_repetend(a.store) if a.one == "repetend" else run_rensa(a.go)
        print(json.dumps(out))
        return
    rows = {}
    for side in ("repetend", "rensa"):
        r = subprocess.run([sys.executable, __file__, "--go", a.go, "--store", a.store,
                            "--one", side], capture_output=True, text=True, env=os.environ)
        if r.returncode:
            sys.exit(r.stderr)
        rows[side] = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"{'':10} {'wall s':>8} {'hwm MB':>8} {'anon MB':>8} {'pairs':>7}")
    for side, v in rows.items():
        print(f"{side:10} {v['wall']:8.2f} {v['hwm_mb']:8.0f} {v['anon_mb']:8.0f} {v['pairs']:7}")
    o, r = rows["repetend"], rows["rensa"]
    print(f"ratios repetend/rensa: wall {o['wall'] / r['wall']:.2f}, hwm {o['hwm_mb'] / r['hwm_mb']:.2f}, "
          f"anon {o['anon_mb'] / r['anon_mb']:.2f}")


if __name__ == "__main__":
    main()
