"""MinHash + LSH of a token stream without holding every document's shingle set.

The in-memory ``minhash`` method needs the shingle sets twice: to sign every
document, and to verify the candidate pairs exactly.  Holding all the sets
costs 8 bytes per distinct shingle (36 MB on the Go standard library, a quarter
of the run's private peak), while the signatures are K values per document.
So the documents are shingled and signed a chunk at a time
(:func:`streamed_signatures`: only the chunk's sets are alive), and after the
banding the sets of the documents that are in a candidate pair are built
again, those only (:func:`sets_of`), to verify the pairs
(:func:`verify_streamed`).

Nothing changes in the values: a document's set, signature and fingerprint
depend on its tokens only, so signing chunk by chunk gives the signatures of
one pass, and the rebuilt sets are the same sorted distinct hashes, so the
verified pairs are those of :func:`repetend.neardup.pairs.verify_pairs` on the
full sets (tests/test_neardup_streamed.py compares both, and the whole
``find_near_duplicates`` result).  The cost is shingling the candidates'
documents a second time.
"""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt

from .._arrays import sorted_unique
from .._memory import drop_read_pages, release_free_heap
from . import _minhash_kernels as MK
from . import _shingle_kernels as SK
from .minhash import MinHashSignatures, minhash_signatures, storage_dtype
from .pairs import Pairs, verify_pairs
from .shingles import ShingleSets, shingle_sets

__all__ = ["StreamedSignatures", "sets_of", "streamed_signatures", "verify_streamed"]

CHUNK_WINDOWS = 1 << 19  # shingle windows per chunk (4 MB of uint64 hashes)
VERIFY_WINDOWS = 1 << 23  # windows of the documents of one batch of verified pairs


def _bounds(windows: npt.NDArray[np.int64], budget: int) -> list[tuple[int, int]]:
    """Consecutive ranges [d0, d1) of documents of about *budget* windows each
    (at least one document per range)."""
    n = windows.shape[0]
    ends = np.cumsum(windows)
    out = []
    d0 = 0
    while d0 < n:
        base = int(ends[d0 - 1]) if d0 else 0
        d1 = int(np.searchsorted(ends, base + budget, side="right"))
        d1 = min(n, max(d1, d0 + 1))
        out.append((d0, d1))
        d0 = d1
    return out


def _fingerprints(sets: ShingleSets, docs: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64]:
    """:func:`repetend.neardup.lsh.set_fingerprints` of the documents *docs* of *sets*."""
    sub = _gather_sets(sets, docs)
    fp = np.empty(docs.shape[0], dtype=np.uint64)
    with np.errstate(over="ignore"):
        MK.set_fingerprints(sub.hashes, sub.offsets, fp)
    return fp


