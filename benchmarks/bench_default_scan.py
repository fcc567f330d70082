"""The default ``repetend scan`` on a large natural corpus, per stage: wall, CPU,
peak private memory, B/token — under a memory watchdog.

    .venv/bin/python benchmarks/corpora/real_corpus.py --large --out /tmp/debian-large.jsonl
    .venv/bin/python -m repetend tokenize /tmp/debian-large.jsonl -o /tmp/large-store
    .venv/bin/python benchmarks/bench_default_scan.py /tmp/large-store --out /tmp/large-scan \\
        --kill-above 8G

INPUT is what ``scan`` takes (a corpus file or a token store; a store skips the
tokenizer, whose time is then 0).  The scan runs with its default options and
``--out``, as a child process; this script reads the child's
``/proc/PID/status`` (``RssAnon``: private memory; ``VmRSS``: with the pages of
the memory-mapped store) and ``/proc/PID/stat`` (user + system CPU) every
``--every`` seconds, and kills it when ``RssAnon`` passes ``--kill-above`` (the
machine is never taken down; the run is then reported as killed in the stage
it was in).  Stages are told apart by the scan's own progress lines
("tokenizing …", "mining phrases …", "finding near-duplicates …", "writing the
report …"); within ``phrases``, the split between mining and the template
layer comes from ``phrases/summary.json``.  ``B/token`` is the stage's peak
private memory over the tokens of the corpus; the idle interpreter with numba
and pyarrow loaded holds about 190 MB of it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

MARKERS = (("tokenizing", "tokenize"), ("mining phrases", "phrases"),
           ("finding near-duplicates", "dups"), ("writing the report", "report"))
_TICK = os.sysconf("SC_CLK_TCK")


def _size(s: str) -> int:
    s = s.strip().upper().rstrip("B")
    mult = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    return int(float(s[:-1]) * mult[s[-1]]) if s and s[-1] in mult else int(s)


def _status(pid: int) -> tuple[int, int]:
    anon = rss = 0
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                anon = int(line.split()[1]) * 1024
            elif line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
    return anon, rss


def _cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def run(inp: str, out: str, kill_above: int, every: float, extra: list[str]) -> dict:
    cmd = [sys.executable, "-m", "repetend", "scan", inp, "-o", out, *extra]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         bufsize=1)
    stage = ["start"]
    log: list[str] = []

    def reader():
        for line in p.stdout:
            log.append(line)
            for marker, name in MARKERS:
                if marker in line:
                    stage[0] = name

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    stats: dict[str, dict] = {}
    killed = None
    last_cpu = 0.0
    while p.poll() is None:
        try:
            anon, rss = _status(p.pid)
            cpu = _cpu(p.pid)
        except (OSError, IndexError, ValueError):
            break
        now = time.perf_counter() - t0
        s = stats.setdefault(stage[0], {"first": now, "peak_anon": 0, "peak_rss": 0,
                                        "cpu0": last_cpu})
        s["last"], s["cpu1"] = now, cpu
        s["peak_anon"] = max(s["peak_anon"], anon)
        s["peak_rss"] = max(s["peak_rss"], rss)
        last_cpu = cpu
        if anon > kill_above:
            killed = stage[0]
            p.kill()
            break
        time.sleep(every)
    p.wait()
    th.join(timeout=5)
    return {"cmd": cmd, "rc": p.returncode, "killed_in": killed, "stats": stats,
            "wall": time.perf_counter() - t0, "log": log}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("--out", required=True, help="the scan directory to write")
    ap.add_argument("--kill-above", default="8G", help="private memory that stops the run")
    ap.add_argument("--every", type=float, default=0.2, help="sampling period, seconds")
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("scan_args", nargs="*", help="more scan options, after --")
    args = ap.parse_args(argv)
    r = run(args.input, args.out, _size(args.kill_above), args.every, args.scan_args)
    summary_path = Path(args.out) / "summary.json"
    summary = json.loads(summary_path.read_text()) if r["rc"] == 0 and summary_path.exists() \
        else {}
    tokens = (summary.get("corpus") or {}).get("tokens") or 0
    timings = summary.get("timings") or {}
    phr = {}
    if (Path(args.out) / "phrases" / "summary.json").exists() and r["rc"] == 0:
        phr = json.loads((Path(args.out) / "phrases" / "summary.json").read_text())
    rows = []
    for name in ["start", "tokenize", "phrases", "dups", "report"]:
        s = r["stats"].get(name)
        if s is None:
            continue
        wall = timings.get(name, s["last"] - s["first"])
        cpu = s["cpu1"] - s["cpu0"]
        rows.append((name, wall, cpu, s["peak_anon"], s["peak_rss"]))
    print(f"$ {' '.join(r['cmd'])}")
    print(f"exit {r['rc']}" + (f", killed in stage {r['killed_in']} above {args.kill_above}"
                               if r["killed_in"] else "") + f", {r['wall']:.1f} s wall")
    if tokens:
        print(f"{tokens:,} tokens, {(summary.get('corpus') or {}).get('documents', 0):,} documents")
    print("| stage | wall s | CPU s | peak private MB | peak RSS MB | B/token (private) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, wall, cpu, anon, rss in rows:
        bpt = f"{anon / tokens:.1f}" if tokens else "—"
        print(f"| {name} | {wall:.1f} | {cpu:.1f} | {anon / 2**20:,.0f} | {rss / 2**20:,.0f} "
              f"| {bpt} |")
    pt = phr.get("timings") or {}
    tt = (phr.get("templates") or {})
    if pt:
        ct = tt.get("cpu_timings") or {}
        print(f"phrases: engine {phr.get('engine')}, mine {pt.get('mine', 0):.1f} s, "
              f"templates {pt.get('templates', 0):.1f} s wall / {ct.get('total', 0):.1f} s CPU "
              f"(slots {ct.get('slots', 0):.1f} s CPU), {phr.get('phrases', 0):,} phrases, "
              f"{tt.get('templates', 0):,} templates")
    if r["rc"] != 0:
        print("".join(r["log"][-5:]), end="")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "rc": r["rc"],
                                               "killed_in": r["killed_in"], "tokens": tokens,
                                               "wall": r["wall"], "phrases_timings": pt},
                                              indent=1))
    return 0 if r["rc"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
