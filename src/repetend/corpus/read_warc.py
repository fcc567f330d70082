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
import os
import re
import zlib
from dataclasses import dataclass
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


_XSLT_TEXT = None


def _text_transform():
    """One XSLT program (libxslt, C) giving what :func:`_tree_text` defines: dropped
    elements left out with their content (their tail kept), a line break before
    and after every block element's content, comments left out."""
    global _XSLT_TEXT
    if _XSLT_TEXT is None:
        from lxml import etree

        _XSLT_TEXT = etree.XSLT(etree.XML(
            '<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">'
            '<xsl:output method="text" encoding="utf-8"/>'
            f'<xsl:template match="{"|".join(sorted(_DROP))}"/>'
            f'<xsl:template match="{"|".join(sorted(_BLOCK))}"><xsl:text>&#10;</xsl:text>'
            '<xsl:apply-templates/><xsl:text>&#10;</xsl:text></xsl:template>'
            '<xsl:template match="comment()|processing-instruction()"/>'
            '</xsl:stylesheet>'))
    return _XSLT_TEXT


def _clean_lines(text: str) -> str:
    """The line layout (the definition; :func:`_clean_lines_utf8` is its compiled twin)."""
    lines = (ln.strip() for ln in _SPACES.sub(" ", text).split("\n"))
    return "\n".join(ln for ln in lines if ln)


def _clean_lines_utf8(data: bytes) -> str:
    """:func:`_clean_lines` of the UTF-8 text *data*, in one compiled pass."""
    import numpy as np

    from ._html_kernels import clean_lines

    if not data:
        return ""
    out = np.empty(len(data), np.uint8)
    n = clean_lines(np.frombuffer(data, np.uint8), out)
    return out[:n].tobytes().decode("utf-8", "surrogatepass")


def _tree_text(tree: Any) -> str:
    """All visible text of an lxml HTML tree (as lxml's HTML parser makes it: tags
    in lower case), one line per block element, the ``<title>`` first (the layout
    of a Common Crawl WET record): the text of every element and its tail in
    document order, without the elements of ``_DROP`` (their tail kept) and
    comments, a line break before and after the content of every element of
    ``_BLOCK``; runs of spaces become one, lines are stripped, empty lines left
    out.  The tests hold it equal to a walk of the tree in Python."""
    body = tree.find(".//body")
    root = body if body is not None else tree
    title = tree.find(".//title")
    head = (title.text + "\n").encode("utf-8", "surrogatepass") \
        if title is not None and title.text else b""
    if not isinstance(root.tag, str) or root.tag in _DROP:
        return _clean_lines_utf8(head)
    return _clean_lines_utf8(head + bytes(_text_transform()(root)))


_TU_NAMES = ("decode_file", "is_dubious_html", "INVALID_XML_CHARS", "DOCTYPE_TAG", "FAULTY_HTML",
             "HTML_PARSER", "fromstring_bytes", "LOGGER")


