"""The corpus seen once per near-duplicate cluster, for the report.

A near-duplicate cluster (``dups/clusters.parquet``; a document in no cluster
is its own cluster) is one *distinct document*: its representative stands for
it.  Everything here is read from the scan directory and only counted:

* the **duplicate share**: the documents beyond one representative per
  cluster, and their tokens, over all documents and tokens;
* the **boilerplate share over distinct clusters**: the tokens of
  representatives inside frequent spans (``frequent_tokens`` of
  ``phrases/documents.parquet``), over all tokens of representatives — each
  cluster counted once, so copies of a document add nothing;
* the **cluster df** of a phrase: the number of distinct clusters with an
  occurrence of it (equal to its df when the phrases were mined with df over
  clusters).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..scandir import DUPS, PHRASES, ScanDir

__all__ = ["Distinct", "distinct_view", "phrase_cluster_df"]


def _i64(t: pa.Table, c: str) -> np.ndarray:
    return pc.cast(t.column(c), pa.int64()).to_numpy(zero_copy_only=False)


@dataclass
class Distinct:
    """Each document's cluster key (a document in no cluster has its own) and
    whether it represents its cluster; the per-document token counts."""

    key: np.ndarray              # int64 [n_docs]: cluster key, equal for the members of a cluster
    representative: np.ndarray   # bool [n_docs]
    size: np.ndarray             # int64 [n_docs]: documents in the document's cluster
    n_tokens: np.ndarray | None  # int64 [n_docs]
    has_clusters: bool

    @property
    def n_docs(self) -> int:
        return int(self.key.size)

    @property
    def n_distinct(self) -> int:
        return int(self.representative.sum())

    def duplicate_share(self) -> dict:
        """Documents and tokens beyond one representative per cluster."""
        extra = ~self.representative
        out = {"documents": int(extra.sum()), "documents_share": float(extra.mean()) if self.n_docs else 0.0}
        if self.n_tokens is not None:
            total = int(self.n_tokens.sum())
            out["tokens"] = int(self.n_tokens[extra].sum())
            out["tokens_share"] = out["tokens"] / total if total else 0.0
        return out


def distinct_view(scan: ScanDir) -> Distinct:
    """The clusters of the scan (``dups/clusters.parquet``; none: every document
    is its own cluster)."""
    n = scan.store.n_docs if scan.store is not None else int((scan.summary.get("corpus") or {})
                                                             .get("documents") or 0)
    n_tokens = (pc.cast(scan.store.docs.column("n_tokens"), pa.int64()).to_numpy(zero_copy_only=False)
                if scan.store is not None else None)
    cl = scan.table(f"{DUPS}/clusters.parquet", ["cluster_id", "doc_index", "cluster_size",
                                                  "is_representative"])
    if cl is not None and cl.num_rows:
        n = max(n, int(pc.max(cl.column("doc_index")).as_py()) + 1)
    key = np.arange(n, dtype=np.int64)
    rep = np.ones(n, bool)
    size = np.ones(n, np.int64)
    if cl is not None and cl.num_rows:
        dix = _i64(cl, "doc_index")
        # cluster keys after the document indices, so they never meet a singleton's
        key[dix] = n + _i64(cl, "cluster_id")
        rep[dix] = cl.column("is_representative").to_numpy(zero_copy_only=False).astype(bool)
        size[dix] = _i64(cl, "cluster_size")
        # a cluster without a flagged representative: its first member stands for it
        k = key[dix]
        uniq, first = np.unique(k, return_index=True)
        missing = ~np.isin(uniq, k[rep[dix]])
        rep[dix[first[missing]]] = True
    return Distinct(key=key, representative=rep, size=size, n_tokens=n_tokens,
                    has_clusters=cl is not None)


def phrase_cluster_df(scan: ScanDir, distinct: Distinct, phrase_ids: np.ndarray) -> np.ndarray:
    """For each phrase of *phrase_ids*, the number of distinct clusters with an
    occurrence of it (``phrases/occurrences.parquet``, read in batches)."""
    wanted = np.asarray(phrase_ids, dtype=np.int64)
    out = np.zeros(wanted.size, np.int64)
    pf = scan.parquet_file(f"{PHRASES}/occurrences.parquet")
    if pf is None or wanted.size == 0:
        return out
    pos = {int(p): i for i, p in enumerate(wanted)}
    value_set = pa.array(wanted)
    pairs = []
    for batch in pf.iter_batches(batch_size=1 << 20, columns=["phrase_id", "doc_index"]):
        t = pa.Table.from_batches([batch])
        t = t.filter(pc.is_in(pc.cast(t.column("phrase_id"), pa.int64()), value_set=value_set))
        if t.num_rows == 0:
            continue
        pid, doc = _i64(t, "phrase_id"), _i64(t, "doc_index")
        pairs.append(np.unique(np.stack([pid, distinct.key[doc]], axis=1), axis=0))
    if not pairs:
        return out
    u = np.unique(np.concatenate(pairs), axis=0)
    ids, counts = np.unique(u[:, 0], return_counts=True)
    for p, c in zip(ids.tolist(), counts.tolist()):
        out[pos[p]] = c
    return out
