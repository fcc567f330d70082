"""Micro-benchmark of the bloomspan engine alone (seed 000, part 5 figures).

A Zipfian-ish synthetic corpus (unigram Zipf s=1.1 over a large vocabulary,
documents of geometric length, plus planted boilerplate phrases of 10-60
tokens in 20-400 documents each, some nested) is generated with numpy and
saved once; every configuration then runs in a fresh subprocess so that its
peak RSS is its own.  Printed side by side: per-stage seconds, µs per token,
peak RSS above the bare interpreter and bytes per token (the int32 corpus
included), filter survivors and the number of phrases.

    .venv/bin/python benchmarks/bench_bloomspan.py                 # 10 M tokens
    .venv/bin/python benchmarks/bench_bloomspan.py --tokens 50e6 --seed-lens 2,4,10
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np


def make_corpus(n_tokens: int, seed: int = 0, vocab: int = 500_000, planted: int | None = None):
    if planted is None:  # about 5 % of the tokens end up inside planted phrases
        planted = max(20, n_tokens // 150_000)
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, vocab + 1, dtype=np.float64)
    cdf = np.cumsum(ranks ** -1.1)
    cdf /= cdf[-1]
    lens = rng.geometric(1 / 400, size=n_tokens // 300 + 10).astype(np.int64) + 5
    lens = lens[np.cumsum(lens) <= n_tokens]
    n_docs = lens.shape[0]
    body = np.searchsorted(cdf, rng.random(int(lens.sum()))).astype(np.int32)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    # planted phrases: some are prefixes/extensions of others (nested templates)
    phrases = []
    for i in range(planted):
        if phrases and rng.random() < 0.3:
            base = phrases[rng.integers(0, len(phrases))]
            ext = np.searchsorted(cdf, rng.random(rng.integers(3, 15))).astype(np.int32)
            p = np.concatenate([base, ext]) if rng.random() < 0.5 else np.concatenate([ext, base])
        else:
            p = np.searchsorted(cdf, rng.random(rng.integers(10, 60))).astype(np.int32)
        phrases.append(p)
    ins_doc, ins_pos, ins_len, chunks = [], [], [], []
    for p in phrases:
        docs = rng.choice(n_docs, size=min(n_docs, int(rng.integers(20, 400))), replace=False)
        for d in docs:
            ins_doc.append(d)
            ins_pos.append(offsets[d] + rng.integers(0, lens[d] + 1))
            chunks.append(p)
            ins_len.append(len(p))
    ins_pos = np.asarray(ins_pos, dtype=np.int64)
    order = np.argsort(ins_pos, kind="stable")
    # splice: np.insert keeps the order of equal positions
    tokens = np.insert(body, np.repeat(ins_pos[order], np.asarray(ins_len)[order]),
                       np.concatenate([chunks[i] for i in order]))
    added = np.bincount(np.asarray(ins_doc), weights=np.asarray(ins_len), minlength=n_docs)
    lens2 = lens + added.astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(lens2)]).astype(np.int64)
    return tokens.astype(np.int32), offsets


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark (VmHWM) to the current RSS (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def child(path: str, sigma: int, L: int, seed_len: int, filter_bytes: int | None, skip: bool):
    from repetend.phrases.bloomspan import mine_bloomspan

    # warm the numba cache on a toy corpus so compilation is not measured
    t = np.array([1, 2, 3, 1, 2, 3], np.int32)
    mine_bloomspan(t, np.array([0, 3, 6]), 2, 1, seed_len=1)
    mine_bloomspan(t, np.array([0, 3, 6]), 2, 3, seed_len=min(seed_len, 3))
    if seed_len > 3:
        mine_bloomspan(t, np.array([0, 3, 6]), 2, seed_len, seed_len=seed_len)
    # peak RSS of the run above the bare interpreter (numba's compiler peak excluded)
    import gc
    gc.collect()
    resettable = _reset_peak()
    base = _status_kb("VmRSS") * 1024
    tokens = np.load(os.path.join(path, "tokens.npy"))
    offsets = np.load(os.path.join(path, "offsets.npy"))
    t0 = time.perf_counter()
    c0 = time.process_time()
    raw = mine_bloomspan(tokens, offsets, sigma, L, seed_len=seed_len,
                         filter_bytes=filter_bytes, coverage_skip=skip)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    peak = (_status_kb("VmHWM") if resettable else
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
    out = dict(raw.stats)
    out.update(wall=wall, cpu=cpu, peak_bytes=peak - base, n_phrases=raw.n_phrases,
               occ_total=int(raw.occ_starts.shape[0]), lengths_sum=int(raw.lengths.sum()))
    print("RESULT " + json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=float, default=10e6)
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-len", type=int, default=10)
    ap.add_argument("--seed-lens", default="2,3,4,10")
    ap.add_argument("--filter-bytes", default="default,seed",
                    help="comma list: 'default', 'seed' (8 B/token capped at 512 MB) or a number")
    ap.add_argument("--coverage-skip", action="store_true", help="also run the seed's coverage skip")
    ap.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        path, sigma, L, n, fb, skip = a.child
        child(path, int(sigma), int(L), int(n), None if fb == "default" else int(fb), skip == "1")
        return

    n_tokens = int(a.tokens)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        tokens, offsets = make_corpus(n_tokens)
        np.save(os.path.join(tmp, "tokens.npy"), tokens)
        np.save(os.path.join(tmp, "offsets.npy"), offsets)
        print(f"corpus: {tokens.shape[0]:,} tokens, {offsets.shape[0] - 1:,} documents, "
              f"generated in {time.perf_counter() - t0:.1f} s; σ={a.sigma}, L={a.min_len}")
        n_tok = tokens.shape[0]
        del tokens, offsets
        configs = []
        for fb in a.filter_bytes.split(","):
            fbv = str(min(8 * n_tok, 512 << 20)) if fb == "seed" else fb
            for n in (int(x) for x in a.seed_lens.split(",")):
                if n <= a.min_len:
                    configs.append((n, fb, fbv, "0"))
                    if a.coverage_skip:
                        configs.append((n, fb, fbv, "1"))
        rows = []
        for n, fb, fbv, skip in configs:
            cmd = [sys.executable, __file__, "--child", tmp, str(a.sigma), str(a.min_len), str(n), fbv, skip]
            res = subprocess.run(cmd, capture_output=True, text=True)
            line = [x for x in res.stdout.splitlines() if x.startswith("RESULT ")]
            if not line:
                print(res.stdout, res.stderr)
                continue
            r = json.loads(line[0][7:])
            r["label"] = f"n={n} filter={fb}" + (" skip" if skip == "1" else "")
            rows.append(r)
        stages = ["word_df", "count_filter", "second_pass", "seeds", "order", "grow", "maximality", "coverage"]
        print("CPU seconds per stage (the machine is shared: wall time is noisy, CPU time less so;"
              " CPU sums both threads of the parallel second pass)")
        head = f"{'config':<26}" + "".join(f"{s[:9]:>10}" for s in stages) + \
            f"{'cpu s':>8}{'wall s':>8}{'µs/tok':>8}{'peak MB':>9}{'B/tok':>7}{'survive%':>9}{'seeds':>8}{'phrases':>8}"
        print(head)
        for r in rows:
            print(f"{r['label']:<26}" + "".join(f"{r['cpu_seconds_' + s]:>10.3f}" for s in stages)
                  + f"{r['cpu']:>8.2f}{r['wall']:>8.2f}{1e6 * r['cpu'] / n_tok:>8.3f}"
                  + f"{r['peak_bytes'] / 2**20:>9.0f}"
                  + f"{r['peak_bytes'] / n_tok:>7.2f}{100 * r['ngram_survivors'] / n_tok:>9.2f}"
                  + f"{r['seeds']:>8}{r['n_phrases']:>8}")
        print("µs/tok = CPU µs per corpus token; B/tok = peak RSS above the bare interpreter "
              "(int32 corpus included) per token; survive% = n-gram positions passing both filters")
        ref = rows[0] if rows else None
        if ref:
            print("ratios of CPU time to the first row: " +
                  ", ".join(f"{r['label']}: {r['cpu'] / ref['cpu']:.2f}x" for r in rows))
            same = all((r["n_phrases"], r["occ_total"], r["lengths_sum"]) ==
                       (ref["n_phrases"], ref["occ_total"], ref["lengths_sum"])
                       for r in rows if "skip" not in r["label"])
            print(f"exact configurations agree on the answer: {same}")
            print("counters of the first row: " + ", ".join(
                f"{k}={ref[k]}" for k in ("word_df_survivors", "ngram_survivors", "seeds", "seed_occurrences",
                                          "seeds_covered", "pruned_left", "dfs_nodes", "candidates",
                                          "absorbed", "phrases", "covered_tokens")))


if __name__ == "__main__":
    main()