def _load_html(html: bytes | str) -> Any:
    """``trafilatura.utils.load_html(html)`` for bytes or text, step for step (decode,
    dubious-HTML check, repair, parse as text then as bytes), except that the
    regular-expression pass removing control characters runs only when the page
    holds one (a compiled scan says so); the tests hold its tree equal to
    trafilatura's."""
    import numpy as np
    from lxml.html import fromstring
    from trafilatura import utils as tu

    from ._html_kernels import has_invalid_xml_chars

    if not isinstance(html, (bytes, str)) or not all(hasattr(tu, n) for n in _TU_NAMES):
        return tu.load_html(html)     # a tree or a response; a trafilatura without these
    text = tu.decode_file(html)
    beginning = text[:50].lower()
    check_flag = tu.is_dubious_html(beginning)
    # repair_faulty_html, its first step skipped when it would change nothing
    data = text.encode("utf-8", "surrogatepass")
    changed = False
    if has_invalid_xml_chars(np.frombuffer(data, np.uint8)):
        text = tu.INVALID_XML_CHARS.sub("", text)
        changed = True
    if "doctype" in beginning:
        firstline, nl, rest = text.partition("\n")
        first = tu.DOCTYPE_TAG.sub("", firstline, count=1)
        text = first + "\n" + rest
        changed = changed or first != firstline or not nl
    for line in text[:4096].splitlines()[:4]:
        if "<html" in line and line.endswith("/>"):
            text = tu.FAULTY_HTML.sub(r"\1>", text, count=1)
            changed = True
            break
    if changed:
        data = text.encode("utf-8", "surrogatepass")
    tree = _parse_utf8(data)
    if tree is not None:    # the tree of the steps below, parsed from the UTF-8 bytes
        return tree if check_flag is not True or len(tree) >= 2 else _dubious(tree)
    fallback_parse = False
    try:
        tree = fromstring(text, parser=tu.HTML_PARSER)
    except ValueError:
        tree = tu.fromstring_bytes(text)
        fallback_parse = True
    except Exception as err:  # pragma: no cover - as trafilatura: logged, no tree
        tu.LOGGER.error("lxml parsing failed: %s", err)
    if (tree is None or len(tree) < 1) and not fallback_parse:
        tree = tu.fromstring_bytes(text)
    if tree is not None and check_flag is True and len(tree) < 2:
        tree = _dubious(tree)
    return tree


def _dubious(tree: Any) -> None:
    from trafilatura import utils as tu

    tu.LOGGER.error("parsed tree length: %s, wrong data type or not valid HTML", len(tree))
    return None


_FULL_HTML = re.compile(rb"^\s*<(?:html|!doctype)", re.I)   # lxml.html's, for bytes
_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")


def _parse_utf8(data: bytes) -> Any:
    """The tree that the parse steps of ``load_html`` make of *text* (parse it as
    text; when lxml refuses text with an XML encoding declaration, or the tree is
    empty, parse its UTF-8 bytes), made by parsing the UTF-8 bytes *data* of
    *text* once — libxml2 reads UTF-8 without converting it, about 1.7× faster
    than lxml's text input — or None when that does not hold for sure: a lone
    surrogate in *text* (its ``surrogatepass`` bytes are no UTF-8), a page that lxml
    does not take for a whole document (``fromstring`` then cuts out a
    fragment, deciding by a pattern that differs between text and bytes), or a
    parse error.  For a whole document every path of those steps ends in
    ``document_fromstring`` of the same characters with the same parser, which
    reads them as UTF-8 whatever the page declares; the tests hold the trees
    equal."""
    if not _FULL_HTML.match(data) or _SURROGATE.search(data):
        return None
    from lxml import etree
    from trafilatura import utils as tu

    try:
        tree = etree.fromstring(data, tu.HTML_PARSER)
    except Exception:  # the steps below say what happens (and log it)
        return None
    return tree