def _gather_sets(sets: ShingleSets, docs: npt.NDArray[np.int64]) -> ShingleSets:
    starts = sets.offsets[docs]
    lens = sets.offsets[docs + 1] - starts
    offsets = np.zeros(docs.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    idx = np.repeat(starts - offsets[:-1], lens) + np.arange(int(offsets[-1]), dtype=np.int64)
    return ShingleSets(np.ascontiguousarray(sets.hashes[idx]), offsets, sets.k)


class StreamedSignatures:
    """What the banding needs of the whole corpus, built a chunk at a time.

    Attributes
    ----------
    signatures : MinHashSignatures
        Every document's signature (as :func:`minhash_signatures` of all the sets).
    sizes : ndarray of int64
        Distinct shingles of each document.
    fingerprints : ndarray of uint64
        :func:`repetend.neardup.lsh.set_fingerprints` of the documents with
        ``1 <= size < fingerprint_below``; 0 for the others (never read).
    shingles : int
        Distinct shingles summed over the documents.
    timings : dict of str to float
        Seconds spent shingling (``"shingles"``) and signing (``"signatures"``).
    """

    __slots__ = ("signatures", "sizes", "fingerprints", "shingles", "timings")

    def __init__(self, signatures, sizes, fingerprints, shingles, timings):
        self.signatures = signatures
        self.sizes = sizes
        self.fingerprints = fingerprints
        self.shingles = shingles
        self.timings = timings


def streamed_signatures(tokens: npt.NDArray[np.int32], doc_offsets: npt.NDArray[np.int64],
                        tok_hash: npt.NDArray[np.uint64], k: int, num_perm: int, *,
                        seed: int, hash: str, bits: int, scheme: str,
                        fingerprint_below: int, chunk_windows: int | None = None
                        ) -> StreamedSignatures:
    """Shingle and sign the documents a chunk of about *chunk_windows* windows at a
    time; only the chunk's shingle sets are alive at once.

    Parameters are those of :func:`repetend.neardup.shingles.shingle_sets` and
    :func:`repetend.neardup.minhash.minhash_signatures`; *fingerprint_below* is the
    banding's near-empty limit (the documents below it are grouped by their set's
    fingerprint, computed here while the set is alive); *chunk_windows* defaults
    to :data:`CHUNK_WINDOWS`.
    """
    chunk_windows = CHUNK_WINDOWS if chunk_windows is None else chunk_windows
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    n = doc_offsets.shape[0] - 1
    windows = SK.shingle_counts(doc_offsets, int(k))
    values = np.empty((n, int(num_perm)), dtype=storage_dtype(int(bits)))
    sizes = np.zeros(n, dtype=np.int64)
    fps = np.zeros(n, dtype=np.uint64)
    timings = {"shingles": 0.0, "signatures": 0.0}
    for d0, d1 in _bounds(windows, int(chunk_windows)):
        t0 = time.perf_counter()
        sets = shingle_sets(tokens, doc_offsets[d0:d1 + 1], tok_hash, int(k))
        t1 = time.perf_counter()
        timings["shingles"] += t1 - t0
        sig = minhash_signatures(sets, int(num_perm), seed=seed, hash=hash, bits=int(bits),
                                 scheme=scheme)
        values[d0:d1] = sig.values
        timings["signatures"] += time.perf_counter() - t1
        sz = sets.sizes
        sizes[d0:d1] = sz
        tiny = np.flatnonzero((sz >= 1) & (sz < int(fingerprint_below))).astype(np.int64)
        if tiny.size:
            fps[d0 + tiny] = _fingerprints(sets, tiny)
        del sets, sig
    out = MinHashSignatures(values, sizes == 0, int(num_perm), int(seed), hash, int(bits), scheme)
    return StreamedSignatures(out, sizes, fps, int(sizes.sum()), timings)


def sets_of(tokens: npt.NDArray[np.int32], doc_offsets: npt.NDArray[np.int64],
            tok_hash: npt.NDArray[np.uint64], k: int, docs: npt.ArrayLike,
            chunk_windows: int | None = None) -> ShingleSets:
    """The shingle sets of the documents *docs* only, in the order given: set i is
    ``shingle_sets(tokens, doc_offsets, tok_hash, k).of(docs[i])``.

    The documents' tokens are gathered a chunk of about *chunk_windows* windows at
    a time; the sets are written into one buffer sized for all the windows and
    shrunk to the distinct shingles (pages never written are never resident)."""
    chunk_windows = CHUNK_WINDOWS if chunk_windows is None else chunk_windows
    docs = np.ascontiguousarray(docs, dtype=np.int64)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    m = docs.shape[0]
    starts = doc_offsets[docs]
    lens = doc_offsets[docs + 1] - starts
    windows = SK.shingle_counts(doc_offsets, int(k))[docs]
    hashes = np.empty(int(windows.sum()), dtype=np.uint64)
    offsets = np.zeros(m + 1, dtype=np.int64)
    pos = 0
    for i0, i1 in _bounds(windows, int(chunk_windows)):
        ln = lens[i0:i1]
        sub_off = np.zeros(i1 - i0 + 1, dtype=np.int64)
        np.cumsum(ln, out=sub_off[1:])
        idx = np.repeat(starts[i0:i1] - sub_off[:-1], ln) + np.arange(int(sub_off[-1]), dtype=np.int64)
        tok = np.ascontiguousarray(tokens[idx], dtype=np.int32)
        del idx
        if i1 > i0:
            drop_read_pages(tokens, int(starts[i0:i1].min()), int((starts[i0:i1] + ln).max()))
        part = shingle_sets(tok, sub_off, tok_hash, int(k))
        c = int(part.offsets[-1])
        hashes[pos:pos + c] = part.hashes
        offsets[i0 + 1:i1 + 1] = pos + part.offsets[1:]
        pos += c
        del part, tok
    if pos < hashes.shape[0]:
        try:
            hashes.resize(pos, refcheck=False)   # shrunk in place (realloc)
        except ValueError:
            hashes = hashes[:pos].copy()
    return ShingleSets(hashes, offsets, int(k))


def verify_streamed(tokens: npt.NDArray[np.int32], doc_offsets: npt.NDArray[np.int64],
                    tok_hash: npt.NDArray[np.uint64], k: int, a: npt.ArrayLike,
                    b: npt.ArrayLike, batch_windows: int | None = None) -> Pairs:
    """:func:`repetend.neardup.pairs.verify_pairs` of the pairs (a, b) on the full
    shingle sets, with only the sets of the documents in a pair built.

    The pairs are normalised and deduplicated first (as ``verify_pairs`` does), then
    verified in consecutive batches whose documents have at most about
    *batch_windows* windows (default :data:`VERIFY_WINDOWS`): a document in pairs of
    several batches is shingled once per batch.  Each batch's pairs stay sorted, so
    the batches' results joined are the one result."""
    batch_windows = VERIFY_WINDOWS if batch_windows is None else batch_windows
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    lo = np.minimum(a, b)
    hi = np.maximum(a, b)
    keep = lo != hi
    lo, hi = lo[keep], hi[keep]
    if lo.size == 0:
        return Pairs.empty()
    span = np.int64(hi.max()) + 1          # lo < hi <= max: the key lo*span + hi is exact
    key = sorted_unique(lo * span + hi)
    lo, hi = key // span, key % span
    del key
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    windows = SK.shingle_counts(doc_offsets, int(k))
    mark = np.full(windows.shape[0], -1, dtype=np.int64)
    ends = SK.pair_batches(lo, hi, windows, np.int64(batch_windows), mark)
    del mark
    parts = []
    s = 0
    for e in ends.tolist():
        pa_, pb_ = lo[s:e], hi[s:e]
        docs = np.union1d(pa_, pb_)
        sub = sets_of(tokens, doc_offsets, tok_hash, k, docs)
        # docs is sorted: the local indices keep the order of the global ones
        p = verify_pairs(sub, np.searchsorted(docs, pa_), np.searchsorted(docs, pb_))
        del sub
        parts.append(Pairs(docs[p.a], docs[p.b], p.jaccard, p.containment_ab, p.containment_ba))
        s = e
    out = parts[0] if len(parts) == 1 else Pairs(
        *(np.concatenate([getattr(p, f) for p in parts])
          for f in ("a", "b", "jaccard", "containment_ab", "containment_ba")))
    del parts
    release_free_heap()
    return out
