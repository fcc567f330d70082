"""Corpus readers: every input format becomes a stream of :class:`Record`.

One base class, :class:`Reader`, holds what all formats share — the names of
the text / id / url fields, the id fallback, the error policy and the
:class:`ReadStats` counters — and one subclass per format implements only
:meth:`Reader.read_file`.  :func:`read_corpus` expands paths, directories and
globs, picks the reader of each file and applies ``limit``.

Nothing is read whole into memory except one record at a time: JSONL and CSV
are read line by line (also through gzip / zstandard), Parquet batch by batch
(only the needed columns), WARC/WET record by record.  Nothing is lost
silently: malformed records are counted (``malformed``, ``missing_text``) with
a message naming the file and the line or record, invalid UTF-8 is replaced
with U+FFFD and counted (``invalid_utf8``), empty texts are yielded and counted
(``empty``).

Formats (from the file name, or forced with ``fmt``):

=========  ===============================================================
jsonl      ``.jsonl``, ``.ndjson``, ``.json`` (one object a line), also ``.gz`` /
           ``.zst`` / ``.bz2`` / ``.xz``; dotted field names reach nested
           objects (``--url-field meta.url``)
parquet    ``.parquet``, ``.pq``
csv / tsv  ``.csv``, ``.tsv``, ``.tab`` (header row required), also compressed
text       a directory tree of text files (id = relative path; ``glob``
           filter; binary files counted and skipped; ``.gz`` files
           decompressed), or one text file = one document
wet        Common Crawl WET (``.wet``, ``.warc.wet.gz``): conversion records
warc       WARC (``.warc``, ``.warc.gz``): HTML responses turned into text
=========  ===============================================================
"""

from __future__ import annotations

import bz2
import csv
import glob as _globmod
import gzip
import io
import json
import lzma
import os
import re
import sys
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Callable, ClassVar, Iterator, Literal, Sequence

from ..errors import InputError, ParameterError, require
from .record import ReadStats, Record

__all__ = [
    "FORMATS",
    "CsvReader",
    "JsonlReader",
    "ParquetReader",
    "Reader",
    "TextDirReader",
    "TsvReader",
    "detect_format",
    "expand_inputs",
    "open_binary",
    "read_corpus",
]

FORMATS = ("jsonl", "parquet", "csv", "tsv", "text", "warc", "wet")
OnError = Literal["skip", "fail"]

_COMPRESSED = (".gz", ".zst", ".zstd", ".bz2", ".xz")
_EXTENSIONS = {
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
    ".parquet": "parquet", ".pq": "parquet",
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv",
    ".warc": "warc", ".arc": "warc", ".wet": "wet",
    ".txt": "text", ".text": "text", ".md": "text", ".rst": "text",
}
_GLOB_CHARS = set("*?[")
_SHARD_FORMATS = frozenset({"jsonl", "parquet", "csv", "tsv", "warc", "wet"})


# -- opening files ----------------------------------------------------------------
def open_binary(path: str | os.PathLike) -> BinaryIO:
    """Open *path* for reading bytes, decompressing ``.gz``/``.zst``/``.bz2``/``.xz``
    by its name.  The result is buffered and iterates by lines."""
    p = str(path)
    low = p.lower()
    if low.endswith(".gz"):
        # gzip's own small buffer: a truncated file loses at most a few KB of lines
        return gzip.open(p, "rb")  # type: ignore[return-value]
    if low.endswith(".bz2"):
        return bz2.open(p, "rb")  # type: ignore[return-value]
    if low.endswith(".xz"):
        return lzma.open(p, "rb")  # type: ignore[return-value]
    if low.endswith((".zst", ".zstd")):
        zstd = require("zstandard", "zstd", f"reading {Path(p).name}")
        return io.BufferedReader(_ZstdRaw(p, zstd), buffer_size=1 << 18)  # type: ignore[arg-type]
    return open(p, "rb", buffering=1 << 20)


