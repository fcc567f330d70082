"""WARC and Common Crawl WET readers (extra ``warc``: warcio, trafilatura, lxml_html_clean).

A WET file holds the text of crawled pages after the HTML was dropped — what
the BloomSpan paper calls the index text; each ``conversion`` record becomes one
document with its ``WARC-Target-URI`` as url.  A WARC file holds the raw
responses; ``response`` (and ``resource``) records whose payload is HTML are
turned into text, every other record (requests, metadata, images, PDFs,
revisits, the ``warcinfo`` header) is counted in ``skipped_non_response``.

The document id is the record's ``WARC-Record-ID`` (``urn:uuid:…``), or
``"{file name}:{record_no}"`` when a record has none.
"""

from __future__ import annotations

import gzip
import io
import re
import zlib
from pathlib import Path
from typing import Any, BinaryIO, ClassVar, Iterator, Literal

from ..errors import InputError, ParameterError, RepetendError, require
from .read_base import Reader, _decode
from .record import Record

__all__ = ["WarcReader", "WetReader", "html_to_text"]

_DROP = frozenset({"script", "style", "noscript", "template", "svg", "math", "iframe",
                   "object", "embed", "canvas", "head", "select"})
_BLOCK = frozenset({
    "address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "div",
    "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4",
    "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "option", "p", "pre", "section",
    "summary", "table", "tbody", "td", "tfoot", "th", "thead", "title", "tr", "ul",
})
_SPACES = re.compile(r"[ \t\r\f\v\u00a0\u2000-\u200b\u3000]+")
_HTML_TYPES = ("text/html", "application/xhtml")


def _tree_text(tree: Any) -> str:
    """All visible text of an lxml HTML tree, one line per block element, the
    ``<title>`` first (the layout of a Common Crawl WET record)."""
    from lxml import etree

    parts: list[str] = []
    title = tree.find(".//title")
    if title is not None and title.text:
        parts.append(title.text)
        parts.append("\n")
    body = tree.find(".//body")
    root = body if body is not None else tree
    walker = etree.iterwalk(root, events=("start", "end", "comment", "pi"))
    for event, el in walker:
        tag = el.tag if isinstance(el.tag, str) else None
        if event in ("comment", "pi"):
            if el.tail:
                parts.append(el.tail)
            continue
        name = tag.lower().rpartition("}")[2] if tag else ""
        if event == "start":
            if name in _DROP:
                walker.skip_subtree()
                continue
            if name in _BLOCK:
                parts.append("\n")
            if el.text:
                parts.append(el.text)
        else:
            if name in _BLOCK:
                parts.append("\n")
            if el.tail and el is not root:
                parts.append(el.tail)
    lines = (_SPACES.sub(" ", ln).strip() for ln in "".join(parts).split("\n"))
    return "\n".join(ln for ln in lines if ln)


def html_to_text(html: bytes | str, mode: Literal["all", "main"] = "all") -> str:
    """Text of an HTML page.

    ``"all"``: every visible text (menus, footers, banners included — the
    boilerplate that phrase mining looks for), one line per block, like the
    Common Crawl WET extraction.  ``"main"``: the main content only
    (``trafilatura.extract``).  Encoding detection and parsing are trafilatura's.
    """
    trafilatura = require("trafilatura", "warc", "reading HTML from WARC files")
    from trafilatura.utils import load_html

    if mode not in ("all", "main"):
        raise ParameterError(f"html mode must be 'all' or 'main', not {mode!r}")
    tree = load_html(html)
    if tree is None:
        return ""
    if mode == "main":
        return trafilatura.extract(tree, include_comments=False, include_tables=True,
                                   deduplicate=False) or ""
    return _tree_text(tree)


class _Truncated(Exception):
    """A record's block is shorter than its Content-Length (the file was cut)."""


def _payload(record: Any) -> bytes:
    """The (decoded) payload of a record; raises :class:`_Truncated` if the file
    ended inside it (warcio itself returns the short block silently)."""
    if record.rec_headers.get_header("Content-Length") is None:
        raise _Truncated("the record has no Content-Length (its header is cut)")
    data = record.content_stream().read()
    left = getattr(record.raw_stream, "limit", 0)
    if isinstance(left, int) and left > 0:
        raise _Truncated(f"{left} bytes of the record are missing")
    return data


