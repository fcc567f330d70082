"""Small array helpers shared by the pipelines."""

from __future__ import annotations

import numpy as np

__all__ = ["sorted_unique"]


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
