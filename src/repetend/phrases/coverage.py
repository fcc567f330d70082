"""Coverage: how much of every document, and of the corpus, is boilerplate.

The BloomSpan paper, §6 (docs/references.md): after mining, the positions
that lie inside at least one occurrence of a reported phrase form the
coverage mask.  Its share of the
corpus is the share of the index taken by repeated fragments; its share of
one document is that document's boilerplate share, whose distribution shows
pages that are almost entirely template (drop candidates).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import _coverage_kernels as K
from ._raw import RawPhrases

__all__ = ["coverage_mask", "covered_per_document", "share_distribution"]

_QUANTILES = (0.5, 0.75, 0.9, 0.95, 0.99)


def _delta(raw: RawPhrases, n_tokens: int) -> np.ndarray:
    return K.coverage_delta(np.asarray(raw.occ_offsets, np.int64),
                            np.asarray(raw.occ_starts, np.int64),
                            np.asarray(raw.lengths, np.int64), int(n_tokens))


def coverage_mask(raw: RawPhrases, n_tokens: int) -> npt.NDArray[np.bool_]:
    """Boolean mask ``[n_tokens]``: position p is covered when some occurrence
    of some phrase in *raw* spans it (the BloomSpan paper's coverage bitmask)."""
    return K.coverage_mask_from_delta(_delta(raw, n_tokens), int(n_tokens))


def covered_per_document(raw: RawPhrases, doc_offsets: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Covered token count of every document (int64 ``[n_docs]``), from a
    difference array over the occurrence spans: linear in tokens plus
    occurrences, whatever the overlap of the spans."""
    doc_offsets = np.asarray(doc_offsets, np.int64)
    n_tokens = int(doc_offsets[-1]) if doc_offsets.size else 0
    return K.covered_per_document(_delta(raw, n_tokens), doc_offsets)


def share_distribution(shares: npt.ArrayLike, bins: int = 20) -> dict:
    """Quantiles, mean and an equal-width histogram over [0, 1] of per-document
    boilerplate shares (documents without tokens are left out)."""
    s = np.asarray(shares, dtype=np.float64)
    edges = np.linspace(0.0, 1.0, bins + 1)
    counts, _ = np.histogram(s, bins=edges)
    if s.size == 0:
        q = {f"p{int(round(x * 100))}": 0.0 for x in _QUANTILES}
        return {"documents": 0, "mean": 0.0, "max": 0.0, "quantiles": q,
                "histogram": {"edges": edges.tolist(), "counts": counts.tolist()},
                "fully_covered": 0, "uncovered": 0}
    qs = np.quantile(s, _QUANTILES)
    return {
        "documents": int(s.size),
        "mean": float(s.mean()),
        "max": float(s.max()),
        "quantiles": {f"p{int(round(x * 100))}": float(v) for x, v in zip(_QUANTILES, qs)},
        "histogram": {"edges": edges.tolist(), "counts": counts.tolist()},
        "fully_covered": int(np.count_nonzero(s >= 1.0)),
        "uncovered": int(np.count_nonzero(s <= 0.0)),
    }
