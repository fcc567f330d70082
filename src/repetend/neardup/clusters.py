"""Clusters of near-duplicate documents and containment pairs (Broder 1997, docs/references.md).

Clusters are the connected components of the graph whose edges are the
verified pairs (union-find, :func:`repetend.neardup._uf.components`), the last
of the shingling article's four stages.  A component of one document is not a cluster.

Representative rule: the **longest** document of the cluster (most tokens, or
most shingles when token counts are not known); ties go to the **earliest**
document index.  Cluster ids are dense, 0..C−1, in the order of each cluster's
smallest document index.

Containment (Broder 1997): c(A, B) = |S(A) ∩ S(B)| / |S(A)|.  A pair
with max(c(A,B), c(B,A)) >= t_c but resemblance J < t is a short page inside a
long one, reported apart from the near-duplicates.  MinHash-LSH estimates
resemblance, not containment: it only sees the containment pairs that happen
to be among its candidates, so its containment list is a lower bound.  Exact
all-pairs at threshold t only returns pairs with J >= t, so its containment
list is empty unless containment is searched separately.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import ParameterError
from ._uf import components
from .pairs import Pairs

__all__ = ["Clusters", "clusters_from_pairs", "containment_pairs"]


@dataclass(slots=True)
class Clusters:
    """Per-document cluster membership.

    ``cluster_id[d]`` is the dense cluster id of document d, or −1 when d is in
    no cluster (no verified pair); ``sizes[c]`` and ``representative[c]`` are
    the size and the representative document of cluster c.
    """

    cluster_id: npt.NDArray[np.int64]
    sizes: npt.NDArray[np.int64]
    representative: npt.NDArray[np.int64]

    @property
    def n_clusters(self) -> int:
        return int(self.sizes.shape[0])

    @property
    def documents_in_clusters(self) -> int:
        return int(self.sizes.sum())

    @property
    def duplicates(self) -> int:
        """Documents a dedup would drop: every member but the representative."""
        return int(self.sizes.sum() - self.sizes.shape[0])

    def members(self, c: int) -> npt.NDArray[np.int64]:
        return np.flatnonzero(self.cluster_id == c)

    def is_representative(self) -> npt.NDArray[np.bool_]:
        out = np.zeros(self.cluster_id.shape[0], dtype=bool)
        out[self.representative] = True
        return out

    def keep_mask(self) -> npt.NDArray[np.bool_]:
        """True for documents a dedup keeps: those in no cluster and the representatives."""
        return (self.cluster_id < 0) | self.is_representative()


def clusters_from_pairs(n_docs: int, a: npt.ArrayLike, b: npt.ArrayLike,
                        lengths: npt.ArrayLike | None = None) -> Clusters:
    """Connected components of the pairs (a[i], b[i]) over ``n_docs`` documents.

    Parameters
    ----------
    n_docs : int
        Number of documents.
    a, b : array of int
        Pair endpoints (document indices).
    lengths : array of int, optional
        Document lengths for the representative rule (longest, ties → earliest);
        without it the earliest document represents its cluster.
    """
    a = np.ascontiguousarray(a, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    if a.shape != b.shape:
        raise ParameterError("a and b must have the same length")
    if a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n_docs):
        raise ParameterError(f"pair index out of range 0..{n_docs - 1}")
    label = components(int(n_docs), a, b)
    counts = np.bincount(label, minlength=n_docs)
    in_cluster = counts[label] >= 2
    roots = np.flatnonzero(counts >= 2)            # ascending: order of smallest member
    dense = np.full(n_docs, -1, dtype=np.int64)
    dense[roots] = np.arange(roots.size, dtype=np.int64)
    cluster_id = np.where(in_cluster, dense[label], -1)
    sizes = counts[roots].astype(np.int64)
    if lengths is None:
        lengths = np.zeros(n_docs, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.shape[0] != n_docs:
        raise ParameterError(f"lengths has {lengths.shape[0]} entries for {n_docs} documents")
    docs = np.flatnonzero(in_cluster)
    order = np.lexsort((docs, -lengths[docs], cluster_id[docs]))
    ordered = docs[order]
    cid = cluster_id[ordered]
    first = np.ones(ordered.size, dtype=bool)
    first[1:] = cid[1:] != cid[:-1]
    representative = ordered[first].astype(np.int64)
    return Clusters(cluster_id.astype(np.int64), sizes, representative)


def containment_pairs(candidates: Pairs, threshold: float, containment: float) -> Pairs:
    """Pairs whose larger containment is >= ``containment`` while J < ``threshold``."""
    if not (0.0 < containment <= 1.0):
        raise ParameterError(f"containment threshold must be in (0, 1], got {containment}")
    n = len(candidates)
    keep = np.empty(n, dtype=bool)
    step = 1 << 20            # blocks: the out-of-core candidates may be memory-mapped
    for s in range(0, n, step):
        c = candidates
        cmax = np.maximum(c.containment_ab[s:s + step], c.containment_ba[s:s + step])
        keep[s:s + step] = (cmax >= containment) & (c.jaccard[s:s + step] < threshold)
    return candidates.select(keep)
