"""The result of a near-duplicate search and the directory it is written to.

:class:`NearDupResult` holds the verified pairs, the candidates with their true
resemblance and MinHash estimate, the clusters, the containment pairs and the
summary of a run.  :meth:`NearDupResult.write` writes a *dups directory*, and
this module owns that directory's format:

``pairs`` and ``containment`` (:data:`PAIRS_SCHEMA`)
    One row per pair: document ids and indices of both sides, Jaccard
    resemblance, both containments, the method.
``clusters`` (:data:`CLUSTERS_SCHEMA`)
    One row per document in a cluster: its cluster, the cluster's size, whether
    it is the representative kept.
``candidates`` (:data:`CANDIDATES_SCHEMA`)
    Every candidate examined (at most :data:`CANDIDATES_LIMIT` rows, a uniform
    sample with a fixed seed beyond that): both ids and indices, its Jaccard and
    MinHash estimate.
``documents`` (:data:`DOCUMENTS_SCHEMA`)
    One row per input document: its cluster (null: none), whether it is the
    representative, and ``keep`` (false for the copies ``clean`` drops).
``summary.json``
    The run's summary, plus ``candidates_written`` and ``candidates_sampled``.

The tables are ``.parquet`` or ``.jsonl`` files (:data:`TABLE_FORMATS`); the
columns are described in ``docs/neardup.md``.
"""

from __future__ import annotations

import contextlib

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from .._atomic import atomic_path, write_json, write_jsonl, write_parquet
from ..errors import ParameterError
from .clusters import Clusters
from .config import NearDupConfig
from .pairs import Pairs

__all__ = [
    "CANDIDATES_LIMIT",
    "CANDIDATES_SCHEMA",
    "CLUSTERS_SCHEMA",
    "DUPS_TABLES",
    "NearDupResult",
    "PAIRS_SCHEMA",
    "TABLE_FORMATS",
]

_NP_TYPES = {"int64": (np.int64, pa.int64()), "float64": (np.float64, pa.float64())}


def _col(values, kind: str, mask=None) -> pa.Array:
    """An Arrow column of a numpy array, built from its buffer.

    ``pa.array`` of a numpy array imports pandas (pyarrow checks for pandas
    objects first): 30 MB of private memory when the dups tables are written.
    The same values: int64/float64 share numpy's buffer, booleans and the
    validity of *mask* (True = null, as for ``pa.array``) are bit-packed."""
    n = int(len(values))
    valid = None
    nulls = 0
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        nulls = int(m.sum())
        if nulls:
            valid = pa.py_buffer(np.packbits(~m, bitorder="little"))
    if kind == "bool":
        data = pa.py_buffer(np.packbits(np.asarray(values, dtype=bool), bitorder="little"))
        return pa.Array.from_buffers(pa.bool_(), n, [valid, data], null_count=nulls)
    dtype, typ = _NP_TYPES[kind]
    arr = np.ascontiguousarray(values, dtype=dtype)
    return pa.Array.from_buffers(typ, n, [valid, pa.py_buffer(arr)], null_count=nulls)


def _repeat_string(value: str, n: int) -> pa.Array:
    """*n* copies of *value* as a string column (no Python list, no pandas import)."""
    b = value.encode("utf-8")
    offsets = (np.arange(n + 1, dtype=np.int64) * len(b)).astype(np.int32)
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets),
                                                  pa.py_buffer(b * n)], null_count=0)


#: Candidate rows written at most by :meth:`NearDupResult.write` (a sample beyond).
CANDIDATES_LIMIT = 200_000

#: The tables of a dups directory, in the order they are written.
DUPS_TABLES = ("pairs", "clusters", "containment", "candidates", "documents")

#: The file formats of the tables.
TABLE_FORMATS = ("parquet", "jsonl")

#: ``pairs`` and ``containment``: one row per pair, ``a_index < b_index``.
PAIRS_SCHEMA = pa.schema([
    ("a", pa.string()),
    ("b", pa.string()),
    ("a_index", pa.int64()),
    ("b_index", pa.int64()),
    ("jaccard", pa.float64()),
    ("containment_ab", pa.float64()),
    ("containment_ba", pa.float64()),
    ("method", pa.string()),
])

