"""Compiled kernels of the token store build: a 64-bit hash -> dense id map.

Only ``@jit`` functions over arrays and scalars.  The map is open addressing
with linear probing over two parallel arrays (``keys`` uint64, ``vals`` int32,
``-1`` = empty slot) whose length is a power of two; the slot of a key is the
top bits of ``key * 0x9E3779B97F4A7C15`` (Fibonacci hashing, so FNV hashes
whose low bits correlate still spread).  The table is grown by doubling when
it would pass a load of 1/2 and kept by the caller across batches.

Under ``NUMBA_DISABLE_JIT=1`` the uint64 multiply wraps around with a numpy
overflow warning; the Python callers run these kernels inside
``np.errstate(over="ignore")``.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
EMPTY = -1


@jit(inline="always")
def _slot(h, shift):
    return np.int64((h * GOLDEN) >> shift)


@jit
def _rehash(keys, vals, bits):
    """A table of ``2**bits`` slots holding the entries of (keys, vals)."""
    cap = np.int64(1) << bits
    nk = np.zeros(cap, dtype=np.uint64)
    nv = np.full(cap, EMPTY, dtype=np.int32)
    mask = cap - 1
    shift = np.uint64(64 - bits)
    for s in range(keys.shape[0]):
        v = vals[s]
        if v < 0:
            continue
        h = keys[s]
        t = _slot(h, shift)
        while nv[t] >= 0:
            t = (t + 1) & mask
        nk[t] = h
        nv[t] = v
    return nk, nv


@jit
def assign_ids(hashes, keys, vals, bits, n_used):
    """Ids of *hashes*, adding the unseen ones in first-seen order.

    Parameters
    ----------
    hashes : uint64 [n]
    keys, vals : the table (``2**bits`` slots), updated in place unless it grows
    bits : log2 of the table size
    n_used : ids ``0 .. n_used - 1`` are taken

    Returns
    -------
    ids : int32 [n]
    keys, vals, bits : the (possibly grown) table
    first : int64 [k]  position in *hashes* of the first occurrence of each new
        id ``n_used + j``
    """
    n = hashes.shape[0]
    ids = np.empty(n, dtype=np.int32)
    first = np.empty(16, dtype=np.int64)
    k = 0
    cap = np.int64(1) << bits
    mask = cap - 1
    shift = np.uint64(64 - bits)
    for p in range(n):
        h = hashes[p]
        t = _slot(h, shift)
        while True:
            v = vals[t]
            if v < 0:
                break
            if keys[t] == h:
                break
            t = (t + 1) & mask
        if v >= 0:
            ids[p] = v
            continue
        new_id = n_used + k
        keys[t] = h
        vals[t] = new_id
        ids[p] = new_id
        if k == first.shape[0]:
            bigger = np.empty(2 * k, dtype=np.int64)
            bigger[:k] = first
            first = bigger
        first[k] = p
        k += 1
        if 2 * (n_used + k) > cap:
            bits += 1
            keys, vals = _rehash(keys, vals, bits)
            cap = np.int64(1) << bits
            mask = cap - 1
            shift = np.uint64(64 - bits)
    return ids, keys, vals, bits, first[:k].copy()


@jit
def lookup_ids(hashes, keys, vals, bits):
    """Ids of *hashes* (``-1`` for a hash not in the table); the table is not changed."""
    n = hashes.shape[0]
    out = np.empty(n, dtype=np.int32)
    mask = (np.int64(1) << bits) - 1
    shift = np.uint64(64 - bits)
    for p in range(n):
        h = hashes[p]
        t = _slot(h, shift)
        while True:
            v = vals[t]
            if v < 0 or keys[t] == h:
                break
            t = (t + 1) & mask
        out[p] = v
    return out


@jit
def utf8_offsets(buf, char_lens):
    """Byte offsets (``len(char_lens) + 1``) of consecutive texts of *char_lens*
    code points each in UTF-8 *buf* (lone surrogates encoded by surrogatepass
    are one 3-byte code point each): a code point starts at every byte that is
    not a continuation byte ``10xxxxxx``."""
    n = char_lens.shape[0]
    out = np.empty(n + 1, dtype=np.int64)
    out[0] = 0
    i = 0
    nb = buf.shape[0]
    for d in range(n):
        for _ in range(char_lens[d]):
            i += 1
            while i < nb and (buf[i] & 0xC0) == 0x80:
                i += 1
        out[d + 1] = i
    return out


@jit
def add_df_counts(ids, doc_offsets, doc_base, df, counts, last):
    """Add one batch to the document frequencies and the token counts.

    ``ids`` are the batch's token ids, ``doc_offsets`` its local document
    offsets, ``doc_base`` the global index of its first document; ``last[t]`` is
    the last global document that counted token ``t`` (``-1`` for none yet).
    The arrays must cover every id of the batch.
    """
    for d in range(doc_offsets.shape[0] - 1):
        g = doc_base + d
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            t = ids[p]
            counts[t] += 1
            if last[t] != g:
                last[t] = g
                df[t] += 1
