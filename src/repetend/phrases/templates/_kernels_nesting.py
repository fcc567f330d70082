"""Compiled kernel of the nesting filter (:mod:`.nesting`).

Only ``@jit`` functions over arrays and scalars: no I/O, no Python objects.
"""

from __future__ import annotations

import numpy as np

from ..._jit import jit


@jit
def container_pairs(doc, start, end, tid):
    """Every (occurrence, other template) pair where an occurrence of the other
    template contains the occurrence: same document, ``start' <= start`` and
    ``end <= end'``, and either longer or, for the same span, a smaller template
    id (so two templates with the same occurrences do not drop each other).

    The occurrences must be sorted by (doc, start), in any order within one
    start.  Returns
    ``(occurrence index, container template)`` pairs, distinct, occurrence
    indices ascending.
    """
    n = doc.shape[0]
    cap = max(16, 2 * n)
    occ = np.empty(cap, np.int64)
    con = np.empty(cap, np.int64)
    m = 0
    active = np.empty(max(n, 1), np.int64)     # occurrences that may still contain a later one
    n_act = 0
    for i in range(n):
        if i > 0 and doc[i] != doc[i - 1]:
            n_act = 0
        # the same start: later ones (shorter, or same span) may contain i as well
        j_hi = i + 1
        while j_hi < n and doc[j_hi] == doc[i] and start[j_hi] == start[i]:
            j_hi += 1
        keep = 0                                # drop those ending before i ends: they
        for a in range(n_act):                  # cannot contain i or anything after it
            if end[active[a]] >= start[i]:
                active[keep] = active[a]
                keep += 1
        n_act = keep
        first = m
        for step in range(n_act + (j_hi - i - 1)):
            j = active[step] if step < n_act else i + 1 + (step - n_act)
            if tid[j] == tid[i] or end[j] < end[i]:
                continue
            longer = (end[j] - start[j]) > (end[i] - start[i])
            if not longer and tid[j] > tid[i]:
                continue
            dup = False
            for k in range(first, m):          # distinct containers per occurrence
                if con[k] == tid[j]:
                    dup = True
                    break
            if dup:
                continue
            if m == cap:
                cap *= 2
                occ2 = np.empty(cap, np.int64)
                con2 = np.empty(cap, np.int64)
                occ2[:m] = occ[:m]
                con2[:m] = con[:m]
                occ, con = occ2, con2
            occ[m] = i
            con[m] = tid[j]
            m += 1
        active[n_act] = i
        n_act += 1
    return occ[:m].copy(), con[:m].copy()


@jit
def covered_by_higher(doc, start, end, tid, df):
    """For each occurrence, whether the occurrences of templates found on more
    documents (``df[tid[j]] > df[tid[i]]``) cover all of its tokens between
    them: same document, the union of their spans holds ``[start, end)``.

    The occurrences must be sorted by (doc, start).  Only occurrences starting
    at most the document's longest occurrence before ``start`` can reach it, so
    each looks at its neighbourhood, not its whole document."""
    n = doc.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    lo = 0
    while lo < n:
        hi = lo + 1
        while hi < n and doc[hi] == doc[lo]:
            hi += 1
        longest = 0
        for i in range(lo, hi):
            longest = max(longest, end[i] - start[i])
        for i in range(lo, hi):
            d = df[tid[i]]
            # the first occurrence that can reach start[i]
            a, b = lo, i
            while a < b:
                m = (a + b) // 2
                if start[m] < start[i] - longest:
                    a = m + 1
                else:
                    b = m
            cur = start[i]
            j = a
            while j < hi and start[j] <= cur and cur < end[i]:
                if j != i and df[tid[j]] > d and end[j] > cur:
                    cur = end[j]
                j += 1
            out[i] = cur >= end[i]
        lo = hi
    return out
