"""Compiled kernels for MinHash signatures (see :mod:`repetend.neardup.minhash`).

Only ``@jit`` functions over arrays and scalars live here.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit, pjit, prange

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_MAX = np.uint64(0xFFFFFFFFFFFFFFFF)


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
def splitmix64(x):
    """SplitMix64 output function: ``mix(x + 0x9E3779B97F4A7C15)`` (Steele et al. 2014)."""
    z = x + _GAMMA
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@jit
def crc32_u64(x):
    """CRC-32 of the 8 little-endian bytes of ``x`` (equals ``zlib.crc32(x.to_bytes(8, 'little'))``)."""
    c = np.uint32(0xFFFFFFFF)
    for i in range(8):
        byte = np.uint32((x >> np.uint64(8 * i)) & np.uint64(0xFF))
        c = _CRC_TABLE[(c ^ byte) & np.uint32(0xFF)] ^ (c >> np.uint32(8))
    return c ^ np.uint32(0xFFFFFFFF)


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


@pjit
def signatures(hashes, offsets, seeds, fold_crc, mask, out):
    """MinHash signature of every document, one document per ``prange`` iteration.

    ``out[d, i] = (min over shingles h of d of splitmix64(f(h) ^ seeds[i])) & mask``
    with ``f`` the identity or the CRC-32 fold. Documents without shingles get
    ``mask`` in every position (the sentinel; callers also keep an empty mask).
    """
    n = offsets.shape[0] - 1
    k = seeds.shape[0]
    chunk = 64  # documents per task: the scratch array is allocated once per chunk
    n_chunks = (n + chunk - 1) // chunk
    for c in prange(n_chunks):
        mins = np.empty(k, dtype=np.uint64)
        for d in range(c * chunk, min(n, (c + 1) * chunk)):
            for i in range(k):
                mins[i] = _MAX
            for p in range(offsets[d], offsets[d + 1]):
                h = hashes[p]
                if fold_crc:
                    h = np.uint64(crc32_u64(h))
                for i in range(k):
                    v = splitmix64(h ^ seeds[i])
                    if v < mins[i]:
                        mins[i] = v
            for i in range(k):
                out[d, i] = mins[i] & mask


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


@jit
def _bin_of(v, k):
    """Bin of a 64-bit hash among k: ``((v >> 32) * k) >> 32``."""
    return np.int64(((v >> np.uint64(32)) * np.uint64(k)) >> np.uint64(32))


@jit
def _dens_bin(dens_seed, i, a, k):
    return _bin_of(splitmix64(dens_seed ^ ((np.uint64(i) << np.uint64(32)) | np.uint64(a))), k)


@jit
def densify_table(dens_seed, k, attempts):
    """``table[i, a-1]``: the a-th bin that empty bin i borrows from (a = 1..attempts)."""
    out = np.empty((k, attempts), dtype=np.int32)
    for i in range(k):
        for a in range(attempts):
            out[i, a] = _dens_bin(dens_seed, i, a + 1, k)
    return out


@jit
def densify_ranks(dens_seed, k, limit):
    """``ranks[i, j]``: index (0-based) of the first occurrence of bin j in empty bin
    i's sequence, ``limit`` when it does not occur among the first ``limit`` terms.
    The first filled bin of the sequence is the filled bin of smallest rank."""
    out = np.full((k, k), limit, dtype=np.int32)
    for i in range(k):
        seen = 0
        a = 0
        while seen < k and a < limit:
            j = _dens_bin(dens_seed, i, a + 1, k)
            if out[i, j] == limit:
                out[i, j] = a
                seen += 1
            a += 1
    return out


@pjit
def oph_signatures(hashes, offsets, seed, dens_seed, table, ranks, rank_limit, fold_crc, mask, out):
    """One-permutation hashing with optimal densification (Li, Owen & Zhang 2012;
    Shrivastava 2017).

    Each shingle h is hashed once, ``v = splitmix64(f(h) ^ seed)``; bin
    ``((v >> 32) * K) >> 32`` keeps the minimum v.  An empty bin i copies the
    value of bin j, the first non-empty bin of the sequence
    ``j_a = bin(splitmix64(dens_seed ^ (i << 32 | a)))``, a = 1, 2, … — the same
    sequence for every document, so two documents borrow consistently.  The
    first ``table.shape[1]`` terms of each sequence are precomputed in ``table``;
    for documents with few filled bins (m² < K) the same bin is found as the
    filled bin of smallest rank (``ranks``), in O(m) per empty bin instead of O(K/m).
    """
    n = offsets.shape[0] - 1
    k = out.shape[1]
    attempts = table.shape[1]
    chunk = 64  # documents per task: the scratch arrays are allocated once per chunk
    n_chunks = (n + chunk - 1) // chunk
    for c in prange(n_chunks):
        mins = np.empty(k, dtype=np.uint64)
        filled = np.empty(k, dtype=np.int64)
        for d in range(c * chunk, min(n, (c + 1) * chunk)):
            _oph_one(hashes, offsets[d], offsets[d + 1], seed, dens_seed, table, ranks, rank_limit,
                     attempts, fold_crc, mask, mins, filled, out[d])


@jit
def _oph_one(hashes, lo, hi, seed, dens_seed, table, ranks, rank_limit, attempts, fold_crc, mask,
             mins, filled, row):
    """One document; a bin is empty while its minimum is still 2^64 - 1 (a real
    hash equals that with probability 2^-64, and is then treated as empty)."""
    k = row.shape[0]
    if hi == lo:
        for i in range(k):
            row[i] = mask
        return
    for i in range(k):
        mins[i] = _MAX
    for p in range(lo, hi):
        h = hashes[p]
        if fold_crc:
            h = np.uint64(crc32_u64(h))
        v = splitmix64(h ^ seed)
        b = _bin_of(v, k)
        m = mins[b]
        mins[b] = v if v < m else m
    m = 0
    for i in range(k):
        if mins[i] != _MAX:
            filled[m] = i
            m += 1
    limit = rank_limit
    use_ranks = ranks.shape[0] == k and m * m < k
    for i in range(k):
        if mins[i] != _MAX:
            row[i] = mins[i] & mask
            continue
        j = -1
        if use_ranks:
            best = limit
            for q in range(m):
                r = ranks[i, filled[q]]
                if r < best:
                    best = r
                    j = filled[q]
            if j >= 0:
                row[i] = mins[j] & mask
                continue
        for a in range(attempts):
            if mins[table[i, a]] != _MAX:
                j = table[i, a]
                break
        a = attempts + 1
        while j < 0:
            c = _dens_bin(dens_seed, i, a, k)
            if mins[c] != _MAX:
                j = c
            a += 1
        row[i] = mins[j] & mask
