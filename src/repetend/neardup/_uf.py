"""Union-find over explicit pairs, compiled: connected components of a pair list."""

from __future__ import annotations

import numpy as np

from .._jit import jit


@jit
def _find(parent, x):
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:  # path compression
        nxt = parent[x]
        parent[x] = root
        x = nxt
    return root


@jit
def components(n, a, b):
    """Component label of each of n nodes (the smallest node index of its component)."""
    parent = np.arange(n, dtype=np.int64)
    for i in range(a.shape[0]):
        ra = _find(parent, a[i])
        rb = _find(parent, b[i])
        if ra != rb:
            if ra < rb:
                parent[rb] = ra
            else:
                parent[ra] = rb
    out = np.empty(n, dtype=np.int64)
    for x in range(n):
        out[x] = _find(parent, x)
    return out
