"""Compiled kernels for MinHash signatures (see :mod:`repetend.neardup.minhash`).

Only ``@jit`` functions over arrays and scalars live here.  The K-loops and the
per-document reductions are written so LLVM vectorises them (AVX2 / AVX-512:
``vpmullq``/``vpminuq`` on 8 lanes); branches inside them are replaced by ``min``.
"""

from __future__ import annotations

import numpy as np

from .._hashing import GAMMA as _GAMMA
from .._hashing import splitmix64
from .._jit import jit, pjit, prange

_MAX = np.uint64(0xFFFFFFFFFFFFFFFF)
_BLOCK = 256  # shingles hashed per vectorised block in the one-permutation pass
# Below this largest bin minimum (2^61: at most 1/8 of the hashes can still lower a
# bin) the scatter is skipped by a well-predicted branch; above it, a branch would be
# mispredicted too often and the branch-free scatter is faster.
_SKIP_BOUND = np.uint64(1 << 61)


def _crc_table() -> np.ndarray:
    t = np.zeros(256, dtype=np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        t[i] = c
    return t


_CRC_TABLE = _crc_table()  # CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as zlib


@jit
def crc32_u64(x):
    """CRC-32 of the 8 little-endian bytes of ``x`` (equals ``zlib.crc32(x.to_bytes(8, 'little'))``)."""
    c = np.uint32(0xFFFFFFFF)
    for i in range(8):
        byte = np.uint32((x >> np.uint64(8 * i)) & np.uint64(0xFF))
        c = _CRC_TABLE[(c ^ byte) & np.uint32(0xFF)] ^ (c >> np.uint32(8))
    return c ^ np.uint32(0xFFFFFFFF)


@pjit
def crc32_fold(hashes, out):
    """``out[p] = crc32_u64(hashes[p])`` (the MinHash/LSH article's fold), in parallel."""
    for p in prange(hashes.shape[0]):
        out[p] = np.uint64(crc32_u64(hashes[p]))


@jit
def permutation_seeds(seed, k):
    """The first k outputs of the SplitMix64 generator started at state ``seed``:
    ``seeds[i] = splitmix64(seed + i * 0x9E3779B97F4A7C15)``."""
    out = np.empty(k, dtype=np.uint64)
    s = np.uint64(seed)
    for i in range(k):
        out[i] = splitmix64(s)
        s = s + _GAMMA
    return out


@jit
def _classic_doc(hashes, lo, hi, seeds, mask, mins, row):
    """``row[i] = (min over p in [lo, hi) of splitmix64(hashes[p] ^ seeds[i])) & mask``.
    The i-loop is branch-free and contiguous, so it is vectorised."""
    k = seeds.shape[0]
    for i in range(k):
        mins[i] = _MAX
    for p in range(lo, hi):
        h = hashes[p]
        for i in range(k):
            mins[i] = min(mins[i], splitmix64(h ^ seeds[i]))
    for i in range(k):
        row[i] = mins[i] & mask


@jit
def signatures(hashes, offsets, seeds, mask, out, d0, d1):
    """Classical K-hash MinHash of documents ``d0 .. d1-1`` (serial; the caller runs
    ranges on several threads, the kernel releases the GIL).

    ``out[d, i] = (min over shingles h of d of splitmix64(h ^ seeds[i])) & mask``.
    Documents without shingles get ``mask`` in every position (the sentinel;
    callers also keep an empty mask).
    """
    k = seeds.shape[0]
    mins = np.empty(k, dtype=np.uint64)
    for d in range(d0, d1):
        _classic_doc(hashes, offsets[d], offsets[d + 1], seeds, mask, mins, out[d])


@jit
def _min_hash_one(hashes, lo, hi, s):
    """``min over p in [lo, hi) of splitmix64(hashes[p] ^ s)`` (a vectorised reduction)."""
    m = _MAX
    x = hashes[lo:hi]
    for p in range(x.shape[0]):
        m = min(m, splitmix64(x[p] ^ s))
    return m


@jit
def _hash_block(hashes, start, s, buf):
    """``buf[q] = splitmix64(hashes[start + q] ^ s)`` for a whole block: the constant
    trip count and the view let LLVM vectorise it (indexing ``hashes[start + q]``
    with a signed start, or a variable trip count, ran ~5x slower)."""
    x = hashes[start:start + _BLOCK]  # a view indexed from 0: no negative-index fix-up per element
    for q in range(_BLOCK):
        buf[q] = splitmix64(x[q] ^ s)


@jit
def _rot32(v):
    return (v >> np.uint64(32)) | (v << np.uint64(32))


@jit
def _oph_doc(hashes, lo, hi, round_seeds, seeds, mask, mins, buf, row):
    """One document of :func:`oph_signatures`.  ``mins[i]`` is 2^64 - 1 while bin i
    is empty, its running minimum during the round that fills it, and 0 once
    its value is written (so later rounds cannot change it)."""
    k = row.shape[0]
    kk = np.uint64(k)
    lo32 = np.uint64(0xFFFFFFFF)
    if hi == lo:
        for i in range(k):
            row[i] = mask
        return
    for i in range(k):
        mins[i] = _MAX
        row[i] = 0  # a bin whose real minimum is 0 looks written: its value is then 0
    empty = k
    for r in range(round_seeds.shape[0]):
        s = round_seeds[r]
        bound = _MAX  # no shingle above max(mins) can lower any bin (all bins filled)
        for start in range(lo, hi, _BLOCK):
            n = min(hi - start, _BLOCK)
            if n == _BLOCK:
                _hash_block(hashes, start, s, buf)
            else:
                x = hashes[start:start + n]
                for q in range(n):
                    buf[q] = splitmix64(x[q] ^ s)
            if start - lo < 8 * k:
                for q in range(n):  # scatter: bin = fastrange of the low 32 bits
                    v = buf[q]
                    b = ((v & lo32) * kk) >> np.uint64(32)
                    mins[b] = min(mins[b], v)
            elif bound > _SKIP_BOUND:
                for q in range(n):  # past 8K shingles a bin is lowered with probability < 1/8:
                    v = buf[q]      # a well-predicted branch instead of a store
                    b = ((v & lo32) * kk) >> np.uint64(32)
                    if v < mins[b]:
                        mins[b] = v
            else:
                for q in range(n):  # >= 7/8 of the shingles are above the bound: no bin lookup
                    v = buf[q]
                    if v < bound:
                        b = ((v & lo32) * kk) >> np.uint64(32)
                        mins[b] = min(mins[b], v)
            if r == 0 and hi - start > _BLOCK:
                bound = np.uint64(0)
                for i in range(k):  # vectorised max
                    bound = max(bound, mins[i])
        empty = 0
        for i in range(k):
            m = mins[i]
            if m == _MAX:
                empty += 1
            elif m != 0:  # filled in this round
                row[i] = _rot32(m) & mask
                mins[i] = 0
        if empty == 0:
            return
    for i in range(k):
        if mins[i] == _MAX:  # still empty: the classical MinHash value of position i
            row[i] = _min_hash_one(hashes, lo, hi, seeds[i]) & mask


@jit
def oph_signatures(hashes, offsets, round_seeds, seeds, mask, out, d0, d1):
    """One-permutation hashing in rounds with an exact fallback (Li, Owen & Zhang
    2012; rounds as in Dahlgaard, Knudsen & Thorup 2017, "Fast Similarity Sketching").

    Round r (r = 0 .. R-1, R = ``round_seeds.size``) hashes every shingle h once,
    ``v = splitmix64(h ^ round_seeds[r])``, into bin ``((v mod 2^32) * K) >> 32``;
    a bin still empty before round r takes the minimum v of round r, stored with its
    halves swapped (``rot32(v)``: the low bits kept by b-bit storage are the high
    bits of v, which do not depend on the bin).  In a long document, once every
    bin is filled, shingles with v above the largest bin minimum skip the scatter.  A bin empty
    after R rounds takes the classical MinHash value ``min_h splitmix64(h ^ seeds[i])``.
    The value of bin i is thus the first non-empty of R + 1 fixed, document-
    independent minima, so two documents agree on it with probability J.
    A bin counts as empty while its minimum is 2^64 - 1 (a real minimum equal to
    that, probability 2^-64 per shingle, is taken as empty) and as written once it is
    0 (a real minimum 0 is written as 0, its correct value).
    Signs documents ``d0 .. d1-1`` (serial; the caller runs ranges on several
    threads, the kernel releases the GIL).
    """
    k = out.shape[1]
    mins = np.empty(k, dtype=np.uint64)
    buf = np.empty(_BLOCK, dtype=np.uint64)
    for d in range(d0, d1):
        _oph_doc(hashes, offsets[d], offsets[d + 1], round_seeds, seeds, mask, mins, buf, out[d])


@pjit
def match_counts(sig, a, b, out):
    """Number of equal signature positions of each pair (a[i], b[i])."""
    k = sig.shape[1]
    for i in prange(a.shape[0]):
        c = 0
        x = a[i]
        y = b[i]
        for j in range(k):
            if sig[x, j] == sig[y, j]:
                c += 1
        out[i] = c


@pjit
def set_fingerprints(hashes, offsets, out):
    """A 64-bit fingerprint of each document's whole (sorted) shingle set."""
    n = offsets.shape[0] - 1
    for d in prange(n):
        h = np.uint64(offsets[d + 1] - offsets[d])
        for p in range(offsets[d], offsets[d + 1]):
            h = splitmix64(h ^ hashes[p])
        out[d] = h
