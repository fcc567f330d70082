"""Binary searches over sorted arrays, compiled, for kernels that look keys up."""

from __future__ import annotations

from ._jit import jit

__all__ = ["lower_bound", "upper_bound"]


@jit
def lower_bound(a, x):
    """First index i with a[i] >= x (a sorted ascending)."""
    lo = 0
    hi = a.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit
def upper_bound(a, x):
    """First index i with a[i] > x (a sorted ascending)."""
    lo = 0
    hi = a.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo
