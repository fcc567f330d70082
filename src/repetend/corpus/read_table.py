"""Tables: Parquet (batch by batch, only the needed columns) and CSV / TSV."""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path
from typing import ClassVar, Iterator

from ..errors import InputError
from .read_base import Reader, _decode, _fix_surrogates, _stream_errors, open_binary
from .record import Record

__all__ = ["CsvReader", "ParquetReader", "TsvReader"]


class ParquetReader(Reader):
    """Parquet, batch by batch, reading only the text / id / url columns."""

    fmt = "parquet"
    batch_size: ClassVar[int] = 512          # rows per batch at most
    batch_bytes: ClassVar[int] = 16 << 20    # text per batch, about

    def read_file(self, path: Path) -> Iterator[Record]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            # a buffered stream reads a row group page by page, not whole
            pf = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(f"not a readable Parquet file ({exc})", path=str(path)) from None
        batch_size = self._batch_rows(pf)
        yield from self.table_records(
            path, pf.schema_arrow,
            lambda cols: pf.iter_batches(batch_size=batch_size, columns=cols), "the Parquet schema")

    def table_records(self, path: Path, schema, batches, where: str) -> Iterator[Record]:
        """The records of a table with Arrow *schema* whose record batches
        ``batches(columns)`` yields (Parquet, or an Arrow IPC file of a Hugging Face
        dataset): the fields checked, the text / id / url columns read."""
        import pyarrow as pa

        names = schema.names
        self.check_fields(path, names.__contains__, names, f"in {where}")
        ttype = schema.field(self.text_field).type
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
            for batch in batches(cols):
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

    def _batch_rows(self, pf) -> int:
        """Rows per batch so that a batch holds about ``batch_bytes`` of text
        (a few rows when the documents are huge), from the column statistics."""
        try:
            md = pf.metadata
            size = rows = 0
            for g in range(md.num_row_groups):
                rg = md.row_group(g)
                rows += rg.num_rows
                for c in range(rg.num_columns):
                    col = rg.column(c)
                    if col.path_in_schema == self.text_field:
                        size += col.total_uncompressed_size
            per_row = size / rows if rows else 0
        except Exception:  # pragma: no cover - metadata without sizes
            return self.batch_size
        if per_row <= 0:
            return self.batch_size
        return int(max(1, min(self.batch_size, self.batch_bytes // per_row)))


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
            self.check_fields(path, header.__contains__, header, "in the header row")
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