class _ZstdRaw(io.RawIOBase):
    """A zstandard stream of one or more frames; unlike ``stream_reader`` it raises
    :class:`EOFError` when the file ends inside a frame (a truncated file)."""

    def __init__(self, path: str, zstd: Any) -> None:
        self._f = open(path, "rb")
        self._zstd = zstd
        self._d = zstd.ZstdDecompressor().decompressobj()
        self._fed = False           # data given to the current frame
        self._buf = b""
        self._pos = 0
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while self._pos >= len(self._buf) and not self._eof:
            chunk = self._f.read(1 << 17)
            if not chunk:
                self._eof = True
                if self._fed and not self._d.eof:
                    raise EOFError("zstandard stream ended before the end of a frame")
                break
            out = [self._d.decompress(chunk)]
            self._fed = True
            while self._d.eof:
                rest = self._d.unused_data
                self._d = self._zstd.ZstdDecompressor().decompressobj()
                self._fed = bool(rest)
                if not rest:
                    break
                out.append(self._d.decompress(rest))
            self._buf = b"".join(out)
            self._pos = 0
        n = min(len(b), len(self._buf) - self._pos)
        b[:n] = self._buf[self._pos:self._pos + n]
        self._pos += n
        return n

    def close(self) -> None:
        self._f.close()
        super().close()


# Errors a damaged compressed stream raises while it is being read.
_STREAM_ERRORS: tuple[type[BaseException], ...] = (EOFError, zlib.error, gzip.BadGzipFile,
                                                   lzma.LZMAError, OSError)


def _stream_errors() -> tuple[type[BaseException], ...]:
    try:
        import zstandard

        return _STREAM_ERRORS + (zstandard.ZstdError,)
    except ImportError:  # pragma: no cover - zstandard is an extra
        return _STREAM_ERRORS


def detect_format(path: str | os.PathLike) -> str | None:
    """The format of a file from its name (``None`` if the name does not tell)."""
    name = Path(path).name.lower()
    for c in _COMPRESSED:
        if name.endswith(c):
            name = name[: -len(c)]
            break
    suffixes = [s for s in Path(name).suffixes]
    if ".wet" in suffixes:
        return "wet"
    if not suffixes:
        return None
    return _EXTENSIONS.get(suffixes[-1])


def _decode(raw: bytes) -> tuple[str, bool]:
    """UTF-8 text of *raw* and whether bytes had to be replaced."""
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace"), True


_json_decode = json.JSONDecoder().decode
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]").search
_SURROGATE = re.compile("[\ud800-\udfff]")


def _fix_surrogates(text: str) -> tuple[str, bool]:
    """Replace lone surrogates (from ``\\ud800`` escapes or surrogateescape) by U+FFFD."""
    try:
        text.encode("utf-8")
        return text, False
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text), True


def _blank(text: str) -> bool:
    return not text or text.isspace()


