"""Writing a corpus back in its own format, record by record, in lock-step
with the records :func:`repetend.corpus.readers.read_corpus` yields.

Each writer gets every record the reader yielded, in order, with its new text
(``None``: the document is dropped) and whether the text changed.  It goes
back to the record's own bytes in its source file (``record.source`` and
``record.record_no`` say where) so that

* a document with nothing removed is written byte for byte as it was read
  (JSONL line, CSV row, text file); Parquet rows keep every column's value;
* in a changed document only the text field is replaced, every other field
  of the record is kept.  JSONL: only the text value's JSON string is
  replaced in the original line (:func:`splice_json_text`), so key order,
  spacing, escapes and number spelling of every other field stay byte for
  byte; when that cannot be done safely (the line does not parse back to the
  same object) the object is re-encoded with the text replaced.

Records the reader skipped as malformed (and blank lines) are not written:
the output holds exactly the documents of the scan that were kept.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import sys
from pathlib import Path
from typing import BinaryIO

from ..corpus.record import Record
from ..errors import InputError
from .table_rows import kept_rows

__all__ = ["CsvWriter", "JsonlWriter", "ParquetWriter", "RecordJsonlWriter", "TextDirWriter", "Writer",
           "make_writer", "open_output", "splice_json_text"]


def open_output(path: Path, name: str | None = None) -> BinaryIO:
    """A binary file for writing, compressed by the suffix of *name* (default:
    the path's name): ``.gz``, ``.zst``."""
    name = (name or path.name).lower()
    if name.endswith(".gz"):
        import gzip

        return gzip.open(path, "wb")
    if name.endswith(".zst"):
        from ..errors import require

        zstd = require("zstandard", "zstd", "writing .zst files")
        return zstd.ZstdCompressor().stream_writer(open(path, "wb"), closefd=True)
    return open(path, "wb")


_WS = " \t\n\r"
_DECODER = json.JSONDecoder()
_SURROGATE = re.compile("[\ud800-\udfff]").search


def _skip_ws(s: str, i: int) -> int:
    while i < len(s) and s[i] in _WS:
        i += 1
    return i


def _member_span(s: str, i: int, key: str) -> tuple[int, int] | None:
    """Span of the value of *key* in the JSON object starting at ``s[i]`` (the
    last one if the key repeats, as ``json.loads`` keeps the last)."""
    i = _skip_ws(s, i)
    if i >= len(s) or s[i] != "{":
        return None
    i = _skip_ws(s, i + 1)
    found = None
    if i < len(s) and s[i] == "}":
        return None
    while True:
        if i >= len(s) or s[i] != '"':
            return None
        k, i = _DECODER.raw_decode(s, i)
        i = _skip_ws(s, i)
        if i >= len(s) or s[i] != ":":
            return None
        vs = _skip_ws(s, i + 1)
        _, ve = _DECODER.raw_decode(s, vs)
        if k == key:
            found = (vs, ve)
        i = _skip_ws(s, ve)
        if i < len(s) and s[i] == ",":
            i = _skip_ws(s, i + 1)
            continue
        if i < len(s) and s[i] == "}":
            return found
        return None


def _field_span(s: str, obj: dict, field: str) -> tuple[int, int] | None:
    """Span in *s* of the value :func:`_set_field` would replace."""
    if field in obj or "." not in field:
        return _member_span(s, 0, field)
    start = 0
    span = None
    for p in field.split("."):
        span = _member_span(s, start, p)
        if span is None:
            return None
        start = span[0]
    return span


def splice_json_text(line: bytes, field: str, new_text: str) -> bytes | None:
    """*line* (one JSON object, no BOM) with the value of *field* replaced by
    *new_text* and nothing else touched; None when the result would not parse
    to the original object with only that field changed."""
    try:
        s = line.decode("utf-8", "surrogateescape")
        obj = json.loads(line.decode("utf-8", "replace"))
        if not isinstance(obj, dict):
            return None
        span = _field_span(s, obj, field)
        if span is None:
            return None
        vs, ve = span
        ascii_style = s.isascii()   # an all-ASCII line (escaped non-ASCII) stays all-ASCII
        enc = json.dumps(new_text, ensure_ascii=ascii_style)
        if not ascii_style and _SURROGATE(enc):
            enc = json.dumps(new_text, ensure_ascii=True)   # lone surrogates stay escaped
        out = (s[:vs] + enc + s[ve:]).encode("utf-8", "surrogateescape")
        _set_field(obj, field, new_text)
        if json.loads(out.decode("utf-8", "replace")) != obj:
            return None
    except (ValueError, UnicodeError, KeyError, TypeError, RecursionError):
        return None
    return out if out.endswith(b"\n") else out + b"\n"


def _set_field(obj: dict, field: str, value: str) -> None:
    if field in obj or "." not in field:
        obj[field] = value
        return
    cur = obj
    parts = field.split(".")
    for p in parts[:-1]:
        cur = cur[p]
    cur[parts[-1]] = value


class Writer:
    """Base: ``emit`` every yielded record in order, then ``close``."""

    def __init__(self, target: Path, *, text_field: str = "text", name: str | None = None):
        self.target = target
        self.text_field = text_field
        self.name = name
        self.written = 0

    def emit(self, rec: Record, new_text: str | None, changed: bool) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class _LineSource:
    """The lines of one source file, numbered as the JSONL reader numbers them."""

    def __init__(self, path: str):
        from ..corpus.readers import open_binary

        self.path = path
        self.ctx = open_binary(Path(path))
        self.it = iter(self.ctx)
        self.no = -1   # 0-based index of the last line read

    def line(self, record_no: int) -> bytes:
        while self.no < record_no:
            try:
                line = next(self.it)
            except StopIteration:
                raise InputError(f"line {record_no + 1} no longer exists; the input changed since "
                                 "the scan", path=self.path) from None
            self.no += 1
        return line

    def close(self):
        self.ctx.close()


class JsonlWriter(Writer):
    """JSON Lines out: unchanged lines verbatim, changed ones with only the text
    field's value replaced in the line (re-encoded when that is not safe)."""

    def __init__(self, target: Path, *, text_field: str = "text", name: str | None = None):
        super().__init__(target, text_field=text_field, name=name)
        self.fh = open_output(target, name)
        self.src: _LineSource | None = None

    def emit(self, rec, new_text, changed):
        if self.src is None or self.src.path != rec.source:
            if self.src is not None:
                self.src.close()
            self.src = _LineSource(rec.source)
        line = self.src.line(rec.record_no)
        if new_text is None:
            return
        if not changed:
            self.fh.write(line if line.endswith(b"\n") else line + b"\n")
        else:
            raw = line[3:] if (rec.record_no == 0 and line.startswith(b"\xef\xbb\xbf")) else line
            out = splice_json_text(raw, self.text_field, new_text)
            if out is None:
                obj = json.loads(raw.decode("utf-8", "replace"))
                _set_field(obj, self.text_field, new_text)
                out = json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"
            self.fh.write(out)
        self.written += 1

    def close(self):
        if self.src is not None:
            self.src.close()
        self.fh.close()


class RecordJsonlWriter(Writer):
    """JSON Lines of ``{"id", "url", "text"}`` for inputs whose format cannot be
    written back (WARC, WET)."""

    def __init__(self, target: Path, *, text_field: str = "text", name: str | None = None):
        super().__init__(target, text_field=text_field, name=name)
        self.fh = open_output(target, name)

    def emit(self, rec, new_text, changed):
        if new_text is None:
            return
        obj = {"id": rec.id, "url": rec.url, self.text_field: new_text}
        self.fh.write(json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n")
        self.written += 1

    def close(self):
        self.fh.close()


def _raise_csv_field_limit() -> None:
    """Fields of any size, as the CSV reader allows."""
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:  # pragma: no cover - platforms with a 32-bit C long
            limit //= 2


class CsvWriter(Writer):
    """CSV/TSV out: the header once, unchanged rows verbatim, changed rows
    re-quoted with only the text column replaced."""

    delimiter = ","

    def __init__(self, target: Path, *, text_field: str = "text", delimiter: str = ",",
                 name: str | None = None):
        super().__init__(target, text_field=text_field, name=name)
        self.delimiter = delimiter
        self.raw = open_output(target, name)
        self.fh = io.TextIOWrapper(self.raw, encoding="utf-8", errors="surrogateescape", newline="")
        self.header: list[str] | None = None
        self.src_path: str | None = None

    def _open(self, path: str):
        from ..corpus.readers import open_binary

        _raise_csv_field_limit()
        if self.src_path is not None:
            self._ctx.close()
        self.src_path = path
        self._ctx = open_binary(Path(path))
        fh = io.TextIOWrapper(self._ctx, encoding="utf-8-sig", errors="surrogateescape", newline="")
        self._buf: list[str] = []

        def lines():
            for ln in fh:
                self._buf.append(ln)
                yield ln

        self.reader = csv.reader(lines(), delimiter=self.delimiter)
        header_row = next(self.reader)
        raw_header = "".join(self._buf)
        self._buf.clear()
        header = [h.strip() for h in header_row]
        if self.header is None:
            self.header = header
            self.fh.write(raw_header if raw_header.endswith(("\n", "\r")) else raw_header + "\n")
            self.eol = "\r\n" if raw_header.endswith("\r\n") else "\n"
        elif header != self.header:
            raise InputError("its header differs from the first file's; clean the files one by one",
                             path=path)
        self.ti = header.index(self.text_field)
        self.no = -1

    def emit(self, rec, new_text, changed):
        if self.src_path != rec.source:
            self._open(rec.source)
        row = None
        while self.no < rec.record_no:
            self._buf.clear()
            try:
                row = next(self.reader)
            except StopIteration:
                raise InputError(f"row {rec.record_no} no longer exists; the input changed since the scan",
                                 path=rec.source) from None
            except csv.Error:
                self.no += 1
                row = None
                continue
            if not row:
                continue
            self.no += 1
        raw = "".join(self._buf)
        if new_text is None:
            return
        if not changed:
            self.fh.write(raw if raw.endswith(("\n", "\r")) else raw + self.eol)
        else:
            row = list(row)
            row[self.ti] = new_text
            w = csv.writer(self.fh, delimiter=self.delimiter, lineterminator=self.eol)
            w.writerow(row)
        self.written += 1

    def close(self):
        if self.src_path is not None:
            self._ctx.close()
        self.fh.close()


class ParquetWriter(Writer):
    """Parquet out: every column kept, the text column replaced, dropped and
    unreadable rows left out; the schema of the first input file."""

    def __init__(self, target: Path, *, text_field: str = "text"):
        super().__init__(target, text_field=text_field)
        self.pw = None
        self.src_path: str | None = None
        self.keep: dict[int, str | None] = {}   # record_no -> new text (None: unchanged)

    def emit(self, rec, new_text, changed):
        if self.src_path != rec.source:
            self._flush()
            self.src_path = rec.source
        if new_text is not None:
            self.keep[rec.record_no] = new_text if changed else None

    def _flush(self):
        if self.src_path is None:
            return
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(self.src_path)
        schema = pf.schema_arrow
        if self.pw is None:
            self.schema = schema
            self.pw = pq.ParquetWriter(self.target, schema, compression="zstd")
        elif not schema.equals(self.schema):
            raise InputError("its columns differ from the first file's; clean the files one by one",
                             path=self.src_path)
        base = 0
        for batch in pf.iter_batches(batch_size=4096):
            t = kept_rows(batch, base, self.keep, schema, self.text_field)
            if t is not None:
                self.pw.write_table(t)
                self.written += t.num_rows
            base += batch.num_rows
        self.keep = {}

    def close(self):
        self._flush()
        if self.pw is None:  # no record at all
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.table({self.text_field: pa.array([], pa.string())}), self.target)
        else:
            self.pw.close()


class TextDirWriter(Writer):
    """A directory tree of text files out (path = document id): unchanged files
    copied byte for byte, changed ones written as UTF-8 (gzip for ``.gz``)."""

    def __init__(self, target: Path, *, text_field: str = "text"):
        super().__init__(target, text_field=text_field)
        target.mkdir(parents=True, exist_ok=True)

    def emit(self, rec, new_text, changed):
        if new_text is None:
            return
        rel = Path(rec.id)
        if rel.is_absolute() or ".." in rel.parts:
            raise InputError(f"document id {rec.id!r} is not a relative path", path=rec.source)
        dest = self.target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not changed:
            shutil.copyfile(rec.source, dest)
        else:
            data = new_text.encode("utf-8", "surrogatepass")
            if dest.name.lower().endswith(".gz"):
                import gzip

                data = gzip.compress(data)
            dest.write_bytes(data)
        self.written += 1


def make_writer(fmt: str, target: Path, text_field: str, name: str | None = None) -> Writer:
    """The writer for format *fmt* (anything not writable: JSONL records);
    *name* is the final file name (its suffix chooses the compression)."""
    if fmt == "jsonl":
        return JsonlWriter(target, text_field=text_field, name=name)
    if fmt == "csv":
        return CsvWriter(target, text_field=text_field, delimiter=",", name=name)
    if fmt == "tsv":
        return CsvWriter(target, text_field=text_field, delimiter="\t", name=name)
    if fmt == "parquet":
        return ParquetWriter(target, text_field=text_field)
    if fmt == "text":
        return TextDirWriter(target, text_field=text_field)
    if fmt == "arrow":
        from .write_dataset import DatasetDirWriter

        return DatasetDirWriter(target, text_field=text_field)
    return RecordJsonlWriter(target, text_field=text_field, name=name)

