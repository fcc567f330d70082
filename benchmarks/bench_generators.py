"""Time the corpus generators of :mod:`repetend.synth`, side by side.

    .venv/bin/python benchmarks/bench_generators.py [--scale F]

Each generator runs in a fresh subprocess so that its peak RSS is its own (imports and
the numba cache load happen before the clock starts).  Synthetic 1
is also compared with a pure-Python generator written the way the BloomSpan paper describes it
(8 random letters per word, a set to drop repeats), at the same size.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

_CHILD = r"""
import json, resource, sys, time
kind, n = sys.argv[1], int(sys.argv[2])
if kind != "python-synthetic1":
    from repetend.synth import synthetic1, synthetic2, weblike
    gen = {"synthetic1": synthetic1, "synthetic2": synthetic2, "weblike": weblike}[kind]
    gen(5)                                  # imports and numba cache load, not timed
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
if kind == "python-synthetic1":
    import random, string
    rnd = random.Random(0)
    seen, words = set(), []
    while len(words) < n * 5000:
        w = "".join(rnd.choices(string.ascii_lowercase, k=8))
        if w not in seen:
            seen.add(w)
            words.append(w)
    texts = [" ".join(words[d * 5000:(d + 1) * 5000]) for d in range(n)]
else:
    texts = gen(n).texts
dt = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
n_words = sum(t.count(" ") + t.count("\n") + 1 for t in texts)
print(json.dumps({"seconds": dt, "words": n_words, "chars": sum(map(len, texts)),
                  "peak_mb": peak / 1024, "base_mb": base / 1024}))
"""


def _run(kind: str, n: int) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, kind, str(n)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="benchmarks/bench_generators.py", description=__doc__)
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply the default sizes (synthetic1 1000 docs, synthetic2 1000, "
                         "weblike 3000)")
    args = ap.parse_args(argv)
    s = args.scale
    runs = [("synthetic1", max(5, int(1000 * s))), ("python-synthetic1", max(5, int(1000 * s))),
            ("synthetic2", max(5, int(1000 * s))), ("weblike", max(1, int(3000 * s)))]
    print(f"{'generator':<20}{'docs':>7}{'words':>12}{'MB text':>9}{'seconds':>9}"
          f"{'ns/word':>9}{'RSS before':>12}{'peak RSS':>10}{'B/word':>8}")
    res = {}
    for kind, n in runs:
        r = res[kind] = _run(kind, n)
        print(f"{kind:<20}{n:>7}{r['words']:>12,}{r['chars'] / 1e6:>9.1f}{r['seconds']:>9.2f}"
              f"{1e9 * r['seconds'] / r['words']:>9.0f}{r['base_mb']:>12.0f}{r['peak_mb']:>10.0f}"
              f"{(r['peak_mb'] - r['base_mb']) * 2**20 / r['words']:>8.0f}")
    a, b = res["synthetic1"], res["python-synthetic1"]
    grow = (a["peak_mb"] - a["base_mb"]) / max(b["peak_mb"] - b["base_mb"], 1e-9)
    print(f"synthetic1 vs pure Python at the same size: {b['seconds'] / a['seconds']:.1f}x faster, "
          f"RSS growth {grow:.2f}x  (RSS in MB; 'before' = after imports and warm-up)")


if __name__ == "__main__":
    main()
