"""The minhash dups stage from a token store, stage by stage: wall, CPU, private peak.

Usage::

    PYTHONPATH=src nice .venv/bin/python benchmarks/bench_dups_stages.py \
        --store /tmp/large-scan/store --modes streamed,held,streamed,held

Each mode runs in a fresh subprocess (its own peak), alternating as given:

* ``streamed``: ``find_near_duplicates(store, NearDupConfig())`` (the default path);
* ``held``: every shingle set built first (``shingle_sets`` of the whole store),
  then ``find_near_duplicates(sets, NearDupConfig())`` (the pre-streaming path:
  all sets held, signed and verified from them).

Per stage: wall and CPU seconds (process CPU, all threads) of the library calls
the stage is made of (wrapped here, nothing changed in the library), and the
peak private memory (RssAnon sampled every 5 ms) of the whole run.  Printed as
a table and, with ``--json``, one JSON line per run.
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
sys.path.insert(0, str(HERE))

from bench_dups_memory import Sampler  # noqa: E402


def _wrap(mod, name, rec, label):
    fn = getattr(mod, name)

    def wrapped(*a, **kw):
        w, c = time.perf_counter(), time.process_time()
        try:
            return fn(*a, **kw)
        finally:
            r = rec.setdefault(label, [0.0, 0.0])
            r[0] += time.perf_counter() - w
            r[1] += time.process_time() - c

    setattr(mod, name, wrapped)


def run(store_path: str, mode: str) -> dict:
    import numpy as np

    from repetend.corpus.store import TokenStore
    from repetend.neardup import NearDupConfig, find_near_duplicates
    from repetend.neardup import find as F
    from repetend.neardup import streamed as S
    from repetend.neardup.shingles import shingle_sets, token_hashes

    rec: dict[str, list[float]] = {}
    _wrap(F, "streamed_signatures", rec, "shingle+sign")
    _wrap(F, "minhash_signatures", rec, "sign")
    _wrap(F, "lsh_candidates", rec, "lsh")
    _wrap(F, "verify_streamed", rec, "verify")
    _wrap(F, "verify_pairs", rec, "verify")
    _wrap(S, "minhash_signatures", rec, "  of which sign")
    _wrap(S, "sets_of", rec, "verify: re-shingle")
    _wrap(S, "verify_pairs", rec, "verify: join")
    _wrap(F, "clusters_from_pairs", rec, "clusters")
    store = TokenStore.open(store_path)
    with Sampler() as mb:
        w, c = time.perf_counter(), time.process_time()
        if mode == "held":
            src = store.vocab_source()
            sets = shingle_sets(store.tokens, store.doc_offsets, token_hashes(src), 5)
            rec["shingle"] = [time.perf_counter() - w, time.process_time() - c]
            res = find_near_duplicates(sets, NearDupConfig())
        else:
            res = find_near_duplicates(store, NearDupConfig())
        total = [time.perf_counter() - w, time.process_time() - c]
    pairs = res.pairs
    digest = int(np.bitwise_xor.reduce(pairs.a * 1_000_003 + pairs.b)) if len(pairs) else 0
    return {"mode": mode, "total": total, "stages": rec, "anon_mb": mb.peak_anon / 2**20,
            "pairs": len(pairs), "candidates": len(res.candidates), "pairs_digest": digest,
            "threads": int(__import__("numba").get_num_threads())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", required=True)
    ap.add_argument("--modes", default="streamed,held")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--old-src", help="a src/ directory of another version: modes 'old-streamed', "
                    "'old-held' run with it on PYTHONPATH (e.g. a `git archive` of the commit before)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run(args.store, args.one)))
        return
    rows = []
    for mode in args.modes.split(","):
        env = dict(os.environ)
        one = mode
        if mode.startswith("old-"):
            env["PYTHONPATH"] = args.old_src
            one = mode[4:]
        out = subprocess.run([sys.executable, __file__, "--store", args.store, "--one", one],
                             check=True, capture_output=True, text=True, env=env).stdout
        r = json.loads(out.strip().splitlines()[-1])
        r["mode"] = mode
        rows.append(r)
        if args.json:
            print(json.dumps(r), flush=True)
        print(f"{mode:>9}: total {r['total'][0]:6.1f} s wall {r['total'][1]:6.1f} s CPU, "
              f"peak private {r['anon_mb']:7.0f} MB, {r['pairs']:,} pairs, "
              f"{r['candidates']:,} candidates, digest {r['pairs_digest']}", flush=True)
        for k, (wl, cp) in r["stages"].items():
            print(f"{'':>11}{k:<20} {wl:6.1f} s wall {cp:6.1f} s CPU", flush=True)


if __name__ == "__main__":
    main()
