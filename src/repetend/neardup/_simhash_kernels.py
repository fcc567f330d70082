"""Compiled kernels for SimHash: fingerprints of shingle features and Hamming pairs in table runs."""

from __future__ import annotations

import numpy as np

from .._jit import jit, pjit, prange
from ._shingle_kernels import _shingle_hash, splitmix64


@jit(inline="always")
def popcount64(x):
    """Number of set bits of a uint64 (SWAR)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@jit
def _accumulate(v, h, w):
    for b in range(64):
        if (h >> np.uint64(b)) & np.uint64(1):
            v[b] += w
        else:
            v[b] -= w


@jit
def _fold(v):
    fp = np.uint64(0)
    for b in range(64):
        if v[b] > 0:
            fp |= np.uint64(1) << np.uint64(b)
    return fp


@pjit
def simhash_sets(hashes, offsets, seed):
    """Fingerprint of each document from its distinct shingle hashes, every feature of weight 1."""
    n = offsets.shape[0] - 1
    out = np.zeros(n, dtype=np.uint64)
    for d in prange(n):
        v = np.zeros(64, dtype=np.int64)
        for i in range(offsets[d], offsets[d + 1]):
            _accumulate(v, splitmix64(hashes[i] ^ seed), 1)
        out[d] = _fold(v)
    return out


@pjit
def simhash_windows(tokens, doc_offsets, tok_hash, k, seed):
    """Fingerprint of each document from every shingle window: a shingle weighs its count in the document.

    Windows follow :mod:`._shingle_kernels` exactly (a non-empty document shorter
    than k is one shingle of all its tokens), so features equal the shingle-set hashes.
    """
    n = doc_offsets.shape[0] - 1
    out = np.zeros(n, dtype=np.uint64)
    for d in prange(n):
        a = doc_offsets[d]
        m = doc_offsets[d + 1] - a
        v = np.zeros(64, dtype=np.int64)
        if m >= k:
            for i in range(m - k + 1):
                _accumulate(v, splitmix64(_shingle_hash(tok_hash, tokens, a + i, k) ^ seed), 1)
        elif m > 0:
            _accumulate(v, splitmix64(_shingle_hash(tok_hash, tokens, a, m) ^ seed), 1)
        out[d] = _fold(v)
    return out


@jit(inline="always")
def _first_table(z, block_masks, n_match):
    """Bit set of the n_match lowest blocks where x ^ y (= z) is zero.

    A pair within distance k agrees on at least B − k blocks; tables are the
    n_match-subsets of blocks in lexicographic order, and the first one the pair
    agrees on is its n_match lowest equal blocks: only that table emits the pair.
    """
    first = np.int64(0)
    c = 0
    for j in range(block_masks.shape[0]):
        if (z & block_masks[j]) == np.uint64(0):
            first |= np.int64(1) << np.int64(j)
            c += 1
            if c == n_match:
                break
    return first


@pjit
def run_pair_counts(fps, order, run_starts, k, block_masks, n_match, combo):
    """Pairs each run of equal keys emits: ``fps`` is sorted by the table key (runs
    ``fps[run_starts[r]:run_starts[r+1]]``), ``order`` maps its positions to documents."""
    n_runs = run_starts.shape[0] - 1
    out = np.zeros(n_runs, dtype=np.int64)
    for r in prange(n_runs):
        s = run_starts[r]
        e = run_starts[r + 1]
        c = 0
        for i in range(s, e):
            x = fps[i]
            for j in range(i + 1, e):
                z = x ^ fps[j]
                if popcount64(z) <= k and _first_table(z, block_masks, n_match) == combo:
                    c += 1
        out[r] = c
    return out


@pjit
def run_pair_fill(fps, order, run_starts, k, block_masks, n_match, combo, pos, a, b):
    n_runs = run_starts.shape[0] - 1
    for r in prange(n_runs):
        s = run_starts[r]
        e = run_starts[r + 1]
        q = pos[r]
        for i in range(s, e):
            x = fps[i]
            for j in range(i + 1, e):
                z = x ^ fps[j]
                if popcount64(z) <= k and _first_table(z, block_masks, n_match) == combo:
                    a[q] = order[i]
                    b[q] = order[j]
                    q += 1


@jit
def run_pairs_serial(fps, order, run_starts, k, block_masks, n_match, combo, a, b):
    """One-pass serial variant for small tables: *a*, *b* hold at least every comparison; returns the count."""
    q = 0
    for r in range(run_starts.shape[0] - 1):
        s = run_starts[r]
        e = run_starts[r + 1]
        for i in range(s, e):
            x = fps[i]
            for j in range(i + 1, e):
                z = x ^ fps[j]
                if popcount64(z) <= k and _first_table(z, block_masks, n_match) == combo:
                    a[q] = order[i]
                    b[q] = order[j]
                    q += 1
    return q
