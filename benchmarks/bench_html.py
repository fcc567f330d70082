"""HTML to text from a WARC of real pages: MB/s of HTML per mode, in one run.

Build the WARC first (offline, from Debian's HTML manuals)::

    python benchmarks/corpora/html_warc.py --out bench-data/manuals.warc.gz
    python benchmarks/bench_html.py bench-data/manuals.warc.gz [--repeat 3]

Rows: reading the WARC with ``--html all`` in this process, with the worker
processes reading byte ranges of the file (the default for a gzipped file of 4
MB or more), and with the worker processes given the pages by this process
(session 13's pool; still used for a plain WARC); ``html_to_text`` of each
page (payloads already in memory) now, with trafilatura's own ``load_html``
(session 13: the text parsed as text, then as bytes), and by main's path before the compiled
line layout (``naive_html.text_before``: trafilatura's ``load_html``, libxslt, the
Python ``_clean_lines``); the element-by-element walk the reader used before that
(the tests' oracle, for the ratio); lxml's own parse + ``text_content`` (a
floor: no line layout); and ``--html main`` (trafilatura's main-content
extraction; ``--no-main`` skips it). Each row: median wall seconds over the
repeats (the rows alternate: run 1 of every row, then run 2, …), MB/s of HTML,
CPU seconds (this process and its workers; this process alone in brackets) and
MB of HTML per CPU second (the figure that depends least on what else runs on
the machine), and the MB/s of each run.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def _cpu(own: bool = False) -> float:
    """CPU seconds of this process and (unless *own*) of its finished worker processes."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + (0 if own else b.ru_utime + b.ru_stime)


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
    ap.add_argument("--only", nargs="+", metavar="WORD",
                    help="only the rows whose name holds one of these words (e.g. workers)")
    a = ap.parse_args(argv)
    from lxml import html as lxml_html
    from trafilatura.utils import load_html

    from naive_html import text_before, walk_text
    from repetend.corpus import read_warc
    from repetend.corpus.readers import read_corpus

    pages = _pages(a.warc)
    mb = sum(map(len, pages)) / 1e6

    def read_all(workers, mode="all", ranges=True):
        read_warc.WarcReader.workers = workers
        read_warc.WarcReader.pool_ranges = ranges
        try:
            return sum(1 for _ in read_corpus([a.warc], html=mode))
        finally:
            read_warc.WarcReader.pool_ranges = True

    rows = {
        "all, in this process": lambda: read_all(1),
        "all, workers read byte ranges (default)": lambda: read_all(None),
        "all, workers given the pages (before)": lambda: read_all(None, ranges=False),
        "all, text of each page, now": lambda: [read_warc.html_to_text(p) for p in pages],
        "all, page text, trafilatura's load_html": lambda: [read_warc._tree_text(load_html(p))
                                                            for p in pages],
        "all, text of each page, main's path": lambda: [text_before(load_html(p)) for p in pages],
        "all, element walk (before)": lambda: [walk_text(load_html(p)) for p in pages],
        "lxml parse + text_content (floor)": lambda: [lxml_html.fromstring(p).text_content()
                                                       for p in pages],
        "main (trafilatura extract)": lambda: read_all(None, "main"),
    }
    if a.no_main:
        rows.pop("main (trafilatura extract)")
    if a.only:
        rows = {k: v for k, v in rows.items() if any(w in k for w in a.only)}
    print(f"{a.warc}: {len(pages):,} pages, {mb:.1f} MB of HTML; median of {a.repeat} runs,"
          " the rows alternating")
    read_warc.html_to_text(pages[0])       # load the compiled kernels first
    walls: dict = {k: [] for k in rows}
    cpus: dict = {k: [] for k in rows}
    own: dict = {k: [] for k in rows}
    for rep in range(a.repeat):
        for name, fn in rows.items():
            if "main (" in name and rep:
                continue
            t, c, o = time.perf_counter(), _cpu(), _cpu(own=True)
            fn()
            walls[name].append(time.perf_counter() - t)
            cpus[name].append(_cpu() - c)
            own[name].append(_cpu(own=True) - o)
    for name in rows:
        w, c, o = (statistics.median(x[name]) for x in (walls, cpus, own))
        runs = " ".join(f"{mb / x:.1f}" for x in walls[name])
        print(f"  {name:40s} {w:7.2f} s  {mb / w:6.1f} MB/s  cpu {c:6.2f} s (this process"
              f" {o:5.2f})  {mb / c:6.1f} MB per cpu-s   [runs: {runs} MB/s]")
    print("  (ratios: divide the 'before' row's seconds by a row's)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
