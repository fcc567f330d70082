"""HTML to text from a WARC of real pages: MB/s of HTML per mode, in one run.

Build the WARC first (offline, from Debian's HTML manuals)::

    python benchmarks/corpora/html_warc.py --out bench-data/manuals.warc.gz
    python benchmarks/bench_html.py bench-data/manuals.warc.gz [--repeat 3]

Rows: ``--html all`` in this process (libxslt), ``--html all`` with the worker
processes (the default for a file of 4 MB or more), the element-by-element walk
the reader used before (the tests' oracle, for the ratio), lxml's own parse +
``text_content`` (a floor: no line layout), and ``--html main`` (trafilatura's
main-content extraction). Each row: median wall seconds over the repeats, MB/s of
HTML, CPU seconds (this process and its workers).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def _cpu() -> float:
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def _pages(path: Path) -> list[bytes]:
    from warcio.archiveiterator import ArchiveIterator

    out = []
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f):
            if rec.rec_type == "response":
                out.append(rec.content_stream().read())
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("warc", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-main", action="store_true", help="skip the slow trafilatura row")
    a = ap.parse_args(argv)
    from lxml import html as lxml_html
    from trafilatura.utils import load_html

    from naive_html import walk_text
    from repetend.corpus import read_warc
    from repetend.corpus.readers import read_corpus

    pages = _pages(a.warc)
    mb = sum(map(len, pages)) / 1e6

    def read_all(workers, mode="all"):
        read_warc.WarcReader.workers = workers
        return sum(1 for _ in read_corpus([a.warc], html=mode))

    rows = {
        "all, in this process": lambda: read_all(1),
        "all, worker processes (default)": lambda: read_all(None),
        "all, element walk (before)": lambda: [walk_text(load_html(p)) for p in pages],
        "lxml parse + text_content (floor)": lambda: [lxml_html.fromstring(p).text_content()
                                                       for p in pages],
        "main (trafilatura extract)": lambda: read_all(None, "main"),
    }
    if a.no_main:
        rows.pop("main (trafilatura extract)")
    print(f"{a.warc}: {len(pages):,} pages, {mb:.1f} MB of HTML; median of {a.repeat} runs")
    base = None
    for name, fn in rows.items():
        walls, cpus = [], []
        for _ in range(a.repeat if "main" not in name else 1):
            t, c = time.perf_counter(), _cpu()
            fn()
            walls.append(time.perf_counter() - t)
            cpus.append(_cpu() - c)
        w = statistics.median(walls)
        base = w if "before" in name else base
        print(f"  {name:36s} {w:7.2f} s  {mb / w:6.1f} MB/s  cpu {statistics.median(cpus):6.2f} s")
    print("  (ratios: divide the 'before' row's seconds by a row's)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
