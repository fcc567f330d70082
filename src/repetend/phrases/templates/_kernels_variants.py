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
    seen in the most distinct *unit* values (documents or groups, ≥ 0, below
    2^32), then the smallest mean distance over its occurrences, then the
    smallest class (classes ≥ -8, below 2^31 - 8).  Returns per template that
    class (0: none) and its unit count (0), and per occurrence its distance
    to the chosen class (-1: not seen there).  The occurrences of a template
    need not be contiguous; each template's entries are sorted by (class,
    unit) once (no sort over all occurrences)."""
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
    e_key = np.empty(biggest * w, dtype=np.int64)
    e_k = np.empty(biggest * w, dtype=np.int64)
    e_occ = np.empty(biggest * w, dtype=np.int64)
    low = np.int64(0xFFFFFFFF)
    for t in range(n):
        ne = 0
        for x in range(t_off[t], t_off[t + 1]):
            i = order[x]
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
                e_key[ne] = ((c + 8) << 32) | unit[i]
                e_k[ne] = k
                e_occ[ne] = i
                ne += 1
        if ne == 0:
            continue
        o = np.argsort(e_key[:ne])
        got = False
        b_docs = 0
        b_mean = 0.0
        b_cls = 0
        b_lo = 0
        b_hi = 0
        j = 0
        while j < ne:
            hi_key = e_key[o[j]] >> 32
            docs = 0
            ksum = 0
            j2 = j
            prev = -1
            while j2 < ne and (e_key[o[j2]] >> 32) == hi_key:
                u = e_key[o[j2]] & low
                if u != prev:
                    docs += 1
                    prev = u
                ksum += e_k[o[j2]]
                j2 += 1
            mean = np.float64(ksum) / np.float64(j2 - j)
            cv = hi_key - 8
            if (not got or docs > b_docs or (docs == b_docs and mean < b_mean)):
                got = True
                b_docs = docs
                b_mean = mean
                b_cls = cv
                b_lo = j
                b_hi = j2
            j = j2
        best_cls[t] = b_cls
        best_docs[t] = b_docs
        for j in range(b_lo, b_hi):
            dist[e_occ[o[j]]] = e_k[o[j]]
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
        for k in range(w):
            p = gs[i] - 1 - k if head else ge[i] + k
            if p < doc_lo[i] or p >= doc_hi[i]:
                continue
            if has_stop:
                if head:
                    j = np.searchsorted(stop_keys, p, side="left")
                    if j < n_stop:
                        bk = stop_vals[j]
                        if bk <= p and gs[i] - bk >= min_len:
                            continue
                else:
                    j = np.searchsorted(stop_keys, p, side="right") - 1
                    if j >= 0:
                        rc = stop_vals[j]
                        if rc > p and rc - ge[i] >= min_len:
                            continue
            valid[i, k] = True
            t = tokens[p]
            cls[i, k] = num_class if is_num[t] != 0 else t
    return cls, valid
