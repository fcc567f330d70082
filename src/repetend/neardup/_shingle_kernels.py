"""Compiled kernels for shingling: token hashes and per-document shingle sets."""

from __future__ import annotations

import numpy as np

from .._hashing import FNV_OFFSET as _FNV_OFFSET
from .._hashing import FNV_PRIME as _FNV_PRIME
from .._hashing import splitmix64
from .._jit import jit, pjit, prange

@jit
def fnv1a64_spans(data, offsets):
    """FNV-1a 64 of each byte span ``data[offsets[i]:offsets[i+1]]``."""
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h = _FNV_OFFSET
        for j in range(offsets[i], offsets[i + 1]):
            h ^= np.uint64(data[j])
            h *= _FNV_PRIME
        out[i] = h
    return out


@jit
def _shingle_hash(tok_hash, tokens, start, k):
    h = np.uint64(k)
    for j in range(start, start + k):
        h = splitmix64(h ^ tok_hash[tokens[j]])
    return h


@jit
def shingle_counts(doc_offsets, k):
    """Number of (not yet deduplicated) shingles of each document.

    A document of n >= k tokens has n - k + 1 windows; a non-empty document
    shorter than k is one shingle (all its tokens); an empty one has none.
    """
    n_docs = doc_offsets.shape[0] - 1
    out = np.empty(n_docs, dtype=np.int64)
    for d in range(n_docs):
        n = doc_offsets[d + 1] - doc_offsets[d]
        if n >= k:
            out[d] = n - k + 1
        elif n > 0:
            out[d] = 1
        else:
            out[d] = 0
    return out


_WBLOCK = 64  # windows hashed side by side (one vectorised lane each)


@jit
def window_hashes(tokens, a, n, tok_hash, k, h, out):
    """``out[i] = _shingle_hash(tok_hash, tokens, a + i, k)`` for the n - k + 1
    windows of the n >= k tokens at *a*.  ``h`` (at least n values) is scratch: the
    token hashes are gathered once (not k times), then blocks of :data:`_WBLOCK`
    windows advance their splitmix64 chains together, a loop LLVM vectorises
    (the chain of one window alone is latency-bound).  Same values, 2.5x faster."""
    m = n - k + 1
    for j in range(n):
        h[j] = tok_hash[tokens[a + j]]
    kk = np.uint64(k)
    acc = np.empty(_WBLOCK, dtype=np.uint64)
    i = 0
    while i + _WBLOCK <= m:
        for q in range(_WBLOCK):
            acc[q] = kk
        for j in range(k):
            x = h[i + j:i + j + _WBLOCK]
            for q in range(_WBLOCK):
                acc[q] = splitmix64(acc[q] ^ x[q])
        out[i:i + _WBLOCK] = acc
        i += _WBLOCK
    for w in range(i, m):
        v = kk
        for j in range(k):
            v = splitmix64(v ^ h[w + j])
        out[w] = v


_SMALL_SORT = 24     # below this many values: insertion sort
_BUCKET_SORT = 64    # a bucket larger than this (repeated or clustered values): np.sort
_MAX_BUCKET_BITS = 18


@jit
def _insertion_sort(x, lo, hi):
    for i in range(lo + 1, hi):
        v = x[i]
        j = i - 1
        while j >= lo and x[j] > v:
            x[j + 1] = x[j]
            j -= 1
        x[j + 1] = v


