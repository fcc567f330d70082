"""Compiled kernel of the variants merge (:mod:`.variants`): a template
pattern aligned inside occurrences, giving where it starts and ends there and
the token range of every slot.

Only ``@jit`` functions over arrays and scalars: no I/O, no Python objects.
"""

from __future__ import annotations

import numpy as np

from ..._jit import jit


@jit
def _match_from(tokens, is_num, pat, slot_of, lo, hi, p, e, ss, se, row):
    """Match *pat* (fixed token ids ≥ 0, ``-1`` a slot) at corpus position *p*
    not past *e*; every slot takes the fewest tokens (``lo[k]…hi[k]``) after
    which the next fixed token matches (a slot at the end: the fewest; a
    number slot is one all-digit token, ``lo[k] == hi[k] == 1``; before a
    number slot the fewest after which an all-digit token follows).  Returns
    the end, or -1."""
    n = pat.shape[0]
    q = p
    i = 0
    while i < n:
        v = pat[i]
        if v >= 0:
            if q >= e or tokens[q] != v:
                return -1
            q += 1
            i += 1
            continue
        k = slot_of[i]
        nxt = pat[i + 1] if i + 1 < n else -2
        # a number slot next: the fewest tokens after which an all-digit one follows
        nxt_num = nxt == -1 and lo[k + 1] == 1 and hi[k + 1] == 1
        got = -1
        for ln in range(lo[k], hi[k] + 1):
            if q + ln > e:
                break
            if lo[k] == 1 and hi[k] == 1 and is_num[tokens[q]] == 0:   # a number slot
                break
            if nxt >= 0:
                if q + ln < e and tokens[q + ln] == nxt:
                    got = ln
                    break
            elif nxt_num:
                if q + ln < e and is_num[tokens[q + ln]] != 0:
                    got = ln
                    break
            else:
                got = ln
                break
        if got < 0:
            return -1
        ss[row, k] = q
        se[row, k] = q + got
        q += got
        i += 1
    return q


@jit
def align_core(tokens, is_num, pat, slot_of, lo, hi, starts, ends, search):
    """Per occurrence ``[starts[r], ends[r])`` (global token positions): the
    leftmost start ``p`` in ``starts[r] … starts[r] + search`` where *pat*
    matches inside the occurrence (see :func:`_match_from`), the end of that
    match, and each slot's range ``ss[r, k]:se[r, k]``.  ``ok[r]`` is False
    where it matches nowhere."""
    m = starts.shape[0]
    n_slots = lo.shape[0]
    out_s = np.zeros(m, dtype=np.int64)
    out_e = np.zeros(m, dtype=np.int64)
    ss = np.zeros((m, n_slots), dtype=np.int64)
    se = np.zeros((m, n_slots), dtype=np.int64)
    ok = np.zeros(m, dtype=np.bool_)
    for r in range(m):
        s = starts[r]
        e = ends[r]
        last = min(s + search, e - 1)
        for p in range(s, last + 1):
            q = _match_from(tokens, is_num, pat, slot_of, lo, hi, p, e, ss, se, r)
            if q >= 0:
                out_s[r] = p
                out_e[r] = q
                ok[r] = True
                break
    return out_s, out_e, ss, se, ok


