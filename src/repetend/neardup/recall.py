"""The LSH S-curve measured on a corpus: of all pairs of documents with Jaccard
at least a floor (an exact all-pairs join over the same shingles), the share in
each similarity bin that LSH made candidates.

The curve P(s) = 1 − (1 − s^r)^b (Indyk & Motwani 1998; the MinHash/LSH
article, docs/references.md) should predict these points; the scan job
measures them on small corpora whose candidate list is complete and stores
them in ``dups/summary.json`` for the report to draw.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["RECALL_FLOOR", "RECALL_MAX_TOKENS", "measured_recall"]

RECALL_MAX_TOKENS = 3_000_000   # measured by an exact all-pairs join up to this many tokens
RECALL_FLOOR = 0.2              # ... over the pairs with Jaccard at least this


def measured_recall(store, cand_a: npt.ArrayLike, cand_b: npt.ArrayLike, shingle: int, *,
                    floor: float = RECALL_FLOOR, bins: int = 20,
                    max_tokens: int = RECALL_MAX_TOKENS) -> dict | None:
    """Share of all pairs per Jaccard bin in [floor, 1] that are among the
    candidate pairs (``cand_a[i]``, ``cand_b[i]``: document indices of *store*).

    Returns ``{"floor", "centres", "share", "count"}`` (the non-empty bins), or
    None when the corpus has more than *max_tokens* tokens or no pair reaches
    the floor."""
    from .allpairs import all_pairs
    from .shingles import shingle_sets, token_hashes

    if store.n_tokens > max_tokens:
        return None
    sets = shingle_sets(np.asarray(store.tokens), store.doc_offsets, token_hashes(store.vocab),
                        int(shingle))
    pairs = all_pairs(sets, floor)
    if len(pairs) == 0:
        return None
    n = np.int64(store.n_docs)
    ca = np.asarray(cand_a, np.int64)
    cb = np.asarray(cand_b, np.int64)
    ckey = np.minimum(ca, cb) * n + np.maximum(ca, cb)
    pkey = np.minimum(pairs.a, pairs.b) * n + np.maximum(pairs.a, pairs.b)
    found = np.isin(pkey, ckey)
    edges = np.linspace(floor, 1.0, bins + 1)
    idx = np.clip(np.searchsorted(edges, pairs.jaccard, side="right") - 1, 0, bins - 1)
    cnt = np.bincount(idx, minlength=bins)
    hit = np.bincount(idx, weights=found.astype(np.float64), minlength=bins)
    keep = cnt > 0
    centres = (edges[:-1] + edges[1:]) / 2
    return {"floor": float(floor), "centres": centres[keep].tolist(),
            "share": (hit[keep] / cnt[keep]).tolist(), "count": cnt[keep].tolist()}
