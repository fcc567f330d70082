"""The document groups of a near-duplicate run, for df over clusters.

``repetend phrases --df-over clusters --clusters DIR`` and the scan job count a
phrase's df over near-duplicate clusters (:mod:`repetend.phrases.groups`).  The
clusters come from a ``dups`` output (or a scan directory's ``dups/``); this
module reads them and checks, before any mining, that they were made from the
same corpus as the token store: the number of documents, the tokens when the
run recorded them (its stage stamp), and the id of every clustered document.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from ..errors import InputError
from ..phrases import groups_from_clusters
from ..scandir import STAMP_KEY, SUMMARY, clusters_file, read_json, stage_mismatch

__all__ = ["cluster_groups", "locate_clusters"]


def locate_clusters(path: str | Path) -> Path:
    """The clusters table under *path* (a dups output or a scan directory), with
    its ``summary.json`` beside it; one clear error when there is none."""
    root = Path(path)
    if not root.is_dir():
        raise InputError("--clusters: no such directory", path=str(root))
    f = clusters_file(root)
    if f is None:
        raise InputError("--clusters: no clusters.parquet here nor in dups/ (give a "
                         "`repetend dups` output or a scan directory)", path=str(root))
    if not (f.parent / SUMMARY).is_file():
        raise InputError(f"--clusters: {f.name} has no {SUMMARY} beside it, so which corpus it "
                         "was made from cannot be checked", path=str(f.parent))
    return f


def _read(f: Path) -> pa.Table:
    try:
        if f.suffix == ".parquet":
            import pyarrow.parquet as pq

            return pq.read_table(f, columns=["doc_index", "doc_id", "cluster_id"])
        import pyarrow.json as pj

        t = pj.read_json(f)
        return t.select(["doc_index", "doc_id", "cluster_id"])
    except (pa.ArrowInvalid, KeyError, OSError) as exc:
        raise InputError(f"--clusters: cannot read the clusters table: {exc}", path=str(f)) from exc


def cluster_groups(path: str | Path, store) -> np.ndarray:
    """One group label per document of *store* from the clusters under *path*:
    a clustered document takes its cluster's label, every other one its own.

    Raises
    ------
    InputError
        No clusters table, or one made from another corpus (another number of
        documents or tokens, or other document ids at its rows).
    """
    f = locate_clusters(path)
    summary = read_json(f.parent / SUMMARY)
    n_docs, n_tokens = int(store.n_docs), int(store.n_tokens)
    made = summary.get("documents")
    if made is not None and int(made) != n_docs:
        raise InputError(f"--clusters: made from another corpus ({made} documents, not the "
                         f"{n_docs} of this one)", path=str(f.parent))
    stamp = (summary.get(STAMP_KEY) or {}).get("corpus") or {}
    problem = stage_mismatch(stamp, {"documents": n_docs, "tokens": n_tokens})
    if problem:
        raise InputError(f"--clusters: {problem}", path=str(f.parent))
    t = _read(f)
    idx = t.column("doc_index").to_numpy(zero_copy_only=False).astype(np.int64)
    cid = t.column("cluster_id").to_numpy(zero_copy_only=False).astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= n_docs):
        raise InputError(f"--clusters: made from another corpus (a doc_index of "
                         f"{int(idx.max())} in a corpus of {n_docs} documents)", path=str(f))
    ids = np.asarray(store.doc_ids, dtype=object)[idx]
    got = np.asarray(t.column("doc_id").to_pylist(), dtype=object)
    bad = np.flatnonzero(ids != got)
    if bad.size:
        i = int(bad[0])
        raise InputError(f"--clusters: made from another corpus (document {int(idx[i])} is "
                         f"{ids[i]!r} here, {got[i]!r} there)", path=str(f))
    cluster_id = np.full(n_docs, -1, dtype=np.int64)
    cluster_id[idx] = cid
    return groups_from_clusters(cluster_id)
