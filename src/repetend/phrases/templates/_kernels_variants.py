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