_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.I)


def _with_http_charset(payload: bytes, ctype: str) -> bytes | str:
    """The page as text when the HTTP ``Content-Type`` names a charset that decodes
    it cleanly; else the bytes, for trafilatura's own detection."""
    m = _CHARSET.search(ctype)
    if not m:
        return payload
    try:
        return payload.decode(m.group(1))
    except (LookupError, UnicodeDecodeError):
        return payload


def _record_id(record: Any) -> str | None:
    rid = record.rec_headers.get_header("WARC-Record-ID")
    return rid.strip().strip("<>") if rid else None


class _WarcBase(Reader):
    """Iterates the records of a (gzipped or plain) WARC file."""

    wanted: ClassVar[tuple[str, ...]] = ()

    def read_file(self, path: Path) -> Iterator[Record]:
        require("warcio", "warc", f"reading {path.name}")
        from warcio.archiveiterator import ArchiveIterator
        from warcio.exceptions import ArchiveLoadFailed

        self._check_magic(path)
        record_no = -1
        with open(path, "rb") as fh:
            it = iter(ArchiveIterator(fh, check_digests=False))
            while True:
                try:
                    record = next(it)
                except StopIteration:
                    break
                except ArchiveLoadFailed as exc:
                    if record_no < 0:
                        raise InputError(f"not a WARC file ({exc})", path=str(path)) from None
                    self.stream_failed(path, f"after WARC record {record_no}", exc)
                    break
                except Exception as exc:  # warcio raises all kinds on damaged bytes
                    self.stream_failed(path, f"after WARC record {record_no}", exc)
                    break
                record_no += 1
                if record.rec_type not in self.wanted:
                    self.stats.skipped_non_response += 1
                    continue
                try:
                    rec = self.convert(path, record_no, record)
                except RepetendError:
                    raise
                except (_Truncated, EOFError, zlib.error, OSError) as exc:
                    self.stream_failed(path, f"WARC record {record_no}", exc)
                    break
                except Exception as exc:  # one damaged payload (chunking, encoding, HTML)
                    self.malformed(path, f"WARC record {record_no}",
                                   f"cannot decode the payload ({type(exc).__name__}: {exc})")
                    continue
                if rec is not None:
                    yield rec

    def convert(self, path: Path, record_no: int, record: Any) -> Record | None:
        raise NotImplementedError

    @staticmethod
    def _check_magic(path: Path) -> None:
        """A WARC starts with ``WARC/`` (an ARC with ``filedesc://``), also inside gzip."""
        try:
            with _open_warc(path) as fh:
                head = fh.read(16)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"cannot read ({type(exc).__name__}: {exc})", path=str(path)) from None
        head = head.lstrip(b"\r\n")
        if head and not head.startswith((b"WARC/", b"filedesc://")):
            raise InputError(f"not a WARC file (it starts with {head[:12]!r}, not 'WARC/')",
                             path=str(path))