# -- the shared reader ------------------------------------------------------------
class Reader:
    """What every format shares; a subclass implements only :meth:`read_file`.

    Parameters
    ----------
    text_field, id_field, url_field
        Names of the fields (keys, columns) that hold the text, the id and the
        url.  A missing id becomes ``"{file name}:{record_no}"``; a missing url
        becomes ``None``.
    on_error
        ``"skip"``: count a malformed record, note a message and go on;
        ``"fail"``: raise :class:`~repetend.errors.InputError` at once.
    stats
        Counters updated while reading (see :class:`ReadStats`).
    """

    fmt: ClassVar[str] = ""

    def __init__(self, *, text_field: str = "text", id_field: str = "id",
                 url_field: str = "url", on_error: OnError = "skip",
                 stats: ReadStats | None = None, glob: str | None = None) -> None:
        if on_error not in ("skip", "fail"):
            raise ParameterError(f"on_error must be 'skip' or 'fail', not {on_error!r}")
        for name, value in (("text_field", text_field), ("id_field", id_field),
                            ("url_field", url_field)):
            if not isinstance(value, str) or not value:
                raise ParameterError(f"{name} must be a non-empty string, not {value!r}")
        self.text_field = text_field
        self.id_field = id_field
        self.url_field = url_field
        self.on_error = on_error
        self.stats = stats if stats is not None else ReadStats()
        self.glob = glob

    # subclasses implement this ---------------------------------------------------
    def read_file(self, path: Path) -> Iterator[Record]:
        """Yield the records of one file (or directory, for text)."""
        raise NotImplementedError

    # shared helpers --------------------------------------------------------------
    def malformed(self, path: Path | str, where: str, message: str, *,
                  record: int | None = None, missing_text: bool = False) -> None:
        """Count a record that cannot be used; raise with ``on_error="fail"``."""
        self.stats.malformed += 1
        if missing_text:
            self.stats.missing_text += 1
        full = f"{path}, {where}: {message}" if where else f"{path}: {message}"
        if self.on_error == "fail":
            raise InputError(f"{where}: {message}" if where else message, path=str(path))
        self.stats.note_error(full)

    def missing_field_error(self, path: Path | str, field: str, what: str,
                            existing: Sequence[str]) -> InputError:
        shown = ", ".join(repr(f) for f in list(existing)[:30]) or "none"
        if len(existing) > 30:
            shown += f", … ({len(existing)} in all)"
        option = {"text": "--text-field", "id": "--id-field", "url": "--url-field"}[what]
        return InputError(f"no {what} field {field!r} in the first record; fields that exist: "
                          f"{shown} (choose one with {option})", path=str(path))

    def make(self, path: Path, record_no: int, text: str, doc_id: Any = None,
             url: Any = None, *, invalid_utf8: bool = False) -> Record:
        """Build a record with the id fallback, and count it."""
        if invalid_utf8:
            self.stats.invalid_utf8 += 1
        if _blank(text):
            self.stats.empty += 1
        if doc_id is None or doc_id == "":
            doc_id = f"{path.name}:{record_no}"
        elif not isinstance(doc_id, str):
            doc_id = str(doc_id)
        if url is not None and not isinstance(url, str):
            url = str(url)
        return Record(id=doc_id, text=text, url=url or None, source=str(path),
                      record_no=record_no)

    def stream_failed(self, path: Path, where: str, exc: BaseException) -> None:
        """A compressed stream broke off (truncated / corrupt): count and stop the file."""
        self.malformed(path, where, f"file is damaged or truncated, rest of the file "
                                    f"skipped ({type(exc).__name__}: {exc})")


def _lookup(obj: dict, field: str) -> tuple[bool, Any]:
    """``obj[field]``, or a dotted path into nested objects; (found, value)."""
    if field in obj:
        return True, obj[field]
    if "." in field:
        cur: Any = obj
        for part in field.split("."):
            if not isinstance(cur, dict) or part not in cur:
                return False, None
            cur = cur[part]
        return True, cur
    return False, None


