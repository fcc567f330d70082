"""The seed-000 scaling table on this machine: BloomSpan and MinHash-LSH, in memory
and out of core, on generated Zipfian web-like corpora of growing size.

    .venv/bin/python benchmarks/bench_scale.py --sizes 10M,100M --limit 2G \\
        --dups-docs 1M --workdir /work/tmp

Corpora come from ``benchmarks/corpora/gen_zipf.py`` (generated once, kept in
``--workdir``).  Every measurement runs in a fresh subprocess, so its peak
memory is its own: ``hwm`` is the kernel's peak resident set (private memory
plus resident pages of the memory-mapped store), ``anon`` the sampled peak of
private memory (what ``--limit`` bounds; the in-memory runs hold the whole
corpus in it).  Phrases: σ = 20, L = 10 as in the seed's
Gutenberg-BookCorpus table (seed 000, part 5: 0.021-0.027 µs/token on a JVM,
3.07 B tokens in 383 s and 38.9 GB).  Near-duplicates: MinHash (OPH, K = 128),
k = 5 shingles, J >= 0.7; recall is measured after the timed run, on the
planted near-copies (``dups.npy`` of the generator; a random sample of 50,000
pairs when there are more) whose exact resemblance is >= 0.7.
``--phrase-store`` / ``--dups-store`` run the same measurements on stores made
beforehand, e.g. the moonshot corpus of 3.07 B tokens and 10 M documents::

    .venv/bin/python benchmarks/corpora/gen_zipf.py --tokens 3.07G --mean-len 230 \
        --out /work/tmp/oc_zipf3g
    .venv/bin/python benchmarks/bench_scale.py --sizes '' --dups-docs 0 --modes ooc \
        --limit 2G --phrase-store /work/tmp/oc_zipf3g --dups-store /work/tmp/oc_zipf3g
``B/token`` is the private memory the run added over the idle process
(Python, numba, pyarrow: about 190 MB), per token.  CPU seconds sum the
threads; on a machine shared with other jobs they are steadier than wall time.
``--threads 1,2`` repeats the out-of-core runs with ``NUMBA_NUM_THREADS`` set,
for the speed-up of the second core.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _decimal(s: str) -> int:
    s = s.strip().upper()
    mult = {"K": 10**3, "M": 10**6, "G": 10**9, "B": 10**9}
    return int(float(s[:-1]) * mult[s[-1]]) if s and s[-1] in mult else int(s)


# -- worker (runs in a subprocess) ---------------------------------------------------

def _warm():
    """Load the cached kernels on a toy corpus (not part of the timing)."""
    from repetend.phrases.bloomspan import mine_bloomspan
    rng = np.random.default_rng(0)
    t = rng.integers(0, 50, 5000).astype(np.int32)
    off = np.arange(0, 5001, 50, dtype=np.int64)
    mine_bloomspan(t, off, 3, 4)


def worker(spec: dict) -> dict:
    from repetend._memory import MemoryBudget, rss_now
    kind, path, limit = spec["kind"], Path(spec["path"]), spec.get("limit")
    _warm()
    out: dict = {}
    budget = MemoryBudget(None)
    t0, c0 = time.perf_counter(), time.process_time()
    with budget:
        if kind == "phrases-mem":
            import pyarrow.parquet as pq

            from repetend.phrases.bloomspan import mine_bloomspan
            tokens = np.load(path / "tokens.npy")   # the whole corpus in RAM
            offsets = np.load(path / "doc_offsets.npy")
            df = pq.read_table(path / "vocab.parquet", columns=["df"]).column("df").to_numpy()
            r = mine_bloomspan(tokens, offsets, 20, 10, token_df=df)
            out.update(phrases=r.n_phrases, tokens=int(tokens.shape[0]), docs=int(offsets.size - 1))
        elif kind == "phrases-ooc":
            from repetend.phrases.outofcore import mine_bloomspan_store
            r = mine_bloomspan_store(path, 20, 10, memory_limit=limit, workdir=spec["workdir"])
            out.update(phrases=r.n_phrases, tokens=r.stats["tokens"], docs=r.stats["docs"],
                       shards=r.stats["shards"], partitions=r.stats["partitions"],
                       spilled=r.stats["spilled_bytes"], within_limit=r.stats["within_limit"],
                       stages={k[8:]: round(v, 1) for k, v in r.stats.items()
                               if k.startswith("seconds_") and k != "seconds_total"},
                       cpu_stages={k[12:]: round(v, 1) for k, v in r.stats.items()
                                   if k.startswith("cpu_seconds_") and k != "cpu_seconds_total"})
        elif kind in ("dups-mem", "dups-ooc"):
            from repetend.neardup import NearDupConfig
            cfg = NearDupConfig(threshold=0.7, shingle=5, num_perm=128, scheme="oph")
            if kind == "dups-mem":
                from repetend import TokenStore
                from repetend.neardup import find_near_duplicates
                store = TokenStore.open(path)
                r = find_near_duplicates(store, cfg)
                a, b, nc = r.pairs.a, r.pairs.b, len(r.candidates)
                out.update(tokens=store.n_tokens, docs=store.n_docs)
            else:
                from repetend.neardup.outofcore import near_duplicates_store
                r = near_duplicates_store(path, cfg, memory_limit=limit, workdir=spec["workdir"])
                a, b, nc = r.pairs.a, r.pairs.b, r.candidates
                out.update(tokens=r.stats["tokens"], docs=r.stats["documents"],
                           shards=r.stats["shards"], partitions=r.stats["partitions"],
                           spilled=r.stats["spilled_bytes"], within_limit=r.stats["within_limit"],
                           stages=r.stats["timings_s"])
            out.update(pairs=int(len(a)), candidates=int(nc))
        else:
            raise SystemExit(f"unknown kind {kind}")
    out["seconds"] = time.perf_counter() - t0
    out["cpu_seconds"] = time.process_time() - c0
    rep = budget.report()
    out.update(peak_anon=rep["peak_anon"], base_anon=rep["base_anon"], hwm=rss_now()["hwm"])
    if kind.startswith("dups"):   # after the measurement: recall on the planted copies
        out.update(_recall(path, np.int64(out["docs"]), a, b))
    return out


def _recall(path: Path, n, a, b, sample: int = 50_000) -> dict:
    """Recall among the planted near-copies (``dups.npy``) whose exact resemblance
    is >= 0.7, on a random sample of at most ``sample`` planted pairs (their
    documents are shingled in memory)."""
    from repetend.neardup.outofcore import store_token_hashes
    from repetend.neardup.pairs import verify_pairs
    from repetend._arrays import sorted_unique
    from repetend.neardup.shingles import shingle_sets
    planted = np.load(path / "dups.npy")
    n_planted = int(planted.shape[0])
    if n_planted > sample:
        planted = planted[np.random.default_rng(0).choice(n_planted, sample, replace=False)]
    got = np.asarray(a, np.int64) * n + np.asarray(b, np.int64)
    lo, hi = planted.min(axis=1), planted.max(axis=1)
    docs = sorted_unique(planted)
    toks = np.load(path / "tokens.npy", mmap_mode="r")
    doc_off = np.load(path / "doc_offsets.npy")
    lo_t, lens = doc_off[docs], doc_off[docs + 1] - doc_off[docs]
    sub_off = np.zeros(docs.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=sub_off[1:])
    idx = np.repeat(lo_t - sub_off[:-1], lens) + np.arange(int(sub_off[-1]), dtype=np.int64)
    sub_t = np.ascontiguousarray(toks[idx], dtype=np.int32)
    sets = shingle_sets(sub_t, sub_off, store_token_hashes(path), 5)
    v = verify_pairs(sets, np.searchsorted(docs, lo), np.searchsorted(docs, hi))
    above = v.jaccard >= 0.7
    true = docs[v.a[above]] * n + docs[v.b[above]]
    return dict(planted=n_planted, planted_sampled=int(planted.shape[0]),
                planted_above=int(true.size),
                recall=float(np.isin(true, got).mean()) if true.size else None)


def _label(path, docs: bool = False) -> str:
    """'3.07B' (tokens) or '10.2M docs' from a store's meta.json."""
    summ = json.loads((Path(path) / "meta.json").read_text())["summary"]
    x = summ["documents"] if docs else summ["tokens"]
    for div, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if x >= div:
            return f"{x / div:.3g}{unit}" + (" docs" if docs else "")
    return f"{x}" + (" docs" if docs else "")


