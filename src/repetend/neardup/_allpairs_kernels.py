"""Compiled kernels of the exact all-pairs similarity join (AllPairs / PPJoin).

Only numba functions over arrays and scalars. "J >= t" everywhere means the
float64 predicate ``float(o) / float(u) >= t`` (the value ``verify_pairs``
reports), and every filter bound below is the *smallest integer* satisfying
that same float predicate, found by stepping from a float guess, so no
rounding can drop a qualifying pair.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit, pjit, prange


@pjit
def sort_segments(values, offsets):
    """Sort each ``values[offsets[d]:offsets[d+1]]`` in place."""
    for d in prange(offsets.shape[0] - 1):
        a = offsets[d]
        b = offsets[d + 1]
        if b - a > 1:
            values[a:b] = np.sort(values[a:b])


@jit
def element_ranks(hashes, order, n_sets):
    """Global rare-to-frequent rank of every element.

    ``order`` sorts ``hashes``. Distinct elements are numbered by (document
    frequency, hash) with a counting sort on the frequency (sets hold distinct
    elements, so the frequency of a hash is its number of occurrences).
    Returns (rank of each element, number of distinct elements, number of
    elements that occur once).
    """
    n = hashes.shape[0]
    n_groups = 0
    for i in range(n):
        if i == 0 or hashes[order[i]] != hashes[order[i - 1]]:
            n_groups += 1
    counts = np.zeros(n_groups, dtype=np.int64)
    g = -1
    for i in range(n):
        if i == 0 or hashes[order[i]] != hashes[order[i - 1]]:
            g += 1
        counts[g] += 1
    max_f = n_sets
    for q in range(n_groups):
        if counts[q] > max_f:   # only if a set repeated an element (bad input): stay in bounds
            max_f = counts[q]
    start = np.zeros(max_f + 2, dtype=np.int64)   # counting sort by frequency
    for q in range(n_groups):
        start[counts[q] + 1] += 1
    for f in range(max_f + 1):
        start[f + 1] += start[f]
    n_single = start[2]
    rank_of = np.empty(n_groups, dtype=np.int64)
    for q in range(n_groups):          # groups come in hash order: ties stay in hash order
        f = counts[q]
        rank_of[q] = start[f]
        start[f] += 1
    out = np.empty(n, dtype=np.int64)
    g = -1
    for i in range(n):
        p = order[i]
        if i == 0 or hashes[p] != hashes[order[i - 1]]:
            g += 1
        out[p] = rank_of[g]
    return out, n_groups, n_single


@jit
def min_overlap_vs_size(t, x):
    """Smallest o in [1, x] with o / x >= t: the overlap a set of size x needs
    with any set of size <= x (J <= o / max size), and the size such a set needs."""
    fx = np.float64(x)
    o = np.int64(np.ceil(t * fx))
    if o > x:
        o = x
    if o < 1:
        o = 1
    while o > 1 and np.float64(o - 1) / fx >= t:
        o -= 1
    while o < x and np.float64(o) / fx < t:
        o += 1
    return o


@jit
def min_overlap_vs_larger(t, y):
    """Smallest o in [1, y] with o / (2y - o) >= t: the overlap a set of size y
    needs with any set of size >= y (then |union| >= 2y - o)."""
    o = np.int64(np.ceil(2.0 * t * y / (1.0 + t)))
    if o > y:
        o = y
    if o < 1:
        o = 1
    while o > 1 and np.float64(o - 1) / np.float64(2 * y - o + 1) >= t:
        o -= 1
    while o < y and np.float64(o) / np.float64(2 * y - o) < t:
        o += 1
    return o


@jit
def min_overlap_pair(t, x, y):
    """Smallest o in [1, min(x, y)] with o / (x + y - o) >= t; min(x, y) + 1 if none."""
    m = min(x, y)
    s = x + y
    o = np.int64(np.ceil(t * s / (1.0 + t)))
    if o > m:
        o = m
    if o < 1:
        o = 1
    while o > 1 and np.float64(o - 1) / np.float64(s - o + 1) >= t:
        o -= 1
    while o <= m and np.float64(o) / np.float64(s - o) < t:
        o += 1
    return o


@jit
def prefix_lengths(sizes, t):
    """Probe and index prefix lengths of every set (0 for empty sets)."""
    n = sizes.shape[0]
    probe = np.zeros(n, dtype=np.int64)
    index = np.zeros(n, dtype=np.int64)
    for d in range(n):
        s = sizes[d]
        if s > 0:
            probe[d] = s - min_overlap_vs_size(t, s) + 1
            index[d] = s - min_overlap_vs_larger(t, s) + 1
    return probe, index


@jit
def _grow(arr, n):
    out = np.empty(max(2 * arr.shape[0], n, 16), dtype=arr.dtype)
    out[:arr.shape[0]] = arr
    return out


@jit
def _overlap_at_least(ranks, ax, bx, ay, by, need):
    """|x ∩ y| of two ascending segments, or a value < need as soon as need is out of reach."""
    i = ax
    j = ay
    o = 0
    while i < bx and j < by:
        if o + min(bx - i, by - j) < need:
            return o
        if ranks[i] == ranks[j]:
            o += 1
            i += 1
            j += 1
        elif ranks[i] < ranks[j]:
            i += 1
        else:
            j += 1
    return o


@jit
def all_pairs_join(ranks, offsets, order, probe_len, index_len, n_ranks, first_shared, t):
    """AllPairs with PPJoin's positional filter.

    ranks            each set's elements as global ranks, ascending (rare first)
    order            documents in processing order (size ascending, then index)
    probe_len        probe-prefix length per document
    index_len        index-prefix length per document
    first_shared     ranks below it occur in one set only (never indexed)
    Returns (a, b, overlap, n_candidates, n_index_entries) with a < b.
    """
    n = offsets.shape[0] - 1
    sizes = offsets[1:] - offsets[:-1]
    # inverted index over index prefixes, laid out up front (CSR), filled in processing order
    cnt = np.zeros(n_ranks + 1, dtype=np.int64)
    for d in range(n):
        for i in range(index_len[d]):
            r = ranks[offsets[d] + i]
            if r >= first_shared:
                cnt[r + 1] += 1
    for r in range(n_ranks):
        cnt[r + 1] += cnt[r]
    total = cnt[n_ranks]
    idx_doc = np.empty(total, dtype=np.int64)
    idx_pos = np.empty(total, dtype=np.int64)
    head = cnt[:n_ranks].copy()   # first entry still large enough (AllPairs size trimming)
    fill = cnt[:n_ranks].copy()   # end of the entries inserted so far

    acc = np.zeros(n, dtype=np.int64)      # PPJoin overlap accumulator; -1 = pruned
    stamp = np.full(n, -1, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    out_a = np.empty(64, dtype=np.int64)
    out_b = np.empty(64, dtype=np.int64)
    out_o = np.empty(64, dtype=np.int64)
    n_out = 0
    n_cand = 0
    for step in range(n):
        x = order[step]
        sx = sizes[x]
        if sx == 0:
            continue
        ox = offsets[x]
        min_size = min_overlap_vs_size(t, sx)
        nt = 0
        for i in range(probe_len[x]):
            w = ranks[ox + i]
            if w < first_shared:
                continue
            s = head[w]
            e = fill[w]
            while s < e and sizes[idx_doc[s]] < min_size:
                s += 1
            head[w] = s
            for p in range(s, e):
                y = idx_doc[p]
                if stamp[y] != step:
                    stamp[y] = step
                    acc[y] = 0
                    touched[nt] = y
                    nt += 1
                elif acc[y] < 0:
                    continue
                sy = sizes[y]
                j = idx_pos[p]
                need = min_overlap_pair(t, sx, sy)
                if acc[y] + 1 + min(sx - i - 1, sy - j - 1) >= need:
                    acc[y] += 1
                else:
                    acc[y] = -1
        for q in range(nt):
            y = touched[q]
            if acc[y] <= 0:
                continue
            n_cand += 1
            sy = sizes[y]
            need = min_overlap_pair(t, sx, sy)
            o = _overlap_at_least(ranks, ox, ox + sx, offsets[y], offsets[y] + sy, need)
            if o >= need and np.float64(o) / np.float64(sx + sy - o) >= t:
                if n_out == out_a.shape[0]:
                    out_a = _grow(out_a, n_out + 1)
                    out_b = _grow(out_b, n_out + 1)
                    out_o = _grow(out_o, n_out + 1)
                out_a[n_out] = min(x, y)
                out_b[n_out] = max(x, y)
                out_o[n_out] = o
                n_out += 1
        for i in range(index_len[x]):
            w = ranks[ox + i]
            if w >= first_shared:
                idx_doc[fill[w]] = x
                idx_pos[fill[w]] = i
                fill[w] += 1
    return out_a[:n_out].copy(), out_b[:n_out].copy(), out_o[:n_out].copy(), n_cand, total
