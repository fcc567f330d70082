"""Both phrase engines side by side on a token store of real text.

Each engine runs in its own process (a clean peak RSS) on the same store, at
the seed's settings; the script prints wall and CPU time, µs per token, peak
RSS and bytes per corpus token, the phrase count, and whether the two engines
returned identical phrases. Usage::

    python benchmarks/corpora/real_corpus.py --out bench-data/debian.jsonl
    repetend tokenize bench-data/debian.jsonl --out bench-data/debian.store
    python benchmarks/bench_phrases_store.py bench-data/debian.store
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time, hashlib
import numpy as np
from repetend import TokenStore
from repetend.phrases import PhraseConfig, canonical_order
from repetend.phrases.find import _as_corpus, _reorder, _run_engine
store = TokenStore.open(sys.argv[1])
engine, sigma, L = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
c = _as_corpus(store)
np.asarray(c.tokens).sum()  # page the token array in before timing
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0, c0 = time.perf_counter(), time.process_time()
raw = _run_engine(engine, c, PhraseConfig(min_docs=sigma, min_len=L, engine=engine, templates=False))
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
raw = _reorder(raw, canonical_order(raw, c.tokens))
h = hashlib.sha256()
for a in (raw.lengths, raw.df, raw.occ_offsets, raw.occ_starts):
    h.update(np.ascontiguousarray(a, np.int64).tobytes())
print(json.dumps({"wall": wall, "cpu": cpu, "phrases": raw.n_phrases,
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "base": base * 1024,
                  "digest": h.hexdigest()[:16], "stats": {k: v for k, v in raw.stats.items()
                                                           if isinstance(v, (int, float))}}))
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store")
    ap.add_argument("--settings", default="20/10,10/5", help="σ/L pairs, comma separated")
    ap.add_argument("--engines", default="bloomspan,suffix")
    args = ap.parse_args(argv)
    from repetend import TokenStore

    n = TokenStore.open(args.store).n_tokens
    print(f"store {args.store}: {n:,} tokens")
    print(f"{'σ/L':>6} {'engine':>10} {'wall s':>8} {'cpu s':>8} {'µs/tok':>8} {'peak MB':>8} "
          f"{'B/tok':>6} {'mine B/tok':>10} {'phrases':>8}  digest")
    print("(peak MB: whole process; B/tok: peak / tokens; mine B/tok: (peak − RSS before "
          "mining) / tokens + 4 for the int32 token array itself)")
    for setting in args.settings.split(","):
        sigma, L = setting.split("/")
        digests = set()
        for engine in args.engines.split(","):
            out = subprocess.run([sys.executable, "-c", CHILD, args.store, engine, sigma, L],
                                 capture_output=True, text=True)
            if out.returncode:
                print(f"{setting:>6} {engine:>10} failed: {out.stderr.strip().splitlines()[-1]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            digests.add(r["digest"])
            print(f"{setting:>6} {engine:>10} {r['wall']:8.2f} {r['cpu']:8.2f} "
                  f"{r['wall'] / n * 1e6:8.4f} {r['peak'] / 2**20:8.0f} {r['peak'] / n:6.1f} "
                  f"{(r['peak'] - r['base']) / n + 4:10.1f} {r['phrases']:8,}  {r['digest']}")
        print(f"{'':>6} identical results: {len(digests) == 1}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
