"""Compiled kernels of the persistent index (see :mod:`repetend.index`).

Only ``@jit`` functions over arrays and scalars live here: sorted-table
lookups (band keys → document rows), gathering shingle sets, per-position
window hashes, maximal common token runs (shared fragments) and phrase hits.
"""

from __future__ import annotations

import numpy as np

from .._hashing import splitmix64 as _splitmix64
from .._search import lower_bound as _lower
from .._search import upper_bound as _upper
from .._jit import jit, pjit, prange



@pjit
def table_ranges(keys, qkeys, qvalid, lo, hi):
    """For query i and band j: ``keys[j, lo[i, j]:hi[i, j]] == qkeys[i, j]``
    (``keys`` sorted per row).  Queries with ``qvalid[i]`` False get empty ranges."""
    nq = qkeys.shape[0]
    nb = qkeys.shape[1]
    for i in prange(nq):
        for j in range(nb):
            if not qvalid[i]:
                lo[i, j] = 0
                hi[i, j] = 0
                continue
            row = keys[j]
            x = qkeys[i, j]
            a = _lower(row, x)
            lo[i, j] = a
            if a < row.shape[0] and row[a] == x:
                hi[i, j] = _upper(row, x)
            else:
                hi[i, j] = a


@jit
def range_counts(lo, hi, cap):
    """Members each query takes from its ranges (each range at most ``cap``; 0 = no cap)."""
    nq = lo.shape[0]
    out = np.zeros(nq, dtype=np.int64)
    for i in range(nq):
        c = 0
        for j in range(lo.shape[1]):
            m = hi[i, j] - lo[i, j]
            if cap > 0 and m > cap:
                m = cap
            c += m
        out[i] = c
    return out


@pjit
def range_fill(rows, lo, hi, cap, offsets, out_q, out_row):
    """Write (query, row) for the first ``cap`` members of every range."""
    nq = lo.shape[0]
    for i in prange(nq):
        p = offsets[i]
        for j in range(lo.shape[1]):
            m = hi[i, j] - lo[i, j]
            if cap > 0 and m > cap:
                m = cap
            for t in range(m):
                out_q[p] = i
                out_row[p] = rows[j, lo[i, j] + t]
                p += 1


@jit
def gather_sets(hashes, offsets, docs, out_offsets, out):
    """Copy the shingle sets of ``docs`` back to back (``out_offsets`` precomputed)."""
    for i in range(docs.shape[0]):
        d = docs[i]
        a = offsets[d]
        n = offsets[d + 1] - a
        o = out_offsets[i]
        for t in range(n):
            out[o + t] = hashes[a + t]


@jit
def window_hashes(tok, k):
    """Hash of every window of ``k`` consecutive token hashes (the shingle hash
    formula of :mod:`repetend.neardup.shingles`: ``h = k; h = splitmix64(h ^ t)``)."""
    n = tok.shape[0] - k + 1
    if n < 0:
        n = 0
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h = np.uint64(k)
        for j in range(i, i + k):
            h = _splitmix64(h ^ tok[j])
        out[i] = h
    return out


@jit
def common_runs(ta, tb, wa, wb_sorted, wb_pos, k, max_occ, max_runs):
    """Maximal common runs of tokens between sequences ``ta`` and ``tb``.

    A run starts at (i, j) when window i of a equals window j of b (hash lookup
    in the sorted windows of b, at most ``max_occ`` occurrences per window) and
    the tokens before both positions differ; it extends while the tokens are
    equal and is kept when it is at least ``k`` tokens long (so a hash collision
    never yields a run).  Returns arrays (a_start, b_start, length).
    """
    na = ta.shape[0]
    nb = tb.shape[0]
    ra = np.empty(max_runs, dtype=np.int64)
    rb = np.empty(max_runs, dtype=np.int64)
    rl = np.empty(max_runs, dtype=np.int64)
    c = 0
    for i in range(wa.shape[0]):
        if c >= max_runs:
            break
        x = wa[i]
        s = _lower(wb_sorted, x)
        e = s
        while e < wb_sorted.shape[0] and wb_sorted[e] == x and e - s < max_occ:
            e += 1
        for q in range(s, e):
            j = wb_pos[q]
            if i > 0 and j > 0 and ta[i - 1] == tb[j - 1]:
                continue
            t = 0
            while i + t < na and j + t < nb and ta[i + t] == tb[j + t]:
                t += 1
            if t >= k and c < max_runs:
                ra[c] = i
                rb[c] = j
                rl[c] = t
                c += 1
    return ra[:c], rb[:c], rl[:c]


@jit
def greedy_disjoint(starts, lengths, order, n):
    """Keep runs in ``order`` whose span ``[start, start+length)`` of a sequence of
    ``n`` tokens overlaps no run kept before; returns a boolean mask."""
    used = np.zeros(n, dtype=np.bool_)
    keep = np.zeros(starts.shape[0], dtype=np.bool_)
    for o in range(order.shape[0]):
        r = order[o]
        s = starts[r]
        e = s + lengths[r]
        free = True
        for p in range(s, e):
            if used[p]:
                free = False
                break
        if free:
            keep[r] = True
            for p in range(s, e):
                used[p] = True
    return keep


@jit
def phrase_hits(tok, wq, keys, key_ids, ph_offsets, ph_tokens, max_hits):
    """Occurrences of known phrases in a token sequence.

    ``wq`` are the query's window hashes of length p (the shortest phrase
    length); ``keys`` the sorted hashes of each phrase's first p tokens with the
    phrase ids in ``key_ids``.  A hit is verified token by token over the whole
    phrase.  Returns (phrase_id, start) arrays.
    """
    out_p = np.empty(max_hits, dtype=np.int64)
    out_s = np.empty(max_hits, dtype=np.int64)
    c = 0
    n = tok.shape[0]
    for i in range(wq.shape[0]):
        x = wq[i]
        q = _lower(keys, x)
        while q < keys.shape[0] and keys[q] == x:
            pid = key_ids[q]
            a = ph_offsets[pid]
            m = ph_offsets[pid + 1] - a
            if i + m <= n:
                ok = True
                for t in range(m):
                    if tok[i + t] != ph_tokens[a + t]:
                        ok = False
                        break
                if ok and c < max_hits:
                    out_p[c] = pid
                    out_s[c] = i
                    c += 1
            q += 1
    return out_p[:c], out_s[:c]


@jit
def first_windows(ph_tokens, ph_offsets, p):
    """Window hash of the first ``p`` tokens of every phrase (all phrases have >= p)."""
    n = ph_offsets.shape[0] - 1
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h = np.uint64(p)
        a = ph_offsets[i]
        for j in range(a, a + p):
            h = _splitmix64(h ^ ph_tokens[j])
        out[i] = h
    return out
