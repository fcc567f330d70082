"""Benchmark of the persistent index: build, add, single-document query latency, HTTP load.

    .venv/bin/python benchmarks/bench_index.py                 # 1,000,000 documents
    .venv/bin/python benchmarks/bench_index.py --docs 100000   # quicker

Prints, from one run on this machine:

1. build of an index of ``--docs`` generated documents (Zipfian words, 2 % edited
   copies): time, per-document cost, peak RSS, bytes on disk per document;
   an ``add`` of a batch of 1 % more documents;
2. single-document query latency (p50 / p95 / p99, ms) on that index, for edited
   copies of indexed documents and for fresh documents, with and without the
   shared-fragment alignment;
3. side by side at ``--peer-docs`` documents: repetend's index vs datasketch
   ``MinHashLSH`` (same K, same shingles, its own (b, r) for the threshold) —
   insert time and query latency, and the ratio;
4. the HTTP service (``repetend serve`` in a subprocess, 127.0.0.1 only) driven by
   ``--clients`` concurrent clients for at most ``--requests`` queries or
   ``--seconds`` seconds: throughput and latency percentiles.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from repetend.corpus.store import TokenStore
from repetend.index import NearDupIndex
from repetend.neardup import NearDupConfig


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def dir_bytes(p: Path) -> int:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())


def generate(n: int, seed: int = 0, vocab: int = 200_000, lo: int = 30, hi: int = 80,
             copy_rate: float = 0.02) -> list[str]:
    """Zipfian random documents; ``copy_rate`` of them are copies of earlier ones with
    2 words replaced (J well above 0.8 for k = 5 on long documents)."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i:x}" for i in range(vocab)], dtype=object)
    lens = rng.integers(lo, hi + 1, size=n)
    ranks = np.minimum(rng.zipf(1.15, size=int(lens.sum())) - 1, vocab - 1)
    off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    toks = words[ranks]
    copies = np.flatnonzero(rng.random(n) < copy_rate)
    copies = copies[copies > 0]
    texts = [" ".join(toks[off[i]:off[i + 1]]) for i in range(n)]
    for i in copies.tolist():
        src = texts[int(rng.integers(0, i))].split()
        for _ in range(2):
            src[int(rng.integers(0, len(src)))] = "edit"
        texts[i] = " ".join(src)
    return texts


def edited(text: str, rng) -> str:
    w = text.split()
    w[int(rng.integers(0, len(w)))] = "changed"
    return " ".join(w)


def pct(x: list[float]) -> str:
    a = np.asarray(x)
    return (f"p50 {np.percentile(a, 50):7.2f}  p95 {np.percentile(a, 95):7.2f}  "
            f"p99 {np.percentile(a, 99):7.2f}  mean {a.mean():7.2f} ms")


def latency(fn, items) -> list[float]:
    out = []
    for it in items:
        t = time.perf_counter()
        fn(it)
        out.append((time.perf_counter() - t) * 1000)
    return out


