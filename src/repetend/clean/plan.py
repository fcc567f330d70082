"""What cleaning does to each document of a scan: the one planning code.

:func:`plan_clean` reads a scan directory (through :mod:`repetend.scandir`) and
returns a :class:`CleanPlan`; :meth:`CleanPlan.decide` gives, for one document
and its text, the :class:`DocPlan`: keep it (whole or with boilerplate cut),
drop it as a duplicate, or drop it as mostly template, with the cuts and the
reason.  ``repetend clean`` (:func:`repetend.jobs.clean_corpus`) applies these
plans while it streams the input; the scan job writes them for every document
(:func:`decisions_table`, the scan's ``documents.parquet``); the report counts
them.  One implementation, so what the report predicts is what clean does.

The decision of a document, in order:

1. **duplicate** (``remove_duplicates``): a member of a near-duplicate cluster
   (``dups/clusters.parquet``) that is not its representative →
   ``drop_duplicate``, reason ``duplicate_of:<representative id>``;
2. **min_share** (only when given): boilerplate share ≥ ``min_share`` →
   ``drop_template``, reason ``min_share``;
3. **mostly template** (``remove_boilerplate``): the cuts (:mod:`repetend.clean.spans`,
   tidying included) would remove more than ``max_cut`` of the document's
   characters → with ``mostly_template="drop"`` ``drop_template``, reason
   ``mostly_template``; with ``"keep"`` the document is kept whole, reason
   ``kept_whole``.  A kept document is never silently emptied;
4. otherwise ``keep``, with the boilerplate cut (reason ``boilerplate``) or
   untouched (no reason).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError, ParameterError
from ..scandir import DUPS, PHRASES, ScanDir
from .spans import Cut, plan_cuts

__all__ = ["DECISIONS", "CleanConfig", "CleanPlan", "DocPlan", "decision_counts", "decisions_table",
           "plan_clean", "read_decisions", "write_decisions"]

DECISIONS = ("keep", "drop_duplicate", "drop_template")


@dataclass(frozen=True, slots=True)
class CleanConfig:
    """What cleaning removes.

    Attributes
    ----------
    remove_boilerplate : bool
        Cut the boilerplate spans from kept documents.
    remove_duplicates : bool
        Keep only the representative of each near-duplicate cluster.
    min_share : float or None
        Also drop documents whose boilerplate share is at least this.
    spans : "frequent" or "maximal"
        Cut every frequent span, or only the occurrences of the maximal phrases.
    templates : bool
        Also cut template occurrences (slots included), when the scan has them.
    max_cut : float
        A kept document that would lose more than this share of its characters
        is not cut (1.0: no limit).
    mostly_template : "drop" or "keep"
        What happens to such a document: dropped as mostly template, or kept whole.
    """

    remove_boilerplate: bool = True
    remove_duplicates: bool = True
    min_share: float | None = None
    spans: str = "frequent"   # "frequent" spans or "maximal" phrase occurrences
    templates: bool = True    # also cut template occurrences (slots included), when the scan has them
    max_cut: float = 0.9
    mostly_template: str = "drop"

    def __post_init__(self):
        if self.spans not in ("frequent", "maximal"):
            raise ParameterError(f"spans must be 'frequent' or 'maximal', got {self.spans!r}")
        if self.min_share is not None and not (0.0 < float(self.min_share) <= 1.0):
            raise ParameterError(f"min_share must be in (0, 1], got {self.min_share}")
        if isinstance(self.max_cut, bool) or not isinstance(self.max_cut, (int, float)) \
                or not (0.0 < float(self.max_cut) <= 1.0):
            raise ParameterError(f"--max-cut must be in (0, 1], got {self.max_cut!r}")
        if self.mostly_template not in ("drop", "keep"):
            raise ParameterError(f"--mostly-template must be 'drop' or 'keep', got {self.mostly_template!r}")


@dataclass(slots=True)
class DocPlan:
    """What cleaning does to one document."""

    decision: str                 # one of DECISIONS
    reason: str | None            # duplicate_of:<id>, min_share, mostly_template, kept_whole, boilerplate
    cuts: list[Cut] = field(default_factory=list)
    chars: int = 0                # characters of the document
    chars_cut: int = 0            # characters it loses (all of them when dropped)
    cut_share: float = 0.0        # share of its characters the boilerplate cuts would remove
    share: float | None = None    # its boilerplate share (token share from the phrase stage)


class _Occurrences:
    """Spans to cut, grouped by document, in characters of the original text: the
    tables' ``char_start``/``char_end`` (written by the phrase stage), or for a
    scan written before them the token positions mapped by
    :func:`repetend.corpus.char_offsets.char_offsets` (one compiled re-scan of the
    documents that have spans)."""

    def __init__(self, table: pa.Table | None, store):
        n_docs = store.n_docs
        if table is None or table.num_rows == 0:
            self.doc = np.empty(0, np.int64)
            self.offsets = np.zeros(n_docs + 1, np.int64)
            self.cstart = self.cend = self.pid = np.empty(0, np.int64)
            return
        from ..corpus.char_offsets import char_offsets

        col = lambda c: pc.cast(table.column(c), pa.int64()).to_numpy(zero_copy_only=False)  # noqa: E731
        doc, start, end, pid = col("doc_index"), col("start"), col("end"), col("phrase_id")
        order = np.lexsort((start, doc))
        self.doc, start, end, self.pid = doc[order], start[order], end[order], pid[order]
        if "char_start" in table.column_names:
            self.cstart, self.cend = col("char_start")[order], col("char_end")[order]
        else:
            self.cstart, self.cend = char_offsets(store, self.doc, start, end)
        self.offsets = np.searchsorted(self.doc, np.arange(n_docs + 1), side="left")

    def of(self, d: int):
        a, b = self.offsets[d], self.offsets[d + 1]
        return self.cstart[a:b], self.cend[a:b], self.pid[a:b]


def _i64(table: pa.Table, name: str) -> np.ndarray:
    return pc.cast(table.column(name), pa.int64()).to_numpy(zero_copy_only=False)


class CleanPlan:
    """The cleaning of one scan under one :class:`CleanConfig`; build it with
    :func:`plan_clean`."""

    def __init__(self, scan: ScanDir, config: CleanConfig):
        if scan.store is None:
            raise InputError("the scan has no token store (needed for the document texts)",
                             path=str(scan.root))
        self.config = cfg = config
        self.store = store = scan.store
        self.notes: list[str] = []
        n = self.n_docs = store.n_docs
        doc_ids = store.doc_ids
        # near-duplicate clusters: -1 for a document in none
        self.cluster_id = np.full(n, -1, np.int64)
        self.cluster_size = np.ones(n, np.int64)
        self.is_representative = np.ones(n, bool)
        self.representative = np.arange(n, dtype=np.int64)
        cl = scan.table(f"{DUPS}/clusters.parquet")
        self.has_clusters = cl is not None
        if cl is not None and cl.num_rows:
            cid, dix = _i64(cl, "cluster_id"), _i64(cl, "doc_index")
            rep = cl.column("is_representative").to_numpy(zero_copy_only=False).astype(bool)
            self.cluster_id[dix] = cid
            self.cluster_size[dix] = _i64(cl, "cluster_size")
            self.is_representative[dix] = rep
            rep_of = dict(zip(cid[rep].tolist(), dix[rep].tolist()))
            for c, d, r in zip(cid.tolist(), dix.tolist(), rep.tolist()):
                if not r and c in rep_of:
                    self.representative[d] = rep_of[c]
                else:
                    self.is_representative[d] = True
        self.drop_reason: dict[int, str] = {}
        if cfg.remove_duplicates:
            if cl is None:
                self.notes.append("the scan has no duplicate clusters (dups/ missing): no duplicates removed")
            for d in np.flatnonzero(~self.is_representative).tolist():
                self.drop_reason[d] = f"duplicate_of:{doc_ids[int(self.representative[d])]}"
        frequent = cfg.spans == "frequent" and scan.table(f"{PHRASES}/spans.parquet", ["doc_index"]) is not None
        if cfg.spans == "frequent" and not frequent and cfg.remove_boilerplate \
                and scan.table(f"{PHRASES}/documents.parquet", ["doc_index"]) is not None:
            self.notes.append("the scan has no frequent spans (phrases/spans.parquet; an older scan): "
                              "removing the maximal phrases' occurrences")
        self.share_column = share_col = "frequent_share" if frequent else "boilerplate_share"
        self.share: np.ndarray | None = None      # the share clean uses (min_share)
        self.shares: dict[str, np.ndarray] = {}   # every share column of phrases/documents.parquet
        dt = scan.table(f"{PHRASES}/documents.parquet",
                        ["doc_index", "covered_tokens", "boilerplate_share", "frequent_tokens",
                         "frequent_share"])
        if dt is None:
            if cfg.min_share is not None:
                raise InputError("--min-share needs the phrase stage (phrases/documents.parquet)",
                                 path=str(scan.root))
            if cfg.remove_boilerplate:
                self.notes.append("the scan has no phrases (phrases/ missing): no boilerplate removed")
        else:
            dix = _i64(dt, "doc_index")
            for c in ("covered_tokens", "boilerplate_share", "frequent_tokens", "frequent_share"):
                if c in dt.column_names:
                    a = np.zeros(n)
                    a[dix] = pc.cast(dt.column(c), pa.float64()).to_numpy(zero_copy_only=False)
                    self.shares[c] = a
            self.share = self.shares.get(share_col)
        cut_table = None
        if cfg.remove_boilerplate:
            span_table = f"{PHRASES}/spans.parquet" if frequent else f"{PHRASES}/occurrences.parquet"
            # character offsets when the tables have them (a scan written before them
            # has token positions only: the columns are then left out on both sides)
            pos = ["doc_index", "start", "end", "char_start", "char_end"]
            cut_table = scan.table(span_table, ["phrase_id", *pos])
            tpl = (scan.table(f"{PHRASES}/template_occurrences.parquet", ["template_id", *pos])
                   if cfg.templates else None)
            if tpl is not None and tpl.num_rows:
                # template spans (slots included) join the cuts; they carry no phrase id
                cols = [c for c in pos if c in tpl.column_names
                        and (cut_table is None or c in cut_table.column_names)]
                tpl_cut = pa.table({"phrase_id": pa.array(np.full(tpl.num_rows, -1, np.int64)),
                                    **{c: pc.cast(tpl.column(c), pa.int64()) for c in cols}})
                cut_table = tpl_cut if cut_table is None else pa.concat_tables(
                    [cut_table.select(["phrase_id", *cols]).cast(tpl_cut.schema), tpl_cut])
        self._occ = _Occurrences(cut_table, store)

    def decide(self, i: int, text: str) -> DocPlan:
        """The plan of document *i* whose text is *text* (the scan's text of it)."""
        cfg = self.config
        n_chars = len(text)
        share = float(self.share[i]) if self.share is not None else None
        reason = self.drop_reason.get(i)
        if reason is not None:
            return DocPlan("drop_duplicate", reason, chars=n_chars, chars_cut=n_chars, share=share)
        if cfg.min_share is not None and share is not None and share >= float(cfg.min_share) - 1e-12:
            return DocPlan("drop_template", "min_share", chars=n_chars, chars_cut=n_chars, share=share)
        cs, ce, pid = self._occ.of(i)
        if not cs.size:
            return DocPlan("keep", None, chars=n_chars, share=share)
        cuts = plan_cuts(text, cs, ce, pid)
        removed = sum(c.end - c.start for c in cuts)
        cut_share = removed / n_chars if n_chars else 0.0
        if cut_share > float(cfg.max_cut):
            if cfg.mostly_template == "drop":
                return DocPlan("drop_template", "mostly_template", chars=n_chars, chars_cut=n_chars,
                               cut_share=cut_share, share=share)
            return DocPlan("keep", "kept_whole", chars=n_chars, cut_share=cut_share, share=share)
        return DocPlan("keep", "boilerplate", cuts=cuts, chars=n_chars, chars_cut=removed,
                       cut_share=cut_share, share=share)

    def decide_all(self) -> list[DocPlan]:
        """The plan of every document of the scan, from the store's texts."""
        return [self.decide(i, self.store.text(i)) for i in range(self.n_docs)]


def plan_clean(scan: ScanDir, config: CleanConfig | None = None) -> CleanPlan:
    """The cleaning plan of a scan directory (opened with
    :func:`repetend.scandir.open_scan`, with its token store)."""
    return CleanPlan(scan, config or CleanConfig())


def plan_columns(plans: list[DocPlan]) -> pa.Table:
    """The per-document figures of *plans* (one per document, in order) as the
    columns :func:`decisions_table` writes: ``n_chars, cut_share, chars_cut,
    decision, reason``."""
    return pa.table({
        "n_chars": pa.array([p.chars for p in plans], pa.int64()),
        "cut_share": pa.array([p.cut_share for p in plans], pa.float64()),
        "chars_cut": pa.array([p.chars_cut for p in plans], pa.int64()),
        "decision": pa.array([p.decision for p in plans], pa.string()),
        "reason": pa.array([p.reason for p in plans], pa.string()),
    })


def decisions_table(plan: CleanPlan, plans: list[DocPlan] | None = None, *,
                    columns: pa.Table | None = None) -> pa.Table:
    """One row per document of the scan, in the store's order, to join back to
    the corpus by ``doc_id``: its url and size, its near-duplicate cluster
    (``cluster_id`` null for a document in none, ``cluster_size`` 1), its
    boilerplate figures from the phrase stage (null without one) and what
    cleaning under ``plan.config`` does to it: ``decision`` (one of
    :data:`DECISIONS`), ``reason``, ``cut_share`` (the share of its characters
    the boilerplate cuts would remove) and ``chars_cut`` (the characters it
    loses; all of them when dropped).  The scan writes it as
    ``documents.parquet`` (:func:`write_decisions`).  *columns*: those five
    figures computed elsewhere (:func:`plan_columns` of the plans, e.g. on Spark's
    executors, :mod:`repetend.spark.decisions`), in place of *plans*."""
    store = plan.store
    if columns is None:
        columns = plan_columns(plan.decide_all() if plans is None else plans)
    docs = store.docs
    n = plan.n_docs

    def share(c, typ):
        a = plan.shares.get(c)
        if a is None:
            return pa.nulls(n, typ)
        return pa.array(a.astype(np.int64) if typ == pa.int64() else a, typ)

    # the detected language (--lang-detect) only when the store has one: else the table is as before
    lang = ({"language": pc.cast(docs.column("language"), pa.string())}
            if "language" in docs.column_names else {})
    return pa.table({
        "doc_index": pa.array(np.arange(n, dtype=np.int64)),
        "doc_id": pc.cast(docs.column("doc_id"), pa.string()),
        "url": pc.cast(docs.column("url"), pa.string()),
        **lang,
        "n_tokens": pc.cast(docs.column("n_tokens"), pa.int64()),
        "n_chars": columns.column("n_chars"),
        "cluster_id": pa.array(plan.cluster_id, mask=plan.cluster_id < 0),
        "cluster_size": pa.array(plan.cluster_size),
        "is_representative": pa.array(plan.is_representative),
        "representative_id": pc.take(pc.cast(docs.column("doc_id"), pa.string()),
                                     pa.array(plan.representative)),
        "covered_tokens": share("covered_tokens", pa.int64()),
        "boilerplate_share": share("boilerplate_share", pa.float64()),
        "frequent_tokens": share("frequent_tokens", pa.int64()),
        "frequent_share": share("frequent_share", pa.float64()),
        "cut_share": columns.column("cut_share"),
        "chars_cut": columns.column("chars_cut"),
        "decision": columns.column("decision"),
        "reason": columns.column("reason"),
    })


def decision_counts(table: pa.Table) -> dict:
    """The figures of a decisions table: documents kept, kept with boilerplate
    cut, kept whole, dropped as duplicates and as mostly template (``min_share``
    included); characters in, cut from kept documents, and removed in all."""
    dec = table.column("decision").to_pylist()
    reason = table.column("reason").to_pylist()
    chars = _i64(table, "n_chars")
    cut = _i64(table, "chars_cut")
    keep = np.asarray([d == "keep" for d in dec], bool)
    return {
        "documents": table.num_rows,
        "kept": int(keep.sum()),
        "kept_cut": sum(1 for d, r in zip(dec, reason) if d == "keep" and r == "boilerplate"),
        "kept_whole": sum(1 for d, r in zip(dec, reason) if d == "keep" and r == "kept_whole"),
        "drop_duplicate": sum(1 for d in dec if d == "drop_duplicate"),
        "drop_template": sum(1 for d in dec if d == "drop_template"),
        "chars": int(chars.sum()),
        "chars_cut_kept": int(cut[keep].sum()),
        "chars_removed": int(cut.sum()),
    }


def write_decisions(scan: ScanDir, config: CleanConfig | None = None, *,
                    columns=None) -> pa.Table:
    """Write the scan's ``documents.parquet`` (:func:`decisions_table` under
    *config*, default clean's defaults) atomically, the policy in its metadata.
    *columns*: a function of the plan giving its per-document figures
    (:func:`plan_columns`' table), e.g. computed on Spark."""
    import json

    import pyarrow.parquet as pq

    from .._atomic import atomic_path
    from ..scandir import DOCUMENTS

    plan = plan_clean(scan, config)
    table = decisions_table(plan, columns=None if columns is None else columns(plan))
    c = plan.config
    meta = {"clean_config": {"remove_boilerplate": c.remove_boilerplate,
                             "remove_duplicates": c.remove_duplicates, "min_share": c.min_share,
                             "spans": c.spans, "templates": c.templates, "max_cut": c.max_cut,
                             "mostly_template": c.mostly_template}}
    table = table.replace_schema_metadata({"repetend": json.dumps(meta)})
    with atomic_path(scan.root / DOCUMENTS) as tmp:
        pq.write_table(table, tmp)
    return table


def read_decisions(scan: ScanDir) -> tuple[pa.Table, dict] | None:
    """The scan's ``documents.parquet`` and the clean policy it was made with;
    None when the scan has none, or one that does not match its token store
    (another row count or other ids: an interrupted rerun)."""
    import json

    from ..scandir import DOCUMENTS

    t = scan.table(DOCUMENTS)
    if t is None:
        return None
    if scan.store is not None and (t.num_rows != scan.store.n_docs
                                   or t.column("doc_id").to_pylist() != scan.store.doc_ids):
        return None
    meta = (t.schema.metadata or {}).get(b"repetend")
    return t, (json.loads(meta).get("clean_config", {}) if meta else {})
