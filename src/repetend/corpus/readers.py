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
arrow      ``.arrow``: an Arrow IPC shard, as in a Hugging Face ``save_to_disk``
           folder — such a folder (or a ``DatasetDict`` folder, or a dataset
           repository in the hub cache) given as input is read as its shards
           (:mod:`repetend.corpus.read_hf`)
=========  ===============================================================
"""

from __future__ import annotations

import glob as _globmod
import os
from pathlib import Path
from typing import Callable, Iterator, Literal, Sequence

from ..errors import InputError, ParameterError
from .read_base import STDIN, OnError, Reader, open_binary
from .read_jsonl import JsonlReader
from .read_table import CsvReader, ParquetReader, TsvReader
from .read_text import TextDirReader, _tree_files
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

FORMATS = ("jsonl", "parquet", "csv", "tsv", "text", "warc", "wet", "arrow")

_COMPRESSED = (".gz", ".zst", ".zstd", ".bz2", ".xz")
_EXTENSIONS = {
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
    ".parquet": "parquet", ".pq": "parquet",
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv",
    ".warc": "warc", ".arc": "warc", ".wet": "wet", ".arrow": "arrow",
    ".txt": "text", ".text": "text", ".md": "text", ".rst": "text",
}
_GLOB_CHARS = set("*?[")
_STDIN_FORMATS = ("jsonl", "csv", "tsv")
_SHARD_FORMATS = frozenset({"jsonl", "parquet", "csv", "tsv", "warc", "wet", "arrow"})


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


def _reader_classes() -> dict[str, Callable[..., Reader]]:
    from .read_hf import ArrowReader
    from .read_warc import WarcReader, WetReader

    return {"jsonl": JsonlReader, "parquet": ParquetReader, "csv": CsvReader,
            "tsv": TsvReader, "text": TextDirReader, "warc": WarcReader, "wet": WetReader,
            "arrow": ArrowReader}


def expand_inputs(inputs: Sequence[str | os.PathLike], fmt: str | None = None,
                  glob: str | None = None) -> list[tuple[Path, str]]:
    """Each input as ``(path, format)``.

    Globs are expanded.  A directory is a tree of text files — unless it is a
    Hugging Face dataset folder (:func:`repetend.corpus.read_hf.dataset_files`:
    its shards), or every file in it is a corpus file (JSONL, Parquet, CSV/TSV,
    WARC, WET, Arrow: a directory of shards), or ``fmt`` names a format other
    than text: then its files of that format (or matching ``glob``) are read."""
    from .read_hf import dataset_files, is_dataset_dir

    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    if fmt is not None and fmt not in FORMATS:
        raise ParameterError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    out: list[tuple[Path, str]] = []
    for item in inputs:
        s = os.fspath(item)
        if s == STDIN:
            if (fmt or "jsonl") not in _STDIN_FORMATS:
                raise ParameterError("the standard input ('-') can be read as "
                                     f"{', '.join(_STDIN_FORMATS)}, not {fmt}")
            out.append((Path(STDIN), fmt or "jsonl"))
            continue
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
                if fmt is None and glob is None and is_dataset_dir(q):
                    out.extend(dataset_files(q))
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
                html: Literal["all", "main"] = "all",
                duplicate_ids: Literal["fail", "rename"] = "fail") -> Iterator[Record]:
    """Stream the documents of *inputs* as :class:`Record` objects.

    Parameters
    ----------
    inputs
        Files, directories (a tree of text files) and shell-style globs (expanded
        here when the path does not exist literally), in any mix of formats;
        ``"-"`` is the standard input (JSONL by default, or CSV/TSV with ``fmt``;
        gzip/zstandard recognised), its ids ``"stdin:{line}"``.
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
    duplicate_ids
        ``"fail"``: ids are passed on as read; the token store refuses a corpus whose
        ids repeat, naming the first repeated id (:func:`repetend.corpus.store.build_store`).
        ``"rename"``: the second and later records of an id get ``"{id}#2"``,
        ``"{id}#3"``, … (the next free suffix), counted in ``stats.renamed_ids``.

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
    the index text of the BloomSpan paper, §6.
    """
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise ParameterError(f"limit must be a positive integer, not {limit!r}")
    if html not in ("all", "main"):
        raise ParameterError(f"html must be 'all' or 'main', not {html!r}")
    if duplicate_ids not in ("fail", "rename"):
        raise ParameterError(f"duplicate_ids must be 'fail' or 'rename', not {duplicate_ids!r}")
    stats = stats if stats is not None else ReadStats()
    # paths, fields and optional packages are checked before anything is read
    files = expand_inputs(inputs, fmt, glob)
    classes = _reader_classes()
    kw = dict(text_field=text_field, id_field=id_field, url_field=url_field,
              on_error=on_error, stats=stats, glob=glob)
    readers: dict[str, Reader] = {}
    for f_fmt in dict.fromkeys(f for _, f in files) or ["jsonl"]:
        extra = {"html": html} if f_fmt == "warc" else {}
        readers[f_fmt] = classes[f_fmt](**kw, **extra)
    records = _read(files, limit, stats, readers)
    return _renamed_ids(records, stats) if duplicate_ids == "rename" else records


def _renamed_ids(records: Iterator[Record], stats: ReadStats) -> Iterator[Record]:
    """*records* with every repeated id made unique: ``id#2``, ``id#3``, … (a
    suffix that is itself an id already read is skipped)."""
    seen: dict[str, int] = {}
    for rec in records:
        k = seen.get(rec.id)
        if k is None:
            seen[rec.id] = 1
        else:
            base = rec.id
            while True:
                k += 1
                new = f"{base}#{k}"
                if new not in seen:
                    break
            seen[base] = k
            seen[new] = 1
            rec.id = new
            stats.renamed_ids += 1
        yield rec


def _read(files: list[tuple[Path, str]], limit: int | None, stats: ReadStats,
          readers: dict[str, Reader]) -> Iterator[Record]:
    try:
        yield from _read_files(files, limit, stats, readers)
    finally:  # a reader's worker processes end with the read
        for reader in readers.values():
            close = getattr(reader, "close", None)
            if close is not None:
                close()


def _read_files(files: list[tuple[Path, str]], limit: int | None, stats: ReadStats,
                readers: dict[str, Reader]) -> Iterator[Record]:
    n = 0
    for path, f_fmt in files:
        reader = readers[f_fmt]
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
