"""Compiled kernels of the Spark phrase pre-filter (see :mod:`repetend.spark.phrases`).

Only ``@jit`` functions over arrays and scalars live here.  k-gram hashes are
the shingle hash of :mod:`repetend.neardup._shingle_kernels` (``h = k``, then
``h = splitmix64(h ^ token_hash)`` for each token), computed for every window
of k tokens inside a document.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from .._hashing import splitmix64


@jit
def kgram_counts(doc_offsets, k):
    """Windows of k tokens per document (0 for documents shorter than k)."""
    n = doc_offsets.shape[0] - 1
    out = np.empty(n, dtype=np.int64)
    for d in range(n):
        m = doc_offsets[d + 1] - doc_offsets[d]
        out[d] = m - k + 1 if m >= k else 0
    return out


@jit
def kgram_hashes(tok_hash, doc_offsets, k, ok, win_offsets, out, valid):
    """``out[win_offsets[d] + i]``: hash of tokens ``i..i+k-1`` of document d;
    ``valid`` is False when one of those tokens has ``ok`` False (an infrequent word)."""
    n = doc_offsets.shape[0] - 1
    for d in range(n):
        a = doc_offsets[d]
        w = win_offsets[d + 1] - win_offsets[d]
        o = win_offsets[d]
        bad = 0
        for j in range(a, min(a + k - 1, doc_offsets[d + 1])):
            if not ok[j]:
                bad += 1
        for i in range(w):
            last = a + i + k - 1
            if not ok[last]:
                bad += 1
            h = np.uint64(k)
            for j in range(a + i, a + i + k):
                h = splitmix64(h ^ tok_hash[j])
            out[o + i] = h
            valid[o + i] = bad == 0
            if not ok[a + i]:
                bad -= 1


@jit
def distinct_per_doc(hashes, valid, win_offsets, out, counts):
    """Each document's distinct valid window hashes, sorted, packed at the front of
    its segment of ``out``; ``counts[d]`` is how many."""
    n = win_offsets.shape[0] - 1
    for d in range(n):
        o = win_offsets[d]
        m = win_offsets[d + 1] - o
        c = 0
        for i in range(m):
            if valid[o + i]:
                out[o + c] = hashes[o + i]
                c += 1
        seg = np.sort(out[o:o + c])
        u = 0
        for i in range(c):
            if i == 0 or seg[i] != seg[i - 1]:
                out[o + u] = seg[i]
                u += 1
        counts[d] = u


@jit
def cms_add(hashes, table):
    """Count-min sketch: add 1 to each row's counter of every hash (saturating uint32)."""
    depth, width = table.shape
    for i in range(hashes.shape[0]):
        x = hashes[i]
        for r in range(depth):
            x = splitmix64(x ^ np.uint64(r + 1))
            c = np.int64(x % np.uint64(width))
            if table[r, c] < np.uint32(0xFFFFFFFF):
                table[r, c] += np.uint32(1)


@jit
def cms_query(hashes, table, out):
    """Count-min estimate of each hash: the minimum of its counters (never below the truth)."""
    depth, width = table.shape
    for i in range(hashes.shape[0]):
        x = hashes[i]
        best = np.uint32(0xFFFFFFFF)
        for r in range(depth):
            x = splitmix64(x ^ np.uint64(r + 1))
            c = np.int64(x % np.uint64(width))
            if table[r, c] < best:
                best = table[r, c]
        out[i] = best


@jit
def island_mask(doc_offsets, k, win_offsets, frequent, keep):
    """``keep[p]`` for every token position p covered by a window whose
    ``frequent`` flag is set (difference array, linear)."""
    n = doc_offsets.shape[0] - 1
    for d in range(n):
        a = doc_offsets[d]
        o = win_offsets[d]
        w = win_offsets[d + 1] - o
        run_end = -1  # last covered position so far (document-local)
        for i in range(w):
            if frequent[o + i]:
                lo = i if i > run_end else run_end + 1
                for p in range(lo, i + k):
                    keep[a + p] = True
                run_end = i + k - 1


@jit
def widened_index(posmap, offsets, row, local):
    """Index in the widened corpus of position ``local[i]`` of kept document
    ``row[i]``, or -1 when it was not kept.  ``posmap`` holds each widened token's
    original position (ascending within a document) and -1 at separators; a
    separator is always followed by a kept token of its document except the last one
    of each document, so a binary search reads a separator as the position after it."""
    out = np.empty(row.shape[0], dtype=np.int64)
    for i in range(row.shape[0]):
        a = offsets[row[i]]
        b = offsets[row[i] + 1] - 1          # the document's closing separator
        s = local[i]
        lo, hi = a, b
        while lo < hi:
            mid = (lo + hi) >> 1
            v = posmap[mid]
            if v < 0:
                v = posmap[mid + 1]
            if v < s:
                lo = mid + 1
            else:
                hi = mid
        if lo < b and posmap[lo] < 0:
            lo += 1
        out[i] = lo if lo < b and posmap[lo] == s else -1
    return out