def _open_warc(path: Path) -> BinaryIO:
    """The file, through gzip when it starts with the gzip magic (whatever its name)."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb", buffering=1 << 20)


class _DeferredError(io.RawIOBase):
    """Reads *inner* in small pieces; when it fails after some data, that data is
    returned first and the error raised by the next read.  So a parser reading in
    large blocks still sees every record before a truncation."""

    def __init__(self, inner: BinaryIO) -> None:
        self.inner = inner
        self.error: BaseException | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self.error is not None:
            err, self.error = self.error, None
            raise err
        mv = memoryview(b).cast("B")
        n = 0
        while n < len(mv):
            try:
                chunk = self.inner.read(min(len(mv) - n, 8192))
            except (EOFError, zlib.error, OSError) as exc:
                if not n:
                    raise
                self.error = exc
                break
            if not chunk:
                break
            mv[n:n + len(chunk)] = chunk
            n += len(chunk)
        return n

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self.error = None
        return self.inner.seek(offset, whence)

    def tell(self) -> int:
        return self.inner.tell()

    def close(self) -> None:
        self.inner.close()
        super().close()


def _damage(exc: BaseException) -> bool:
    """An error of a damaged file (FastWARC's Rust side panics as a BaseException)."""
    return isinstance(exc, Exception) and not isinstance(exc, RepetendError) \
        or type(exc).__name__ == "PanicException"


def _fastwarc() -> Any:
    try:
        from fastwarc import warc

        return warc
    except ImportError:  # pragma: no cover - fastwarc is optional
        return None


class WetReader(_WarcBase):
    """Common Crawl WET: ``conversion`` records (plain text + ``WARC-Target-URI``).

    Parsed by FastWARC when it is installed (about 4× faster than warcio), over
    Python's gzip stream so that a truncated file is still noticed; else by warcio.
    """

    fmt = "wet"
    wanted = ("conversion",)
    use_fastwarc: ClassVar[bool] = True

    def read_file(self, path: Path) -> Iterator[Record]:
        fw = _fastwarc() if self.use_fastwarc else None
        if fw is None:
            yield from super().read_file(path)
            return
        self._check_magic(path)
        conversion = fw.WarcRecordType.conversion
        record_no = -1
        with _DeferredError(_open_warc(path)) as fh:
            it = iter(fw.ArchiveIterator(fh, parse_http=False))
            while True:
                try:
                    record = next(it)
                except StopIteration:
                    break
                except BaseException as exc:  # damaged bytes: gzip, zlib or FastWARC errors
                    if not _damage(exc):
                        raise
                    self.stream_failed(path, f"after WARC record {record_no}", exc)
                    break
                record_no += 1
                if record.record_type != conversion:
                    self.stats.skipped_non_response += 1
                    continue
                try:
                    payload = record.reader.read()
                except BaseException as exc:
                    if not _damage(exc):
                        raise
                    self.stream_failed(path, f"WARC record {record_no}", exc)
                    break
                if len(payload) < record.content_length:
                    self.stream_failed(path, f"WARC record {record_no}", _Truncated(
                        f"{record.content_length - len(payload)} bytes of the record are missing"))
                    break
                text, bad = _decode(payload)
                rid = record.headers.get("WARC-Record-ID")
                yield self.make(path, record_no, text, rid.strip().strip("<>") if rid else None,
                                record.headers.get("WARC-Target-URI"), invalid_utf8=bad)

    def convert(self, path: Path, record_no: int, record: Any) -> Record | None:
        text, bad = _decode(_payload(record))
        url = record.rec_headers.get_header("WARC-Target-URI")
        return self.make(path, record_no, text, _record_id(record), url, invalid_utf8=bad)


class WarcReader(_WarcBase):
    """WARC: HTML ``response`` / ``resource`` records turned into text.

    Parameters
    ----------
    html
        ``"all"`` (default) keeps all visible text like a WET file; ``"main"``
        keeps trafilatura's main content.
    """

    fmt = "warc"
    wanted = ("response", "resource")

    def __init__(self, *, html: Literal["all", "main"] = "all", **kw: Any) -> None:
        super().__init__(**kw)
        if html not in ("all", "main"):
            raise ParameterError(f"html must be 'all' or 'main', not {html!r}")
        self.html = html
        require("trafilatura", "warc", "reading HTML from WARC files")

    def convert(self, path: Path, record_no: int, record: Any) -> Record | None:
        if record.rec_type == "response":
            if record.http_headers is None:
                self.stats.skipped_non_response += 1
                return None
            ctype = record.http_headers.get_header("Content-Type") or ""
            status = record.http_headers.get_statuscode() or ""
            if not status.startswith("2"):
                self.stats.skipped_non_response += 1
                return None
        else:
            ctype = record.rec_headers.get_header("Content-Type") or ""
        payload = _payload(record)
        if not ctype.lower().startswith(_HTML_TYPES) and not (
                not ctype and payload[:512].lstrip()[:15].lower().startswith((b"<!doctype html",
                                                                               b"<html"))):
            self.stats.skipped_non_response += 1
            return None
        text = html_to_text(_with_http_charset(payload, ctype), self.html)
        url = record.rec_headers.get_header("WARC-Target-URI")
        return self.make(path, record_no, text, _record_id(record), url)
