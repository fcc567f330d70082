"""repetend scan --engine spark on a standalone cluster (1 and 2 workers) vs local.

For each corpus size (the first N records of a JSONL corpus, shuffled): a local
scan of the records in the Spark document order (the reference), then
``repetend scan --engine spark --spark-master spark://…`` on the shuffled copy
with a one-worker and a two-worker cluster (workers of 1 core, 1 GB).  Prints
wall time, the scan's per-stage timings (summary.json), the driver's peak memory
(sampled every 0.2 s: the Python driver, its JVM, and their sum; executors are
children of the workers, not counted), the private memory of the executor's Python
worker while it mined the islands ("mine MB": ``mining_task_peak_anon_bytes``) and
while it ran the template layer ("task MB": ``task_peak_anon_bytes`` of
summary.json), and whether every table equals the local one.
Arguments after ``--`` go to every scan (e.g. ``--no-templates``).

    python benchmarks/bench_spark.py bench-data/debian.jsonl 500 2000 [-- --no-templates]
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_spark_scan import tables  # noqa: E402

from repetend.spark.order import local_order  # noqa: E402
from repetend.spark.standalone import standalone_cluster  # noqa: E402


def run_scan(corpus: Path, out: Path, extra: list[str]) -> tuple[float, tuple, dict]:
    """Wall seconds, (peak MB of the Python driver, of its JVM, of both at once), the
    summary."""
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", "from repetend.cli import main; main()", "scan",
                          str(corpus), "--out", str(out), "--no-report", "-q", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    proc, peak = psutil.Process(p.pid), [0, 0, 0]
    while p.poll() is None:
        try:
            py = proc.memory_info().rss
            jvm = sum(q.memory_info().rss for q in proc.children(recursive=True))
            peak = [max(peak[0], py), max(peak[1], jvm), max(peak[2], py + jvm)]
        except psutil.Error:
            pass
        time.sleep(0.2)
    err = p.stderr.read()
    if p.returncode:
        raise SystemExit(f"scan failed: {err}")
    wall = time.perf_counter() - t
    sm = json.loads((out / "summary.json").read_text())
    ph = out / "phrases" / "summary.json"
    psm = json.loads(ph.read_text()) if ph.is_file() else {}
    sm["task_mb"] = task_mb(psm)
    sm["mine_mb"] = (psm.get("spark") or {}).get("mining_task_peak_anon_bytes", 0) / 2**20
    return wall, tuple(x / 2**20 for x in peak), sm


def task_mb(phrase_summary: dict) -> float:
    """The template layer's task: peak private MB of its Python worker (0: no task)."""
    tpl = ((phrase_summary.get("spark") or {}).get("templates") or {})
    return tpl.get("task_peak_anon_bytes", 0) / 2**20


def same(a: Path, b: Path) -> bool:
    ta, tb = tables(a), tables(b)
    if sorted(ta) != sorted(tb):
        return False
    for k in ta:
        x, y = ta[k].select(tb[k].column_names), tb[k]
        for c in y.column_names:
            u, v = x.column(c), y.column(c)
            if u.type.id == v.type.id and str(u.type).startswith("double"):
                if not np.array_equal(u.to_numpy(), v.to_numpy(), equal_nan=True):
                    return False
            elif not u.equals(v):
                return False
    return True


def main() -> None:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    src = Path(argv[0])
    sizes = [int(x) for x in argv[1:]] or [500, 2000]
    with open(src, encoding="utf-8") as f:
        lines = [next(f) for _ in range(max(sizes))]
    tmp = Path(tempfile.mkdtemp(prefix="bench-spark-", dir=os.environ.get("BENCH_TMP")))
    results = []
    for n in sizes:
        recs = [json.loads(x) for x in lines[:n]]
        perm = np.random.default_rng(0).permutation(n)
        shuf, ordered = tmp / f"shuf{n}.jsonl", tmp / f"ord{n}.jsonl"
        shuf.write_text("".join(lines[i] for i in perm), encoding="utf-8")
        order = local_order([r["id"] for r in recs], [r["text"] for r in recs])
        ordered.write_text("".join(lines[i] for i in order), encoding="utf-8")
        wall, peak, sm = run_scan(ordered, tmp / f"local{n}", extra)
        tokens = json.loads((tmp / f"local{n}" / "summary.json").read_text())["corpus"]["tokens"]
        results.append((n, tokens, "local", wall, peak, sm, True))
        for workers in (1, 2):
            with standalone_cluster(workers, cores=1, memory="1g") as url:
                out = tmp / f"spark{n}w{workers}"
                wall, peak, sm = run_scan(shuf, out, ["--engine", "spark", "--spark-master", url,
                                                      *extra])
                results.append((n, tokens, f"spark {workers}w", wall, peak, sm,
                                same(out, tmp / f"local{n}")))
    print(f"corpus: first N records of {src}, shuffled for Spark; workers 1 core / 1 GB each; "
          f"scan arguments: {' '.join(extra) or '(defaults)'}")
    print(f"{'docs':>6} {'tokens':>10} {'engine':9} {'wall s':>7} {'py MB':>6} {'JVM MB':>6} "
          f"{'sum MB':>6} {'mine MB':>7} {'task MB':>7} {'tokenize':>8} {'dups':>7} {'phrases':>7} {'decide':>7} equal")
    for n, tok, eng, wall, peak, sm, eq in results:
        tim = sm["timings"]
        print(f"{n:6d} {tok:10d} {eng:9} {wall:7.1f} {peak[0]:6.0f} {peak[1]:6.0f} {peak[2]:6.0f} "
              f"{sm['mine_mb']:7.0f} {sm['task_mb']:7.0f} "
              f"{tim.get('tokenize', 0):8.1f} "
              f"{tim.get('dups', 0):7.1f} {tim.get('phrases', 0):7.1f} "
              f"{tim.get('decisions', 0):7.1f} {eq}")


if __name__ == "__main__":
    main()