def run(spec: dict, threads: int | None = None) -> dict:
    env = dict(os.environ)
    if threads:
        env["NUMBA_NUM_THREADS"] = str(threads)
    cmd = [sys.executable, __file__, "--worker", json.dumps(spec)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip().splitlines()[-1:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


# -- driver ---------------------------------------------------------------------------

def _mb(x):
    return f"{x / 2**20:,.0f}" if x else "-"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--sizes", default="10M,100M", help="phrase corpora, e.g. 10M,100M,1G")
    ap.add_argument("--dups-docs", default="1M", help="near-duplicate corpus size in documents (0: skip)")
    ap.add_argument("--phrase-store", action="append", default=[],
                    help="also mine this existing store (e.g. a gen_zipf.py corpus); repeatable")
    ap.add_argument("--dups-store", action="append", default=[],
                    help="also run near-duplicates on this existing store (it needs the "
                         "generator's dups.npy for recall); repeatable")
    ap.add_argument("--limit", default="2G", help="memory limit of the out-of-core runs")
    ap.add_argument("--workdir", default="/work/tmp", help="where corpora and spill files go")
    ap.add_argument("--threads", default="2", help="thread counts of the out-of-core runs, e.g. 1,2")
    ap.add_argument("--modes", default="mem,ooc", help="mem, ooc or both")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    ap.add_argument("--render", nargs="+", help="only print the table of saved --json files")
    a = ap.parse_args(argv)
    if a.worker:
        print(json.dumps(worker(json.loads(a.worker))))
        return
    if a.render:
        table([r for f in a.render for r in json.loads(Path(f).read_text())])
        return
    sys.path.insert(0, str(HERE / "corpora"))
    import gen_zipf

    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    modes = a.modes.split(",")
    threads = [int(t) for t in a.threads.split(",")]
    rows = []

    def store_for(name, n_tokens, **kw):
        path = work / name
        if not (path / "meta.json").is_file():
            print(f"generating {name} ...", file=sys.stderr)
            info = gen_zipf.generate(path, n_tokens, progress=False, **kw)
            print(f"  {info['tokens']:,} tokens in {info['seconds']:.0f} s", file=sys.stderr)
        return path

    jobs = [(size, store_for(f"oc_zipf{size.lower()}", _decimal(size)))
            for size in a.sizes.split(",") if size]
    jobs += [(_label(p), Path(p)) for p in a.phrase_store]
    for size, path in jobs:
        if "mem" in modes:
            rows.append({"task": "phrases", "corpus": size, "mode": "in memory", "threads": 2,
                         **run({"kind": "phrases-mem", "path": str(path)})})
            print(rows[-1], file=sys.stderr)
        if "ooc" in modes:
            for t in threads:
                rows.append({"task": "phrases", "corpus": size, "mode": f"ooc {a.limit}", "threads": t,
                             **run({"kind": "phrases-ooc", "path": str(path), "limit": a.limit,
                                    "workdir": str(work)}, t)})
                print(rows[-1], file=sys.stderr)
    nd = _decimal(a.dups_docs)
    djobs = []
    if nd:
        # mean body 60 tokens + templates: about 130 tokens per document
        djobs.append((f"{a.dups_docs} docs", store_for(f"oc_nd{a.dups_docs.lower()}", nd * 130,
                                                       mean_len=60, dup_rate=0.1)))
    djobs += [(_label(p, docs=True), Path(p)) for p in a.dups_store]
    for name, path in djobs:
        if "mem" in modes:
            rows.append({"task": "near-dups", "corpus": name, "mode": "in memory",
                         "threads": 2, **run({"kind": "dups-mem", "path": str(path)})})
            print(rows[-1], file=sys.stderr)
        if "ooc" in modes:
            for t in threads:
                rows.append({"task": "near-dups", "corpus": name,
                             "mode": f"ooc {a.limit}", "threads": t,
                             **run({"kind": "dups-ooc", "path": str(path), "limit": a.limit,
                                    "workdir": str(work)}, t)})
                print(rows[-1], file=sys.stderr)

    table(rows)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1) + "\n")


