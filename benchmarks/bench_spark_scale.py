"""The default ``repetend scan --engine spark`` on a large corpus: wall time and peak
private memory per stage of the driver, its JVM and the executors' Python workers,
under a memory watchdog.

    .venv/bin/python benchmarks/corpora/real_corpus.py --large --out /tmp/debian-large.jsonl
    .venv/bin/python benchmarks/bench_spark_scale.py /tmp/debian-large.jsonl --out /tmp/scan \\
        --kill-above 20G

The scan runs with its default options (``--spark-master local[2]`` unless
``--master`` says otherwise, ``--no-report``) as a child process.  Every
``--every`` seconds this script reads ``RssAnon`` (private memory) of the child (the
Python driver), of its Java descendants (in local mode the driver's JVM, which runs
the executors too) and of its other Python descendants (the executors' Python
workers; the largest one counts), and kills the whole tree when their sum passes
``--kill-above``.  Stages are told apart by the scan's progress lines; the peaks of
the one task that mines the islands and of the one that runs the template layer are
``mining_task_peak_anon_bytes`` and ``templates.task_peak_anon_bytes`` of
``phrases/summary.json``'s ``spark``, sampled inside those tasks.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

from repetend._memory import parse_size

MARKERS = (("spark: reading", "corpus"), ("finding near-duplicates", "dups"),
           ("mining phrases", "phrases"), ("planning the cleaning", "decisions"))


def _anon(proc: psutil.Process) -> int:
    try:
        with open(f"/proc/{proc.pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) << 10
    except OSError:
        pass
    return 0


def _sample(root: psutil.Process) -> tuple[int, int, int]:
    """(driver, JVM, largest other Python descendant) private bytes."""
    jvm = worker = 0
    try:
        kids = root.children(recursive=True)
    except psutil.Error:
        kids = []
    for k in kids:
        try:
            exe = os.path.basename((k.cmdline() or [""])[0])
        except psutil.Error:
            continue
        if exe == "java":
            jvm += _anon(k)
        elif "python" in exe:
            worker = max(worker, _anon(k))
    return _anon(root), jvm, worker


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--kill-above", default="20G", help="kill the scan when the sum passes this")
    ap.add_argument("--every", type=float, default=0.2)
    args = ap.parse_args()
    limit = parse_size(args.kill_above)
    shutil.rmtree(args.out, ignore_errors=True)
    cmd = [sys.executable, "-m", "repetend.cli", "scan", args.corpus, "--out", str(args.out),
           "--engine", "spark", "--spark-master", args.master, "--no-report"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    root = psutil.Process(proc.pid)
    stage = ["start"]
    order: list[str] = ["start"]
    peaks: dict[str, list[int]] = {"start": [0, 0, 0, 0]}
    log: list[str] = []

    def read_progress():
        for line in proc.stderr:
            log.append(line)
            for marker, name in MARKERS:
                if line.startswith(marker) and name not in peaks:
                    stage[0] = name
                    order.append(name)
                    peaks[name] = [0, 0, 0, 0]

    th = threading.Thread(target=read_progress, daemon=True)
    th.start()
    killed = None
    while proc.poll() is None:
        d, j, w = _sample(root)
        pk = peaks[stage[0]]
        for i, v in enumerate((d, j, w, d + j + w)):
            pk[i] = max(pk[i], v)
        if d + j + w > limit:
            killed = stage[0]
            for k in root.children(recursive=True) + [root]:
                try:
                    k.send_signal(signal.SIGKILL)
                except psutil.Error:
                    pass
            break
        time.sleep(args.every)
    proc.wait()
    th.join(timeout=5)
    wall = time.perf_counter() - t0
    print(f"{' '.join(cmd[1:])}")
    print(f"exit {proc.returncode}, wall {wall:.1f} s"
          + (f", KILLED above {args.kill_above} in stage {killed}" if killed else ""))
    print(f"{'stage':10} {'driver MB':>10} {'JVM MB':>8} {'worker MB':>10} {'sum MB':>8}")
    for name in order:
        pk = [x / 2**20 for x in peaks[name]]
        print(f"{name:10} {pk[0]:10.0f} {pk[1]:8.0f} {pk[2]:10.0f} {pk[3]:8.0f}")
    ph = args.out / "phrases" / "summary.json"
    if proc.returncode == 0 and ph.is_file():
        sp = json.loads(ph.read_text()).get("spark") or {}
        tpl = sp.get("templates") or {}
        top = json.loads((args.out / "summary.json").read_text())
        print(f"tokens {top['corpus']['tokens']:,}; islands {sp.get('island_tokens', 0):,} "
              f"({100 * sp.get('kept_share', 0):.1f} %), the mining task "
              f"{sp.get('mining_task_peak_anon_bytes', 0) / 2**20:,.0f} MB; "
              f"widened corpus {tpl.get('tokens', 0):,} "
              f"({100 * tpl.get('kept_share', 0):.1f} %); the layer's task "
              f"{tpl.get('task_peak_anon_bytes', 0) / 2**20:,.0f} MB")
    elif proc.returncode:
        print("".join(log[-20:]))


if __name__ == "__main__":
    main()
