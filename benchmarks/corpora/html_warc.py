"""A WARC of real HTML pages, offline: the HTML manuals Debian ships.

Sources (install first; none is needed by the tests)::

    apt-get install -y python3.11-doc postgresql-doc-15 debian-reference-en

Every ``*.html`` under ``/usr/share/doc/python3.11/html``,
``/usr/share/doc/postgresql-doc-15/html`` and ``/usr/share/doc/debian-reference``
becomes one WARC ``response`` record (HTTP 200, ``text/html; charset=utf-8``), its
url ``https://<manual>.example/<path>``, so that the pages of one manual share a
host as the pages of one site do. Real HTML written by real sites' generators
(Sphinx, DocBook): navigation bars, footers, breadcrumbs. Usage::

    python benchmarks/corpora/html_warc.py --out bench-data/manuals.warc.gz [--repeat N]
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

MANUALS = {
    "docs.python": Path("/usr/share/doc/python3.11/html"),
    "postgresql": Path("/usr/share/doc/postgresql-doc-15/html"),
    "debian-reference": Path("/usr/share/doc/debian-reference"),
}


def pages():
    for host, root in MANUALS.items():
        if not root.is_dir():
            print(f"missing {root} (apt-get install the package); skipped", file=sys.stderr)
            continue
        for p in sorted(root.rglob("*.html")):
            if p.is_file() and not p.is_symlink():
                yield f"https://{host}.example/{p.relative_to(root)}", p.read_bytes()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--repeat", type=int, default=1, help="write every page N times (url suffix ?copy=i)")
    a = ap.parse_args(argv)
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    a.out.parent.mkdir(parents=True, exist_ok=True)
    n = size = 0
    tmp = a.out.with_name(a.out.name + ".tmp")
    with open(tmp, "wb") as f:
        w = WARCWriter(f, gzip=a.out.name.endswith(".gz"))
        for copy in range(a.repeat):
            for url, body in pages():
                url = url if copy == 0 else f"{url}?copy={copy}"
                headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                                      ("Content-Length", str(len(body)))],
                                           protocol="HTTP/1.1")
                w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body),
                                                    length=len(body), http_headers=headers))
                n += 1
                size += len(body)
    tmp.replace(a.out)
    print(f"{a.out}: {n:,} pages, {size / 1e6:.1f} MB of HTML", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