@jit
def nearest_classes(tid, unit, cls, valid, n):
    """Heads and tails (:func:`.ends._best_class`): occurrence i of template
    ``tid[i]`` sees class ``cls[i, k]`` at distance k where ``valid[i, k]``;
    per occurrence and class the nearest k counts.  Per template, the class
    seen in the most distinct *unit* values (documents or groups), then the
    smallest mean distance over its occurrences, then the smallest class
    (classes ≥ -8).  Returns per template that class (0: none) and its unit
    count (0), and per occurrence its distance to the chosen class (-1: not
    seen there).  A template's occurrences are read in unit order (they
    usually come so: sorted only if not) and its classes counted in an
    open-addressing table (no sort of the entries)."""
    m = cls.shape[0]
    w = cls.shape[1]
    t_off = np.zeros(n + 1, dtype=np.int64)
    for i in range(m):
        t_off[tid[i] + 1] += 1
    biggest = 0
    for t in range(n):
        if t_off[t + 1] > biggest:
            biggest = t_off[t + 1]
        t_off[t + 1] += t_off[t]
    order = np.empty(m, dtype=np.int64)
    fill = t_off[:n].copy()
    for i in range(m):
        order[fill[tid[i]]] = i
        fill[tid[i]] += 1
    best_cls = np.zeros(n, dtype=np.int64)
    best_docs = np.zeros(n, dtype=np.int64)
    dist = np.full(m, -1, dtype=np.int64)
    cap = 8
    while cap < 2 * biggest * w:
        cap *= 2
    h_stamp = np.zeros(cap, dtype=np.int64)     # t + 1: the slot is template t's
    h_cls = np.empty(cap, dtype=np.int64)
    h_docs = np.empty(cap, dtype=np.int64)
    h_ksum = np.empty(cap, dtype=np.int64)
    h_cnt = np.empty(cap, dtype=np.int64)
    h_last = np.empty(cap, dtype=np.int64)
    used = np.empty(cap, dtype=np.int64)
    golden = np.uint64(0x9E3779B97F4A7C15)
    for t in range(n):
        a = t_off[t]
        b = t_off[t + 1]
        if b == a:
            continue
        for x in range(a + 1, b):
            if unit[order[x]] < unit[order[x - 1]]:
                seg = order[a:b].copy()
                o = np.argsort(unit[seg])
                for y in range(b - a):
                    order[a + y] = seg[o[y]]
                break
        size = 8
        bits = 3
        while size < 2 * (b - a) * w:
            size *= 2
            bits += 1
        shift = np.uint64(64 - bits)
        stamp = t + 1
        nu = 0
        for x in range(a, b):
            i = order[x]
            u = unit[i]
            for k in range(w):
                if not valid[i, k]:
                    continue
                c = cls[i, k]
                dup = False
                for k2 in range(k):
                    if valid[i, k2] and cls[i, k2] == c:
                        dup = True
                        break
                if dup:
                    continue
                j = np.int64((np.uint64(c + 8) * golden) >> shift)
                while h_stamp[j] == stamp and h_cls[j] != c:
                    j = (j + 1) & (size - 1)
                if h_stamp[j] != stamp:
                    h_stamp[j] = stamp
                    h_cls[j] = c
                    h_docs[j] = 0
                    h_ksum[j] = 0
                    h_cnt[j] = 0
                    h_last[j] = -1
                    used[nu] = j
                    nu += 1
                if h_docs[j] == 0 or h_last[j] != u:
                    h_docs[j] += 1
                    h_last[j] = u
                h_ksum[j] += k
                h_cnt[j] += 1
        if nu == 0:
            continue
        b_docs = -1
        b_mean = 0.0
        b_cls = 0
        for q in range(nu):
            j = used[q]
            docs = h_docs[j]
            mean = np.float64(h_ksum[j]) / np.float64(h_cnt[j])
            c = h_cls[j]
            if (docs > b_docs or (docs == b_docs and (mean < b_mean
                                                      or (mean == b_mean and c < b_cls)))):
                b_docs = docs
                b_mean = mean
                b_cls = c
        best_cls[t] = b_cls
        best_docs[t] = b_docs
        for x in range(a, b):
            i = order[x]
            for k in range(w):
                if valid[i, k] and cls[i, k] == b_cls:
                    dist[i] = k
                    break
    return best_cls, best_docs, dist


@jit
def window_classes(tokens, is_num, gs, ge, doc_lo, doc_hi, head, g, stop_keys, stop_vals,
                   has_stop, min_len, num_class):
    """The classes next to each occurrence ``[gs[i], ge[i])`` (heads and tails,
    :func:`.ends._best_class`): at distance k = 0 … g before its start
    (*head*: position ``gs[i] - 1 - k``) or after its end (``ge[i] + k``),
    inside its document ``[doc_lo[i], doc_hi[i])``, the token there, or
    *num_class* for an all-digit one (``is_num``).  With *has_stop* a position
    from which a long exact phrase runs on is not valid: a tail's position p
    where ``reach(p) > p`` and ``reach(p) - ge[i] ≥ min_len``, ``reach(p)`` the
    largest end of an exact occurrence starting at or before p (``stop_keys``
    the starts ascending, ``stop_vals`` their prefix maximum of ends; -1 if
    none); a head's p where ``back(p) <= p`` and ``gs[i] - back(p) ≥
    min_len``, ``back(p)`` the smallest start of an occurrence whose last
    token is at or after p (``stop_keys`` the last tokens ascending,
    ``stop_vals`` their suffix minimum of starts; none: never).  Returns
    ``(cls, valid)``, each of shape ``(m, g + 1)``."""
    m = gs.shape[0]
    w = g + 1
    cls = np.zeros((m, w), dtype=np.int64)
    valid = np.zeros((m, w), dtype=np.bool_)
    n_stop = stop_keys.shape[0]
    for i in range(m):
        # r: the keys below p (head) or at most p (tail), searched once per
        # occurrence, then moved a few keys along as p moves by one
        r = -1
        for k in range(w):
            p = gs[i] - 1 - k if head else ge[i] + k
            if p < doc_lo[i] or p >= doc_hi[i]:
                continue
            if has_stop:
                if head:
                    if r < 0:
                        r = np.searchsorted(stop_keys, p, side="left")
                    while r > 0 and stop_keys[r - 1] >= p:
                        r -= 1
                    while r < n_stop and stop_keys[r] < p:
                        r += 1
                    if r < n_stop:
                        bk = stop_vals[r]
                        if bk <= p and gs[i] - bk >= min_len:
                            continue
                else:
                    if r < 0:
                        r = np.searchsorted(stop_keys, p, side="right")
                    while r > 0 and stop_keys[r - 1] > p:
                        r -= 1
                    while r < n_stop and stop_keys[r] <= p:
                        r += 1
                    if r > 0:
                        rc = stop_vals[r - 1]
                        if rc > p and rc - ge[i] >= min_len:
                            continue
            valid[i, k] = True
            t = tokens[p]
            cls[i, k] = num_class if is_num[t] != 0 else t
    return cls, valid
