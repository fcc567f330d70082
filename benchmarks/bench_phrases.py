"""Phrase engines side by side: ``suffix`` vs ``bloomspan`` (seed 000, part 5).

Usage::

    .venv/bin/python benchmarks/bench_phrases.py            # ~2 M tokens per data set, < 2 min
    .venv/bin/python benchmarks/bench_phrases.py --big      # 100 M tokens (minutes, ~3 GB)
    .venv/bin/python benchmarks/bench_phrases.py --tokens 5e6 --no-scaling

Data sets are generated with numpy in this script (token ids directly, no
tokenizer in the loop), shaped like the seed's:

* ``synth1``  Synthetic 1: every background token unique (df = 1), three
  planted phrases (lengths 6, 5, 3 tokens; supports scaled to 3·σ_max, 5·σ_max, 4·σ_max
  so that both settings find them);
* ``synth2``  Synthetic 2: 300 heavily overlapping phrases of decreasing
  length (prefixes of one 400-token sequence) planted over random text — the
  worst case for BloomSpan;
* ``web``     Zipfian body text (s = 1.1, 200 k vocabulary) in sites of 50
  pages, each site with a header, a footer and a disclaimer, some
  corpus-wide banners — a crawled-index shape.

Every engine runs in a fresh subprocess (numba's cache warmed on the first
documents, then the peak-RSS mark reset) so that the peak RSS is its own; results of both engines are checked
to be identical.  Printed per run: wall time per stage, µs/token, peak RSS
and extra bytes/token over the process baseline, phrases, filter survivors.
A scaling curve over corpus size ends with the log-log slope.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


# -- data -------------------------------------------------------------------------

def _offsets(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def gen_synth1(n_tokens: int, seed: int = 0, per_doc: int = 5000, support: int = 20):
    rng = np.random.default_rng(seed)
    n_docs = max(10 * support, n_tokens // per_doc)
    per_doc = max(1, n_tokens // n_docs)
    bg = np.arange(n_docs * per_doc, dtype=np.int32) + 100   # unique background
    docs = np.split(bg, n_docs)
    phrases = [np.array([1, 2, 3, 4, 5, 6]), np.array([7, 8, 9, 10, 11]), np.array([12, 13, 14])]
    for ph, sup in zip(phrases, (3 * support, 5 * support, 4 * support)):
        for d in rng.choice(n_docs, size=min(sup, n_docs), replace=False):
            at = int(rng.integers(0, docs[d].size + 1))
            docs[d] = np.concatenate([docs[d][:at], ph.astype(np.int32), docs[d][at:]])
    return np.concatenate(docs).astype(np.int32), _offsets([d.size for d in docs])


def gen_synth2(n_tokens: int, seed: int = 0, per_doc: int = 1000, n_phrases: int = 300,
               max_len: int = 400):
    rng = np.random.default_rng(seed)
    n_docs = max(200, n_tokens // per_doc)
    base = rng.integers(0, 50_000, max_len).astype(np.int32)
    docs = [rng.integers(0, 1_000_000, per_doc).astype(np.int32) for _ in range(n_docs)]
    lengths = np.linspace(max_len, 10, n_phrases).astype(int)
    for k, ln in enumerate(lengths):
        start = int(rng.integers(0, max_len - ln + 1))
        sup = int(rng.integers(15, 60))
        for d in rng.choice(n_docs, size=sup, replace=False):
            at = int(rng.integers(0, docs[d].size + 1))
            docs[d] = np.concatenate([docs[d][:at], base[start:start + ln], docs[d][at:]])
    return np.concatenate(docs), _offsets([d.size for d in docs])


def gen_web(n_tokens: int, seed: int = 0, vocab: int = 200_000, site_pages: int = 50):
    rng = np.random.default_rng(seed)
    mean_body = 600
    n_docs = max(100, n_tokens // (mean_body + 90))
    n_sites = max(1, n_docs // site_pages)
    zipf_ids = np.minimum(rng.zipf(1.1, size=n_tokens + n_docs * 100), vocab - 1).astype(np.int32)
    banners = [rng.integers(0, vocab, 40).astype(np.int32) for _ in range(3)]
    site_tpl = [(rng.integers(0, vocab, 25).astype(np.int32),      # header / menu
                 rng.integers(0, vocab, 45).astype(np.int32),      # footer
                 rng.integers(0, vocab, 20).astype(np.int32))      # disclaimer
                for _ in range(n_sites)]
    body_len = rng.integers(mean_body // 3, 2 * mean_body, n_docs)
    docs = []
    pos = 0
    for d in range(n_docs):
        head, foot, disc = site_tpl[d % n_sites]
        body = zipf_ids[pos:pos + body_len[d]]
        pos += int(body_len[d])
        parts = [head, body]
        if rng.random() < 0.7:
            parts.append(disc)
        if rng.random() < 0.3:
            parts.append(banners[int(rng.integers(0, 3))])
        parts.append(foot)
        docs.append(np.concatenate(parts))
    return np.concatenate(docs).astype(np.int32), _offsets([d.size for d in docs])


GENERATORS = {"synth1": gen_synth1, "synth2": gen_synth2, "web": gen_web}


# -- worker (one engine, one corpus, fresh process) -----------------------------------

def _rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark (Linux >= 4.0: clear_refs 5)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_since_reset() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return _rss_bytes()


def worker(engine: str, data: str, sigma: int, min_len: int) -> None:
    import psutil

    tokens = np.load(data + ".tokens.npy")
    offsets = np.load(data + ".offsets.npy")
    if engine == "suffix":
        from repetend.phrases.suffix import mine_suffix as mine
    else:
        from repetend.phrases.bloomspan import mine_bloomspan as mine
    # warm up (numba cache load / compile for these dtypes) on the first documents
    k = int(np.searchsorted(offsets, min(50_000, tokens.size)))
    k = max(k, min(offsets.size - 1, 2 * sigma))
    mine(tokens[:offsets[k]].copy(), offsets[:k + 1].copy(), sigma, min_len)
    mine(np.tile(np.arange(300, dtype=np.int32), 4), np.array([0, 300, 600, 900, 1200]), 2, 2)
    base = psutil.Process().memory_info().rss
    reset = _reset_peak()   # forget the warm-up's (and any compilation's) peak
    t0 = time.perf_counter()
    raw = mine(tokens, offsets, sigma, min_len)
    wall = time.perf_counter() - t0
    peak = _peak_since_reset() if reset else _rss_bytes()
    # a fingerprint of the answer, order-independent
    lens, df = raw.lengths, raw.df
    firsts = raw.occ_starts[raw.occ_offsets[:-1]]
    key = sorted(zip(lens.tolist(), df.tolist(), firsts.tolist(),
                     np.diff(raw.occ_offsets).tolist()))
    fp = hashlib.sha1(json.dumps(key).encode()).hexdigest()[:12]
    st = raw.stats
    stages = st.get("timings") or {k[8:]: v for k, v in st.items() if k.startswith("seconds_")
                                   and k != "seconds_total"}
    survivors = st.get("ngram_survivors", st.get("frequent_intervals"))
    print(json.dumps({"wall": wall, "peak": peak, "base": base, "phrases": raw.n_phrases,
                      "stages": stages, "survivors": survivors, "fp": fp}))


def run(engine, data, sigma, min_len, timeout=1800):
    cmd = [sys.executable, __file__, "--worker", engine, data, str(sigma), str(min_len)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


# -- driver ---------------------------------------------------------------------------

def _fmt_stages(stages: dict) -> str:
    return " ".join(f"{k}={v:.2f}" for k, v in stages.items() if v >= 0.005)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=float, default=2e6, help="tokens per data set")
    ap.add_argument("--big", action="store_true", help="100 M tokens per data set")
    ap.add_argument("--no-scaling", action="store_true")
    ap.add_argument("--datasets", default="synth1,synth2,web")
    ap.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        e, d, s, L = args.worker
        worker(e, d, int(s), int(L))
        return
    from repetend.phrases.auto import bloomspan_available

    engines = ["suffix"] + (["bloomspan"] if bloomspan_available() else [])
    if len(engines) == 1:
        print("bloomspan is not importable: suffix only")
    n = int(1e8 if args.big else args.tokens)
    settings = [(20, 10), (10, 5)]
    tmp = Path(tempfile.mkdtemp(prefix="bench_phrases."))
    print(f"{'data':7} {'σ/L':6} {'engine':9} {'tokens':>10} {'wall s':>7} {'µs/tok':>7} "
          f"{'peak MB':>8} {'B/tok':>6} {'phrases':>8} {'surviv.':>9}  stages")
    try:
        for name in args.datasets.split(","):
            t0 = time.perf_counter()
            tokens, offsets = GENERATORS[name](n)
            base = str(tmp / name)
            np.save(base + ".tokens.npy", tokens)
            np.save(base + ".offsets.npy", offsets)
            ntok = tokens.size
            print(f"# {name}: {ntok:,} tokens, {offsets.size - 1:,} documents "
                  f"(generated in {time.perf_counter() - t0:.1f} s)")
            for sigma, L in settings:
                if len(engines) == 2:
                    from repetend.phrases.auto import choose_engine

                    t1 = time.perf_counter()
                    pick, why = choose_engine(tokens, offsets, sigma, L)
                    print(f"{name:7} {sigma}/{L:<4} auto -> {pick} ({why['rule']}; "
                          f"{time.perf_counter() - t1:.2f} s)")
            del tokens, offsets
            for sigma, L in settings:
                res = {}
                for e in engines:
                    r = run(e, base, sigma, L)
                    res[e] = r
                    if "error" in r:
                        print(f"{name:7} {sigma}/{L:<4} {e:9} error: {r['error']}")
                        continue
                    extra = max(r["peak"] - r["base"], 0) / ntok
                    print(f"{name:7} {sigma}/{L:<4} {e:9} {ntok:>10,} {r['wall']:>7.2f} "
                          f"{1e6 * r['wall'] / ntok:>7.3f} {r['peak'] / 1e6:>8.0f} "
                          f"{extra:>6.1f} {r['phrases']:>8,} {str(r['survivors']):>9}  "
                          f"{_fmt_stages(r['stages'])}")
                ok = [r for r in res.values() if "error" not in r]
                if len(ok) == 2:
                    a, b = res["suffix"], res["bloomspan"]
                    same = "identical" if a["fp"] == b["fp"] else "DIFFERENT ANSWERS"
                    print(f"{'':7} {'':6} ratio     bloomspan/suffix time "
                          f"{b['wall'] / a['wall']:.2f}x, peak {b['peak'] / a['peak']:.2f}x; "
                          f"answers {same}")
        if not args.no_scaling:
            sizes = [n // 8, n // 4, n // 2, n]
            print("# scaling on web, σ=20 L=10 (seconds; slope = d log t / d log n)")
            pts = {e: [] for e in engines}
            for size in sizes:
                tokens, offsets = gen_web(size, seed=1)
                base = str(tmp / f"scale{size}")
                np.save(base + ".tokens.npy", tokens)
                np.save(base + ".offsets.npy", offsets)
                row = [f"{tokens.size:>11,}"]
                for e in engines:
                    r = run(e, base, 20, 10)
                    if "error" in r:
                        row.append(f"{e} error")
                        continue
                    pts[e].append((tokens.size, r["wall"]))
                    row.append(f"{e} {r['wall']:6.2f} s {1e6 * r['wall'] / tokens.size:6.3f} µs/tok")
                print("  ".join(row))
            for e, p in pts.items():
                if len(p) >= 2:
                    x, y = np.log([q[0] for q in p]), np.log([q[1] for q in p])
                    print(f"slope {e}: {np.polyfit(x, y, 1)[0]:.2f}")
    finally:
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
