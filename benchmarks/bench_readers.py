"""Readers side by side: repetend's streaming readers vs. the usual one-liners.

Writes one synthetic corpus (web-like pages, ~1 KB each) as JSONL, JSONL.gz,
JSONL.zst, Parquet and CSV, then reads each in a fresh subprocess and prints
time, MB/s, µs per record and peak RSS above the interpreter's baseline.
The one-liners (pandas ``read_json(lines=True)``, ``pyarrow.json``,
``pq.read_table``, ``pandas.read_csv``) load the whole file; repetend streams.

    .venv/bin/python benchmarks/bench_readers.py [--mb 60]
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing as mp
import random
import tempfile
import time
from pathlib import Path


def make_corpus(d: Path, mb: int) -> dict[str, Path]:
    rnd = random.Random(7)
    words = ["".join(rnd.choices("abcdefghijklmnopqrstuvwxyz", k=rnd.randint(2, 9)))
             for _ in range(20_000)]
    footer = "Free delivery on orders over 3000 roubles. © 2024 Shop. Cookies help us."
    rows = []
    size = 0
    i = 0
    while size < mb * 1_000_000:
        body = " ".join(rnd.choices(words, k=rnd.randint(80, 220)))
        row = {"id": f"doc-{i}", "url": f"https://site{i % 50}.example/p/{i}",
               "text": f"Menu Home Catalog Cart\n{body}\n{footer}"}
        rows.append(row)
        size += len(row["text"]) + 60
        i += 1
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    files = {"jsonl": d / "c.jsonl", "jsonl.gz": d / "c.jsonl.gz", "jsonl.zst": d / "c.jsonl.zst",
             "parquet": d / "c.parquet", "csv": d / "c.csv"}
    files["jsonl"].write_bytes(data)
    files["jsonl.gz"].write_bytes(gzip.compress(data, 6))
    import zstandard

    files["jsonl.zst"].write_bytes(zstandard.ZstdCompressor(level=3).compress(data))
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    table = pa.table({k: [r[k] for r in rows] for k in ("id", "url", "text")})
    pq.write_table(table, files["parquet"], compression="zstd")
    pacsv.write_csv(table, files["csv"])
    files["wet"] = d / "c.warc.wet.gz"
    _write_wet(files["wet"], rows)
    return files


def _write_wet(path: Path, rows: list[dict]) -> None:
    import io

    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as out:
        w = WARCWriter(out, gzip=True)
        for r in rows:
            payload = r["text"].encode()
            rec = w.create_warc_record(r["url"], "conversion", payload=io.BytesIO(payload),
                                       length=len(payload), warc_content_type="text/plain")
            w.write_record(rec)


class _PeakRSS:
    """Samples the process RSS every 5 ms in a thread (ru_maxrss would include the
    imports' own peak)."""

    def __init__(self) -> None:
        import gc
        import threading

        import psutil

        gc.collect()
        self.proc = psutil.Process()
        self.base = self.peak = self.proc.memory_info().rss
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(0.005):
            self.peak = max(self.peak, self.proc.memory_info().rss)

    def done(self) -> float:
        self.stop.set()
        self.thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)
        return (self.peak - self.base) / 1e6


def _job(kind: str, path: str, q) -> None:
    # import everything first, so the baseline holds the libraries, not the data
    import pandas as pd
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    from repetend.corpus.readers import read_corpus
    from repetend.corpus.record import ReadStats

    rss = _PeakRSS()
    t = time.perf_counter()
    n = 0
    if kind == "repetend":
        stats = ReadStats()
        for _ in read_corpus([path], stats=stats):
            n += 1
    elif kind == "pandas":
        if path.endswith(".csv"):
            n = len(pd.read_csv(path))
        else:
            n = len(pd.read_json(path, lines=True))
    elif kind == "pyarrow":
        n = (pq.read_table(path) if path.endswith(".parquet") else pj.read_json(path)).num_rows
    elif kind == "fastwarc":
        from fastwarc.warc import ArchiveIterator, WarcRecordType

        with open(path, "rb") as f:
            for rec in ArchiveIterator(f, record_types=WarcRecordType.conversion):
                rec.reader.read().decode("utf-8", "replace")
                rec.headers.get("WARC-Target-URI")
                n += 1
    elif kind == "json.loads":
        with open(path, "rb") as f:
            for line in f:
                json.loads(line)
                n += 1
    q.put((time.perf_counter() - t, n, rss.done()))


def measure(kind: str, path: Path):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_job, args=(kind, str(path), q))
    p.start()
    res = q.get()
    p.join()
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=60, help="corpus text size in MB")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as td:
        files = make_corpus(Path(td), args.mb)
        raw = files["jsonl"].stat().st_size
        plan = [("jsonl", "repetend"), ("jsonl", "json.loads"), ("jsonl", "pandas"),
                ("jsonl", "pyarrow"), ("jsonl.gz", "repetend"), ("jsonl.zst", "repetend"),
                ("parquet", "repetend"), ("parquet", "pyarrow"), ("csv", "repetend"),
                ("csv", "pandas"), ("wet", "repetend"), ("wet", "fastwarc")]
        print(f"corpus: {raw / 1e6:.0f} MB of JSONL (sizes on disk: "
              + ", ".join(f"{k} {v.stat().st_size / 1e6:.0f} MB" for k, v in files.items()) + ")")
        print(f"{'format':<10} {'reader':<11} {'records':>8} {'s':>6} {'MB/s':>6} "
              f"{'µs/rec':>7} {'peak RSS MB':>12}  streams")
        ref = {}
        for fmt, kind in plan:
            secs, n, rss = measure(kind, files[fmt])
            ref.setdefault(fmt, secs)
            print(f"{fmt:<10} {kind:<11} {n:>8} {secs:>6.2f} {raw / 1e6 / secs:>6.0f} "
                  f"{secs / n * 1e6:>7.1f} {rss:>12.0f}  "
                  f"{'yes' if kind in ('repetend', 'json.loads', 'fastwarc') else 'no'}"
                  f"  ({secs / ref[fmt]:.2f}× repetend time)")


if __name__ == "__main__":
    main()