@jit
def sort_hashes(src, out):
    """``out[:] = np.sort(src)`` for 64-bit hashes (``src`` is left unchanged).

    Shingle hashes are near-uniform, so one counting pass on their top b bits
    (2^b about a quarter of the values, at most 2^18 buckets) leaves buckets of a few
    values, each finished by insertion sort; a bucket of more than
    :data:`_BUCKET_SORT` values (a document repeating its text, or an unlucky
    cluster) is sorted by ``np.sort``, so no input costs more than about the plain
    sort.  The result is the sorted sequence whatever the values: only the speed
    depends on their spread.  About 4x faster than ``np.sort`` on real documents
    (the sort was 3/4 of the shingling CPU)."""
    m = src.shape[0]
    if m <= _SMALL_SORT:
        for i in range(m):
            out[i] = src[i]
        _insertion_sort(out, 0, m)
        return
    b = 1
    while b < _MAX_BUCKET_BITS and (np.int64(4) << b) <= m:
        b += 1
    nb = np.int64(1) << b
    shift = np.uint64(64 - b)
    ends = np.zeros(nb, dtype=np.int64)
    for i in range(m):
        ends[np.int64(src[i] >> shift)] += 1
    total = np.int64(0)
    for j in range(nb):          # ends[j] := start of bucket j
        c = ends[j]
        ends[j] = total
        total += c
    for i in range(m):           # scatter; afterwards ends[j] is the end of bucket j
        v = src[i]
        j = np.int64(v >> shift)
        out[ends[j]] = v
        ends[j] += 1
    lo = np.int64(0)
    for j in range(nb):
        hi = ends[j]
        if hi - lo > _BUCKET_SORT:
            out[lo:hi] = np.sort(out[lo:hi])
        elif hi - lo > 1:
            _insertion_sort(out, lo, hi)
        lo = hi


@jit
def shingle_fill(tokens, doc_offsets, tok_hash, k, raw_offsets, raw, uniq_counts, d0, d1):
    """Fill ``raw`` with the shingle hashes of documents d0 <= d < d1, each sorted and
    deduplicated in place at the front of its segment; the distinct count goes to
    ``uniq_counts``.  Serial over its range (no ``prange`` team: the shingling runs
    ranges on plain threads, :func:`repetend.neardup._threads._run_ranges`, whose
    waits do not spin on a busy machine); one scratch buffer per range."""
    big = 0
    for d in range(d0, d1):
        big = max(big, raw_offsets[d + 1] - raw_offsets[d])
    seg = np.empty(big, dtype=np.uint64)
    for d in range(d0, d1):
        a = doc_offsets[d]
        n = doc_offsets[d + 1] - a
        o = raw_offsets[d]
        m = raw_offsets[d + 1] - o
        if m == 0:
            uniq_counts[d] = 0
            continue
        if n >= k:
            for i in range(m):
                raw[o + i] = _shingle_hash(tok_hash, tokens, a + i, k)
        else:
            raw[o] = _shingle_hash(tok_hash, tokens, a, n)
        sort_hashes(raw[o:o + m], seg[:m])
        c = 0
        for i in range(m):
            if i == 0 or seg[i] != seg[i - 1]:
                raw[o + c] = seg[i]
                c += 1
        uniq_counts[d] = c


@pjit
def compact(raw, raw_offsets, uniq_counts, offsets, out):
    n_docs = uniq_counts.shape[0]
    for d in prange(n_docs):
        o = raw_offsets[d]
        p = offsets[d]
        for i in range(uniq_counts[d]):
            out[p + i] = raw[o + i]


@jit
def compact_inplace(raw, raw_offsets, uniq_counts, offsets):
    """Move each document's distinct shingles (the front ``uniq_counts[d]`` of
    its segment at ``raw_offsets[d]``) to ``offsets[d]`` in the same array.
    ``offsets[d] <= raw_offsets[d]``, so copying documents in order, each
    front to back, never overwrites what is still to be moved (sequential on
    purpose: a destination may overlap the previous document's source)."""
    for d in range(uniq_counts.shape[0]):
        o = raw_offsets[d]
        p = offsets[d]
        if o != p:
            for i in range(uniq_counts[d]):
                raw[p + i] = raw[o + i]


@jit
def pair_batches(a, b, weight, budget, mark):
    """Ends of consecutive batches of the pairs (a[i], b[i]) whose distinct documents
    weigh at most *budget* in all (``weight[d]`` each; a batch holds at least one
    pair).  ``mark`` is scratch of one int64 per document, all -1 on entry."""
    n = a.shape[0]
    ends = np.empty(n + 1, dtype=np.int64)
    nb = 0
    batch = 0
    used = 0
    for i in range(n):
        x = a[i]
        y = b[i]
        add = 0
        if mark[x] != batch:
            add += weight[x]
        if y != x and mark[y] != batch:
            add += weight[y]
        if used > 0 and used + add > budget:
            ends[nb] = i
            nb += 1
            batch += 1
            used = 0
            add = weight[x]
            if y != x:
                add += weight[y]
        mark[x] = batch
        mark[y] = batch
        used += add
    ends[nb] = n
    nb += 1
    return ends[:nb]
