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

from ..errors import ParameterError
from . import _shingle_kernels as K

__all__ = ["ShingleSets", "shingle_sets", "token_hashes"]


def token_hashes(vocab: list[str]) -> npt.NDArray[np.uint64]:
    """A stable 64-bit hash of each vocabulary string (FNV-1a 64 over UTF-8)."""
    enc = [s.encode("utf-8", "surrogatepass") for s in vocab]
    lens = np.fromiter((len(e) for e in enc), dtype=np.int64, count=len(enc))
    offsets = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    data = np.frombuffer(b"".join(enc), dtype=np.uint8)
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
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    counts = K.shingle_counts(doc_offsets, k)
    raw_offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=raw_offsets[1:])
    raw = np.empty(int(raw_offsets[-1]), dtype=np.uint64)
    uniq = np.empty(counts.size, dtype=np.int64)
    with np.errstate(over="ignore"):  # uint64 wrap-around is the hash (JIT-off runs warn)
        K.shingle_fill(tokens, doc_offsets, tok_hash, np.int64(k), raw_offsets, raw, uniq)
    offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(uniq, out=offsets[1:])
    # the distinct shingles moved to the front of the same buffer, which is then
    # shrunk in place (realloc): the peak is the raw windows alone, not raw + sets
    K.compact_inplace(raw, raw_offsets, uniq, offsets)
    n = int(offsets[-1])
    del raw_offsets, uniq
    if n < raw.shape[0]:
        try:
            raw.resize(n, refcheck=False)
        except ValueError:   # not the owner of its buffer: copy
            raw = raw[:n].copy()
    return ShingleSets(raw, offsets, k)
