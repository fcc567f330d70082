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
def _grow(a, n):
    out = np.empty(max(2 * a.shape[0], n), dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


@jit
def sorted_windows(tb, wb, order, g):
    """The windows of b in hash order for :func:`common_runs`: (hash, token
    before, position), 0 as the token before position 0.  Within every run of
    more than ``g`` equal hashes the window at position 0 comes first (if
    present) and the others are ordered by the token before them, so
    :func:`common_runs` can skip those preceded by a given token as one block."""
    n = wb.shape[0]
    wb_sorted = np.empty(n, dtype=np.uint64)
    prev_sorted = np.empty(n, dtype=np.uint64)
    pos_sorted = np.empty(n, dtype=np.int64)
    for q in range(n):
        j = order[q]
        wb_sorted[q] = wb[j]
        pos_sorted[q] = j
        prev_sorted[q] = tb[j - 1] if j > 0 else np.uint64(0)
    s = 0
    while s < n:
        e = s + 1
        while e < n and wb_sorted[e] == wb_sorted[s]:
            e += 1
        if e - s > g:
            for q in range(s, e):
                if pos_sorted[q] == 0:
                    pos_sorted[q] = pos_sorted[s]
                    prev_sorted[q] = prev_sorted[s]
                    pos_sorted[s] = 0
                    prev_sorted[s] = 0
                    s1 = s + 1
                    break
            else:
                s1 = s
            o = np.argsort(prev_sorted[s1:e], kind="mergesort")
            pv = prev_sorted[s1:e][o]
            ps = pos_sorted[s1:e][o]
            prev_sorted[s1:e] = pv
            pos_sorted[s1:e] = ps
        s = e
    return wb_sorted, prev_sorted, pos_sorted


@jit
def common_runs(ta, tb, wa, wb_sorted, prev_sorted, pos_sorted, kmin, g):
    """All maximal common runs of tokens between ``ta`` and ``tb``, one per
    (start in a, length), each with its smallest start in b.

    A maximal run is (i, j, t): the tokens before i and j differ (or i or j is
    0), ``ta[i:i+t] == tb[j:j+t]`` and the next tokens differ (or a sequence
    ends).  ``wa`` are the window hashes (w tokens) of a; ``wb_sorted`` the
    window hashes of b sorted, with the window's position ``pos_sorted`` and the
    token before it ``prev_sorted`` (0 at position 0); runs of more than ``g``
    equal hashes are ordered by :func:`sorted_windows`.  Window i of a is
    looked up by hash.  In a small group every window whose token before differs
    from ``ta[i-1]`` is extended token by token; in a large group those preceded
    by the same token cannot start a maximal run and are skipped as one block
    (binary search), the others extended.  So no run is missed and a hash
    collision never yields one (it is shorter than w).  Runs shorter than
    ``kmin`` (>= w) are dropped.  The work is a lookup per window plus the total
    length of the maximal runs (and of at most g tries per window): it grows
    with the number of runs on repetitive texts, the answer is never truncated.
    Returns (a_start, b_start, length), a_start ascending.
    """
    na = ta.shape[0]
    nb = tb.shape[0]
    nwb = wb_sorted.shape[0]
    ra = np.empty(64, dtype=np.int64)
    rb = np.empty(64, dtype=np.int64)
    rl = np.empty(64, dtype=np.int64)
    stamp = np.empty(0, dtype=np.int64)  # allocated when a window has several runs
    bestj = np.empty(0, dtype=np.int64)
    touched = np.empty(0, dtype=np.int64)
    c = 0
    for i in range(wa.shape[0]):
        x = wa[i]
        s = _lower(wb_sorted, x)
        if s >= nwb or wb_sorted[s] != x:
            continue
        e = s + 1
        while e < nwb and e - s <= g and wb_sorted[e] == x:
            e += 1
        ps = e
        pe = e
        if e - s > g:
            e = s + _upper(wb_sorted[s:], x)
            ps = e
            pe = e
            if i > 0:
                s1 = s + 1 if pos_sorted[s] == 0 else s
                cprev = ta[i - 1]
                ps = s1 + _lower(prev_sorted[s1:e], cprev)
                pe = ps
                if ps < e and prev_sorted[ps] == cprev:
                    pe = s1 + _upper(prev_sorted[s1:e], cprev)
        if pe > ps or e - s > g:
            # a large group: every window visited starts a maximal run (the ones
            # preceded by ta[i-1] were skipped); keep one run per length, the
            # smallest j, without writing the others
            if stamp.shape[0] == 0:
                stamp = np.full(min(na, nb) + 1, -1, dtype=np.int64)
                bestj = np.zeros(min(na, nb) + 1, dtype=np.int64)
                touched = np.empty(min(na, nb) + 1, dtype=np.int64)
            nt = 0
            for q in range(s, e - (pe - ps)):
                if q >= ps:
                    q += pe - ps
                j = pos_sorted[q]
                t = 0
                while i + t < na and j + t < nb and ta[i + t] == tb[j + t]:
                    t += 1
                if t < kmin:
                    continue
                if stamp[t] != i:
                    stamp[t] = i
                    bestj[t] = j
                    touched[nt] = t
                    nt += 1
                elif j < bestj[t]:
                    bestj[t] = j
            if c + nt > ra.shape[0]:
                ra = _grow(ra, c + nt)
                rb = _grow(rb, c + nt)
                rl = _grow(rl, c + nt)
            for u in range(nt):
                ra[c] = i
                rb[c] = bestj[touched[u]]
                rl[c] = touched[u]
                c += 1
            continue
        c0 = c
        for q in range(s, e):
            j = pos_sorted[q]
            if i > 0 and j > 0 and ta[i - 1] == tb[j - 1]:
                continue
            t = 0
            while i + t < na and j + t < nb and ta[i + t] == tb[j + t]:
                t += 1
            if t < kmin:
                continue
            if c == ra.shape[0]:
                ra = _grow(ra, c + 1)
                rb = _grow(rb, c + 1)
                rl = _grow(rl, c + 1)
            ra[c] = i
            rb[c] = j
            rl[c] = t
            c += 1
        if c - c0 > 1:
            # several runs from position i: keep one per length, the smallest j
            if stamp.shape[0] == 0:
                stamp = np.full(min(na, nb) + 1, -1, dtype=np.int64)
                bestj = np.zeros(min(na, nb) + 1, dtype=np.int64)
                touched = np.empty(min(na, nb) + 1, dtype=np.int64)
            for u in range(c0, c):
                t = rl[u]
                if stamp[t] != i:
                    stamp[t] = i
                    bestj[t] = rb[u]
                elif rb[u] < bestj[t]:
                    bestj[t] = rb[u]
            d = c0
            for u in range(c0, c):
                t = rl[u]
                if stamp[t] == i:
                    stamp[t] = -2 - i  # written once
                    ra[d] = i
                    rb[d] = bestj[t]
                    rl[d] = t
                    d += 1
            c = d
    return ra[:c], rb[:c], rl[:c]


@jit
def shared_runs(ta, tb, w, kmin, g, wb, order):
    """:func:`common_runs` of ``ta`` and ``tb`` through windows of ``w`` tokens
    (both have at least w), the window tables built here (one compiled call),
    except the window hashes of b and their sort order when given (non-empty
    ``order``: numpy's sort is faster on long texts)."""
    wa = window_hashes(ta, w)
    if order.shape[0] == 0:
        wb = window_hashes(tb, w)
        order = np.argsort(wb)
    wbs, prev, pos = sorted_windows(tb, wb, order, g)
    return common_runs(ta, tb, wa, wbs, prev, pos, kmin, g)


@jit
def greedy_disjoint(starts, lengths, order, n):
    """Keep runs in ``order`` whose span ``[start, start+length)`` of a sequence of
    ``n`` tokens overlaps no run kept before; returns a boolean mask.

    While ``order`` is by non-increasing length a span overlaps a kept one only
    if its first or last position is taken (a kept span inside it would be
    shorter), so the check is O(1); otherwise the span is scanned."""
    used = np.zeros(n, dtype=np.bool_)
    keep = np.zeros(starts.shape[0], dtype=np.bool_)
    sorted_ = True
    last = -1
    for o in range(order.shape[0]):
        r = order[o]
        s = starts[r]
        e = s + lengths[r]
        if e <= s:
            continue
        if last >= 0 and lengths[r] > last:
            sorted_ = False
        last = lengths[r]
        if used[s] or used[e - 1]:
            continue
        free = True
        if not sorted_:
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
