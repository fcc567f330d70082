"""Assemble a natural-language corpus nobody here wrote, from Debian packages.

Sources (install them first; none is needed by the tests)::

    apt-get install -y linux-doc python3.11-doc manpages manpages-dev \
        postgresql-doc-15 debian-reference-en

* the Linux kernel documentation (``/usr/share/doc/linux-doc-*/Documentation/**/*.rst.gz``),
* the Python 3.11 documentation sources (``/usr/share/doc/python3.11/html/_sources/**/*.txt``),
* every man page on the machine, troff requests and font escapes stripped,
* every Debian changelog and copyright file (``/usr/share/doc/*/changelog*.gz``,
  ``/usr/share/doc/*/copyright``) — real boilerplate: licence texts, sign-off lines,
* the PostgreSQL and Debian Reference HTML manuals, tags stripped.

Each file is one document (id = its path, url = ``file://`` + path so that the
per-"host" tables group by package). Usage::

    python benchmarks/corpora/real_corpus.py --out bench-data/debian.jsonl [--repeat N]

``--sources copyright,changelog`` keeps only those sources (names as in
``SOURCES``): ``--sources copyright`` is the licence-file corpus of Debian's
``/usr/share/doc/*/copyright`` (one document per package, many of them copies).

``--repeat`` writes the corpus N times with a suffix in each id (a repeated
corpus is *not* natural text: every phrase becomes N times as frequent — it is
only for the scaling curve, and the figures say so).
"""

from __future__ import annotations

import argparse
import glob
import gzip
import html
import json
import os
import re
import sys
from pathlib import Path

_TROFF_REQUEST = re.compile(r"^\.[A-Za-z\\\"].*$", re.M)
_TROFF_ESCAPE = re.compile(r"\\f[BIRP]|\\f\(..|\\\(..|\\[-&e|^]|\\s[-+]?\d")
_TAG = re.compile(r"<(script|style)\b.*?</\1>|<[^>]+>", re.S | re.I)


def _read(path: str) -> str:
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except (OSError, EOFError):
        return ""


def _man_text(raw: str) -> str:
    text = _TROFF_REQUEST.sub("", raw)
    return _TROFF_ESCAPE.sub("", text)


def _html_text(raw: str) -> str:
    return html.unescape(_TAG.sub(" ", raw))


SOURCES = [
    ("linux-doc", "/usr/share/doc/linux-doc-*/Documentation/**/*.rst.gz", None),
    ("python-doc", "/usr/share/doc/python3.11/html/_sources/**/*.txt", None),
    ("man", "/usr/share/man/**/*.gz", _man_text),
    ("changelog", "/usr/share/doc/*/changelog*.gz", None),
    ("copyright", "/usr/share/doc/*/copyright", None),
    ("postgresql", "/usr/share/doc/postgresql-doc-*/html/*.html", _html_text),
    ("debian-reference", "/usr/share/debian-reference/**/*.html", _html_text),
]


def iter_documents(sources=None):
    for name, pattern, convert in SOURCES:
        if sources is not None and name not in sources:
            continue
        for path in sorted(glob.glob(pattern, recursive=True)):
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            text = _read(path)
            if convert is not None:
                text = convert(text)
            if text.strip():
                pkg = path.split("/")[4] if path.startswith("/usr/share/doc/") else name
                yield {"id": path, "url": f"file://{pkg}{path}", "source": name, "text": text}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--sources", default=None,
                    help=f"comma-separated subset of: {', '.join(n for n, _, _ in SOURCES)}")
    args = ap.parse_args(argv)
    sources = None
    if args.sources:
        sources = set(args.sources.split(","))
        unknown = sources - {n for n, _, _ in SOURCES}
        if unknown:
            ap.error(f"unknown source(s) {', '.join(sorted(unknown))}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    counts: dict[str, list[int]] = {}
    tmp = out.with_suffix(out.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for rep in range(args.repeat):
            for doc in iter_documents(sources):
                c = counts.setdefault(doc["source"], [0, 0])
                c[0] += 1
                c[1] += len(doc["text"])
                if rep:
                    doc["id"] = f"{doc['id']}#{rep}"
                f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    os.replace(tmp, out)
    for name, (n, chars) in counts.items():
        print(f"{name:18s} {n:8,d} documents {chars / 1e6:9.1f} M characters", file=sys.stderr)
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
