"""Compiled kernels over patterns: word-slot siblings (union-find over
windowed hashes), per-pattern statistics and the pairs of a join
(:mod:`.patterns`).

Only ``@jit`` functions over arrays and scalars: no I/O, no Python objects.
"""

from __future__ import annotations

import numpy as np

from ..._jit import jit


@jit
def _find(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@jit
def _mix64(h):
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


@jit
def widest(off, least):
    """The largest ``off[i + 1] - off[i]`` of the offsets *off*, at least *least*:
    the size of one scratch buffer that holds any of their ranges."""
    big = least
    for i in range(off.shape[0] - 1):
        if off[i + 1] - off[i] > big:
            big = off[i + 1] - off[i]
    return big


@jit
def _window_fixed(keys, a, j, k, fixed_below):
    for p in range(a + j, a + j + k):
        if keys[p] < 0 or keys[p] >= fixed_below:
            return False
    return True


@jit
def _lsd_radix(a, o):
    """*a* (uint64) sorted by an LSD radix sort on 16-bit digits (a digit with
    one value only is skipped), in place between *a* and one buffer; *o*
    (int64, as long as *a*, or empty) permuted along with it, stably.  Returns
    ``(a, o)``, each the array given or its buffer."""
    m = a.shape[0]
    if m < 2:
        return a, o
    with_o = o.shape[0] == m
    b = np.empty_like(a)
    o2 = np.empty_like(o)
    cnt = np.empty(65537, dtype=np.int64)
    for sh_ in range(0, 64, 16):
        sh = np.uint64(sh_)
        cnt[:] = 0
        for x in range(m):
            cnt[np.int64((a[x] >> sh) & np.uint64(0xFFFF)) + 1] += 1
        if cnt[np.int64((a[0] >> sh) & np.uint64(0xFFFF)) + 1] == m:
            continue
        for d in range(65536):
            cnt[d + 1] += cnt[d]
        for x in range(m):
            dg = np.int64((a[x] >> sh) & np.uint64(0xFFFF))
            t = cnt[dg]
            cnt[dg] = t + 1
            b[t] = a[x]
            if with_o:
                o2[t] = o[x]
        a, b = b, a
        o, o2 = o2, o
    return a, o


@jit
def _radix_argsort(h):
    """``(np.sort(h), np.argsort(h, kind="stable"))`` of uint64 *h*
    (:func:`_lsd_radix` of a copy, with the order along)."""
    return _lsd_radix(h.copy(), np.arange(h.shape[0]))


@jit
def _radix_sort(a):
    """*a* (uint64) sorted, values only (:func:`_lsd_radix`, in place between
    *a* and one buffer; returns whichever holds the result)."""
    return _lsd_radix(a, np.empty(0, dtype=np.int64))[0]


@jit
def sibling_groups(keys, key_off, max_width, fixed_below):
    """Union-find of keys that differ only inside one window of 1 … *max_width*
    consecutive positions holding fixed tokens in both (ids in ``[0,
    fixed_below)``: not a slot), strictly inside the key (a position on either
    side: a differing edge is only another context).  Keys of different
    lengths are never siblings.  Returns the group root (the
    smallest member index) of every key."""
    n_k = key_off.shape[0] - 1
    total = 0
    for i in range(n_k):
        m = key_off[i + 1] - key_off[i]
        for k in range(1, max_width + 1):
            if m - k >= 2:
                total += m - k - 1
    hs = np.empty(total, dtype=np.uint64)
    who = np.empty(total, dtype=np.int64)
    wj = np.empty(total, dtype=np.int64)
    wk = np.empty(total, dtype=np.int64)
    r = 0
    longest = 0
    for i in range(n_k):
        if key_off[i + 1] - key_off[i] > longest:
            longest = key_off[i + 1] - key_off[i]
    pre = np.zeros(longest + 1, dtype=np.uint64)   # prefix sums of mixed tokens
    for i in range(n_k):
        a = key_off[i]
        m = key_off[i + 1] - a
        for p in range(m):                   # the key without a window: the sum of
            pre[p + 1] = pre[p] + _mix64(     # its tokens mixed with their positions
                np.uint64(np.uint32(keys[a + p])) * np.uint64(0x9E3779B97F4A7C15)
                + np.uint64(p))
        for k in range(1, max_width + 1):
            if m - k < 2:
                continue
            for j in range(1, m - k):            # inside: a fixed token on either side
                h = pre[m] - (pre[j + k] - pre[j])
                hs[r] = _mix64(h ^ _mix64(np.uint64(m) << np.uint64(40)
                                          ^ np.uint64(j) << np.uint64(8) ^ np.uint64(k)))
                who[r] = i
                wj[r] = j
                wk[r] = k
                r += 1
    parent = np.arange(n_k)
    hs, order = _radix_argsort(hs)
    lo = 0
    while lo < total:
        hi = lo + 1
        while hi < total and hs[hi] == hs[lo]:
            hi += 1
        rep = -1
        for x in range(lo, hi):
            e = order[x]
            i, j, k = who[e], wj[e], wk[e]
            a = key_off[i]
            if not _window_fixed(keys, a, j, k, fixed_below):
                continue
            if rep < 0:
                rep = e
                continue
            i0 = who[rep]
            a0 = key_off[i0]
            m = key_off[i + 1] - a
            if i0 == i or wj[rep] != j or wk[rep] != k or key_off[i0 + 1] - a0 != m:
                continue                      # a hash collision: leave it alone
            ok = True
            for p in range(m):
                if (p < j or p >= j + k) and keys[a + p] != keys[a0 + p]:
                    ok = False
                    break
            if ok:
                r1, r2 = _find(parent, i0), _find(parent, i)
                if r1 != r2:
                    if r1 < r2:
                        parent[r2] = r1
                    else:
                        parent[r1] = r2
        lo = hi
    for i in range(n_k):
        parent[i] = _find(parent, i)
    return parent


@jit
def _select(a, n, k):
    """The k-th smallest of ``a[:n]`` (``np.sort(a[:n])[k]``), reordering
    ``a[:n]`` in place: quickselect with a three-way partition (linear on
    average, and on runs of equal values)."""
    lo = 0
    hi = n - 1
    while hi > lo:
        x = a[lo]
        pv = a[lo + (hi - lo) // 2]
        y = a[hi]
        if (pv <= x) == (x <= y):             # the median of three is the pivot
            pv = x
        elif (pv <= y) == (y <= x):
            pv = y
        lt = lo
        i = lo
        gt = hi
        while i <= gt:
            v = a[i]
            if v < pv:
                a[i] = a[lt]
                a[lt] = v
                lt += 1
                i += 1
            elif v > pv:
                a[i] = a[gt]
                a[gt] = v
                gt -= 1
            else:
                i += 1
        if k < lt:
            hi = lt - 1
        elif k > gt:
            lo = gt + 1
        else:
            return pv
    return a[lo]


@jit
def pattern_stats(q, off, klen, g_start, g_end, t_doc):
    """Per pattern i (occurrences: gapped positions ``q[off[i]:off[i + 1]]``,
    increasing; length ``klen[i]``): the median span in corpus tokens
    (``sorted(spans)[n // 2]``, span = ``g_end[q + klen - 1] - g_start[q]``)
    and the number of distinct documents; 0 when it has no occurrence."""
    n = off.shape[0] - 1
    med = np.zeros(n, dtype=np.int64)
    df = np.zeros(n, dtype=np.int64)
    sp = np.empty(widest(off, 0), dtype=np.int64)   # one buffer for all patterns
    for i in range(n):
        a = off[i]
        b = off[i + 1]
        if b == a:
            continue
        last = klen[i] - 1
        c = 1
        prev = t_doc[q[a]]
        for x in range(a, b):
            p = q[x]
            sp[x - a] = g_end[p + last] - g_start[p]
            d = t_doc[p]
            if d != prev:
                c += 1
                prev = d
        med[i] = _select(sp, b - a, (b - a) // 2)
        df[i] = c
    return med, df


@jit
def by_position(q, off):
    """``(q, key)`` of all occurrences sorted by position, ties by pattern
    (pattern k's positions ``q[off[k]:off[k + 1]]``, each increasing, all
    non-negative).  Each occurrence is packed as ``position × patterns +
    pattern`` and the packed values sorted (:func:`_radix_sort`): 32 bytes per
    occurrence at the peak where a stable argsort of the positions took 72.
    Positions with ``(max + 1) × patterns`` past 2⁶⁴ take the argsort."""
    m = q.shape[0]
    n_keys = off.shape[0] - 1
    top = 0
    for x in range(m):
        top = max(top, q[x])
    if n_keys > 0 and (top + 1) > (2**63 - 1) // n_keys:
        key = np.empty(m, dtype=np.int64)
        for k in range(n_keys):
            for x in range(off[k], off[k + 1]):
                key[x] = k
        a, o = _radix_argsort(q.astype(np.uint64))
        return a.astype(np.int64), key[o]
    nk = np.uint64(max(n_keys, 1))
    packed = np.empty(m, dtype=np.uint64)
    for k in range(n_keys):
        for x in range(off[k], off[k + 1]):
            packed[x] = np.uint64(q[x]) * nk + np.uint64(k)
    packed = _radix_sort(packed)
    pos = np.empty(m, dtype=np.int64)
    key = np.empty(m, dtype=np.int64)
    for x in range(m):
        p = packed[x] // nk
        pos[x] = np.int64(p)
        key[x] = np.int64(packed[x] - p * nk)
    return pos, key


@jit
def _emit_pairs(q, key, klen, t_doc, short, t, gap_id, n_keys, d_max, a0, cnt, code, pos,
                doc):
    """The pairs of :func:`pair_groups` of occurrences ``a0, a0 + 1, …`` into the
    buffers from index *cnt* on, until they are full: returns the first
    occurrence not done (``q.shape[0]`` when all are) and the new count (the
    pairs of a partly done occurrence are dropped: it is redone)."""
    n = q.shape[0]
    cap = code.shape[0]
    for a in range(a0, n):
        ka = key[a]
        la = klen[ka]
        qa = q[a]
        da = t_doc[qa]
        c0 = cnt
        b = a + 1
        while b < n and q[b] <= qa + la + 1:
            d = q[b] - qa
            kb = key[b]
            lb = klen[kb]
            if d >= 1 and d + lb > la and t_doc[q[b]] == da \
                    and (short[ka] or short[kb]) \
                    and (d <= la or t[qa + la] == gap_id):
                if cnt == cap:
                    return a, c0
                code[cnt] = np.uint64((ka * n_keys + kb) * d_max + d)
                pos[cnt] = qa
                doc[cnt] = da
                cnt += 1
            b += 1
    return n, cnt


@jit
def pair_groups(q, key, klen, t_doc, short, t, gap_id, n_keys, d_max):
    """Pairs of pattern occurrences to join: occurrence b (of pattern B) starts
    inside occurrence a (of A), right after it, or after exactly one gap
    token, without lying inside it, in the same document, and A or B is
    short.  *q* (gapped positions) must be sorted, ties by pattern; ``key[i]``
    is the pattern of occurrence i and ``klen[k]`` the length of pattern k.
    Returns, per pair in the order of a, its group ``code = (A · n_keys + B) ·
    d_max + d`` (d = ``q[b] - q[a] < d_max``; uint64), ``q[a]`` and the
    document.  One pass over the occurrences into buffers that grow by
    doubling (no counting pass)."""
    n = q.shape[0]
    cap = max(2 * n, 16)
    code = np.empty(cap, dtype=np.uint64)
    pos = np.empty(cap, dtype=np.int64)
    doc = np.empty(cap, dtype=np.int32)
    a, cnt = _emit_pairs(q, key, klen, t_doc, short, t, gap_id, n_keys, d_max, 0, 0,
                         code, pos, doc)
    while a < n:
        cap *= 2
        code2 = np.empty(cap, dtype=np.uint64)
        code2[:cnt] = code[:cnt]
        pos2 = np.empty(cap, dtype=np.int64)
        pos2[:cnt] = pos[:cnt]
        doc2 = np.empty(cap, dtype=np.int32)
        doc2[:cnt] = doc[:cnt]
        code, pos, doc = code2, pos2, doc2
        a, cnt = _emit_pairs(q, key, klen, t_doc, short, t, gap_id, n_keys, d_max, a, cnt,
                             code, pos, doc)
    return code[:cnt], pos[:cnt], doc[:cnt]


@jit
def _short_occurrences(key, short):
    """Indices of the occurrences (pattern ``key[i]``) of short patterns, ascending."""
    n = key.shape[0]
    c = 0
    for i in range(n):
        if short[key[i]]:
            c += 1
    out = np.empty(c, dtype=np.int64)
    c = 0
    for i in range(n):
        if short[key[i]]:
            out[c] = i
            c += 1
    return out


@jit
def _emit_pair(ka, kb, d, qa, da, n_keys, d_max, fill, counts, code, pos, doc, cnt):
    """One pair (A = *ka* at *qa* in document *da*, B = *kb* at distance *d*) of
    :func:`_scan_pairs`: counted for A, written at *cnt* when *fill*; the next *cnt*."""
    counts[ka] += 1
    if fill:
        code[cnt] = np.uint64((ka * n_keys + kb) * d_max + d)
        pos[cnt] = qa
        doc[cnt] = da
    return cnt + 1


@jit
def _scan_pairs(q, key, klen, t_doc, short, t, gap_id, n_keys, d_max, k_lo, k_hi, fill,
                counts, code, pos, doc):
    """The one walk over the pairs of :func:`pair_groups` whose pattern A is in
    ``[k_lo, k_hi)``: counted per A into *counts*, and with *fill* written to
    *code*/*pos*/*doc* in order; returns how many."""
    n = q.shape[0]
    cnt = 0
    # a pattern A that is not short pairs only with short ones: their
    # occurrences alone (index order) are walked for it, from a binary search
    s_idx = _short_occurrences(key, short)
    q_s = q[s_idx]
    n_s = s_idx.shape[0]
    for a in range(n):
        ka = key[a]
        if ka < k_lo or ka >= k_hi:
            continue
        la = klen[ka]
        qa = q[a]
        da = t_doc[qa]
        if not short[ka]:
            x = np.searchsorted(q_s, qa, side="right")
            while x < n_s and q_s[x] <= qa + la + 1:
                b = s_idx[x]
                d = q_s[x] - qa
                kb = key[b]
                if d + klen[kb] > la and t_doc[q_s[x]] == da \
                        and (d <= la or t[qa + la] == gap_id):
                    cnt = _emit_pair(ka, kb, d, qa, da, n_keys, d_max, fill, counts,
                                     code, pos, doc, cnt)
                x += 1
            continue
        b = a + 1
        while b < n and q[b] <= qa + la + 1:
            d = q[b] - qa
            kb = key[b]
            if d >= 1 and d + klen[kb] > la and t_doc[q[b]] == da \
                    and (short[ka] or short[kb]) \
                    and (d <= la or t[qa + la] == gap_id):
                cnt = _emit_pair(ka, kb, d, qa, da, n_keys, d_max, fill, counts, code, pos,
                                 doc, cnt)
            b += 1
    return cnt


@jit
def pair_counts(q, key, klen, t_doc, short, t, gap_id, n_keys):
    """How many pairs of :func:`pair_groups` each pattern A has (int64
    [n_keys]), without storing them: the sizes that cut the pairs into
    batches of patterns (:func:`pair_range`)."""
    counts = np.zeros(n_keys, dtype=np.int64)
    none_u = np.empty(0, dtype=np.uint64)
    none_i = np.empty(0, dtype=np.int64)
    none_d = np.empty(0, dtype=np.int32)
    _scan_pairs(q, key, klen, t_doc, short, t, gap_id, n_keys, 1, 0, n_keys, False, counts,
                none_u, none_i, none_d)
    return counts


@jit
def pair_range(q, key, klen, t_doc, short, t, gap_id, n_keys, d_max, k_lo, k_hi, total):
    """The pairs of :func:`pair_groups` whose pattern A is in ``[k_lo, k_hi)``,
    in the same order (*total*: their number, from :func:`pair_counts`)."""
    code = np.empty(total, dtype=np.uint64)
    pos = np.empty(total, dtype=np.int64)
    doc = np.empty(total, dtype=np.int32)
    counts = np.zeros(n_keys, dtype=np.int64)
    cnt = _scan_pairs(q, key, klen, t_doc, short, t, gap_id, n_keys, d_max, k_lo, k_hi, True,
                      counts, code, pos, doc)
    return code[:cnt], pos[:cnt], doc[:cnt]


@jit
def code_groups(code, doc):
    """Runs of equal codes in sorted *code* (documents ascending inside a run):
    ``(bounds, df)``, run g is ``[bounds[g], bounds[g + 1])`` and holds
    ``df[g]`` distinct documents."""
    n = code.shape[0]
    ng = 0
    for i in range(n):
        if i == 0 or code[i] != code[i - 1]:
            ng += 1
    bounds = np.empty(ng + 1, dtype=np.int64)
    df = np.zeros(ng, dtype=np.int64)
    g = -1
    for i in range(n):
        if i == 0 or code[i] != code[i - 1]:
            g += 1
            bounds[g] = i
            df[g] = 1
        elif doc[i] != doc[i - 1]:
            df[g] += 1
    bounds[ng] = n
    return bounds, df