def section_build(args, work: Path):
    print(f"== generate {args.docs:,} documents")
    t = time.perf_counter()
    texts = generate(args.docs + args.docs // 100, seed=1)
    add_texts = texts[args.docs:]
    texts = texts[:args.docs]
    print(f"   {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    store = TokenStore.from_texts(texts)
    t_tok = time.perf_counter() - t
    print(f"   tokenized: {store.n_tokens:,} tokens in {t_tok:.1f} s")
    cfg = NearDupConfig(threshold=0.8, num_perm=args.num_perm, bbits=args.bbits)
    t = time.perf_counter()
    idx = NearDupIndex.build(store, work / "idx", cfg, postings=args.postings)
    t_build = time.perf_counter() - t
    size = dir_bytes(work / "idx")
    s = idx.last_add.summary
    print(f"== build: {t_build:.1f} s, {t_build / args.docs * 1e6:.1f} us/doc, "
          f"{t_build / store.n_tokens * 1e9:.0f} ns/token; peak RSS {peak_rss_mb():,.0f} MiB; "
          f"on disk {size / 2**20:,.0f} MiB = {size / args.docs:,.0f} B/doc "
          f"(K={args.num_perm}, {args.bbits or 64}-bit values, LSH {idx.bands}x{idx.rows}"
          + (", with shingle postings" if args.postings else "") + ")")
    print(f"   pairs inside the corpus: {s['pairs']:,} (candidates {s['candidates_new_new']:,})")
    del store
    t = time.perf_counter()
    r = idx.add(add_texts)
    t_add = time.perf_counter() - t
    print(f"== add {len(add_texts):,} documents: {t_add:.2f} s ({t_add / len(add_texts) * 1e6:.0f} us/doc), "
          f"{r.summary['pairs_old_new']:,} pairs with old documents")
    return idx, texts


def section_query(args, idx: NearDupIndex, texts: list[str]):
    rng = np.random.default_rng(5)
    n = args.queries
    pick = rng.integers(0, len(texts), size=n)
    dup_q = [edited(texts[i], rng) for i in pick]
    fresh = generate(n, seed=99)
    idx.query(dup_q[:5])  # compile / warm
    print(f"== single-document query latency on {idx.n_docs:,} documents ({n} queries each)")
    for label, items, frag in (("edited copies, with fragments", dup_q, True),
                               ("edited copies, no fragments  ", dup_q, False),
                               ("fresh documents             ", fresh, True)):
        lat = latency(lambda x: idx.query(x, fragments=frag), items)
        print(f"   {label}: {pct(lat)}")
    if args.postings:  # texts that copy one passage of an indexed document
        pieces = []
        for i in pick[:n].tolist():
            w = texts[i].split()
            pieces.append("own words first " + " ".join(w[5:25]) + " and own words last")
        lat = latency(lambda x: idx.query(x, fragments=True), pieces)
        res_p = idx.query(pieces[:200], fragments=False)
        hit = sum(int(i) in {m["doc_index"] for m in d["sharing"] + d["contained_in"]}
                  for i, d in zip(pick[:200].tolist(), res_p.documents))
        print(f"   passage of 20 words (postings, with fragments): {pct(lat)}; "
              f"source found {hit}/{len(res_p.documents)}")
    res = idx.query(dup_q[:200], fragments=False)

    def sh(tx, k=5):
        w = tx.split()
        return {tuple(w[j:j + k]) for j in range(max(1, len(w) - k + 1))}

    above = found = 0
    for i, q, d in zip(pick[:200].tolist(), dup_q[:200], res.documents):
        a, b = sh(q), sh(texts[i])
        if len(a & b) / len(a | b) >= 0.8:  # only copies still above the threshold count
            above += 1
            found += i in {m["doc_index"] for m in d["near_duplicates"]}
    print(f"   recall on edited copies with exact J >= 0.8: {found}/{above} "
          f"(S-curve P(0.8) = {res.summary['recall_at_threshold']:.3f})")
    t = time.perf_counter()
    idx.query(dup_q, fragments=False)
    dt = time.perf_counter() - t
    print(f"   batch of {n} queries in one call: {dt * 1000 / n:.3f} ms/doc")


def section_peer(args, work: Path):
    try:
        from datasketch import MinHash, MinHashLSH
    except ImportError:
        print("== datasketch not installed: peer comparison skipped")
        return
    n = args.peer_docs
    texts = generate(n, seed=3)
    k, K = 5, args.num_perm
    print(f"== side by side at {n:,} documents (K={K}, k={k}, threshold 0.8)")
    t = time.perf_counter()
    idx = NearDupIndex.build(texts, work / "peer_idx", NearDupConfig(threshold=0.8, num_perm=K))
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    lsh = MinHashLSH(threshold=0.8, num_perm=K)
    mhs = []
    for i, tx in enumerate(texts):
        w = tx.split()
        sh = {" ".join(w[j:j + k]).encode() for j in range(max(1, len(w) - k + 1))}
        m = MinHash(num_perm=K)
        m.update_batch(list(sh))
        lsh.insert(str(i), m)
        mhs.append(m)
    t_ds = time.perf_counter() - t
    print(f"   insert: repetend {t_ours:.2f} s, datasketch {t_ds:.2f} s  -> {t_ds / t_ours:.1f}x")
    rng = np.random.default_rng(8)
    qs = [edited(texts[i], rng) for i in rng.integers(0, n, size=args.queries)]
    idx.query(qs[:3])

    def ds_query(tx):
        w = tx.split()
        sh = {" ".join(w[j:j + k]).encode() for j in range(max(1, len(w) - k + 1))}
        m = MinHash(num_perm=K)
        m.update_batch(list(sh))
        return lsh.query(m)  # candidates only: no exact verification, no fragments

    ours = latency(lambda x: idx.query(x, fragments=False, phrases=False), qs)
    ds = latency(ds_query, qs)
    print(f"   query repetend (verified, no fragments): {pct(ours)}")
    print(f"   query datasketch (unverified candidates): {pct(ds)}")
    print(f"   median ratio datasketch / repetend: {np.median(ds) / np.median(ours):.2f}x")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _drive(base: str, bodies: list[dict], clients: int, max_requests: int, seconds: float):
    import httpx

    lat: list[float] = []
    status: dict[int, int] = {}
    counter = {"n": 0}
    deadline = time.perf_counter() + seconds

    async def worker(c):
        while counter["n"] < max_requests and time.perf_counter() < deadline:
            body = bodies[counter["n"] % len(bodies)]
            counter["n"] += 1
            t = time.perf_counter()
            r = await c.post("/query", json=body)
            lat.append((time.perf_counter() - t) * 1000)
            status[r.status_code] = status.get(r.status_code, 0) + 1

    async with httpx.AsyncClient(base_url=base, timeout=60) as c:
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(c) for _ in range(clients)))
        wall = time.perf_counter() - t0
    return lat, status, wall


