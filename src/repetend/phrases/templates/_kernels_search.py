"""Compiled kernels of the whole-corpus template search (:mod:`.search`): a
template pattern matched at a corpus position with backtracking (the order of
a regular expression whose slots are lazy quantifiers), and one scan of every
template's candidate positions that keeps the matches no taken token overlaps.

Only ``@jit`` functions over arrays and scalars: no I/O, no Python objects.
"""

from __future__ import annotations

import numpy as np

from ..._jit import jit
from ._kernels_patterns import widest


@jit
def match_at(tokens, is_num, pat, slot_of, slot_elem, kind, lo, hi, p, e, need_end, cur, qs):
    """Match *pat* (fixed token ids ≥ 0, ``-1`` a slot) at position *p*, not
    past *e*.  Slot ``k`` takes ``lo[k] … hi[k]`` tokens, the fewest first, and
    a later choice is revised before an earlier one (backtracking, as the lazy
    quantifier ``.{lo,hi}?`` of a regular expression).  ``kind[k]``: 0 a gap
    slot (any tokens), 1 a word slot (tokens that are not all-digit,
    *is_num*), 2 a number slot (one all-digit token).  With ``need_end ≥ 0`` only a match ending there counts.  Returns
    the end of the first match (slot ``k`` starts at ``qs[k]`` and holds
    ``cur[k]`` tokens) or -1.  *cur*, *qs*: scratch arrays of one per slot;
    *slot_elem[k]*: the element index of slot k."""
    n = pat.shape[0]
    i = 0
    q = p
    depth = 0                      # slots assigned, in element order
    while True:
        back = False
        if i == n:
            if need_end < 0 or q == need_end:
                return q
            back = True
        else:
            v = pat[i]
            if v >= 0:
                if q < e and tokens[q] == v:
                    q += 1
                    i += 1
                else:
                    back = True
            else:
                k = slot_of[i]
                ln = lo[k]
                ok = q + ln <= e
                if ok and kind[k] == 2:
                    ok = ln == 1 and is_num[tokens[q]] != 0
                elif ok and kind[k] == 1:
                    for x in range(q, q + ln):
                        if is_num[tokens[x]] != 0:
                            ok = False
                            break
                if ok:
                    qs[k] = q
                    cur[k] = ln
                    depth = k + 1
                    q += ln
                    i += 1
                else:
                    back = True
        if back:
            # revise the latest slot that can take one token more
            while depth > 0:
                k = depth - 1
                c = cur[k] + 1
                if (c <= hi[k] and qs[k] + c <= e and kind[k] != 2
                        and not (kind[k] == 1 and is_num[tokens[qs[k] + c - 1]] != 0)):
                    cur[k] = c
                    q = qs[k] + c
                    i = slot_elem[k] + 1
                    break
                depth -= 1
            if depth == 0:
                return -1


@jit
def slot_ranges(tokens, is_num, pat, slot_of, slot_elem, kind, lo, hi, starts, ends):
    """Per occurrence ``[starts[r], ends[r])``: the first match of *pat* at
    ``starts[r]`` that ends at ``ends[r]`` (:func:`match_at`) and each slot's
    token range ``ss[r, k]:se[r, k]``; ``ok[r]`` False where there is none."""
    m = starts.shape[0]
    n_sl = lo.shape[0]
    ss = np.zeros((m, n_sl), dtype=np.int64)
    se = np.zeros((m, n_sl), dtype=np.int64)
    ok = np.zeros(m, dtype=np.bool_)
    cur = np.zeros(max(n_sl, 1), dtype=np.int64)
    qs = np.zeros(max(n_sl, 1), dtype=np.int64)
    for r in range(m):
        q = match_at(tokens, is_num, pat, slot_of, slot_elem, kind, lo, hi, starts[r], ends[r],
                     ends[r], cur, qs)
        if q >= 0:
            ok[r] = True
            for k in range(n_sl):
                ss[r, k] = qs[k]
                se[r, k] = qs[k] + cur[k]
    return ss, se, ok


@jit
def search_all(tokens, is_num, taken, pats, pat_off, slot_ofs, slot_elems, kinds, los, his,
               sl_off, cand, cand_end, cand_off):
    """Every template in turn (the order of *pat_off*), its candidate starts
    ``cand[cand_off[t]:cand_off[t+1]]`` ascending (a position of its first
    fixed token less the fixed length of the slots before it, -1 where that
    is before its document; the end of its document ``cand_end``): a match (:func:`match_at`) is kept when
    none of its tokens is *taken* (marked then, so the next templates and the
    later matches of this one do not overlap it).  Returns the kept matches'
    template, start and end, in that order."""
    n_t = pat_off.shape[0] - 1
    m = cand.shape[0]
    out_t = np.empty(m, dtype=np.int64)
    out_s = np.empty(m, dtype=np.int64)
    out_e = np.empty(m, dtype=np.int64)
    big = widest(sl_off, 1)
    cur = np.zeros(big, dtype=np.int64)
    qs = np.zeros(big, dtype=np.int64)
    n = 0
    for t in range(n_t):
        pat = pats[pat_off[t]:pat_off[t + 1]]
        slot_of = slot_ofs[pat_off[t]:pat_off[t + 1]]
        a, b = sl_off[t], sl_off[t + 1]
        slot_elem, kind, lo, hi = slot_elems[a:b], kinds[a:b], los[a:b], his[a:b]
        for j in range(cand_off[t], cand_off[t + 1]):
            p = cand[j]
            if p < 0 or taken[p]:
                continue
            q = match_at(tokens, is_num, pat, slot_of, slot_elem, kind, lo, hi, p, cand_end[j],
                         -1, cur, qs)
            if q < 0:
                continue
            free = True
            for x in range(p, q):
                if taken[x]:
                    free = False
                    break
            if not free:
                continue
            for x in range(p, q):
                taken[x] = 1
            out_t[n] = t
            out_s[n] = p
            out_e[n] = q
            n += 1
    return out_t[:n], out_s[:n], out_e[:n]
