"""Document groups for document frequency: df over near-duplicate clusters.

By default df(P) is the number of distinct documents holding an occurrence of
P.  A corpus full of copies makes every copy a witness of its own, so text
duplicated σ times looks like boilerplate.  With a *grouping* — one label per
document, a document in no near-duplicate cluster alone in its group — df(P) is
the number of distinct groups with an occurrence of P, and σ applies to that.
Occurrences, coverage and per-document shares are still reported on every
document; only which phrases are frequent, and their df, change.

Group df is anti-monotone like document df (a longer phrase occurs in a subset
of the groups of a shorter one), so every argument the engines make about
frequent phrases holds for it: the filters that count documents or
occurrences stay one-sided (occurrences ≥ documents ≥ groups), and the
engines count distinct groups exactly where they counted documents
(``count_distinct`` in the BloomSpan kernels, the colour of a suffix in the
suffix engine's Hui counting).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from ..errors import ParameterError

__all__ = ["DF_OVER", "DfOver", "DocGroups", "doc_groups", "groups_from_clusters"]

DfOver = Literal["documents", "clusters"]
DF_OVER = ("documents", "clusters")


@dataclass(frozen=True, slots=True)
class DocGroups:
    """Dense group labels: ``label[d]`` in ``0 .. n_groups - 1`` (int32), and
    the documents listed group by group (``order``, stable in document order)."""

    label: npt.NDArray[np.int32]
    n_groups: int

    @property
    def order(self) -> npt.NDArray[np.int64]:
        return np.argsort(self.label, kind="stable").astype(np.int64)


def doc_groups(labels: npt.ArrayLike, n_docs: int) -> DocGroups:
    """Check one integer label per document and number the groups densely (in
    order of their smallest label; documents with equal labels share a group).

    Raises
    ------
    ParameterError
        *labels* is not a one-dimensional integer array of length *n_docs*.
    """
    a = np.asarray(labels)
    if a.ndim != 1 or a.shape[0] != int(n_docs):
        raise ParameterError(f"groups must hold one label per document ({n_docs}), "
                             f"got shape {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise ParameterError(f"groups must be integer labels, got dtype {a.dtype}")
    uniq, inv = np.unique(a.astype(np.int64, copy=False), return_inverse=True)
    return DocGroups(label=np.ascontiguousarray(inv.reshape(-1), dtype=np.int32),
                     n_groups=int(uniq.shape[0]))


def engine_labels(groups, n_docs: int) -> tuple[DocGroups | None, npt.NDArray[np.int32] | None,
                                                 int]:
    """What an engine counts: ``(groups, label, n_units)`` — the checked groups
    (None: documents), the label of every document (None: documents) and the
    number of units df counts (groups, or documents)."""
    if groups is None:
        return None, None, int(n_docs)
    if not isinstance(groups, DocGroups):
        groups = doc_groups(groups, n_docs)
    return groups, groups.label, groups.n_groups


def groups_from_clusters(cluster_id: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Group labels from near-duplicate cluster ids (one per document, negative
    for a document in no cluster): a clustered document takes its cluster's
    label, every other document a label of its own."""
    cid = np.asarray(cluster_id, dtype=np.int64)
    out = cid.copy()
    alone = np.flatnonzero(cid < 0)
    top = int(cid.max()) + 1 if cid.size else 0
    out[alone] = top + np.arange(alone.size, dtype=np.int64)
    return out
