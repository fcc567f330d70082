"""Exact all-pairs similarity join: every pair with Jaccard >= t, and nothing else.

For when losing a pair is not acceptable (MinHash + LSH may lose pairs near
the threshold). The join rests on two inequalities (the MinHash/LSH article,
docs/references.md, on when an exact answer is needed):

* **size**: J(A, B) <= min(|A|, |B|) / max(|A|, |B|), so sets of very
  different sizes are never opened;
* **prefix**: with every set written in one global order (rare elements
  first), a pair with J >= t has an overlap of at least ⌈t·|A|⌉, so it shares
  an element inside the first |A| − ⌈t·|A|⌉ + 1 elements of A and inside the
  matching prefix of B. An inverted index over prefixes only yields the
  candidates, and rare elements up front keep its lists short.

Implementation (compiled, :mod:`._allpairs_kernels`): element document
frequencies are counted over the sets and the elements renumbered by
(frequency, hash) with one sort; sets are processed in increasing size and the
index is built incrementally as in AllPairs (Bayardo et al. 2007): a set is
probed with its prefix of length |x| − α(x) + 1 and then indexed with the
shorter prefix |x| − β(x) + 1 that later (larger) sets need, where α and β
are the minimum overlaps against smaller and larger sets; index lists are
trimmed from the front as the size filter rises; PPJoin's positional filter
(Xiao et al. 2008) prunes candidates whose remaining elements cannot reach the
overlap the pair needs; survivors are verified by an exact merge.

All bounds are exact integers: "J >= t" is the float64 predicate
``o / (|A| + |B| − o) >= t`` that :func:`~repetend.neardup.pairs.verify_pairs`
reports, and each bound is the smallest integer satisfying that predicate
(found by stepping from a float guess), so t = 1.0 finds exactly the
identical sets and a tiny t every pair that shares anything with enough weight.

Cost: good while sets are short or the threshold high; for long documents at
t = 0.5 the prefix is half the set and the gain shrinks (the MinHash/LSH article) — there
MinHash + LSH is the tool.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from . import _allpairs_kernels as K
from .pairs import Pairs
from .shingles import ShingleSets

__all__ = ["AllPairsResult", "all_pairs", "all_pairs_join", "global_ranks"]


def _check_threshold(threshold: float) -> float:
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        raise ParameterError(f"threshold must be a number in (0, 1], got {threshold!r}") from None
    if not (math.isfinite(t) and 0.0 < t <= 1.0):
        raise ParameterError(f"threshold must be in (0, 1], got {threshold!r}")
    return t


def global_ranks(sets: ShingleSets) -> tuple[np.ndarray, int, int]:
    """Each set rewritten in the global rare-to-frequent order.

    Returns ``(ranks, n_ranks, first_shared)``: ``ranks`` is int64, aligned
    with ``sets.offsets`` and ascending within each set; rank r is the r-th
    distinct element by (document frequency, hash); ranks below
    ``first_shared`` occur in a single set.
    """
    h = np.asarray(sets.hashes)
    if h.size == 0:
        return np.empty(0, np.int64), 0, 0
    order = np.argsort(h)
    ranks, n_ranks, first_shared = K.element_ranks(h, order, np.int64(sets.offsets.shape[0] - 1))
    K.sort_segments(ranks, np.ascontiguousarray(sets.offsets, dtype=np.int64))
    return ranks, int(n_ranks), int(first_shared)


@dataclass(slots=True)
class AllPairsResult:
    pairs: Pairs
    n_candidates: int      # pairs verified by an exact merge (after all filters)
    n_index_entries: int   # total length of the inverted index (prefix elements)


def all_pairs_join(sets: ShingleSets, threshold: float) -> AllPairsResult:
    """:func:`all_pairs` with the join's statistics."""
    t = _check_threshold(threshold)
    offsets = np.ascontiguousarray(sets.offsets, dtype=np.int64)
    sizes = np.diff(offsets)
    n = sizes.size
    if n < 2 or np.count_nonzero(sizes) < 2:
        return AllPairsResult(Pairs.empty(), 0, 0)
    ranks, n_ranks, first_shared = global_ranks(sets)
    order = np.lexsort((np.arange(n), sizes)).astype(np.int64)
    probe, index = K.prefix_lengths(sizes, t)
    a, b, o, n_cand, n_index = K.all_pairs_join(ranks, offsets, order, probe, index,
                                                np.int64(n_ranks), np.int64(first_shared), t)
    inter = o.astype(np.float64)
    sa = sizes[a].astype(np.float64)
    sb = sizes[b].astype(np.float64)
    pairs = Pairs(a, b, inter / (sa + sb - inter), inter / sa, inter / sb).sorted()
    return AllPairsResult(pairs, int(n_cand), int(n_index))


def all_pairs(sets: ShingleSets, threshold: float) -> Pairs:
    """Exactly every pair of documents with Jaccard resemblance >= threshold.

    Parameters
    ----------
    sets
        Shingle sets (:func:`~repetend.neardup.shingles.shingle_sets`).
    threshold
        t in (0, 1]. "J >= t" is decided in float64 exactly as
        :func:`~repetend.neardup.pairs.verify_pairs` computes J.

    Returns
    -------
    Pairs
        Sorted by (a, b), a < b, with exact Jaccard and both containments.
        Empty documents are never paired.

    References
    ----------
    S. Chaudhuri, V. Ganti, R. Kaushik, "A Primitive Operator for Similarity
    Joins in Data Cleaning", ICDE 2006 (prefix filter). R. J. Bayardo, Y. Ma,
    R. Srikant, "Scaling Up All Pairs Similarity Search", WWW 2007 (AllPairs).
    C. Xiao, W. Wang, X. Lin, J. X. Yu, "Efficient Similarity Joins for Near
    Duplicate Detection", WWW 2008 (PPJoin positional filter). The MinHash/LSH article.
    """
    return all_pairs_join(sets, threshold).pairs