def table(rows: list) -> None:
    hdr = (f"{'task':<9} {'corpus':<10} {'mode':<10} {'thr':>3} {'tokens':>13} {'docs':>10} "
           f"{'s':>8} {'cpu s':>8} {'µs/tok':>7} {'cpu µs/tok':>10} {'hwm MB':>8} {'anon MB':>8} {'B/token':>8} "
           f"{'result':>22}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        if "error" in r:
            print(f"{r['task']:<9} {r['corpus']:<10} {r['mode']:<10} {r['threads']:>3}  ERROR {r['error']}")
            continue
        tok = r["tokens"]
        res = (f"{r['phrases']:,} phrases" if r["task"] == "phrases"
               else f"{r['pairs']:,} pairs, rec {r['recall']:.3f}")
        print(f"{r['task']:<9} {r['corpus']:<10} {r['mode']:<10} {r['threads']:>3} {tok:>13,} "
              f"{r['docs']:>10,} {r['seconds']:>8.1f} {r['cpu_seconds']:>8.1f} "
              f"{r['seconds'] / tok * 1e6:>7.3f} {r['cpu_seconds'] / tok * 1e6:>10.3f} {_mb(r['hwm']):>8} {_mb(r['peak_anon']):>8} "
              f"{(r['peak_anon'] - r.get('base_anon', 0)) / tok:>8.2f} {res:>22}")
        if r.get("stages"):
            cpu = r.get("cpu_stages") or {}
            print("    stages (wall s" + (" / CPU s" if cpu else "") + "): " + ", ".join(
                f"{k} {v:.1f}" + (f"/{cpu[k]:.1f}" if k in cpu else "") for k, v in r["stages"].items()))


if __name__ == "__main__":
    main()
