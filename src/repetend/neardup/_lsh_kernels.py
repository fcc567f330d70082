"""Compiled kernels for LSH banding (see :mod:`repetend.neardup.lsh`).

Only ``@jit`` functions over arrays and scalars live here.
"""

from __future__ import annotations

import numpy as np

from .._hashing import splitmix64 as _mix
from .._jit import jit, pjit, prange  # noqa: F401



@pjit
def band_keys(sig, docs, bands, rows, out):
    """``out[i, j]``: 64-bit key of band j (values ``j*rows .. j*rows+rows-1``) of
    document ``docs[i]``: ``h = mix(j + 1); h = mix(h ^ v)`` for each value v."""
    for i in prange(docs.shape[0]):
        d = docs[i]
        for j in range(bands):
            h = _mix(np.uint64(j + 1))
            base = j * rows
            for t in range(rows):
                h = _mix(h ^ np.uint64(sig[d, base + t]))
            out[i, j] = h


@jit
def bucket_pair_counts(starts, max_bucket):
    """Candidate pairs each bucket emits: m(m-1)/2 below the cap, 2m-3 from the cap on
    (star to the first member plus a chain in size order)."""
    nb = starts.shape[0] - 1
    out = np.empty(nb, dtype=np.int64)
    for i in range(nb):
        m = starts[i + 1] - starts[i]
        if m < 2:
            out[i] = 0
        elif max_bucket > 0 and m >= max_bucket:
            out[i] = 2 * m - 3
        else:
            out[i] = m * (m - 1) // 2
    return out


@jit
def bucket_pairs(members, starts, sizes, max_bucket, pair_offsets, out_a, out_b):
    """Fill the candidate pairs of every bucket (``members[starts[i]:starts[i+1]]``).

    Below the cap: all pairs.  From the cap on: members ordered by (set size,
    index); a star from the first of them to every other, plus a chain linking
    consecutive members (the star's first pair is the chain's first link, so
    2m - 3 pairs).  Each pair is written with the smaller index first.
    """
    nb = starts.shape[0] - 1
    for i in range(nb):
        s = starts[i]
        m = starts[i + 1] - s
        if m < 2:
            continue
        p = pair_offsets[i]
        if max_bucket > 0 and m >= max_bucket:
            key = np.empty(m, dtype=np.int64)
            for t in range(m):
                key[t] = members[s + t]
            sz = np.empty(m, dtype=np.int64)
            for t in range(m):
                sz[t] = sizes[key[t]]
            order = np.argsort(sz, kind="mergesort")
            first = key[order[0]]
            for t in range(1, m):
                x = key[order[t]]
                out_a[p] = min(first, x)
                out_b[p] = max(first, x)
                p += 1
            for t in range(2, m):
                x = key[order[t - 1]]
                y = key[order[t]]
                out_a[p] = min(x, y)
                out_b[p] = max(x, y)
                p += 1
        else:
            for u in range(m):
                x = members[s + u]
                for v in range(u + 1, m):
                    y = members[s + v]
                    out_a[p] = min(x, y)
                    out_b[p] = max(x, y)
                    p += 1

