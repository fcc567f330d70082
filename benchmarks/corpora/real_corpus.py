"""Assemble a natural-language corpus nobody here wrote, from Debian packages.

Sources (install them first; none is needed by the tests)::

    apt-get install -y linux-doc python3.11-doc manpages manpages-dev \
        postgresql-doc-15 debian-reference-en

and, for the ``--large`` set of about 100 M tokens (``--large`` reads them too)::

    apt-get install -y --no-install-recommends dict-gcide dict-wn dict-jargon \
        dict-foldoc dict-vera dict-devil dict-elements perl-doc freebsd-manpages \
        python-django-doc rust-doc nodejs-doc golang-1.19-doc gimp-help-en \
        r-doc-html octave-doc maxima-doc sbcl-doc gnu-standards developers-reference \
        debian-policy maint-guide fortunes vim-doc cppreference-doc-en-html \
        boost1.74-doc openjdk-17-doc

* the Linux kernel documentation (``/usr/share/doc/linux-doc-*/Documentation/**/*.rst.gz``),
* the Python 3.11 documentation sources (``/usr/share/doc/python3.11/html/_sources/**/*.txt``),
* every man page on the machine, troff requests and font escapes stripped,
* every Debian changelog and copyright file (``/usr/share/doc/*/changelog*.gz``,
  ``/usr/share/doc/*/copyright``) — real boilerplate: licence texts, sign-off lines,
* the PostgreSQL and Debian Reference HTML manuals, tags stripped;
* with ``--large``: the dictd dictionaries (GCIDE — Webster 1913 —, WordNet,
  Jargon File, FOLDOC, V.E.R.A., Devil's Dictionary, elements), cut into pages of
  about 20,000 characters at entry boundaries; the Perl pods; the HTML manuals
  of Rust, OpenJDK, Django, Node.js, Go, GIMP, R, Octave, Maxima, SBCL, Boost,
  cppreference; the GNU info manuals (coding standards, coreutils, …), Debian policy, developers' reference and
  maintainers' guide; the Vim help; fortunes.  A source gives at most
  ``--max-mb`` megabytes of text (API references would otherwise dominate).

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


_HTML = _html_text
LARGE_SOURCES = [
    ("perl-pod", "/usr/share/perl/5.*/pod/*.pod", None),
    ("django-doc", "/usr/share/doc/python-django-doc/html/[hirt]*/**/*.html", _HTML),
    ("rust-doc", "/usr/share/doc/rust-doc/html/**/*.html", _HTML),
    ("openjdk-doc", "/usr/share/doc/openjdk-17-jre-headless/api/**/*.html", _HTML),
    ("nodejs-doc", "/usr/share/doc/nodejs/api/*.html", _HTML),
    ("golang-doc", "/usr/share/doc/golang-1.19-doc/html/*.html", _HTML),
    ("gimp-help", "/usr/share/gimp/2.0/help/en/*.html", _HTML),
    ("r-doc", "/usr/share/R/doc/manual/*.html", _HTML),
    ("octave-doc", "/usr/share/doc/octave/**/*.html", _HTML),
    ("maxima-doc", "/usr/share/doc/maxima-doc/html/*.html", _HTML),
    ("sbcl-doc", "/usr/share/doc/sbcl/**/*.html", _HTML),
    ("boost-doc", "/usr/share/doc/libboost1.74-doc/**/*.html", _HTML),
    ("cppreference", "/usr/share/cppreference/doc/html/**/*.html", _HTML),
    ("info", "/usr/share/info/*.info*", None),
    ("debian-policy", "/usr/share/doc/debian-policy/policy.txt*", None),
    ("developers-reference", "/usr/share/developers-reference/*.html", _HTML),
    ("maint-guide", "/usr/share/doc/maint-guide/html/*.en.html", _HTML),
    ("vim-doc", "/usr/share/vim/vim*/doc/*.txt*", None),
    ("fortunes", "/usr/share/games/fortunes/*", None),
]
_PAGE = 20_000


def _dict_pages(path: str):
    """A dictd dictionary (``.dict.dz`` is gzip) cut into pages of about
    ``_PAGE`` characters at the entry boundaries of its ``.index``."""
    idx = path[:-len(".dict.dz")] + ".index"
    b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    def num(x: str) -> int:
        v = 0
        for ch in x:
            v = v * 64 + b64.index(ch)
        return v

    try:
        with gzip.open(path, "rb") as f:
            data = f.read()
        with open(idx, encoding="utf-8", errors="replace") as f:
            entries = sorted({num(p[1]) for p in (ln.rstrip("\n").split("\t") for ln in f)
                              if len(p) >= 3})
    except (OSError, EOFError, ValueError):
        return
    page_start = 0
    for start in entries[1:] + [len(data)]:
        if start - page_start >= _PAGE or start == len(data):
            yield data[page_start:start].decode("utf-8", "replace")
            page_start = start


def _dict_documents():
    for path in sorted(glob.glob("/usr/share/dictd/*.dict.dz")):
        name = os.path.basename(path)[:-len(".dict.dz")]
        for i, text in enumerate(_dict_pages(path)):
            if text.strip():
                yield {"id": f"{path}#{i}", "url": f"file://dict-{name}{path}",
                       "source": f"dict-{name}", "text": text}


def _iter_sources(sources, max_chars=None):
    for name, pattern, convert in sources:
        total = 0
        for path in sorted(glob.glob(pattern, recursive=True)):
            if max_chars is not None and total >= max_chars:
                break
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            text = _read(path)
            if convert is not None:
                text = convert(text)
            if text.strip():
                total += len(text)
                pkg = path.split("/")[4] if path.startswith("/usr/share/doc/") else name
                yield {"id": path, "url": f"file://{pkg}{path}", "source": name, "text": text}


def iter_large_documents(max_chars: int | None = None):
    """The ``--large`` additions (about 60 M tokens with the defaults)."""
    yield from _dict_documents()
    yield from _iter_sources(LARGE_SOURCES, max_chars)


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
    ap.add_argument("--large", action="store_true",
                    help="add the dictionaries and manuals of the --large set (~100 M tokens)")
    ap.add_argument("--max-mb", type=float, default=100.0,
                    help="--large: at most this many MB of text from one source")
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
            docs = iter_documents(sources)
            if args.large:
                import itertools

                docs = itertools.chain(docs, iter_large_documents(int(args.max_mb * 1e6)))
            for doc in docs:
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