class JsonlReader(Reader):
    """JSON Lines: one JSON object a line (plain, gzip, zstandard, bz2, xz)."""

    fmt = "jsonl"

    def read_file(self, path: Path) -> Iterator[Record]:
        errors = _stream_errors()
        first = True
        lineno = 0
        with open_binary(path) as fh:
            it = iter(fh)
            while True:
                try:
                    line = next(it)
                except StopIteration:
                    break
                except errors as exc:
                    self.stream_failed(path, f"after line {lineno}", exc)
                    break
                lineno += 1
                rec = self._parse_line(path, lineno, line, first)
                if rec is None:
                    continue
                first = False
                if rec is not False:
                    yield rec

    def _parse_line(self, path: Path, lineno: int, line: bytes, first: bool):
        """A Record, ``None`` for a blank or unparseable line, ``False`` for a
        parsed object that is unusable (it still counts as the first record)."""
        try:
            sline, bad = line.decode("utf-8"), False
        except UnicodeDecodeError:
            sline, bad = line.decode("utf-8", "replace"), True
        try:
            obj = _json_decode(sline)
        except ValueError as exc:
            if not line.strip():
                return None  # blank line
            if lineno == 1 and line.startswith(b"\xef\xbb\xbf"):
                return self._parse_line(path, lineno, line[3:], first)
            if first and line.lstrip()[:1] == b"[":
                raise InputError("this is a JSON array, not JSON Lines (one object a line); "
                                 "convert it with: jq -c '.[]'", path=str(path)) from None
            self.malformed(path, f"line {lineno}", f"not valid JSON ({exc})")
            return None
        if not isinstance(obj, dict):
            self.malformed(path, f"line {lineno}",
                           f"a JSON {type(obj).__name__}, not an object")
            return False
        found, text = _lookup(obj, self.text_field)
        if not found or text is None:
            if first and not found:
                raise self.missing_field_error(path, self.text_field, "text", list(obj))
            self.malformed(path, f"line {lineno}",
                           f"no text field {self.text_field!r}" if not found
                           else f"text field {self.text_field!r} is null", missing_text=True)
            return False
        if not isinstance(text, str):
            self.malformed(path, f"line {lineno}",
                           f"text field {self.text_field!r} holds a {type(text).__name__}, "
                           "not a string")
            return False
        if b"\\" in line and _SURROGATE_ESCAPE(line):
            text, fixed = _fix_surrogates(text)
            bad = bad or fixed
        _, doc_id = _lookup(obj, self.id_field)
        _, url = _lookup(obj, self.url_field)
        return self.make(path, lineno - 1, text, doc_id, url, invalid_utf8=bad)


class ParquetReader(Reader):
    """Parquet, batch by batch, reading only the text / id / url columns."""

    fmt = "parquet"
    batch_size: ClassVar[int] = 512

    def read_file(self, path: Path) -> Iterator[Record]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            # a buffered stream reads a row group page by page, not whole
            pf = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(f"not a readable Parquet file ({exc})", path=str(path)) from None
        names = pf.schema_arrow.names
        if self.text_field not in names:
            raise InputError(f"no text column {self.text_field!r}; columns that exist: "
                             + ", ".join(repr(n) for n in names) + " (choose one with --text-field)",
                             path=str(path))
        ttype = pf.schema_arrow.field(self.text_field).type
        if pa.types.is_dictionary(ttype):
            ttype = ttype.value_type
        if not (pa.types.is_string(ttype) or pa.types.is_large_string(ttype)
                or pa.types.is_binary(ttype) or pa.types.is_large_binary(ttype)
                or str(ttype) in ("string_view", "binary_view")):
            raise InputError(f"text column {self.text_field!r} has type {ttype}, "
                             "expected a string column", path=str(path))
        cols = [self.text_field]
        has_id = self.id_field in names and self.id_field != self.text_field
        has_url = self.url_field in names and self.url_field not in cols
        if has_id:
            cols.append(self.id_field)
        if has_url:
            cols.append(self.url_field)
        record_no = 0
        try:
            for batch in pf.iter_batches(batch_size=self.batch_size, columns=cols):
                tcol = batch.column(0)
                if pa.types.is_dictionary(tcol.type):
                    tcol = tcol.dictionary_decode()
                # bytes, so that invalid UTF-8 is found and replaced per value
                texts = tcol.cast(pa.large_binary()).to_pylist()
                ids = batch.column(cols.index(self.id_field)).to_pylist() if has_id else None
                urls = batch.column(cols.index(self.url_field)).to_pylist() if has_url else None
                for i, raw in enumerate(texts):
                    no = record_no + i
                    if raw is None:
                        self.malformed(path, f"row {no}",
                                       f"text column {self.text_field!r} is null",
                                       missing_text=True)
                        continue
                    text, bad = _decode(raw)
                    yield self.make(path, no, text, ids[i] if ids else None,
                                    urls[i] if urls else None, invalid_utf8=bad)
                record_no += len(texts)
        except (pa.ArrowInvalid, OSError) as exc:
            self.stream_failed(path, f"after row {record_no}", exc)


