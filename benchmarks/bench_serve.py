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
processes), driven by ``--clients`` concurrent keep-alive connections (a lean
asyncio HTTP/1.1 client, :func:`drive`) for ``--seconds`` seconds each; the figures
also print the CPU the load generator itself took.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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


async def _one(reader, writer, request: bytes) -> int:
    """Send one keep-alive request; read the answer (Content-Length framed); its status."""
    writer.write(request)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    await reader.readexactly(length)
    return status, length


async def drive(base: str, bodies: list[dict], clients: int, seconds: float):
    """*clients* keep-alive connections, each sending the next body as soon as its answer
    is read, for *seconds*.  A lean HTTP/1.1 client on asyncio streams: the requests are
    encoded beforehand, so that the generator, on the same cores, takes little of them
    (httpx at 32 connections took half a core and slowed the figures it measured)."""
    host, port = base.removeprefix("http://").split(":")
    reqs = []
    for b in bodies:
        data = json.dumps(b).encode("utf-8")
        reqs.append(b"POST /query HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (host.encode(), len(data), data))
    lat: list[float] = []
    status: dict[int, int] = {}
    nxt = {"i": 0, "bytes": 0}
    deadline = time.perf_counter() + seconds

    async def worker():
        reader, writer = await asyncio.open_connection(host, int(port), limit=2**26)
        try:
            while time.perf_counter() < deadline:
                req = reqs[nxt["i"] % len(reqs)]
                nxt["i"] += 1
                t = time.perf_counter()
                code, size = await _one(reader, writer, req)
                lat.append((time.perf_counter() - t) * 1000)
                nxt["bytes"] += size
                status[code] = status.get(code, 0) + 1
        finally:
            writer.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    status["mean_answer_bytes"] = nxt["bytes"] // max(len(lat), 1)
    return lat, status, time.perf_counter() - t0


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of processes *pids* (Linux /proc) so far."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


def server_pids(proc) -> list[int]:
    """The server process and its children (uvicorn workers)."""
    pids = [proc.pid]
    try:
        for t in Path(f"/proc/{proc.pid}/task").iterdir():
            kids = (t / "children").read_text().split()
            pids += [int(k) for k in kids]
    except OSError:
        pass
    return pids


def start_server(idx: Path, workers: int, threads: int | None):
    import urllib.error
    import urllib.request

    port = free_port()
    cmd = [sys.executable, "-m", "repetend.cli.index_cmd", "serve", str(idx), "--host", "127.0.0.1",
           "--port", str(port), "--read-only"]
    if workers > 1:
        cmd += ["--workers", str(workers)]
    if threads is not None:
        cmd += ["--query-threads", str(threads)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    t0 = time.perf_counter()
    while True:
        try:
            with urllib.request.urlopen(base + "/health", timeout=2) as r:
                if r.status == 200:
                    return proc, base
        except (urllib.error.URLError, OSError):
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
    ap.add_argument("--query-threads", type=int, default=None,
                    help="repetend serve --query-threads (default: the server's)")
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
        proc, base = start_server(idx, args.workers, args.query_threads)
        try:
            asyncio.run(drive(base, bodies[:20], 2, 5.0))   # warm the page cache and the kernels
            for clients in args.clients:
                load = os.getloadavg()[0]
                r0 = resource.getrusage(resource.RUSAGE_SELF)
                pids = server_pids(proc)
                s0 = cpu_seconds(pids)
                lat, status, wall = asyncio.run(drive(base, bodies, clients, args.seconds))
                r1 = resource.getrusage(resource.RUSAGE_SELF)
                gen = (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) / wall
                srv = (cpu_seconds(pids) - s0) / wall
                print(f"== {clients} clients, {args.workers} worker(s), query threads "
                      f"{args.query_threads or 'default'}: {len(lat):,} requests in "
                      f"{wall:.1f} s = {len(lat) / wall:.0f} requests/s; latency {pct(lat)}; "
                      f"statuses {status}; server {srv:.2f} cores, generator {gen:.2f}; "
                      f"load average before {load:.1f}")
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
