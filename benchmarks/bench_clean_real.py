"""What `repetend clean` does to the kept documents of a real corpus.

Runs ``repetend scan`` and ``repetend clean`` (the CLI of whatever repetend is on
``PYTHONPATH``, so the same script measures two checkouts) on a JSONL corpus and
reads the answer from the files alone: the input, the cleaned output and the
removal log.  Prints one JSON object:

* documents in, out; removal-log entries by reason (duplicate, boilerplate, mostly_template, kept_whole, min_share);
* kept documents cut to under 5 % of their characters, and emptied (nothing left);
* kept whole (logged ``kept_whole``), characters cut from kept documents.

Usage (the Debian licence-file corpus, built by ``corpora/real_corpus.py``)::

    python benchmarks/corpora/real_corpus.py --out /tmp/copyright.jsonl --sources copyright
    PYTHONPATH=src python benchmarks/bench_clean_real.py /tmp/copyright.jsonl --work /tmp/bench-clean

Scan options after ``--`` go to ``repetend scan`` unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path


def _run(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "repetend", *args], check=True, env=os.environ.copy(),
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - t0


def _texts(path: Path) -> dict[str, str]:
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                o = json.loads(line)
                out[str(o["id"])] = o.get("text") or ""
    return out


def measure(corpus: Path, work: Path, scan_args: list[str]) -> dict:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    scan_dir, out = work / "scan", work / "clean.jsonl"
    t_scan = _run(["scan", str(corpus), "--out", str(scan_dir), "-q", "--no-report", *scan_args])
    t_clean = _run(["clean", str(corpus), "--scan", str(scan_dir), "--out", str(out), "-q"])
    before, after = _texts(corpus), _texts(out)
    log = [json.loads(x) for x in out.with_name(out.name + ".removed.jsonl").read_text("utf-8").splitlines()]
    reasons = Counter("duplicate" if e["reason"].startswith("duplicate_of:") else e["reason"] for e in log)
    kept = [d for d in before if d in after]
    under5 = [d for d in kept if len(before[d]) and len(after[d].strip()) < 0.05 * len(before[d])]
    emptied = [d for d in kept if len(before[d].strip()) and not after[d].strip()]
    summary = json.loads((scan_dir / "summary.json").read_text("utf-8"))
    return {
        "corpus": str(corpus), "sigma": summary["parameters"]["min_docs"],
        "sigma_rule": summary["parameters"].get("min_docs_rule"),
        "documents_in": len(before), "documents_out": len(after),
        "log_reasons": dict(sorted(reasons.items())),
        "kept_under_5pct": len(under5), "kept_emptied": len(emptied),
        "kept_chars_in": sum(len(before[d]) for d in kept),
        "kept_chars_cut": sum(len(before[d]) - len(after[d]) for d in kept),
        "examples_under_5pct": [f"{d}: {len(before[d]):,} -> {len(after[d]):,}" for d in under5[:5]],
        "seconds": {"scan": round(t_scan, 1), "clean": round(t_clean, 1)},
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("scan_args", nargs="*")
    a = ap.parse_args(argv)
    print(json.dumps(measure(a.corpus, a.work, a.scan_args), indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