def _raise_csv_field_limit() -> None:
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:  # pragma: no cover - platforms with a C long of 32 bits
            limit //= 2


class CsvReader(Reader):
    """CSV with a header row (RFC 4180 quoting; fields of any size)."""

    fmt = "csv"
    delimiter: ClassVar[str] = ","

    def read_file(self, path: Path) -> Iterator[Record]:
        _raise_csv_field_limit()
        errors = _stream_errors()
        with open_binary(path) as raw:
            fh = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="surrogateescape",
                                  newline="")
            # strict: a stray quote is a malformed row, not a field that runs on
            reader = csv.reader(fh, delimiter=self.delimiter, strict=True)
            try:
                header = next(reader, None)
            except errors as exc:
                self.stream_failed(path, "header", exc)
                return
            except csv.Error as exc:
                raise InputError(f"cannot read the header row ({exc})", path=str(path)) from None
            if header is None:
                return
            header = [_fix_surrogates(h)[0].strip() for h in header]
            if self.text_field not in header:
                raise InputError(
                    f"no text column {self.text_field!r} in the header; columns that exist: "
                    + ", ".join(repr(h) for h in header) + " (choose one with --text-field)",
                    path=str(path))
            ti = header.index(self.text_field)
            ii = header.index(self.id_field) if self.id_field in header else None
            ui = header.index(self.url_field) if self.url_field in header else None
            width = len(header)
            record_no = 0
            while True:
                line = reader.line_num + 1
                try:
                    row = next(reader)
                except StopIteration:
                    break
                except csv.Error as exc:
                    self.malformed(path, f"line {line}", f"bad CSV ({exc})")
                    record_no += 1
                    continue
                except errors as exc:
                    self.stream_failed(path, f"after line {reader.line_num}", exc)
                    break
                if not row:
                    continue  # blank line
                no = record_no
                record_no += 1
                if len(row) != width:
                    self.malformed(path, f"line {line}",
                                   f"{len(row)} fields where the header has {width}",
                                   missing_text=len(row) <= ti)
                    continue
                text, bad = _fix_surrogates(row[ti])
                doc_id = row[ii] if ii is not None else None
                url = row[ui] if ui is not None else None
                if doc_id is not None:
                    doc_id = _fix_surrogates(doc_id)[0]
                if url is not None:
                    url = _fix_surrogates(url)[0]
                yield self.make(path, no, text, doc_id, url, invalid_utf8=bad)


class TsvReader(CsvReader):
    """Tab-separated values with a header row."""

    fmt = "tsv"
    delimiter = "\t"


class TextDirReader(Reader):
    """A directory tree of text files, one document per file (id = relative path).

    Files are visited in path order; hidden files and directories (``.git``,
    ``.venv``) and token stores inside the tree are skipped.  ``glob`` (e.g.
    ``"**/*.md"``) chooses files; by default every file that decodes as text is
    read, ``.gz`` files are decompressed, and binary files (a NUL byte or mostly
    invalid UTF-8 in their first 8 KiB) are counted and skipped.  Given a single
    file, the reader yields that file as one document.
    """

    fmt = "text"
    sniff_bytes: ClassVar[int] = 8192

    def read_file(self, path: Path) -> Iterator[Record]:
        if path.is_file():
            rec = self._read_one(path, path.name, 0)
            if rec is not None:
                yield rec
            return
        record_no = 0
        for f in self._files(path):
            rec = self._read_one(f, f.relative_to(path).as_posix(), record_no)
            record_no += 1
            if rec is not None:
                yield rec

    def _files(self, root: Path) -> Iterator[Path]:
        return iter(_tree_files(root, self.glob))

    def _read_one(self, f: Path, doc_id: str, record_no: int) -> Record | None:
        self.stats.files += 1
        try:
            opener = gzip.open if f.name.lower().endswith(".gz") else open
            with opener(f, "rb") as fh:
                head = fh.read(self.sniff_bytes)
                if _is_binary(head):  # decided before the rest is read
                    self._skip_binary(f)
                    return None
                raw = head + fh.read()
        except (OSError, EOFError, zlib.error) as exc:
            self.malformed(f, "", f"cannot read ({type(exc).__name__}: {exc})")
            return None
        text, bad = _decode(raw)
        del raw
        rec = self.make(f, record_no, text, doc_id, None, invalid_utf8=bad)
        return rec

    def _skip_binary(self, f: Path) -> None:
        if hasattr(self.stats, "skipped_binary"):
            self.stats.skipped_binary += 1  # type: ignore[attr-defined]
        self.stats.note_error(f"{f}: binary file skipped")


