"""Load figures of ``repetend serve``: requests/s and latency percentiles at several
client counts, on an index of ``--docs`` documents, load generator on the same machine.

    .venv/bin/python benchmarks/bench_serve.py                       # 100,000 documents, 8 and 32 clients
    .venv/bin/python benchmarks/bench_serve.py --docs 20000 --seconds 10

The documents are the Debian documentation corpus (``bench-data/debian.jsonl``: man
pages, READMEs, licences, changelogs) cut into passages of about ``--chars``
characters at paragraph breaks; passages beyond the first ``--docs`` are the
"fresh" queries.  When the file is missing, generated Zipfian documents are used.

Each request is ``POST /query`` of one text with fragments on (the default answer),
half of them an indexed passage with a few words edited (near-duplicates to align),
half a fresh passage (licence and header boilerplate still matches); the server is
``repetend serve --read-only`` in a subprocess on 127.0.0.1 (``--workers`` uvicorn
processes), driven by ``--clients`` concurrent keep-alive clients (httpx, asyncio)
for ``--seconds`` seconds each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from repetend.index import NearDupIndex

DEBIAN = Path(__file__).resolve().parents[1] / "bench-data" / "debian.jsonl"   # not in git


def passages(path: Path, n: int, chars: int) -> list[str]:
    """*n* passages of about *chars* characters, cut at blank lines."""
    out: list[str] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            text = json.loads(line).get("text") or ""
            buf: list[str] = []
            size = 0
            for para in text.split("\n\n"):
                buf.append(para)
                size += len(para) + 2
                if size >= chars:
                    out.append("\n\n".join(buf))
                    buf, size = [], 0
                    if len(out) >= n:
                        return out
            if size >= chars // 4:
                out.append("\n\n".join(buf))
                if len(out) >= n:
                    return out
    return out


def generated(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i:x}" for i in range(100_000)], dtype=object)
    lens = rng.integers(80, 300, size=n)
    ranks = np.minimum(rng.zipf(1.15, size=int(lens.sum())) - 1, words.size - 1)
    off = np.concatenate([[0], np.cumsum(lens)])
    return [" ".join(words[ranks[off[i]:off[i + 1]]]) for i in range(n)]


def edited(text: str, rng) -> str:
    w = text.split(" ")
    for _ in range(3):
        w[int(rng.integers(0, len(w)))] = "edited"
    return " ".join(w)


def pct(lat: list[float]) -> str:
    a = np.asarray(lat)
    return " / ".join(f"p{q} {np.percentile(a, q):.0f} ms" for q in (50, 95, 99))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def drive(base: str, bodies: list[dict], clients: int, seconds: float):
    import httpx

    lat: list[float] = []
    status: dict[int, int] = {}
    nxt = {"i": 0}
    deadline = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)

    async def worker(c):
        while time.perf_counter() < deadline:
            body = bodies[nxt["i"] % len(bodies)]
            nxt["i"] += 1
            t = time.perf_counter()
            r = await c.post("/query", json=body)
            lat.append((time.perf_counter() - t) * 1000)
            status[r.status_code] = status.get(r.status_code, 0) + 1

    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as c:
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(c) for _ in range(clients)))
        wall = time.perf_counter() - t0
    return lat, status, wall


def start_server(idx: Path, workers: int):
    import httpx

    port = free_port()
    cmd = [sys.executable, "-m", "repetend.cli.index_cmd", "serve", str(idx), "--host", "127.0.0.1",
           "--port", str(port), "--read-only"]
    if workers > 1:
        cmd += ["--workers", str(workers)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    t0 = time.perf_counter()
    while True:
        try:
            if httpx.get(base + "/health", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.perf_counter() - t0 > 300:
            raise SystemExit("service did not start: " + proc.stderr.read().decode()[-800:])
        time.sleep(0.3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--chars", type=int, default=1500, help="passage length (Debian corpus)")
    ap.add_argument("--clients", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--seconds", type=float, default=30.0, help="per client count")
    ap.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    ap.add_argument("--postings", action="store_true", help="build with shingle postings")
    ap.add_argument("--corpus", type=Path, default=DEBIAN, help="the Debian JSONL corpus")
    ap.add_argument("--work", type=Path, default=None, help="work directory (kept; reused)")
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="bench_serve_"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"work dir {work}; {os.cpu_count()} cpus; load average {os.getloadavg()[0]:.1f}")
    try:
        n_fresh = 2000
        t0 = time.perf_counter()
        if args.corpus.is_file():
            texts = passages(args.corpus, args.docs + n_fresh, args.chars)
            source = f"Debian passages of ~{args.chars} chars"
        else:
            texts = generated(args.docs + n_fresh)
            source = "generated Zipfian documents"
        docs, fresh = texts[:args.docs], texts[args.docs:]
        print(f"== {len(docs):,} indexed documents + {len(fresh):,} fresh ({source}), "
              f"{sum(map(len, docs)) / 2**20:.0f} MiB of text, read in {time.perf_counter() - t0:.1f} s")
        idx = work / "idx"
        if not (idx / "MANIFEST.json").is_file():
            t0 = time.perf_counter()
            NearDupIndex.build(docs, idx, postings=args.postings)
            print(f"== index built in {time.perf_counter() - t0:.1f} s")
        rng = np.random.default_rng(5)
        bodies = []
        for i in range(400):
            if i % 2 == 0:
                bodies.append({"text": edited(docs[int(rng.integers(0, len(docs)))], rng)})
            else:
                bodies.append({"text": fresh[int(rng.integers(0, len(fresh)))]})
        proc, base = start_server(idx, args.workers)
        try:
            asyncio.run(drive(base, bodies[:20], 2, 5.0))   # warm the page cache and the kernels
            for clients in args.clients:
                load = os.getloadavg()[0]
                lat, status, wall = asyncio.run(drive(base, bodies, clients, args.seconds))
                print(f"== {clients} clients, {args.workers} worker(s): {len(lat):,} requests in "
                      f"{wall:.1f} s = {len(lat) / wall:.0f} requests/s; latency {pct(lat)}; "
                      f"statuses {status}; load average before {load:.1f}")
        finally:
            proc.terminate()
            try:
                proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