#: ``clusters``: one row per document in a cluster.
CLUSTERS_SCHEMA = pa.schema([
    ("doc_index", pa.int64()),
    ("doc_id", pa.string()),
    ("cluster_id", pa.int64()),
    ("cluster_size", pa.int64()),
    ("is_representative", pa.bool_()),
])

#: ``candidates``: one row per candidate examined (``estimate`` NaN without signatures).
CANDIDATES_SCHEMA = pa.schema([
    ("a", pa.string()),
    ("b", pa.string()),
    ("a_index", pa.int64()),
    ("b_index", pa.int64()),
    ("jaccard", pa.float64()),
    ("estimate", pa.float64()),
])

#: ``documents``: one row per input document, to join back to the corpus by id: its
#: cluster (null when it has no near-duplicate), and ``keep`` — false for every
#: member of a cluster but its representative (what ``repetend clean`` drops).
DOCUMENTS_SCHEMA = pa.schema([
    ("doc_index", pa.int64()),
    ("doc_id", pa.string()),
    ("cluster_id", pa.int64()),
    ("cluster_size", pa.int64()),
    ("is_representative", pa.bool_()),
    ("keep", pa.bool_()),
])


@dataclass(slots=True)
class NearDupResult:
    """Verified pairs, candidates with their true Jaccard, clusters, containment, summary.

    ``candidates`` holds every candidate the method examined with its exact
    resemblance and containments, and ``candidate_estimate`` the MinHash
    estimate of each (NaN for methods without signatures) — what the report
    needs to put real pairs on the S-curve and draw the chord picture.
    """

    pairs: Pairs
    candidates: Pairs
    candidate_estimate: npt.NDArray[np.float64]
    clusters: Clusters
    containment: Pairs
    summary: dict
    config: NearDupConfig
    doc_ids: object = None   # pyarrow string column of the store, a list, or None
    lengths: npt.NDArray[np.int64] | None = None
    signatures: object = field(default=None, repr=False)

    def _ids(self, idx: np.ndarray):
        """Document ids of indices *idx* as an Arrow array (the index as text without ids)."""
        idx = np.asarray(idx, dtype=np.int64)
        if self.doc_ids is None:
            return _col(idx, "int64").cast(pa.string())
        ids = self.doc_ids
        if isinstance(ids, (pa.Array, pa.ChunkedArray)):
            out = ids.take(_col(idx, "int64"))
            return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out
        return pa.array([ids[int(i)] for i in idx], pa.string())

    def _pairs_table(self, p: Pairs) -> pa.Table:
        return pa.table({
            "a": self._ids(p.a),
            "b": self._ids(p.b),
            "a_index": _col(p.a, "int64"),
            "b_index": _col(p.b, "int64"),
            "jaccard": _col(p.jaccard, "float64"),
            "containment_ab": _col(p.containment_ab, "float64"),
            "containment_ba": _col(p.containment_ba, "float64"),
            "method": _repeat_string(self.config.method, len(p)),
        })

    def to_arrow(self, what: Literal["pairs", "clusters", "containment", "candidates", "documents"] = "pairs",
                 *, candidates_limit: int | None = None) -> pa.Table:
        """One result table as a pyarrow Table (schemas in the module docstring).

        Parameters
        ----------
        what : {"pairs", "clusters", "containment", "candidates", "documents"}
            The table.
        candidates_limit : int, optional
            At most this many candidate rows: a uniform sample with a fixed seed,
            in candidate order, when there are more.

        Returns
        -------
        pyarrow.Table
            With the columns of :data:`PAIRS_SCHEMA`, :data:`CLUSTERS_SCHEMA`,
            :data:`CANDIDATES_SCHEMA` or :data:`DOCUMENTS_SCHEMA` (the id columns take the type of the
            store's ``doc_id``, a string).
        """
        if what == "pairs":
            return self._pairs_table(self.pairs)
        if what == "containment":
            return self._pairs_table(self.containment)
        if what == "clusters":
            c = self.clusters
            docs = np.flatnonzero(c.cluster_id >= 0)
            cid = c.cluster_id[docs]
            return pa.table({
                "doc_index": _col(docs, "int64"),
                "doc_id": self._ids(docs),
                "cluster_id": _col(cid, "int64"),
                "cluster_size": _col(c.sizes[cid], "int64"),
                "is_representative": _col(c.is_representative()[docs], "bool"),
            })
        if what == "candidates":
            p = self.candidates
            idx = np.arange(len(p))
            if candidates_limit is not None and len(p) > candidates_limit:
                rng = np.random.default_rng(0)
                idx = np.sort(rng.choice(len(p), size=candidates_limit, replace=False))
            return pa.table({
                "a": self._ids(p.a[idx]),
                "b": self._ids(p.b[idx]),
                "a_index": _col(p.a[idx], "int64"),
                "b_index": _col(p.b[idx], "int64"),
                "jaccard": _col(p.jaccard[idx], "float64"),
                "estimate": _col(self.candidate_estimate[idx], "float64"),
            })
        if what == "documents":
            c = self.clusters
            n = int(c.cluster_id.shape[0])
            docs = np.arange(n, dtype=np.int64)
            in_cluster = c.cluster_id >= 0
            rep = np.where(in_cluster, c.is_representative(), True)
            size = np.ones(n, dtype=np.int64)
            size[in_cluster] = c.sizes[c.cluster_id[in_cluster]]
            return pa.table({
                "doc_index": _col(docs, "int64"),
                "doc_id": self._ids(docs),
                "cluster_id": _col(c.cluster_id, "int64", mask=~in_cluster),
                "cluster_size": _col(size, "int64"),
                "is_representative": _col(rep, "bool"),
                "keep": _col(rep, "bool"),
            })
        raise ParameterError(f"unknown table {what!r}: pairs, clusters, containment, candidates "
                             "or documents")

    def to_pandas(self, what: Literal["pairs", "clusters", "containment", "candidates", "documents"] = "pairs"):
        """One result table as a pandas DataFrame (needs pandas)."""
        from ..errors import require

        require("pandas", "pandas", "NearDupResult.to_pandas")
        return self.to_arrow(what).to_pandas()

    def write(self, directory: str | Path, format: Literal["parquet", "jsonl"] = "parquet",
              candidates_limit: int = CANDIDATES_LIMIT) -> dict[str, Path]:
        """Write the dups directory: ``pairs``, ``clusters``, ``containment``,
        ``candidates``, ``documents`` and ``summary.json`` into *directory*, each atomically.

        Parameters
        ----------
        directory : str or Path
            Created when missing.
        format : {"parquet", "jsonl"}
            The tables' file format.
        candidates_limit : int
            At most this many candidate rows are written (a uniform sample with a
            fixed seed when there are more; the summary says so).

        Returns
        -------
        dict of str to Path
            The file written for each table and for ``summary``.
        """
        if format not in TABLE_FORMATS:
            raise ParameterError(f"format must be parquet or jsonl, got {format!r}")
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        written: dict[str, Path] = {}
        # every file is written to a temporary name first and the renames come after
        # the last one: a full disk or an error leaves the earlier set whole
        with contextlib.ExitStack() as staged:
            for name in DUPS_TABLES:
                table = self.to_arrow(name, candidates_limit=candidates_limit)
                target = d / f"{name}.{format}"
                tmp = staged.enter_context(atomic_path(target))
                if format == "parquet":
                    write_parquet(tmp, table)
                else:
                    write_jsonl(tmp, table)
                written[name] = target
            summary = dict(self.summary)
            summary["candidates_written"] = min(len(self.candidates), int(candidates_limit))
            summary["candidates_sampled"] = len(self.candidates) > int(candidates_limit)
            write_json(staged.enter_context(atomic_path(d / "summary.json")), summary)
            written["summary"] = d / "summary.json"
        for name in DUPS_TABLES:   # the tables of an earlier run in the other format
            for other in TABLE_FORMATS:
                if other != format:
                    (d / f"{name}.{other}").unlink(missing_ok=True)
        return written
