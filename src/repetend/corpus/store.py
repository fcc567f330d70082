"""The token store: a corpus tokenized once, mined many times.

On disk (a directory)::

    meta.json           format version, unit, summary (documents, tokens, read stats)
    tokens.npy          int32 [n_tokens]    token ids, documents back to back
    doc_offsets.npy     int64 [n_docs + 1]  document d owns tokens[doc_offsets[d]:doc_offsets[d+1]]
    vocab.parquet       token (string), df (int32), count (int64); the row number is the id
    docs.parquet        doc_id, url, host, n_tokens, source, record_no
                        (+ language, ISO 639-1, when built with ``lang_detect``)
    text.bin            the original texts, UTF-8, back to back
    text_offsets.npy    int64 [n_docs + 1]  byte offsets into text.bin

The arrays are memory-mapped on open, so a store larger than RAM can be read.
Per-token character offsets are not stored: the surface form of a token span
is recovered by tokenizing that one document again (:meth:`TokenStore.token_spans`).
"""

from __future__ import annotations

import errno
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from .._atomic import atomic_dir, recover_dir
from ..errors import InputError
from . import _store_kernels as SK
from .record import ReadStats, Record, host_of

if TYPE_CHECKING:   # the tokenizer (and its Unicode tables) is loaded only to build a store
    from .tokenizer import Unit

__all__ = ["FORMAT_VERSION", "TokenStore", "build_store", "is_store", "open_store",
           "open_store_arrays", "open_store_vocab", "store_summary"]

FORMAT_VERSION = 1
_NPY_HEADER = 128  # bytes reserved for the .npy header of a streamed array


