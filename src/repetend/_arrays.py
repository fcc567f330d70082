"""Small array helpers shared by the pipelines."""

from __future__ import annotations

import numpy as np

__all__ = ["even_bounds", "sorted_unique"]


def sorted_unique(x: np.ndarray) -> np.ndarray:
    """The distinct values of a 1-D array, ascending (``np.unique`` without the
    hash table numpy 2.x uses for integers, which is several times slower than
    a sort on arrays of millions of values)."""
    s = np.sort(np.asarray(x).reshape(-1))
    if s.shape[0] < 2:
        return s
    keep = np.empty(s.shape[0], dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def even_bounds(starts: np.ndarray, n_chunks: int) -> np.ndarray:
    """*n_chunks* contiguous chunks of the items ``i`` owning
    ``starts[i]:starts[i + 1]`` (documents and their tokens, buckets and their
    entries), balanced by that size: the ``n_chunks + 1`` item bounds (0 first,
    every item last, nondecreasing; a chunk may be empty)."""
    n_items = int(starts.size - 1)
    targets = np.linspace(int(starts[0]), int(starts[-1]), n_chunks + 1)
    # nondecreasing targets from starts[0]: nondecreasing bounds from 0, the
    # last one moved past the empty items at the end
    bounds = np.searchsorted(starts, targets, side="left").astype(np.int64)
    bounds[-1] = n_items
    return bounds
