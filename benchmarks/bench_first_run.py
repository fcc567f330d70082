"""The first ten minutes: how long the kernels' one-time compile takes and whether
the first `repetend demo` after set-up is as fast as the second.

Copies ``src/`` to a temporary directory (so no compiled kernel is cached), then
times, each as a fresh process: ``repetend warmup`` (what ``scripts/setup.sh``
runs), the first ``repetend demo``, the second ``repetend demo``; and, for
comparison, a first ``demo`` on another fresh copy without the warm-up::

    python benchmarks/bench_first_run.py [--pages 3000]

Prints wall seconds of each and the ratio first/second (target: at most 2).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def _fresh_copy(root: Path) -> Path:
    dst = root / "src"
    shutil.copytree(SRC, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def _run(src: Path, args: list[str], cwd: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "repetend", *args], cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=3000)
    a = ap.parse_args(argv)
    demo = ["demo", "--pages", str(a.pages), "-q", "--out"]
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        (t / "a").mkdir()
        (t / "b").mkdir()
        src = _fresh_copy(t / "a")
        warm = _run(src, ["warmup", "-q"], t)
        first = _run(src, demo + [str(t / "d1")], t)
        second = _run(src, demo + [str(t / "d2")], t)
        cold = _run(_fresh_copy(t / "b"), demo + [str(t / "d3")], t)
    print(f"warmup (fresh machine)          {warm:7.1f} s")
    print(f"first demo after warmup         {first:7.1f} s")
    print(f"second demo                     {second:7.1f} s")
    print(f"first/second                    {first / second:7.2f}  (target <= 2)")
    print(f"first demo without warmup       {cold:7.1f} s  ({cold / second:.1f}x the second)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