def _npy_header(dtype: np.dtype, n: int) -> bytes:
    """A version-1.0 .npy header padded to exactly ``_NPY_HEADER`` bytes."""
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (np.dtype(dtype).str, n)
    body_len = _NPY_HEADER - 10
    d = d.ljust(body_len - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + body_len.to_bytes(2, "little") + d.encode("latin1")


class _Vocabulary:
    """Maps 64-bit token hashes to dense int32 ids in first-seen order.

    The map is a compiled open-addressing hash table
    (:mod:`repetend.corpus._store_kernels`) kept across batches and grown by
    doubling: one compiled pass per batch assigns the ids; the strings of new
    ids only are fetched from the batch.
    """

    _INITIAL_BITS = 16

    def __init__(self) -> None:
        self.bits = self._INITIAL_BITS
        self.keys = np.zeros(1 << self.bits, dtype=np.uint64)
        self.vals = np.full(1 << self.bits, -1, dtype=np.int32)
        self.strings: list[str] = []

    def __len__(self) -> int:
        return len(self.strings)

    def ids_for(self, batch) -> np.ndarray:
        h = np.ascontiguousarray(batch.hashes, dtype=np.uint64)
        if h.size == 0:
            return np.empty(0, dtype=np.int32)
        n_used = len(self.strings)
        with np.errstate(over="ignore"):  # uint64 wrap-around when numba is off
            ids, self.keys, self.vals, bits, first = SK.assign_ids(
                h, self.keys, self.vals, np.int64(self.bits), np.int64(n_used))
        self.bits = int(bits)
        if first.size:
            if n_used + first.size >= 2**31:
                raise InputError("vocabulary exceeds 2^31 distinct tokens")
            self.strings.extend(batch.strings(first))
        return ids

    def lookup(self, hashes: np.ndarray) -> np.ndarray:
        """Ids of *hashes*, ``-1`` where unseen (the map is not changed)."""
        h = np.ascontiguousarray(hashes, dtype=np.uint64)
        with np.errstate(over="ignore"):
            return SK.lookup_ids(h, self.keys, self.vals, np.int64(self.bits))


class _Frequencies:
    """Document frequency and count of every id, added batch by batch (no
    pass over the whole token stream at the end: memory stays bounded by the
    batch and the vocabulary)."""

    def __init__(self) -> None:
        self.df = np.zeros(1024, dtype=np.int32)
        self.counts = np.zeros(1024, dtype=np.int64)
        self.last = np.full(1024, -1, dtype=np.int64)
        self.n_docs = 0

    def add(self, ids: np.ndarray, doc_offsets: np.ndarray, vocab_size: int) -> None:
        if vocab_size > self.df.size:
            cap = max(vocab_size, 2 * self.df.size)
            self.df = np.concatenate([self.df, np.zeros(cap - self.df.size, np.int32)])
            self.counts = np.concatenate([self.counts, np.zeros(cap - self.counts.size, np.int64)])
            self.last = np.concatenate([self.last, np.full(cap - self.last.size, -1, np.int64)])
        SK.add_df_counts(ids, doc_offsets, np.int64(self.n_docs), self.df, self.counts, self.last)
        self.n_docs += doc_offsets.size - 1

    def result(self, vocab_size: int) -> tuple[np.ndarray, np.ndarray]:
        return self.df[:vocab_size].copy(), self.counts[:vocab_size].copy()


@dataclass
class TokenStore:
    """A tokenized corpus (see the module docstring for the layout)."""

    tokens: npt.NDArray[np.int32]
    doc_offsets: npt.NDArray[np.int64]
    vocab: list[str]
    df: npt.NDArray[np.int32]
    docs: pa.Table
    text_blob: np.ndarray            # uint8 (memory-mapped when opened from disk)
    text_offsets: npt.NDArray[np.int64]
    unit: str = "word"
    lang: str | None = None
    summary: dict = field(default_factory=dict)
    path: Path | None = None

    # -- shape -----------------------------------------------------------------
    @property
    def n_docs(self) -> int:
        return int(self.doc_offsets.shape[0] - 1)

    @property
    def n_tokens(self) -> int:
        return int(self.tokens.shape[0])

    @property
    def doc_lengths(self) -> npt.NDArray[np.int64]:
        return np.diff(self.doc_offsets)

    @property
    def doc_ids(self) -> list[str]:
        return self.docs.column("doc_id").to_pylist()

    @property
    def has_urls(self) -> bool:
        col = self.docs.column("url")
        return col.null_count < len(col)

    # -- per document ------------------------------------------------------------
    def doc_tokens(self, d: int) -> npt.NDArray[np.int32]:
        return self.tokens[self.doc_offsets[d]:self.doc_offsets[d + 1]]

    def text(self, d: int) -> str:
        a, b = int(self.text_offsets[d]), int(self.text_offsets[d + 1])
        return bytes(self.text_blob[a:b]).decode("utf-8", "surrogatepass")

    def token_spans(self, d: int) -> npt.NDArray[np.int64]:
        """Character offsets ``[n, 2]`` of document *d*'s tokens in its original text."""
        from .tokenizer import token_spans

        name = str(self.docs.column("doc_id")[d]) if self.unit == "code" else None
        spans = token_spans(self.text(d), unit=self.unit, lang=self.lang, name=name)
        n = int(self.doc_offsets[d + 1] - self.doc_offsets[d])
        if spans.shape[0] != n:  # the store was made by another tokenizer
            raise InputError(
                f"document {d}: {spans.shape[0]} tokens on re-tokenization, {n} in the store",
                path=str(self.path) if self.path else None)
        return spans

    def surface(self, d: int, start: int, end: int) -> str:
        """Original text (case, punctuation) of tokens ``start:end`` of document *d*
        (token positions relative to the document)."""
        if end <= start:
            return ""
        spans = self.token_spans(d)
        return self.text(d)[int(spans[start, 0]):int(spans[end - 1, 1])]

    def token_strings(self, ids: Iterable[int]) -> list[str]:
        return [self.vocab[int(i)] for i in ids]

    def doc_of_position(self, pos: npt.ArrayLike) -> np.ndarray:
        """Document index of global token position(s)."""
        return np.searchsorted(self.doc_offsets, pos, side="right") - 1

    # -- construction ------------------------------------------------------------
    @classmethod
    def from_texts(cls, texts: Sequence[str], ids: Sequence[str] | None = None,
                   urls: Sequence[str | None] | None = None, *, unit: Unit = "word",
                   lang: str | None = None, lang_detect: bool = False) -> "TokenStore":
        """An in-memory store from a list of texts (ids default to ``"0"``, ``"1"``, …)."""
        n = len(texts)
        ids = [str(i) for i in range(n)] if ids is None else list(ids)
        urls = [None] * n if urls is None else list(urls)
        records = (Record(id=ids[i], text=texts[i], url=urls[i], source="<memory>", record_no=i)
                   for i in range(n))
        return build_store(records, unit=unit, lang=lang, lang_detect=lang_detect)

    # -- persistence -------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        path = Path(path)
        with atomic_dir(path) as tmp:
            np.save(tmp / "tokens.npy", np.ascontiguousarray(self.tokens))
            np.save(tmp / "doc_offsets.npy", self.doc_offsets)
            np.save(tmp / "text_offsets.npy", self.text_offsets)
            np.asarray(self.text_blob).tofile(tmp / "text.bin")
            _write_vocab(tmp, self.vocab, self.df, None)
            pq.write_table(self.docs, tmp / "docs.parquet", compression="zstd")
            _write_meta(tmp, self.unit, self.lang, self.summary)
        self.path = path
        return path

    @classmethod
    def open(cls, path: str | os.PathLike, mmap: bool = True) -> "TokenStore":
        path = Path(path)
        recover_dir(path)  # a replacement killed half-way leaves the old store beside it
        meta_file = path / "meta.json"
        if not meta_file.is_file():
            raise InputError("not a repetend token store (no meta.json)", path=str(path))
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        if meta.get("format_version") != FORMAT_VERSION:
            raise InputError(
                f"token store format {meta.get('format_version')} cannot be read by this "
                f"repetend (format {FORMAT_VERSION}); tokenize the corpus again",
                path=str(path))
        mode = "r" if mmap else None
        try:
            vocab_t = _read_parquet(path / "vocab.parquet")
            blob_path = path / "text.bin"
            if blob_path.stat().st_size:
                blob = (np.memmap(blob_path, dtype=np.uint8, mode="r") if mmap
                        else np.fromfile(blob_path, np.uint8))
            else:
                blob = np.empty(0, np.uint8)
            store = cls(
                tokens=np.load(path / "tokens.npy", mmap_mode=mode),
                doc_offsets=np.load(path / "doc_offsets.npy"),
                vocab=vocab_t.column("token").combine_chunks(),
                df=_int_column(vocab_t.column("df")),
                docs=_read_parquet(path / "docs.parquet"),
                text_blob=blob,
                text_offsets=np.load(path / "text_offsets.npy"),
                unit=meta.get("unit", "word"),
                lang=meta.get("lang"),
                summary=meta.get("summary", {}),
                path=path,
            )
        except (ValueError, EOFError, pa.ArrowInvalid, FileNotFoundError) as exc:
            raise InputError(f"damaged token store ({exc}); tokenize the corpus again",
                             path=str(path)) from exc
        _check_shape(store, path)
        return store


def _get_vocab(self: TokenStore) -> list[str]:
    v = self._vocab
    if not isinstance(v, list):   # an opened store's vocabulary column, made a list on first use
        v = self._vocab = v.to_pylist()
    return v


def _set_vocab(self: TokenStore, value) -> None:
    self._vocab = value


# ``vocab`` is the list of token strings; an opened store keeps the Arrow column until
# the list is asked for (214 k Python strings are ~20 MB that near-duplicate detection,
# which hashes the column's UTF-8 bytes directly, never needs).
TokenStore.vocab = property(_get_vocab, _set_vocab, doc="The token strings, by id.")


def _vocab_source(self: TokenStore):
    """The vocabulary as it is held: the list, or (an opened store not yet asked for
    its list) the Arrow string column of ``vocab.parquet`` with the same strings."""
    return self._vocab


TokenStore.vocab_source = _vocab_source


def _read_parquet(path: Path, columns: list[str] | None = None) -> pa.Table:
    """One small parquet file of the store, read with the plain file reader (not the
    dataset machinery of ``pq.read_table``, which costs tens of MB of its own) into
    buffers of the system allocator: Arrow's default pool (mimalloc) keeps the pages
    it once took for the whole process, about 25 MB for a 200 k-token vocabulary,
    which is then part of every later peak (docs/neardup.md, memory)."""
    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        return pq.ParquetFile(path).read(columns=columns, use_threads=False)
    finally:
        pa.set_memory_pool(previous)


def _int_column(col) -> np.ndarray:
    """An integer column without nulls as int32, from its buffer (Arrow's
    ``to_numpy`` imports pandas, ~20 MB, on its first call)."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if arr.null_count or not pa.types.is_integer(arr.type):
        return np.asarray(arr.to_numpy(zero_copy_only=False)).astype(np.int32)
    data = arr.buffers()[1]
    dtype = np.dtype(arr.type.to_pandas_dtype())
    if data is None or len(arr) == 0:
        return np.empty(0, dtype=np.int32)
    return np.frombuffer(data, dtype=dtype)[arr.offset:arr.offset + len(arr)].astype(np.int32)


def _check_shape(store: "TokenStore", path: Path) -> None:
    """The arrays of an opened store agree with each other (a file cut short or
    replaced by another store's would otherwise be read as documents)."""
    off, toff = np.asarray(store.doc_offsets), np.asarray(store.text_offsets)
    n = store.docs.num_rows
    ok = (off.shape == (n + 1,) and toff.shape == (n + 1,)
          and (n == 0 or (int(off[0]) == 0 and int(off[-1]) == store.tokens.shape[0]
                          and int(toff[-1]) == store.text_blob.shape[0]))
          and store.df.shape[0] == len(store.vocab_source()))
    if not ok:
        raise InputError("damaged token store (its arrays do not agree: tokens, offsets, "
                         "documents or vocabulary cut short); tokenize the corpus again",
                         path=str(path))


def _write_vocab(dirpath: Path, vocab: list[str], df: np.ndarray, counts: np.ndarray | None) -> None:
    cols = {"token": pa.array(vocab, type=pa.string()), "df": pa.array(np.asarray(df, np.int32))}
    if counts is not None:
        cols["count"] = pa.array(np.asarray(counts, np.int64))
    pq.write_table(pa.table(cols), dirpath / "vocab.parquet", compression="zstd")


def _write_meta(dirpath: Path, unit: str, lang: str | None, summary: dict) -> None:
    meta = {"format_version": FORMAT_VERSION, "unit": unit, "lang": lang, "summary": summary}
    (dirpath / "meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n",
                                       encoding="utf-8")


def _batches(records: Iterable[Record], batch_chars: int) -> Iterator[list[Record]]:
    batch: list[Record] = []
    size = 0
    for r in records:
        batch.append(r)
        size += len(r.text)
        if size >= batch_chars:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


class _Sink:
    """Where the token and text streams go: memory lists, or files on disk."""

    def __init__(self, directory: Path | None):
        self.dir = directory
        self.n_tokens = 0
        self.n_bytes = 0
        if directory is None:
            self.tok_parts: list[np.ndarray] = []
            self.text_parts: list[bytes] = []
        else:
            self.tok_f = open(directory / "tokens.npy", "wb")
            self.tok_f.write(b"\0" * _NPY_HEADER)
            self.text_f = open(directory / "text.bin", "wb")

    def add(self, ids: np.ndarray, text: bytes) -> None:
        """Append a batch's token ids and its texts' UTF-8 bytes (back to back)."""
        self.n_tokens += ids.size
        if self.dir is None:
            self.tok_parts.append(ids)
            self.text_parts.append(text)
        else:
            try:
                # write() through the file object: a full disk raises OSError(ENOSPC)
                # with the path (ndarray.tofile says only "requested and written")
                self.tok_f.write(np.ascontiguousarray(ids, dtype=np.int32).data)
                self.text_f.write(text)
            except OSError as exc:
                raise OSError(exc.errno or errno.ENOSPC, exc.strerror or "could not write "
                              "everything (is the disk full?)", str(self.dir)) from exc
        self.n_bytes += len(text)

    def __enter__(self) -> "_Sink":
        return self

    def __exit__(self, *exc) -> bool:
        if self.dir is not None:
            self.tok_f.close()
            self.text_f.close()
        return False

    def finish(self):
        if self.dir is None:
            tokens = np.concatenate(self.tok_parts) if self.tok_parts else np.empty(0, np.int32)
            blob = np.frombuffer(b"".join(self.text_parts), dtype=np.uint8)
            return tokens.astype(np.int32, copy=False), blob
        self.tok_f.seek(0)
        self.tok_f.write(_npy_header(np.int32, self.n_tokens))
        self.tok_f.close()
        self.text_f.close()
        if self.n_tokens:
            tokens = np.load(self.dir / "tokens.npy", mmap_mode="r")
        else:  # an empty array cannot be memory-mapped
            tokens = np.empty(0, np.int32)
        blob_path = self.dir / "text.bin"
        blob = np.memmap(blob_path, np.uint8, mode="r") if self.n_bytes else np.empty(0, np.uint8)
        return tokens, blob


def build_store(records: Iterable[Record], *, out: str | os.PathLike | None = None,
                unit: Unit = "word", lang: str | None = None, batch_chars: int = 8_000_000,
                read_stats: ReadStats | None = None, progress=None,
                lang_detect: bool = False) -> TokenStore:
    """Tokenize *records* into a :class:`TokenStore`.

    Memory during the build is bounded by ``batch_chars`` (the text of one
    batch and its tokens) plus the vocabulary; with ``out`` the tokens and texts
    are streamed to disk (the directory appears only when the build succeeds)
    and the returned store is memory-mapped from there.
    ``progress`` is called with the number of characters of each finished batch.
    With ``lang_detect`` each document's language (:mod:`repetend.corpus.lang`) is
    stored in the ``language`` column of the document table.
    """
    kw = dict(unit=unit, lang=lang, batch_chars=batch_chars, read_stats=read_stats,
              progress=progress, lang_detect=lang_detect)
    if out is None:
        return _build(records, None, **kw)
    with atomic_dir(out) as tmp:
        _build(records, tmp, **kw)
    return TokenStore.open(out)


def _check_unique_ids(cols: dict[str, pa.Array]) -> None:
    """Refuse a corpus whose document ids repeat (every output names documents by
    id, and a user joins them back by id), naming the first repeated id and both
    records."""
    import pyarrow.compute as pc

    ids = cols["doc_id"]
    if len(ids) < 2 or pc.count_distinct(ids).as_py() == len(ids):
        return
    first: dict[str, int] = {}
    for i, d in enumerate(ids.to_pylist()):
        j = first.setdefault(d, i)
        if j != i:
            where = [f"{cols['source'][k].as_py()} record {cols['record_no'][k].as_py()}"
                     for k in (j, i)]
            raise InputError(f"document id {d!r} repeats ({where[0]} and {where[1]}); ids must be "
                             "unique: fix the input, choose another --id-field, or give "
                             "--duplicate-ids rename (the later ones become id#2, id#3, …)")


def _encode_texts(texts: list[str]) -> tuple[bytes, np.ndarray]:
    """The UTF-8 (surrogatepass) bytes of *texts* back to back, in one ``join``
    and one ``encode``, and each text's byte length."""
    joined = "".join(texts)
    blob = joined.encode("utf-8", "surrogatepass")
    if len(blob) == len(joined):  # all ASCII: one byte per character
        lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    else:
        chars = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        lens = np.diff(SK.utf8_offsets(np.frombuffer(blob, dtype=np.uint8), chars))
    return blob, lens


def _build(records, tmpdir: Path | None, *, unit, lang, batch_chars, read_stats,
           progress, lang_detect=False) -> TokenStore | None:
    vocab = _Vocabulary()
    freq = _Frequencies()
    offsets = [np.zeros(1, dtype=np.int64)]
    text_offsets = [np.zeros(1, dtype=np.int64)]
    doc_parts: dict[str, list] = {k: [] for k in ("doc_id", "url", "host", "source", "record_no")}
    if lang_detect:
        from .lang import detect_languages, require_detector

        require_detector()
        doc_parts["language"] = []
    empty_docs = 0
    tok_base = 0
    byte_base = 0
    from .tokenizer import tokenize_batch

    with _Sink(tmpdir) as sink:
        for batch in _batches(records, batch_chars):
            texts = [r.text for r in batch]
            ids = [r.id for r in batch]
            tb = tokenize_batch(texts, unit=unit, lang=lang,
                                names=ids if unit == "code" else None)
            blob, lens = _encode_texts(texts)
            tok_ids = vocab.ids_for(tb)
            sink.add(tok_ids, blob)
            del blob
            freq.add(tok_ids, tb.doc_offsets, len(vocab))
            del tok_ids
            offsets.append(tb.doc_offsets[1:] + tok_base)
            tok_base += int(tb.doc_offsets[-1])
            text_offsets.append(np.cumsum(lens) + byte_base)
            byte_base += int(lens.sum())
            # the document table as Arrow arrays per batch (compact, unlike lists
            # of Python objects kept for the whole corpus)
            urls = [r.url for r in batch]
            doc_parts["doc_id"].append(pa.array(ids, pa.string()))
            doc_parts["url"].append(pa.array(urls, pa.string()))
            doc_parts["host"].append(pa.array([host_of(u) for u in urls], pa.string()))
            doc_parts["source"].append(pa.array([r.source for r in batch], pa.string()))
            doc_parts["record_no"].append(pa.array([r.record_no for r in batch], pa.int64()))
            if lang_detect:
                doc_parts["language"].append(pa.array(detect_languages(texts), pa.string()))
            empty_docs += int(np.count_nonzero(np.diff(tb.doc_offsets) == 0))
            n_chars = sum(map(len, texts))
            del tb, texts, ids, urls, batch
            if progress is not None:
                progress(n_chars)
        tokens, blob = sink.finish()
    doc_offsets = np.concatenate(offsets)
    t_offsets = np.concatenate(text_offsets)
    df, counts = freq.result(len(vocab))
    types = {"doc_id": pa.string(), "url": pa.string(), "host": pa.string(),
             "source": pa.string(), "record_no": pa.int64(), "language": pa.string()}
    cols = {k: (pa.concat_arrays(v) if v else pa.array([], types[k]))
            for k, v in doc_parts.items()}
    _check_unique_ids(cols)
    docs = pa.table({
        "doc_id": cols["doc_id"],
        "url": cols["url"],
        "host": cols["host"],
        "n_tokens": pa.array(np.diff(doc_offsets)),
        "source": cols["source"],
        "record_no": cols["record_no"],
        **({"language": cols["language"]} if lang_detect else {}),
    })
    summary = {
        "documents": int(doc_offsets.size - 1),
        "tokens": int(tokens.shape[0]),
        "vocabulary": len(vocab),
        "bytes": int(byte_base),
        "empty_documents": empty_docs,
        "unit": unit,
        "read": read_stats.as_dict() if read_stats is not None else None,
    }
    if lang_detect:
        from .lang import language_counts

        summary["languages"] = dict(language_counts(cols["language"].to_pylist()))
    if tmpdir is None:
        return TokenStore(tokens=tokens, doc_offsets=doc_offsets, vocab=vocab.strings, df=df,
                          docs=docs, text_blob=blob, text_offsets=t_offsets, unit=unit,
                          lang=lang, summary=summary)
    np.save(tmpdir / "doc_offsets.npy", doc_offsets)
    np.save(tmpdir / "text_offsets.npy", t_offsets)
    _write_vocab(tmpdir, vocab.strings, df, counts)
    pq.write_table(docs, tmpdir / "docs.parquet", compression="zstd")
    _write_meta(tmpdir, unit, lang, summary)
    return None


def open_store(path: str | os.PathLike) -> TokenStore:
    return TokenStore.open(path)


def is_store(path: str | os.PathLike) -> bool:
    """Whether *path* is a token store directory (its ``meta.json`` and ``tokens.npy``)."""
    p = Path(path)
    return p.is_dir() and (p / "meta.json").is_file() and (p / "tokens.npy").is_file()


def open_store_arrays(path: str | os.PathLike):
    """(memory-mapped tokens, doc_offsets, token df) of a store directory, without
    loading the vocabulary strings or the texts (the out-of-core miners' view)."""
    path = Path(path)
    if not (path / "meta.json").is_file():
        raise InputError("not a repetend token store (no meta.json)", path=str(path))
    tokens = np.load(path / "tokens.npy", mmap_mode="r")
    offsets = np.load(path / "doc_offsets.npy")
    df = pq.read_table(path / "vocab.parquet", columns=["df"]).column("df").to_numpy()
    return tokens, offsets, np.asarray(df, dtype=np.int32)


def open_store_vocab(path: str | os.PathLike) -> pa.ChunkedArray:
    """The token strings of a store directory as one Arrow column (row = token id),
    without a Python string per token."""
    return pq.read_table(Path(path) / "vocab.parquet", columns=["token"]).column("token")


def store_summary(path: str | os.PathLike) -> dict:
    """The summary a store directory keeps in ``meta.json`` (documents, tokens,
    vocabulary, read counts), without opening its arrays."""
    if not is_store(path):
        raise InputError("not a repetend token store (no meta.json / tokens.npy)", path=str(path))
    meta = json.loads((Path(path) / "meta.json").read_text(encoding="utf-8"))
    return meta.get("summary") or {}
