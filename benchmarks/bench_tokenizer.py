"""Word tokenizer throughput: repetend.tokenize_batch vs the regex baseline.

    .venv/bin/python benchmarks/bench_tokenizer.py [--mb 64] [--doc-kb 8] [--batch-mb 8]

The corpus is mixed Russian/English text made by shuffling the lines of the
seed documents (Russian) and the Vim tutor (Russian and English) found on this
machine, cut into documents of about ``--doc-kb`` KiB.  Baseline:
``re.findall(r"[^\\W_]+", text.lower())`` per document (tokens as strings, no
hashing, no NFC, no CJK rule).  repetend: ``tokenize_batch`` over batches of
``--batch-mb`` MiB of text (what ``build_store`` does), giving FNV-1a hashes and
offsets; run with numba's threads (all cores) and with one thread.
Each is run ``--repeat`` times (best kept).  Prints wall and CPU seconds, MB/s (of UTF-8), M tokens/s, the peak RSS growth,
and the ratios (wall and CPU: on a shared machine the CPU ratio is the steadier).
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import re
import resource
import time

import numba

from repetend.corpus.tokenizer import tokenize_batch

RUSSIAN = ["/work/shared/seeds/*.txt", "/usr/share/vim/vim90/tutor/tutor.ru.utf-8"]
ENGLISH = ["/usr/share/vim/vim90/tutor/tutor", "/usr/share/doc/*/copyright"]


def _lines(patterns: list[str], need_cyrillic: bool) -> list[str]:
    lines: list[str] = []
    for pat in patterns:
        for p in sorted(glob.glob(pat))[:80]:
            try:
                with open(p, encoding="utf-8") as fh:
                    lines.extend(ln for ln in fh.read().splitlines() if ln.strip())
            except (OSError, UnicodeDecodeError):
                continue
    if need_cyrillic:
        lines = [ln for ln in lines if re.search("[а-яА-Я]", ln)]
    return lines


def corpus(mb: float, doc_kb: float, seed: int = 0) -> list[str]:
    """Documents of lines drawn half from Russian, half from English text."""
    ru, en = _lines(RUSSIAN, True), _lines(ENGLISH, False)
    rng = random.Random(seed)
    target = int(mb * 1e6)
    docs, cur, cur_len, total = [], [], 0, 0
    doc_chars = int(doc_kb * 1024)
    while total < target:
        src = ru if rng.random() < 0.5 else en
        ln = src[rng.randrange(len(src))]
        cur.append(ln)
        cur_len += len(ln) + 1
        if cur_len >= doc_chars * rng.uniform(0.5, 1.5):
            docs.append("\n".join(cur))
            total += len(docs[-1].encode())
            cur, cur_len = [], 0
    return docs


def batches(docs: list[str], batch_mb: float) -> list[list[str]]:
    out, cur, n = [], [], 0
    for d in docs:
        cur.append(d)
        n += len(d)
        if n >= batch_mb * 1e6:
            out.append(cur)
            cur, n = [], 0
    if cur:
        out.append(cur)
    return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=64)
    ap.add_argument("--doc-kb", type=float, default=8)
    ap.add_argument("--batch-mb", type=float, default=8)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs")
    args = ap.parse_args()

    docs = corpus(args.mb, args.doc_kb)
    n_bytes = sum(len(d.encode()) for d in docs)
    bs = batches(docs, args.batch_mb)
    tokenize_batch(["warm up the numba cache, Привет"])
    print(f"corpus: {len(docs):,} documents, {n_bytes / 1e6:.1f} MB UTF-8, "
          f"{sum(map(len, docs)) / 1e6:.1f} M chars, {len(bs)} batches, "
          f"numba threads {numba.get_num_threads()}")

    pat = re.compile(r"[^\W_]+")

    def run_regex() -> int:
        n = 0
        for d in docs:
            n += len(pat.findall(d.lower()))
        return n

    def run_repetend() -> int:
        n = 0
        for b in bs:
            n += int(tokenize_batch(b).hashes.size)
        return n

    def measure(fn, threads: int):
        numba.set_num_threads(threads)
        rss0 = peak_rss_mb()
        best_w = best_c = float("inf")
        for _ in range(args.repeat):
            t, c = time.perf_counter(), time.process_time()
            n = fn()
            best_w = min(best_w, time.perf_counter() - t)
            best_c = min(best_c, time.process_time() - c)
        return best_w, best_c, n, peak_rss_mb() - rss0

    rows = [("regex [^\\W_]+ on lower()", *measure(run_regex, 1))]
    for threads in sorted({numba.config.NUMBA_NUM_THREADS, 1}, reverse=True):
        rows.append((f"repetend tokenize_batch, {threads} thread(s)",
                     *measure(run_repetend, threads)))
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    t_re, c_re, n_re = rows[0][1], rows[0][2], rows[0][3]
    print(f"{'':40s} {'wall s':>7s} {'cpu s':>7s} {'MB/s':>7s} {'Mtok/s':>7s} {'ns/tok':>7s} "
          f"{'tokens':>11s} {'+RSS MB':>8s} {'speed-up wall':>13s} {'cpu':>6s}")
    for name, dt, cpu, n, rss in rows:
        print(f"{name:40s} {dt:7.2f} {cpu:7.2f} {n_bytes / 1e6 / dt:7.1f} {n / 1e6 / dt:7.2f} "
              f"{dt * 1e9 / max(n, 1):7.1f} {n:11,d} {rss:8.0f} {t_re / dt:12.2f}x "
              f"{c_re / cpu:5.2f}x")
    print(f"best of {args.repeat} runs each; load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          "(wall-clock figures are only comparable within one run)")
    if rows[1][3] != n_re:
        print(f"note: token counts differ ({rows[1][3]:,} vs {n_re:,}): the regex keeps "
              "no combining marks and splits no CJK; repetend follows tokenize_ref")


if __name__ == "__main__":
    main()
