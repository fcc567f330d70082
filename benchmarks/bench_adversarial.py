"""Hostile corpora for phrase mining: time of the default job (``find_phrases``:
engine ``auto``, templates on) and of each engine, against natural text of the
same size.

    .venv/bin/python benchmarks/bench_adversarial.py --tokens 5M \\
        --natural bench-data/debian.jsonl --workdir /tmp/adv [--engines auto,bloomspan,suffix]

The corpora (N tokens each; σ as given, L = 10):

* ``natural`` — whole documents drawn at random from ``--natural`` (σ = 20);
* ``one-word`` — one document of N copies of one word (σ = 1);
* ``spam-10`` — ten documents of N/10 copies of "spam" (σ = 2);
* ``period-P`` — 50 documents, each a run of one random P-token period
  (P = 2, 10, 100), cut at a random point (σ = 20);
* ``identical-1000`` — one natural document of N/1000 tokens, 1,000 times (σ = 20);
* ``huge+small`` — one document of N/2 tokens of a 7-token period, then natural
  documents for the other half (σ = 20).

Every run is a fresh subprocess (its own peak memory, ``--timeout`` seconds at
most: a run that does not finish shows as ``>T``).  The ratio is the run's wall
time over the natural corpus's with the same engine.  Before the periodic-run
walk of BloomSpan's growth (``phrases/_periodic_kernels.py``) ``one-word`` and
``spam-10`` did not finish with ``bloomspan`` (quadratic in the run length).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray "
         "yankee zulu").split()


def _decimal(s: str) -> int:
    s = s.strip().upper()
    mult = {"K": 10**3, "M": 10**6, "G": 10**9}
    return int(float(s[:-1]) * mult[s[-1]]) if s and s[-1] in mult else int(s)


def _natural_docs(path: Path, n_tokens: int, seed: int = 0) -> list[str]:
    """Whole documents of *path* (JSONL, ``text``) in a seeded random order until
    about *n_tokens* words."""
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    order = np.random.default_rng(seed).permutation(len(lines))
    out, total = [], 0
    for i in order:
        text = json.loads(lines[i])["text"]
        out.append(text)
        total += len(text.split())
        if total >= n_tokens:
            break
    return out


def _periodic(rng, period: int, n: int) -> str:
    base = [WORDS[int(i)] + str(int(j)) for i, j in
            zip(rng.integers(0, len(WORDS), period), rng.integers(0, 1000, period))]
    reps = n // period + 1
    return " ".join((base * reps)[:n])


def build(name: str, n: int, natural: Path, out: Path) -> tuple[Path, int]:
    """Write corpus *name* of about *n* tokens as JSONL; returns (path, σ)."""
    rng = np.random.default_rng(1)
    docs: list[str]
    sigma = 20
    if name == "natural":
        docs = _natural_docs(natural, n)
    elif name == "one-word":
        docs, sigma = [" ".join(["word"] * n)], 1
    elif name == "spam-10":
        docs, sigma = [" ".join(["spam"] * (n // 10))] * 10, 2
    elif name.startswith("period-"):
        p = int(name.split("-")[1])
        docs = []
        for _ in range(50):
            k = int(n // 50 * rng.uniform(0.8, 1.2))
            docs.append(_periodic(np.random.default_rng(p), p, k))
    elif name == "identical-1000":
        one = " ".join(" ".join(_natural_docs(natural, n // 1000 + 50, seed=2)).split()[: n // 1000])
        docs = [one] * 1000
    elif name == "huge+small":
        docs = [_periodic(rng, 7, n // 2)] + _natural_docs(natural, n // 2, seed=3)
    else:
        raise SystemExit(f"unknown corpus {name}")
    path = out / f"{name}-{n}.jsonl"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for i, d in enumerate(docs):
                f.write(json.dumps({"id": f"{name}-{i}", "text": d}) + "\n")
        os.replace(tmp, path)
    return path, sigma


def worker(spec: dict) -> dict:
    from repetend import TokenStore
    from repetend.phrases import PhraseConfig, find_phrases

    store = TokenStore.open(spec["store"])
    cfg = PhraseConfig(min_docs=spec["sigma"], min_len=10, engine=spec["engine"])
    t0, c0 = time.perf_counter(), time.process_time()
    res = find_phrases(store, cfg)
    out = {"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}
    s = res.summary
    out.update(engine=s.get("engine"), rule=(s.get("engine_choice") or {}).get("rule"),
               phrases=s.get("phrases"), mine=s["timings"].get("mine"),
               templates=s["timings"].get("templates"),
               peak_rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    return out


def _tokenize(jsonl: Path, store: Path) -> None:
    if store.exists():
        return
    subprocess.run([sys.executable, "-m", "repetend", "tokenize", str(jsonl), "-o", str(store)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", default="5M", help="corpus sizes, comma-separated")
    ap.add_argument("--natural", default="bench-data/debian.jsonl")
    ap.add_argument("--workdir", default="/tmp/repetend-adversarial")
    ap.add_argument("--engines", default="auto,bloomspan,suffix")
    ap.add_argument("--corpora", default="natural,one-word,spam-10,period-2,period-10,"
                    "period-100,identical-1000,huge+small")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    print("| corpus | tokens | σ | engine | chosen | wall s | CPU s | mine s | templates s "
          "| peak MB | × natural |")
    print("|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for n in [_decimal(x) for x in args.tokens.split(",")]:
        base: dict[str, float] = {}
        for name in args.corpora.split(","):
            jsonl, sigma = build(name, n, Path(args.natural), work)
            store = work / f"{name}-{n}.store"
            _tokenize(jsonl, store)
            for eng in args.engines.split(","):
                spec = {"store": str(store), "sigma": sigma, "engine": eng}
                try:
                    p = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)],
                                       capture_output=True, text=True, timeout=args.timeout)
                    r = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 \
                        else {"error": p.stderr.strip().splitlines()[-1:]}
                except subprocess.TimeoutExpired:
                    r = {"timeout": True}
                r.update(corpus=name, tokens=n, sigma=sigma, asked=eng)
                rows.append(r)
                if name == "natural" and "seconds" in r:
                    base[eng] = r["seconds"]
                if "seconds" in r:
                    ratio = f"{r['seconds'] / base[eng]:.2f}" if eng in base else "—"
                    print(f"| {name} | {n:,} | {sigma} | {eng} | {r['engine']} | "
                          f"{r['seconds']:.1f} | {r['cpu_seconds']:.1f} | {r['mine']:.1f} | "
                          f"{(r['templates'] or 0):.1f} | {r['peak_rss'] / 2**20:.0f} | {ratio} |",
                          flush=True)
                else:
                    what = f">{args.timeout:.0f}" if r.get("timeout") else f"error {r.get('error')}"
                    print(f"| {name} | {n:,} | {sigma} | {eng} | | {what} | | | | | |", flush=True)
    (work / "results.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