def _tree_files(root: Path, pattern: str | None) -> list[Path]:
    """Files under *root* in path order, without hidden directories or token stores
    (a store written into the tree it was read from is not read back)."""
    if pattern:
        return [f for f in sorted(root.glob(pattern), key=lambda f: f.parts)
                if f.is_file() and not any(p.startswith(".") for p in f.relative_to(root).parts)]
    found: list[tuple[tuple[str, ...], Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        dirnames[:] = [n for n in dirnames if not n.startswith(".")
                       and not _looks_like_store(d / n)]
        for n in filenames:
            f = d / n
            if not n.startswith(".") and f.is_file():
                found.append((f.relative_to(root).parts, f))
    found.sort()  # by path components: a/one.md before b.txt
    return [f for _, f in found]


def _looks_like_store(d: Path) -> bool:
    return (d / "meta.json").is_file() and (d / "tokens.npy").is_file()


def _is_binary(head: bytes) -> bool:
    if not head:
        return False
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
        return False
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 3:  # a character cut at the sniff boundary
            try:
                head[: exc.start].decode("utf-8")
                return False
            except UnicodeDecodeError:
                pass
    bad = head.decode("utf-8", "replace").count("\ufffd")
    return bad > 0.3 * len(head) / 2


# -- the registry and the entry point ------------------------------------------------
def _reader_classes() -> dict[str, Callable[..., Reader]]:
    from .read_warc import WarcReader, WetReader

    return {"jsonl": JsonlReader, "parquet": ParquetReader, "csv": CsvReader,
            "tsv": TsvReader, "text": TextDirReader, "warc": WarcReader, "wet": WetReader}


def expand_inputs(inputs: Sequence[str | os.PathLike], fmt: str | None = None,
                  glob: str | None = None) -> list[tuple[Path, str]]:
    """Each input as ``(path, format)``.

    Globs are expanded.  A directory is a tree of text files — unless every file
    in it is a corpus file (JSONL, Parquet, CSV/TSV, WARC, WET: a directory of
    shards), or ``fmt`` names a format other than text: then its files of that
    format (or matching ``glob``) are read."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    if fmt is not None and fmt not in FORMATS:
        raise ParameterError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    out: list[tuple[Path, str]] = []
    for item in inputs:
        s = os.fspath(item)
        p = Path(s).expanduser()
        if p.exists():
            paths = [p]
        elif _GLOB_CHARS & set(s):
            paths = [Path(m) for m in sorted(_globmod.glob(os.path.expanduser(s), recursive=True))]
            if not paths:
                raise InputError("no file matches this pattern", path=s)
        else:
            raise InputError("no such file or directory", path=s)
        for q in paths:
            if q.is_dir():
                if fmt == "text":
                    out.append((q, "text"))
                    continue
                files = _tree_files(q, glob)
                if fmt is None:
                    kinds = [detect_format(f) for f in files]
                    if files and all(k in _SHARD_FORMATS for k in kinds):
                        out.extend(zip(files, kinds))  # a directory of shards
                    else:
                        out.append((q, "text"))
                else:
                    out.extend((f, fmt) for f in files if glob or detect_format(f) == fmt)
                continue
            f_fmt = fmt or detect_format(q)
            if f_fmt is None:
                raise InputError("cannot tell the format from the file name; give it with "
                                 f"--format ({', '.join(FORMATS)})", path=str(q))
            out.append((q, f_fmt))
    return out


def read_corpus(inputs: Sequence[str | os.PathLike], *, text_field: str = "text",
                id_field: str = "id", url_field: str = "url", fmt: str | None = None,
                glob: str | None = None, limit: int | None = None,
                on_error: OnError = "skip", stats: ReadStats | None = None,
                html: Literal["all", "main"] = "all") -> Iterator[Record]:
    """Stream the documents of *inputs* as :class:`Record` objects.

    Parameters
    ----------
    inputs
        Files, directories (a tree of text files) and shell-style globs (expanded
        here when the path does not exist literally), in any mix of formats.
    text_field, id_field, url_field
        Field / column names.  A missing id becomes ``"{file name}:{record_no}"``,
        a missing url ``None``.  If the first record of a file (or a Parquet or
        CSV schema) lacks the text field, :class:`~repetend.errors.InputError`
        names it and lists the fields that exist.
    fmt
        One of ``jsonl, parquet, csv, tsv, text, warc, wet``; default: from each
        file's name.
    glob
        For directories: which files to read (``"**/*.md"``).
    limit
        Stop after this many records.
    on_error
        ``"skip"`` counts malformed records in ``stats`` (with the first messages)
        and goes on; ``"fail"`` raises at the first one.
    stats
        A :class:`ReadStats` to fill (files, records, malformed, missing_text,
        empty, invalid_utf8, skipped_non_response, errors).
    html
        WARC only: ``"all"`` keeps all visible text of a page like a Common Crawl
        WET file (menus and footers included — they are what boilerplate mining
        looks for); ``"main"`` keeps the main content (trafilatura ``extract``).

    Yields
    ------
    Record
        ``id``, ``text``, ``url``, ``source`` (file) and ``record_no`` (0-based
        position in the file: line, row, WARC record or file of a tree).

    Notes
    -----
    Memory stays flat in the corpus size: JSONL/CSV are read line by line,
    Parquet by batches of rows with only the needed columns, WARC by records.
    Common Crawl WET is the text of crawled pages after the HTML was dropped —
    the index text of seed 000 (BloomSpan), part 6.
    """
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise ParameterError(f"limit must be a positive integer, not {limit!r}")
    if html not in ("all", "main"):
        raise ParameterError(f"html must be 'all' or 'main', not {html!r}")
    stats = stats if stats is not None else ReadStats()
    files = expand_inputs(inputs, fmt, glob)  # raises before anything is read
    return _read(files, limit, stats, dict(text_field=text_field, id_field=id_field,
                                           url_field=url_field, on_error=on_error,
                                           stats=stats, glob=glob), html)


def _read(files: list[tuple[Path, str]], limit: int | None, stats: ReadStats,
          kw: dict, html: str) -> Iterator[Record]:
    classes = _reader_classes()
    readers: dict[str, Reader] = {}
    if limit is not None and limit <= 0:
        return
    n = 0
    for path, f_fmt in files:
        reader = readers.get(f_fmt)
        if reader is None:
            extra = {"html": html} if f_fmt == "warc" else {}
            reader = readers[f_fmt] = classes[f_fmt](**kw, **extra)
        if f_fmt != "text":  # the text reader counts the files of a tree itself
            stats.files += 1
        gen = reader.read_file(path)
        try:
            for rec in gen:
                stats.records += 1
                n += 1
                yield rec
                if limit is not None and n >= limit:
                    return
        finally:
            gen.close()