def html_to_text(html: bytes | str, mode: Literal["all", "main"] = "all") -> str:
    """Text of an HTML page.

    ``"all"``: every visible text (menus, footers, banners included — the
    boilerplate that phrase mining looks for), one line per block, like the
    Common Crawl WET extraction.  ``"main"``: the main content only
    (``trafilatura.extract``).  Encoding detection and parsing are trafilatura's.
    """
    trafilatura = require("trafilatura", "warc", "reading HTML from WARC files")
    if mode not in ("all", "main"):
        raise ParameterError(f"html mode must be 'all' or 'main', not {mode!r}")
    tree = _load_html(html)
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
                                   _payload_error(exc))
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

    #: worker processes turning HTML into text (None: one per core, up to 4, for a
    #: file of at least ``pool_min_bytes``; 1: in this process)
    workers: ClassVar[int | None] = None
    pool_min_bytes: ClassVar[int] = 4 << 20
    pool_chunk: ClassVar[int] = 16          # pages per task (a plain WARC)
    #: a gzipped WARC: the workers read it themselves, each a byte range of the
    #: file of at most this many bytes (see :meth:`_read_ranges`)
    pool_ranges: ClassVar[bool] = True
    pool_range_bytes: ClassVar[int] = 1 << 20
    #: with other threads running, start the workers from multiprocessing's fork server
    pool_forkserver: ClassVar[bool] = True
    #: ranges whose start a worker guessed wrong (counted for the tests)
    _ranges_redone: ClassVar[int] = 0

    def __init__(self, *, html: Literal["all", "main"] = "all", **kw: Any) -> None:
        super().__init__(**kw)
        if html not in ("all", "main"):
            raise ParameterError(f"html must be 'all' or 'main', not {html!r}")
        self.html = html
        self._defer = False
        self._pool = None
        self._pool_ready: Any = None     # set when the fork server's workers are up
        require("trafilatura", "warc", "reading HTML from WARC files")

    def close(self) -> None:
        """Stop the worker processes (the read is over)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _get_pool(self, workers: int):
        """The worker processes, started once per read: forked from this process while
        that is safe (no other thread yet: numba's thread pool not started, one
        Python thread); else (``repetend scan`` runs a memory watchdog thread)
        forked from multiprocessing's fork server, a fresh single-threaded
        process that has imported lxml, trafilatura and this module; None when
        neither is possible (the pages are then converted here)."""
        if self._pool is None:
            import multiprocessing
            import sys
            import threading
            from concurrent.futures import ProcessPoolExecutor

            numba_threads = getattr(sys.modules.get("numba.np.ufunc.parallel"),
                                    "_is_initialized", False)
            methods = multiprocessing.get_all_start_methods()
            if not numba_threads and threading.active_count() == 1 and "fork" in methods:
                html_to_text("<html><body><p>x</p></body></html>")   # load the kernels once,
                self._pool = ProcessPoolExecutor(max_workers=workers,    # not in each worker
                                                 mp_context=multiprocessing.get_context("fork"))
            elif self.pool_forkserver and "forkserver" in methods:
                ctx = multiprocessing.get_context("forkserver")
                ctx.set_forkserver_preload(["repetend.corpus.read_warc", "lxml.html",
                                            "lxml.etree", "trafilatura", "numba"])
                pool = self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx,
                                                        initializer=_warm_worker)
                ready = self._pool_ready = threading.Event()

                def start() -> None:   # a second or more: this process reads meanwhile
                    try:
                        with _main_hidden():
                            for f in [pool.submit(int, 0) for _ in range(workers)]:
                                f.result()
                        ready.ok = True          # type: ignore[attr-defined]
                    except BaseException:  # noqa: BLE001 - no workers: this process reads
                        ready.ok = False         # type: ignore[attr-defined]
                    finally:
                        ready.set()

                threading.Thread(target=start, name="repetend-warc-pool", daemon=True).start()
                return self._pool
            else:
                return None
            for f in [self._pool.submit(int, 0) for _ in range(workers)]:
                f.result()        # fork them all now, while it is safe
        return self._pool

    def _pool_up(self, wait: bool = False) -> bool:
        """Whether the worker processes take tasks (those of the fork server may still
        be starting; *wait*: until they are)."""
        ready = self._pool_ready
        if ready is None:
            return True
        if wait:
            ready.wait()
        return ready.is_set() and getattr(ready, "ok", False)

    def _n_workers(self, path: Path) -> int:
        if self.workers is not None:
            return max(1, int(self.workers))
        try:
            big = path.stat().st_size >= self.pool_min_bytes
        except OSError:
            big = False
        return min(4, os.cpu_count() or 1) if big else 1

    def read_file(self, path: Path) -> Iterator[Record]:
        """The records of *path*; with more than one worker the HTML of the pages is
        turned into text in worker processes (``pool_chunk`` pages per task, the
        records in file order), while this process reads the WARC."""
        workers = self._n_workers(path)
        pool = self._get_pool(workers) if workers > 1 else None
        if pool is None:
            yield from super().read_file(path)
            return
        if self.pool_ranges and _gzip_magic(path) and _range_iterator() is not None:
            yield from self._read_ranges(path, pool, workers)
            return
        from collections import deque

        if not self._pool_up(wait=True):
            yield from super().read_file(path)
            return
        in_flight: deque = deque()     # (pages, future of their texts), in file order

        def submit(pages: list[_Pending]) -> None:
            in_flight.append((pages, pool.submit(_pages_to_text, self.html,
                                                 [(p.payload, p.ctype) for p in pages])))

        def drain(limit: int):
            while len(in_flight) > limit:
                pages, fut = in_flight.popleft()
                for p, (ok, value) in zip(pages, fut.result()):
                    if ok:
                        yield self.make(path, p.record_no, value, p.rid, p.url)
                    else:
                        self.malformed(path, f"WARC record {p.record_no}", value)

        self._defer = True
        try:
            chunk: list[_Pending] = []
            for item in super().read_file(path):
                chunk.append(item)
                if len(chunk) >= self.pool_chunk:
                    submit(chunk)
                    chunk = []
                    yield from drain(2 * workers)
            if chunk:
                submit(chunk)
            yield from drain(0)
        finally:
            self._defer = False

    def _read_ranges(self, path: Path, pool: Any, workers: int) -> Iterator[Record]:
        """The records of the gzipped WARC *path*, read by the worker processes.

        The file is cut into byte ranges; a worker reads the records whose gzip
        member starts in its range (from the first gzip magic at or after the
        range's start, through the record that starts at or after its end, which
        it only looks at) and sends back their texts as one string, with what
        happened to every record.  A WARC.gz holds one gzip member per record, so
        this process need not decompress anything; it only checks, range by
        range in file order, that a worker started where the one before stopped,
        in the same reader state (a gzip magic can also occur inside a member;
        then the range is read again here from the right place), and replays the
        events: the records, counts and messages come as from one pass over the
        file in this process.  A range whose task has not started when its turn
        comes (the workers are busy, or those of the fork server still start) is
        read here instead of waited for."""
        from collections import deque

        require("warcio", "warc", f"reading {path.name}")
        self._check_magic(path)
        size = path.stat().st_size
        step = max(1, min(int(self.pool_range_bytes), max(1 << 16, -(-size // (8 * workers)))))
        cuts = list(range(0, size, step)) + [size]
        todo = deque(zip(cuts[:-1], cuts[1:]))
        in_flight: deque = deque()
        src, wanted = str(path), tuple(self.wanted)
        expected, base = _FIRST, 0
        try:
            while todo or in_flight:
                if self._pool_up():
                    while todo and len(in_flight) < 2 * workers + 1:
                        lo, hi = todo.popleft()
                        in_flight.append(((lo, hi), pool.submit(
                            _read_range, src, self.html, wanted, lo, hi,
                            _FIRST if lo == 0 else None)))
                if in_flight:
                    (lo, hi), fut = in_flight.popleft()
                else:                   # the workers are still starting: read it here
                    (lo, hi), fut = todo.popleft(), None
                if expected[0] >= hi:   # no record starts in this range
                    if fut is not None:
                        fut.cancel()
                    continue
                if fut is None or not fut.done() and fut.cancel():   # not started: here
                    res = _read_range(src, self.html, wanted, lo, hi, expected)
                else:
                    res = fut.result()
                    if not res.starts(expected):   # a wrong guess: read it here, from the right place
                        type(self)._ranges_redone += 1
                        res = _read_range(src, self.html, wanted, lo, hi, expected)
                yield from self._replay(path, res, base)
                base += res.count
                expected = res.end_from(expected)
                if expected is None:     # end of file, or the damage that ends it
                    break
        finally:
            for _, fut in in_flight:
                fut.cancel()

    def _replay(self, path: Path, res: "_Range", base: int) -> Iterator[Record]:
        """What :meth:`_WarcBase.read_file` does with the records of one range."""
        texts = res.texts.decode("utf-8", "surrogatepass") if res.texts else ""
        at = 0
        for ev in res.events:
            kind = ev[0]
            if kind == _REC:
                _, no, n, rid, url = ev
                yield self.make(path, base + no, texts[at:at + n], rid, url)
                at += n
            elif kind == _SKIP:
                self.stats.skipped_non_response += ev[1]
            elif kind == _BAD:
                self.malformed(path, f"WARC record {base + ev[1]}", ev[2])
            elif kind == _NOT_WARC:
                raise InputError(f"not a WARC file ({ev[1]})", path=str(path)) from None
            else:   # _FAILED: where, record_no, exception type name, message
                _, where, no, name, msg = ev
                self.stream_failed(path, where.format(base + no), _exc_like(name, msg))

    def convert(self, path: Path, record_no: int, record: Any) -> Record | None:
        page = _html_page(record)
        if page is None:
            self.stats.skipped_non_response += 1
            return None
        payload, ctype = page
        url = record.rec_headers.get_header("WARC-Target-URI")
        if self._defer:   # the worker decodes it (bytes are cheaper to send than text)
            return _Pending(record_no, payload, ctype, url, _record_id(record))
        text = html_to_text(_with_http_charset(payload, ctype), self.html)
        return self.make(path, record_no, text, _record_id(record), url)


def _html_page(record: Any) -> tuple[bytes, str] | None:
    """The payload and content type of an HTML page record (a 2xx ``response`` or a
    ``resource``); None for any other record."""
    if record.rec_type == "response":
        if record.http_headers is None:
            return None
        ctype = record.http_headers.get_header("Content-Type") or ""
        status = record.http_headers.get_statuscode() or ""
        if not status.startswith("2"):
            return None
    else:
        ctype = record.rec_headers.get_header("Content-Type") or ""
    payload = _payload(record)
    if not ctype.lower().startswith(_HTML_TYPES) and not (
            not ctype and payload[:512].lstrip()[:15].lower().startswith((b"<!doctype html",
                                                                           b"<html"))):
        return None
    return payload, ctype


@dataclass(slots=True)
class _Pending:
    """A page whose text a worker process is to make."""

    record_no: int
    payload: bytes
    ctype: str
    url: str | None
    rid: str | None


def _payload_error(exc: BaseException) -> str:
    """The message of a record whose payload cannot be made text (counted, skipped)."""
    return f"cannot decode the payload ({type(exc).__name__}: {exc})"


class _main_hidden:
    """While the workers start: no ``__main__`` for them to import (a process started
    from the fork server runs the main script again, and a script without an
    ``if __name__ == "__main__"`` guard would start its work again in each worker;
    the workers need only this module)."""

    def __enter__(self) -> None:
        import sys

        self.main = sys.modules.get("__main__")
        self.saved = {k: getattr(self.main, k) for k in ("__file__", "__spec__")
                      if hasattr(self.main, k)}
        for k in self.saved:
            if k == "__spec__":
                self.main.__spec__ = None
            else:
                delattr(self.main, k)

    def __exit__(self, *exc: Any) -> None:
        for k, v in self.saved.items():
            setattr(self.main, k, v)


def _warm_worker() -> None:
    """In a worker started from the fork server: load the compiled kernels once."""
    html_to_text("<html><body><p>x</p></body></html>")


def _pages_to_text(mode: str, pages: list) -> list[tuple[bool, str]]:
    """In a worker process: the text of each ``(payload, content type)`` page, or
    the message of its failure."""
    out = []
    for payload, ctype in pages:
        try:
            out.append((True, html_to_text(_with_http_charset(payload, ctype), mode)))
        except Exception as exc:  # one damaged page, as in this process: counted, skipped
            out.append((False, _payload_error(exc)))
    return out


# -- worker processes reading byte ranges of a gzipped WARC -----------------------------------

_REC, _SKIP, _BAD, _FAILED, _NOT_WARC = range(5)
_FIRST = (0, False, None)     # the reader state at the file's start: offset, EOF seen, format
_BLOCK_SIZE = 16384           # warcio's reads (its BUFF_SIZE)
_WARCIO_LOOP = "9fcb20a156af2dcfa124c0a07a30d67d017acda9"   # sha1 of the loop copied below


@dataclass(slots=True)
class _Range:
    """What a worker read of one byte range: the reader state it started in (None:
    no gzip magic in the range), what happened to each record, the texts of the
    records as one string (UTF-8), their count, and the state at the next record
    (None: the file ended, or broke off)."""

    state: tuple | None
    events: list
    texts: bytes
    count: int
    end: tuple | None
    flag_used: bool = False     # the EOF flag of *state* mattered (else any value does)

    def starts(self, state: tuple) -> bool:
        """Whether this is the reading of the range from *state*."""
        return self.state is not None and self.state[0] == state[0] \
            and self.state[2] == state[2] and (self.state[1] == state[1] or not self.flag_used)

    def end_from(self, state: tuple) -> tuple | None:
        """The state at the next range, this one read from *state*."""
        if self.end is None or not state[1]:
            return self.end
        return (self.end[0], True, self.end[2])


def _gzip_magic(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def _exc_like(name: str, message: str) -> Exception:
    """An exception whose type name and text are *name* and *message* (one raised in
    a worker process, for the message made of it here)."""
    return type(name, (Exception,), {})(message)


_RANGE_ITERATOR: Any = False


def _range_iterator() -> Any:
    """warcio's ``ArchiveIterator`` with the two flags of its record loop kept on the
    object, so that a reader can start at a gzip member in the state that the
    file's reading had there; None when warcio's loop is not the one copied."""
    global _RANGE_ITERATOR
    if _RANGE_ITERATOR is False:
        _RANGE_ITERATOR = None
        try:
            import hashlib
            import inspect

            from warcio.archiveiterator import ArchiveIterator
            src = inspect.getsource(ArchiveIterator._iterate_records)
        except (ImportError, OSError, TypeError):  # pragma: no cover - no warcio source
            return None
        if hashlib.sha1(src.encode()).hexdigest() != _WARCIO_LOOP:   # pragma: no cover
            return None

        class RangeIterator(ArchiveIterator):
            empty_record = False
            empty_seen = False      # an empty record came (the flag is set from here on)
            flag_used = False       # the flag, as it came in, decided something
            new_member = True       # the next record starts a gzip member
            at = (0, False, None)   # the state in which the last record was parsed

            def _iterate_records(self):   # warcio 1.8's loop, its flags on self
                raise_invalid_gzip = False
                while True:
                    try:
                        self.at = (self.offset, self.empty_record, self.known_format) \
                            if self.new_member and self.next_line is None else None
                        self.new_member = False
                        self.record = self._next_record(self.next_line)
                        if raise_invalid_gzip:
                            self._raise_invalid_gzip_err()
                        yield self.record
                    except EOFError:
                        self.empty_record = self.empty_seen = True
                    self.read_to_end()
                    if self.reader.decompressor:
                        if self.reader.read_next_member():
                            self.new_member = True
                            continue
                        self.flag_used = self.flag_used or not self.empty_seen
                        if self.empty_record:
                            break
                        else:
                            raise_invalid_gzip = True
                    else:
                        self.flag_used = self.flag_used or not self.empty_seen
                        if self.empty_record:
                            break
                self.close()

        _RANGE_ITERATOR = RangeIterator
    return _RANGE_ITERATOR


class _AlignedReads(io.RawIOBase):
    """The file from *start*, its first read cut at a multiple of warcio's block
    size, so that warcio sees the blocks it sees reading the file from its start
    (where a gzip member ends at a block's end matters to warcio)."""

    def __init__(self, fh: BinaryIO, start: int) -> None:
        self.fh = fh
        fh.seek(start)
        self.first = (-start) % _BLOCK_SIZE

    def read(self, size: int = -1) -> bytes:
        if self.first and size is not None and size > self.first:
            size, self.first = self.first, 0
        else:
            self.first = 0
        return self.fh.read(size)

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.fh.tell()


def _find_magic(fh: BinaryIO, lo: int, hi: int) -> int | None:
    """The first gzip magic (``1f 8b 08``) starting in ``[lo, hi)``."""
    fh.seek(lo)
    pos, tail = lo, b""
    while pos < hi:
        block = fh.read(1 << 16)
        if not block:
            return None
        data = tail + block
        i = data.find(b"\x1f\x8b\x08")
        if i >= 0:
            at = pos - len(tail) + i
            return at if at < hi else None
        tail = data[-2:]
        pos += len(block)
    return None


def _read_range(path: str, mode: str, wanted: tuple, lo: int, hi: int,
                state: tuple | None) -> _Range:
    """In a worker process: the records whose gzip member starts in ``[lo, hi)`` of
    the WARC.gz *path*, read from *state* (the offset and reader state of the
    first of them), or when it is None from the first gzip magic there, guessing
    the state the reading of the file has at a record after the first.  Each
    record as :meth:`_WarcBase.read_file` and :meth:`WarcReader.convert` treat
    it; the messages are made by the caller (it knows the record numbers)."""
    from warcio.exceptions import ArchiveLoadFailed

    events: list = []
    texts: list[str] = []
    skipped = 0

    def event(*ev: Any) -> None:
        nonlocal skipped
        if skipped:
            events.append((_SKIP, skipped))
            skipped = 0
        events.append(ev)

    with open(path, "rb") as fh:
        if state is None:
            start = _find_magic(fh, lo, hi)
            if start is None:
                return _Range(None, [], b"", 0, None)
            state = (start, False, "warc")
        start, empty_record, known_format = state
        it = _range_iterator()(_AlignedReads(fh, start), check_digests=False)
        it.offset, it.empty_record, it.known_format = start, empty_record, known_format
        records = iter(it)
        record_no = -1
        end = None
        while True:
            try:
                record = next(records)
            except StopIteration:
                break
            except ArchiveLoadFailed as exc:
                if record_no < 0 and start == 0:
                    event(_NOT_WARC, str(exc))
                else:
                    event(_FAILED, "after WARC record {}", record_no, type(exc).__name__, str(exc))
                break
            except Exception as exc:  # warcio raises all kinds on damaged bytes
                event(_FAILED, "after WARC record {}", record_no, type(exc).__name__, str(exc))
                break
            if it.at is not None and it.at[0] >= hi and record_no >= 0:
                end = it.at     # the next range's first record, and the state it is read in
                break
            record_no += 1
            if record.rec_type not in wanted:
                skipped += 1
                continue
            try:
                page = _html_page(record)
                if page is None:
                    skipped += 1
                    continue
                url = record.rec_headers.get_header("WARC-Target-URI")
                text = html_to_text(_with_http_charset(*page), mode)  # type: ignore[arg-type]
            except RepetendError:
                raise
            except (_Truncated, EOFError, zlib.error, OSError) as exc:
                event(_FAILED, "WARC record {}", record_no, type(exc).__name__, str(exc))
                break
            except Exception as exc:  # one damaged payload (chunking, encoding, HTML)
                event(_BAD, record_no, _payload_error(exc))
                continue
            texts.append(text)
            event(_REC, record_no, len(text), _record_id(record), url)
        if skipped:
            events.append((_SKIP, skipped))
    return _Range(state, events, "".join(texts).encode("utf-8", "surrogatepass"),
                  record_no + 1, end, it.flag_used)
