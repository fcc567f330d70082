"""Compiled kernels of the template layer's df over groups of documents
(near-duplicate clusters, :mod:`repetend.phrases.groups`): distinct groups
counted with a stamp per group, where the layer's own kernels count a change of
document in document or position order."""

from __future__ import annotations

import numpy as np

from ..._jit import jit


@jit
def group_token_df(t, t_off, doc_order, label, top):
    """Distinct groups holding every token id of *t* (ids above *top* counted as
    *top*, the sentinels), the documents of ``t_off`` visited in ``doc_order``
    (each group's documents one after the other): int64 ``[top + 1]``."""
    df = np.zeros(top + 1, dtype=np.int64)
    last = np.full(top + 1, -1, dtype=np.int64)
    for i in range(doc_order.shape[0]):
        d = doc_order[i]
        g = label[d]
        for p in range(t_off[d], t_off[d + 1]):
            v = min(t[p], top)
            if last[v] != g:
                last[v] = g
                df[v] += 1
    return df


@jit
def distinct_per_run(off, lab, n_groups):
    """Distinct values of ``lab[off[i]:off[i + 1]]`` for every run i (values
    in ``0 .. n_groups - 1``, any order)."""
    n = off.shape[0] - 1
    out = np.zeros(max(n, 0), dtype=np.int64)
    stamp = np.full(max(n_groups, 1), -1, dtype=np.int64)
    for i in range(n):
        c = 0
        for x in range(off[i], off[i + 1]):
            g = lab[x]
            if stamp[g] != i:
                stamp[g] = i
                c += 1
        out[i] = c
    return out