def section_serve(args, idx_path: Path, texts: list[str]):
    try:
        import httpx
    except ImportError:
        print("== httpx not installed: service load test skipped")
        return
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "repetend.cli.index_cmd", "serve", str(idx_path),
                             "--host", "127.0.0.1", "--port", str(port), "--read-only"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        t0 = time.perf_counter()
        while True:
            try:
                if httpx.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.perf_counter() - t0 > 120:
                print("== service did not start:", proc.stderr.read().decode()[-500:])
                return
            time.sleep(0.2)
        rng = np.random.default_rng(4)
        bodies = [{"text": edited(texts[int(i)], rng), "fragments": True}
                  for i in rng.integers(0, len(texts), size=200)]
        asyncio.run(_drive(base, bodies[:10], 2, 20, 10))  # warm
        lat, status, wall = asyncio.run(_drive(base, bodies, args.clients, args.requests,
                                               args.seconds))
        print(f"== HTTP /query on 127.0.0.1, {args.clients} concurrent clients, "
              f"{len(lat)} requests in {wall:.1f} s: {len(lat) / wall:.0f} req/s; statuses {status}")
        print(f"   latency {pct(lat)}")
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--num-perm", type=int, default=128)
    ap.add_argument("--bbits", type=int, default=16, help="stored bits per signature value (0: 64)")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--peer-docs", type=int, default=20_000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--postings", action="store_true", help="build with shingle postings")
    ap.add_argument("--work", type=Path, default=None, help="work directory (default: a temp dir)")
    ap.add_argument("--skip", nargs="*", default=[], choices=["peer", "serve"])
    args = ap.parse_args()
    args.bbits = args.bbits or None
    work = Path(args.work or tempfile.mkdtemp(prefix="bench_index_"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"work dir {work}; {os.cpu_count()} cpus")
    try:
        idx, texts = section_build(args, work)
        section_query(args, idx, texts)
        if "serve" not in args.skip:
            section_serve(args, work / "idx", texts)
        if "peer" not in args.skip:
            section_peer(args, work)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
