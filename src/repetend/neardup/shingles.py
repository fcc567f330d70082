"""Shingle sets: for each document the set of its k consecutive tokens, hashed to 64 bits.

Shingle hashes depend only on the token *strings* (FNV-1a 64 of their UTF-8,
mixed with splitmix64), never on vocabulary ids, so the same text gives the
same shingles in any store, index or Spark partition.

Documents shorter than k: a non-empty document of n < k tokens has exactly one
shingle, the hash of its n tokens (so two identical short pages still match);
an empty document has no shingles and is never part of a pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._memory import drop_read_pages
from ..errors import ParameterError
from . import _shingle_kernels as K

__all__ = ["ShingleSets", "shingle_sets", "token_hashes"]

_CHUNK_WINDOWS = 1 << 20  # shingle windows filled per pass (8 MB of uint64)


def token_hashes(vocab) -> npt.NDArray[np.uint64]:
    """A stable 64-bit hash of each vocabulary string (FNV-1a 64 over UTF-8).

    *vocab* is a list of strings or an Arrow string array (hashed from its UTF-8
    buffer, no Python strings made; the same hashes)."""
    if not isinstance(vocab, (list, tuple)) and hasattr(vocab, "type") and hasattr(vocab, "null_count"):
        return _arrow_token_hashes(vocab)
    enc = [s.encode("utf-8", "surrogatepass") for s in vocab]
    lens = np.fromiter((len(e) for e in enc), dtype=np.int64, count=len(enc))
    offsets = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    data = np.frombuffer(b"".join(enc), dtype=np.uint8)
    with np.errstate(over="ignore"):  # uint64 wrap-around is the hash (JIT-off runs warn)
        return K.fnv1a64_spans(data, offsets)


def _arrow_token_hashes(arr) -> npt.NDArray[np.uint64]:
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.null_count:
        raise ParameterError("vocabulary column has null strings")
    if pa.types.is_string(arr.type):
        off_dtype = np.int32
    elif pa.types.is_large_string(arr.type):
        off_dtype = np.int64
    else:
        raise ParameterError(f"vocabulary column must be strings, got {arr.type}")
    n = len(arr)
    _, off_buf, data_buf = arr.buffers()
    if n == 0:
        return np.empty(0, dtype=np.uint64)
    offsets = np.frombuffer(off_buf, dtype=off_dtype)[arr.offset:arr.offset + n + 1].astype(np.int64)
    data = (np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None
            else np.empty(0, dtype=np.uint8))
    with np.errstate(over="ignore"):  # uint64 wrap-around is the hash (JIT-off runs warn)
        return K.fnv1a64_spans(data, offsets)


@dataclass(slots=True)
class ShingleSets:
    """All documents' shingle sets: ``hashes[offsets[d]:offsets[d+1]]`` is the
    sorted, distinct set of document d."""

    hashes: npt.NDArray[np.uint64]
    offsets: npt.NDArray[np.int64]
    k: int

    @property
    def sizes(self) -> npt.NDArray[np.int64]:
        return np.diff(self.offsets)

    def of(self, d: int) -> npt.NDArray[np.uint64]:
        return self.hashes[self.offsets[d]:self.offsets[d + 1]]


def shingle_sets(tokens: npt.NDArray[np.int32], doc_offsets: npt.NDArray[np.int64],
                 tok_hash: npt.NDArray[np.uint64], k: int) -> ShingleSets:
    """Build every document's shingle set in one compiled pass."""
    if k < 1:
        raise ParameterError(f"shingle size k must be >= 1, got {k}")
    from ._threads import _run_ranges
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    counts = K.shingle_counts(doc_offsets, k)
    n_docs = counts.size
    raw_ends = np.cumsum(counts)                     # end of each document's windows
    # One buffer of all the windows, but filled a chunk of documents at a time:
    # each chunk's windows are written right after the distinct shingles of the
    # chunks before it and compacted there, so the pages ever touched are the
    # sets plus one chunk of windows, not all the windows (untouched pages of
    # np.empty are not resident).  Chunking changes no value: each document's set
    # is sorted and deduplicated alone.
    raw = np.empty(int(raw_ends[-1]) if n_docs else 0, dtype=np.uint64)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    pos = 0
    d0 = 0
    while d0 < n_docs:
        base = int(raw_ends[d0 - 1]) if d0 else 0
        d1 = int(np.searchsorted(raw_ends, base + _CHUNK_WINDOWS, side="right"))
        d1 = min(n_docs, max(d1, d0 + 1))          # at least one document per chunk
        raw_offsets = np.zeros(d1 - d0 + 1, dtype=np.int64)
        np.cumsum(counts[d0:d1], out=raw_offsets[1:])
        part = raw[pos:pos + int(raw_offsets[-1])]
        uniq = np.empty(d1 - d0, dtype=np.int64)
        # documents in ranges of about equal windows on plain threads (the kernel is
        # serial over its range and releases the GIL)
        with np.errstate(over="ignore"):  # uint64 wrap-around is the hash (JIT-off runs warn)
            _run_ranges(K.shingle_fill, (tokens, doc_offsets[d0:d1 + 1], tok_hash, np.int64(k),
                                         raw_offsets, part, uniq), raw_offsets, 8)
        part_offsets = np.zeros(d1 - d0 + 1, dtype=np.int64)
        np.cumsum(uniq, out=part_offsets[1:])
        # the distinct shingles moved to the front of the chunk's part
        K.compact_inplace(part, raw_offsets, uniq, part_offsets)
        offsets[d0 + 1:d1 + 1] = pos + part_offsets[1:]
        pos += int(part_offsets[-1])
        # a memory-mapped store's token pages of this chunk are read: out of the
        # resident set (no-op for tokens in memory)
        drop_read_pages(tokens, int(doc_offsets[d0]), int(doc_offsets[d1]))
        d0 = d1
    n = pos
    del raw_ends
    if n < raw.shape[0]:
        try:
            raw.resize(n, refcheck=False)   # shrunk in place (realloc)
        except ValueError:   # not the owner of its buffer: copy
            raw = raw[:n].copy()
    return ShingleSets(raw, offsets, k)
