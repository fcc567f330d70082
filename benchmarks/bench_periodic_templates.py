"""The template layer alone on periodic token arrays: per-stage wall time and the
chain miner's kernels (``peel`` among them), to see how each grows with the size.

    .venv/bin/python benchmarks/bench_periodic_templates.py --tokens 1M,2M,4M,16M [--period 2]

The corpus is ``bench_adversarial.py``'s ``period-P``: 50 documents, each one random
P-token period repeated to 80-120 % of N/50 tokens (σ = 20, L = 10), built as token
ids directly (no tokenizer).  The first size includes numba's compile when the cache
is cold: run the smallest size twice, or read the second row.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def corpus(n: int, period: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    base = np.random.default_rng(period).integers(5, 1000, period).astype(np.int32)
    docs = [np.resize(base, int(n // 50 * rng.uniform(0.8, 1.2))) for _ in range(50)]
    off = np.zeros(51, np.int64)
    off[1:] = np.cumsum([d.size for d in docs])
    return np.concatenate(docs).astype(np.int32), off


def main(argv=None) -> int:
    from bench_adversarial import _decimal
    from repetend.phrases.templates import TemplateConfig, find_templates
    from repetend.phrases.templates import _kernels_index as KI
    from repetend.phrases.templates import gapped_index as G

    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", default="1M,2M,4M")
    ap.add_argument("--period", type=int, default=2)
    args = ap.parse_args(argv)
    spent: dict[str, float] = {}

    def timed(mod, name):
        f = getattr(mod, name)

        def g(*a, **k):
            t0 = time.perf_counter()
            r = f(*a, **k)
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - t0
            return r
        setattr(mod, name, g)

    for name in ("peel", "emit_positions", "residue_runs", "lcp_and_docs"):
        timed(KI, name)
    timed(G, "_mine_indexed")
    print("| tokens | layer s | parts s | chains s | peel s | lcp s | mine_indexed s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in [_decimal(x) for x in args.tokens.split(",")]:
        spent.clear()
        toks, off = corpus(n, args.period)
        res = find_templates((toks, off), None, 20, 10, TemplateConfig())
        w = res.summary["timings"]
        print(f"| {toks.size:,} | {w['total']:.2f} | {w['parts']:.2f} | {w['chains']:.2f} | "
              f"{spent.get('peel', 0):.2f} | {spent.get('lcp_and_docs', 0):.2f} | "
              f"{spent.get('_mine_indexed', 0):.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
