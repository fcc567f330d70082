"""Document pairs and their exact verification on shingle sets.

Every method (exact, Broder, MinHash + LSH, all-pairs) ends in a :class:`Pairs`:
document indices ``a < b`` with the exact Jaccard resemblance and both
containments computed on the full shingle sets (Broder reports its sampled
estimates in ``jaccard`` only when asked to skip verification).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._arrays import sorted_unique
from .._jit import jit, pjit, prange
from .shingles import ShingleSets

__all__ = ["Pairs", "verify_pairs", "intersection_sizes"]


_GALLOP = 32  # size ratio above which the small set is searched in the large one


@jit
def _intersect_sorted(x, y):
    """|x ∩ y| of two sorted distinct arrays.  A branch-free merge (the branches of
    the plain merge on hashes are mispredicted half the time); when one set is
    over :data:`_GALLOP` times the other, each value of the small one is looked
    up by binary search in the rest of the large one."""
    nx = x.shape[0]
    ny = y.shape[0]
    if nx > ny:
        x, y = y, x
        nx, ny = ny, nx
    if nx == 0:
        return 0
    c = 0
    if ny > _GALLOP * nx:
        j = 0
        for i in range(nx):
            v = x[i]
            j += np.searchsorted(y[j:], v)
            if j == ny:
                break
            if y[j] == v:
                c += 1
                j += 1
        return c
    i = 0
    j = 0
    while i < nx and j < ny:
        xi = x[i]
        yj = y[j]
        c += xi == yj
        i += xi <= yj
        j += yj <= xi
    return c


@pjit
def _intersections(hashes, offsets, a, b, out):
    for i in prange(a.shape[0]):
        x = hashes[offsets[a[i]]:offsets[a[i] + 1]]
        y = hashes[offsets[b[i]]:offsets[b[i] + 1]]
        out[i] = _intersect_sorted(x, y)


def intersection_sizes(sets: ShingleSets, a: np.ndarray, b: np.ndarray) -> npt.NDArray[np.int64]:
    """|S(a_i) ∩ S(b_i)| for each pair, exactly."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    out = np.empty(a.shape[0], dtype=np.int64)
    _intersections(sets.hashes, sets.offsets, a, b, out)
    return out


@dataclass(slots=True)
class Pairs:
    a: npt.NDArray[np.int64]            # document index, a < b
    b: npt.NDArray[np.int64]
    jaccard: npt.NDArray[np.float64]    # |A∩B| / |A∪B|
    containment_ab: npt.NDArray[np.float64]  # |A∩B| / |A|  (how much of a lies in b)
    containment_ba: npt.NDArray[np.float64]  # |A∩B| / |B|

    def __len__(self) -> int:
        return int(self.a.shape[0])

    @classmethod
    def empty(cls) -> "Pairs":
        z = np.empty(0, np.int64)
        f = np.empty(0, np.float64)
        return cls(z, z.copy(), f, f.copy(), f.copy())

    def sorted(self) -> "Pairs":
        if _strictly_sorted(self.a, self.b):   # e.g. the out-of-core result: no copy
            return self
        order = np.lexsort((self.b, self.a))
        return Pairs(self.a[order], self.b[order], self.jaccard[order],
                     self.containment_ab[order], self.containment_ba[order])

    def select(self, mask: np.ndarray) -> "Pairs":
        return Pairs(self.a[mask], self.b[mask], self.jaccard[mask],
                     self.containment_ab[mask], self.containment_ba[mask])


def _strictly_sorted(lo: np.ndarray, hi: np.ndarray) -> bool:
    """Whether the pairs are already distinct and in (lo, hi) order (the out-of-core
    stream is), so the sort can be skipped."""
    n = lo.shape[0]
    step = 1 << 20            # blocks: a few bytes per pair at a time, not per pair of all
    for s in range(0, n - 1, step):
        e = min(n, s + step + 1)
        x, y = np.asarray(lo[s:e]), np.asarray(hi[s:e])
        if not np.all((x[1:] > x[:-1]) | ((x[1:] == x[:-1]) & (y[1:] > y[:-1]))):
            return False
    return True


def verify_pairs(sets: ShingleSets, a: np.ndarray, b: np.ndarray) -> Pairs:
    """Exact resemblance and containments of candidate pairs (a, b), normalised so a < b
    and deduplicated. Pairs with an empty set get 0."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    lo = np.minimum(a, b)
    hi = np.maximum(a, b)
    keep = lo != hi
    if not keep.any():
        return Pairs.empty()
    lo, hi = lo[keep], hi[keep]
    if not _strictly_sorted(lo, hi):
        span = np.int64(hi.max()) + 1          # lo < hi <= max: the key lo*span + hi is exact
        key = sorted_unique(lo * span + hi)
        lo, hi = key // span, key % span
    inter = intersection_sizes(sets, lo, hi).astype(np.float64)
    sa = sets.sizes[lo].astype(np.float64)
    sb = sets.sizes[hi].astype(np.float64)
    union = sa + sb - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        jac = np.where(union > 0, inter / union, 0.0)
        cab = np.where(sa > 0, inter / sa, 0.0)
        cba = np.where(sb > 0, inter / sb, 0.0)
    return Pairs(lo, hi, jac, cab, cba)
