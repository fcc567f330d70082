"""The persistent near-duplicate index: :class:`NearDupIndex` build / open / add / query / merge.

The shingling article (docs/references.md): "when a new document arrives, its
signature is compared with the existing ones" — deduplication of incoming data, plagiarism (which fragments
of a new text come from where) and spam (a base of known template shingles).
SPEC §3 "Index and query".

The index keeps, per segment, the shingle sets (exact verification, no false
positive), the MinHash signatures, sorted band tables, document metadata and
the original texts (shared fragments with offsets in both texts); see
:mod:`.segments` and :mod:`.format`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Literal, Sequence

import numpy as np
import pyarrow as pa

from .._arrays import sorted_unique
from .._atomic import write_json, write_parquet
from ..corpus.store import TokenStore
from ..errors import DeadlineExceeded, InputError, ParameterError
from ..limits import MAX_DOCS, MAX_LIST
from ..neardup import NearDupConfig
from ..neardup.lsh import lsh_threshold, s_curve
from ..neardup.pairs import Pairs
from ..neardup.shingles import shingle_sets
from . import build as B
from .align import KnownPhrases, Tokens, load_phrases, shared_fragments, tokens_of
from .format import (FORMAT_VERSION, KIND, is_index, new_segment_name, read_manifest, recover,
                     replacing, write_manifest, writer_lock)
from .segments import Segment, SegmentData, open_segment, write_segment

__all__ = ["AddResult", "NearDupIndex", "QueryResult"]

SERIAL_BELOW = 64  # queries of fewer documents run the kernels on the calling thread only


def _deadline(timeout: float | None, what: str):
    """A check that raises :class:`DeadlineExceeded` once *timeout* seconds from now
    have passed (a check that never does for None)."""
    if timeout is None:
        return lambda: None
    t = float(timeout)
    if not t > 0:
        raise ParameterError(f"timeout must be > 0 seconds, got {timeout}")
    end = time.monotonic() + t

    def check() -> None:
        if time.monotonic() > end:
            raise DeadlineExceeded(f"{what} took longer than its {t:g} s budget")
    return check


@contextlib.contextmanager
def _serial_if_small(n: int):
    """Run numba's parallel kernels on one thread for small calls.

    A parallel launch waits for every worker thread to be scheduled; on a busy
    machine that adds tens of milliseconds to a sub-millisecond query (measured:
    p95 124 ms with 2 threads, 0.9 ms with 1).  ``numba.set_num_threads`` is
    per calling thread, so concurrent service threads do not affect each other.
    """
    if n >= SERIAL_BELOW:
        yield
        return
    import numba

    old = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(old)

_PAIR_COLUMNS = ("a_index", "b_index", "a", "b", "jaccard", "containment_ab", "containment_ba",
                 "a_is_new")


@dataclass(slots=True)
class _Snapshot:
    manifest: dict
    segments: tuple[Segment, ...]
    phrases: KnownPhrases | None
    stamp: tuple | None = None   # (inode, mtime, size) of the manifest file read

    @property
    def n_docs(self) -> int:
        return sum(s.data.n_docs for s in self.segments)

    def locate(self, g: int) -> tuple[Segment, int]:
        bases = [s.base for s in self.segments]
        i = int(np.searchsorted(bases, g, side="right") - 1)
        return self.segments[i], int(g - self.segments[i].base)

    def column(self, g: np.ndarray, name: str) -> list:
        g = np.asarray(g, dtype=np.int64)
        out: list = [None] * g.size
        if g.size == 0:
            return out
        bases = np.array([s.base for s in self.segments], dtype=np.int64)
        si = np.searchsorted(bases, g, side="right") - 1
        for s in np.unique(si):
            m = np.flatnonzero(si == s)
            vals = self.segments[s].data.docs.column(name).take(pa.array(g[m] - bases[s])).to_pylist()
            for i, v in zip(m.tolist(), vals):
                out[i] = v
        return out


def _pairs_table(p: Pairs, ids_a: list, ids_b: list, a_is_new: np.ndarray) -> pa.Table:
    return pa.table({
        "a_index": pa.array(p.a, pa.int64()), "b_index": pa.array(p.b, pa.int64()),
        "a": pa.array(ids_a, pa.string()), "b": pa.array(ids_b, pa.string()),
        "jaccard": pa.array(p.jaccard, pa.float64()),
        "containment_ab": pa.array(p.containment_ab, pa.float64()),
        "containment_ba": pa.array(p.containment_ba, pa.float64()),
        "a_is_new": pa.array(np.asarray(a_is_new, bool), pa.bool_()),
    })


@dataclass
class AddResult:
    """What an ``add`` (or a ``build``) found: pairs involving the new documents.

    ``pairs`` (J >= threshold) and ``containment`` (max containment >=
    the containment threshold, J < threshold) share one schema: ``a_index <
    b_index`` global document indices, ``a``/``b`` ids, ``jaccard``,
    ``containment_ab`` = |A∩B|/|A|, ``containment_ba``, and ``a_is_new``
    (``b`` is always a new document; ``a`` is new for pairs inside the batch).
    """

    pairs: pa.Table
    containment: pa.Table
    summary: dict

    def drop_candidates(self) -> pa.Table:
        """New documents that near-duplicate an earlier document (an indexed one or
        one earlier in the batch): ``doc_index``, ``doc_id``, ``duplicate_of_index``,
        ``duplicate_of_id`` (the earliest such document), ``jaccard`` — what a
        crawler drops from the batch, keeping the first copy."""
        p = self.pairs
        if p.num_rows == 0:
            return pa.table({"doc_index": pa.array([], pa.int64()), "doc_id": pa.array([], pa.string()),
                             "duplicate_of_index": pa.array([], pa.int64()),
                             "duplicate_of_id": pa.array([], pa.string()),
                             "jaccard": pa.array([], pa.float64())})
        a = p.column("a_index").to_numpy()
        b = p.column("b_index").to_numpy()
        order = np.lexsort((a, b))           # by new document, then earliest partner
        first = order[np.concatenate(([True], b[order][1:] != b[order][:-1]))]
        return pa.table({"doc_index": pa.array(b[first]), "doc_id": p.column("b").take(first),
                         "duplicate_of_index": pa.array(a[first]),
                         "duplicate_of_id": p.column("a").take(first),
                         "jaccard": p.column("jaccard").take(first)})

    def to_pandas(self, what: Literal["pairs", "containment", "drop"] = "pairs"):
        if what == "drop":
            return self.drop_candidates().to_pandas()
        return getattr(self, what).to_pandas()

    def write(self, directory: str | Path) -> Path:
        """``pairs.parquet``, ``containment.parquet``, ``drop.parquet``
        (:meth:`drop_candidates`) and ``summary.json``, each atomically."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        write_parquet(d / "drop.parquet", self.drop_candidates())
        write_parquet(d / "pairs.parquet", self.pairs)
        write_parquet(d / "containment.parquet", self.containment)
        write_json(d / "summary.json", self.summary)
        return d


@dataclass
class QueryResult:
    """One answer per query document (JSON-ready dicts; schema in ``docs/persistent-index.md``)."""

    documents: list[dict]
    summary: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"documents": self.documents, "summary": self.summary}

    def matches_table(self) -> pa.Table:
        """All matches of all query documents as one flat table."""
        rows = []
        for qi, d in enumerate(self.documents):
            for rel in ("near_duplicates", "contained_in", "contains", "sharing"):
                for m in d.get(rel, []):
                    rows.append({"query": qi, "query_id": d.get("id"), "relation": rel,
                                 "doc_index": m["doc_index"], "doc_id": m["doc_id"],
                                 "jaccard": m["jaccard"],
                                 "containment_query_in_doc": m["containment_query_in_doc"],
                                 "containment_doc_in_query": m["containment_doc_in_query"],
                                 "fragments": len(m.get("fragments", []))})
        if not rows:
            return pa.table({"query": pa.array([], pa.int64()), "query_id": pa.array([], pa.string()),
                             "relation": pa.array([], pa.string()),
                             "doc_index": pa.array([], pa.int64()), "doc_id": pa.array([], pa.string()),
                             "jaccard": pa.array([], pa.float64()),
                             "containment_query_in_doc": pa.array([], pa.float64()),
                             "containment_doc_in_query": pa.array([], pa.float64()),
                             "fragments": pa.array([], pa.int64())})
        return pa.Table.from_pylist(rows)

    def to_pandas(self):
        return self.matches_table().to_pandas()


def _check_config(cfg: NearDupConfig) -> NearDupConfig:
    cfg = cfg.validate()
    if cfg.method != "minhash":
        raise ParameterError(f"an index uses method 'minhash' (signatures and band tables), "
                             f"not {cfg.method!r}")
    return cfg


def _config_from(manifest: dict) -> NearDupConfig:
    known = {k: v for k, v in manifest["config"].items() if k in NearDupConfig.__slots__}
    return NearDupConfig(**known)


class NearDupIndex:
    """A persistent, append-only near-duplicate index on disk.

    Use :meth:`build` to create one from a corpus, :meth:`open` to open it,
    :meth:`add` to append a batch (reports the new near-duplicates),
    :meth:`query` to check documents without adding them and :meth:`merge`
    to compact the segments into one.

    An instance answers queries from the snapshot it holds (the manifest it
    read and the segments it mapped); :meth:`add` and :meth:`merge` replace
    that snapshot in one assignment, so a query running in another thread
    sees either the old or the new index, never a mix.
    """

    def __init__(self, path: Path, snapshot: _Snapshot):
        self.path = Path(path)
        self._snap = snapshot
        m = snapshot.manifest
        self.config = _config_from(m)
        self.unit: str = m["unit"]
        self.lang: str | None = m.get("lang")
        self.bands = int(m["bands"])
        self.rows = int(m["rows"])
        self.last_add: AddResult | None = None
        post = m.get("postings")
        self.postings_max_df: int | None = int(post["max_df"]) if post else None

    # -- opening -----------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path) -> "NearDupIndex":
        """Open an index directory (clear :class:`InputError` for another format version)."""
        path = Path(path)
        idx = cls(path, _load_snapshot(path))
        want = idx._snap.manifest.get("hashing_check")
        if want is not None:
            got = B.hashing_check(idx.config, idx.unit, idx.lang, idx.bands, idx.rows)
            if got != want:
                raise InputError(
                    f"this repetend hashes text differently from the one that built the index "
                    f"(check {got} != {want}): old and new documents would not match; rebuild "
                    f"the index with 'repetend index build'", path=str(path))
        return idx

    @classmethod
    def create(cls, out: str | Path, config: NearDupConfig | None = None, *,
               unit: str = "word", lang: str | None = None, phrases: str | Path | None = None,
               postings: bool = False, postings_max_df: int = 1000, overwrite: bool = False,
               **overrides) -> "NearDupIndex":
        """An empty index at *out* with these settings (``postings``: also keep a
        shingle → document table, see :meth:`query`).

        The index is written in a temporary sibling of *out* and swapped in at the
        end (:func:`.format.replacing`): with ``overwrite`` a kill at any moment
        leaves the old index or the new one."""
        out, init = cls._prepare(out, config, unit=unit, lang=lang, phrases=phrases,
                                 postings=postings, postings_max_df=postings_max_df,
                                 overwrite=overwrite, **overrides)
        with replacing(out) as tmp:
            init(tmp)
        return cls.open(out)

    @classmethod
    def _prepare(cls, out, config, *, unit, lang, phrases, postings, postings_max_df,
                 overwrite, **overrides):
        """Check the settings and the target; return the target and a function that
        writes the empty index into a directory and opens it there."""
        if not 1 <= int(postings_max_df) <= MAX_DOCS:
            raise ParameterError(f"postings_max_df must be in 1..{MAX_DOCS}, got {postings_max_df}")
        cfg = _check_config(replace(config or NearDupConfig(), **overrides))
        out = Path(out)
        recover(out)  # a build killed between its two renames: the old index is back
        if out.exists():
            if is_index(out) and overwrite:
                pass  # replaced by the swap at the end of the build
            elif out.is_dir() and not any(out.iterdir()):
                pass
            else:
                raise ParameterError(f"{out} already exists; add to it with 'repetend index add', "
                                     f"or choose another path" + (" (--overwrite replaces only an index)"
                                                                  if overwrite else ""))
        known = load_phrases(phrases) if phrases is not None else None
        bands, rows = cfg.banding()
        manifest = {
            "format_version": FORMAT_VERSION, "kind": KIND, "generation": 0,
            "config": asdict(cfg), "unit": unit, "lang": lang, "bands": bands, "rows": rows,
            "lsh_threshold": lsh_threshold(bands, rows),
            "p_at_threshold": s_curve(cfg.threshold, bands, rows),
            "min_shingles_effective": B.effective_min_shingles(cfg),
            "hashing_check": B.hashing_check(cfg, unit, lang, bands, rows),
            "segments": [], "n_docs": 0, "phrases": None,
            "postings": {"max_df": int(postings_max_df)} if postings else None,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "build_id": secrets.token_hex(8),
        }

        def init(where: Path) -> "NearDupIndex":
            (where / "segments").mkdir(exist_ok=True)
            m = dict(manifest)
            if known is not None:
                name = "phrases-000000"
                known.save(where / name)
                m["phrases"] = name
                m["n_phrases"] = known.n
            with writer_lock(where):
                write_manifest(where, m)
            return cls.open(where)

        return out, init

    @classmethod
    def build(cls, data, out: str | Path, config: NearDupConfig | None = None, *,
              ids: Sequence[str] | None = None, urls: Sequence[str | None] | None = None,
              unit: str = "word", lang: str | None = None, phrases: str | Path | None = None,
              postings: bool = False, postings_max_df: int = 1000, overwrite: bool = False,
              segment_docs: int | None = None, **overrides) -> "NearDupIndex":
        """Create an index at *out* from *data* (a :class:`TokenStore` or a list of
        texts); the near-duplicates found inside *data* are in ``index.last_add``.

        Parameters
        ----------
        data : TokenStore or sequence of str
        out : path of the index directory (must not exist, or be empty)
        config : NearDupConfig — method must be ``minhash``; ``overrides`` replace fields
        phrases : a phrases result directory (``SCAN/phrases``) whose phrases the
            index keeps as known boilerplate
        postings : keep shingle postings (shingle hash → documents, without shingles
            in more than ``postings_max_df`` documents of a segment), so that queries
            also find documents that share fragments without being near-duplicates
        segment_docs : add *data* in slices of this many documents, one segment each
            (bounds the memory of the build; the pairs found are the same — they are
            ``last_add`` of all slices together)

        Notes
        -----
        The shingling article (signatures compared with the existing ones); Broder (1997);
        Rajaraman & Ullman, MMDS ch. 3 (banding).
        """
        if isinstance(data, TokenStore):
            unit, lang = data.unit, data.lang
        if segment_docs is not None and not 1 <= int(segment_docs) <= MAX_DOCS:
            raise ParameterError(f"segment_docs must be in 1..{MAX_DOCS}, got {segment_docs}")
        out, init = cls._prepare(out, config, unit=unit, lang=lang, phrases=phrases,
                                 postings=postings, postings_max_df=postings_max_df,
                                 overwrite=overwrite, **overrides)
        with replacing(out) as tmp:  # built aside, swapped in at the end
            idx = init(tmp)
            if segment_docs is None:
                last = idx.add(data, ids=ids, urls=urls)
            else:
                store = idx._as_store(data, ids, urls)
                last = _combine([idx.add(_slice_store(store, a, min(a + int(segment_docs),
                                                                    store.n_docs)))
                                 for a in range(0, store.n_docs, int(segment_docs))])
            del idx  # its snapshot maps the temporary path
        idx = cls.open(out)
        idx.last_add = last
        return idx

    # -- shape -------------------------------------------------------------------
    @property
    def n_docs(self) -> int:
        return self._snap.n_docs

    @property
    def n_segments(self) -> int:
        return len(self._snap.segments)

    @property
    def generation(self) -> int:
        return int(self._snap.manifest["generation"])

    def __len__(self) -> int:
        return self.n_docs

    def stats(self) -> dict:
        s = self._snap
        m = s.manifest
        return {"path": str(self.path), "format_version": m["format_version"],
                "generation": m["generation"], "documents": s.n_docs,
                "segments": [{"name": g.name, "documents": g.data.n_docs} for g in s.segments],
                "unit": self.unit, "config": m["config"], "bands": self.bands, "rows": self.rows,
                "lsh_threshold": m.get("lsh_threshold"), "p_at_threshold": m.get("p_at_threshold"),
                "phrases": s.phrases.n if s.phrases is not None else 0,
                "postings": m.get("postings")}

    def doc_ids(self, indices) -> list[str]:
        return self._snap.column(np.asarray(indices, np.int64), "doc_id")

    def text(self, index: int) -> str:
        """Original text of global document *index*."""
        if not 0 <= int(index) < self.n_docs:
            raise ParameterError(f"document index {index} out of range 0..{self.n_docs - 1}")
        seg, local = self._snap.locate(int(index))
        return seg.data.text_of(local)

    def reload(self) -> "NearDupIndex":
        """Re-read the manifest (see documents added by another process); segments
        already mapped are reused."""
        snap = _load_snapshot(self.path, self._snap)
        # never step back: a reload that read the manifest before a concurrent add in
        # this process committed must not replace the add's newer snapshot
        rebuilt = _build_of(snap.manifest) != _build_of(self._snap.manifest)
        if rebuilt or int(snap.manifest["generation"]) >= self.generation:
            self._snap = snap
        return self

    def refresh(self) -> bool:
        """Reload if the manifest file changed since this snapshot was read (one
        ``stat``); returns whether it did.  The service calls it before each query."""
        if _manifest_stamp(self.path) == self._snap.stamp:
            return False
        self.reload()
        return True

    # -- writing -----------------------------------------------------------------
    def _as_store(self, data, ids, urls) -> TokenStore:
        if isinstance(data, TokenStore):
            if data.unit != self.unit:
                raise ParameterError(f"the index tokenizes by {self.unit!r}, the store by {data.unit!r}")
            return data
        if isinstance(data, str):
            raise ParameterError("add() takes a TokenStore or a list of texts, not one string")
        texts = list(data)
        bad = [i for i, t in enumerate(texts) if not isinstance(t, str)]
        if bad:
            raise ParameterError(f"document {bad[0]}: text must be a string, got "
                                 f"{type(texts[bad[0]]).__name__}")
        if ids is not None and len(ids) != len(texts):
            raise ParameterError(f"{len(ids)} ids for {len(texts)} texts")
        if urls is not None and len(urls) != len(texts):
            raise ParameterError(f"{len(urls)} urls for {len(texts)} texts")
        if ids is None:
            base = self.n_docs
            ids = [str(base + i) for i in range(len(texts))]
        return TokenStore.from_texts(texts, ids, urls, unit=self.unit, lang=self.lang)

    def add(self, data, *, ids: Sequence[str] | None = None,
            urls: Sequence[str | None] | None = None, timeout: float | None = None) -> AddResult:
        """Append *data* as a new segment; report its near-duplicates.

        Parameters
        ----------
        data : TokenStore or sequence of str
            The new documents (tokenized with the index's unit).
        ids, urls : optional, for a list of texts (ids default to their global index).
        timeout : seconds; past them the call stops between its stages (tokenizing,
            lookup, verification, the batch's own pairs) with
            :class:`~repetend.errors.DeadlineExceeded` and adds nothing.  Once
            the segment is being written it is finished.

        Returns
        -------
        AddResult
            Pairs of (old, new) and (new, new) documents with J >= threshold, and
            containment pairs, verified exactly on the shingle sets.

        Notes
        -----
        The segment is written completely before the manifest is replaced; a
        crash in between leaves the index at its previous state.  When no LSH
        bucket reaches ``max_bucket`` the pairs equal those of one
        :func:`~repetend.neardup.find.find_near_duplicates` run over the whole
        corpus (module :mod:`repetend.index.build`).
        """
        check = _deadline(timeout, "adding to the index")
        store = self._as_store(data, ids, urls)
        check()
        with _serial_if_small(store.n_docs):
            return self._add(store, check)

    def _add(self, store: TokenStore, check=lambda: None) -> AddResult:
        t0 = time.perf_counter()
        cfg = self.config
        with writer_lock(self.path):
            snap = _load_snapshot(self.path, self._snap)  # another process may have added meanwhile
            base = snap.n_docs
            batch = B.prepare_batch(store, cfg, self.bands, self.rows)
            check()
            q, g, lstats = B.lookup(snap.segments, batch, check=check)
            check()
            cross = B.verify_cross(snap.segments, batch, q, g)
            check()
            inner, istats = B.batch_pairs(batch, cfg, self.bands, self.rows)
            check()
            new_ids = store.doc_ids
            # cross pairs: a = old (smaller global index), b = new
            cp = Pairs(cross.b, cross.a + base, cross.jaccard, cross.containment_ba,
                       cross.containment_ab)
            ip = Pairs(inner.a + base, inner.b + base, inner.jaccard, inner.containment_ab,
                       inner.containment_ba)
            allp = _concat(cp, ip)
            is_new = np.concatenate([np.zeros(len(cp), bool), np.ones(len(ip), bool)])
            t, c = float(cfg.threshold), float(cfg.containment)
            cmax = np.maximum(allp.containment_ab, allp.containment_ba)
            sel_p = allp.jaccard >= t
            sel_c = (allp.jaccard < t) & (cmax >= c)

            def ids_of(idx):
                idx = np.asarray(idx, np.int64)
                out = [None] * idx.size
                old = np.flatnonzero(idx < base)
                for i, v in zip(old.tolist(), snap.column(idx[old], "doc_id")):
                    out[i] = v
                for i in np.flatnonzero(idx >= base).tolist():
                    out[i] = new_ids[int(idx[i]) - base]
                return out

            def table(sel):
                p = allp.select(sel)
                order = np.lexsort((p.b, p.a))
                p = Pairs(p.a[order], p.b[order], p.jaccard[order], p.containment_ab[order],
                          p.containment_ba[order])
                return _pairs_table(p, ids_of(p.a), ids_of(p.b), is_new[sel][order])

            pairs_t, cont_t = table(sel_p), table(sel_c)
            check()   # the last moment to stop: from here on the segment is written
            manifest = dict(snap.manifest)
            new_seg = None
            if batch.n:
                docs = pa.table({"doc_id": store.docs.column("doc_id"),
                                 "url": store.docs.column("url"),
                                 "host": store.docs.column("host"),
                                 "n_tokens": pa.array(np.diff(store.doc_offsets).astype(np.int64))})
                to = np.asarray(store.text_offsets, np.int64)
                text = np.asarray(store.text_blob[int(to[0]):int(to[-1])], np.uint8)
                data_ = B.segment_data(batch, docs, text, to - to[0], self.postings_max_df)
                gen = int(manifest["generation"]) + 1
                name = new_segment_name(gen)
                write_segment(self.path / "segments" / name, data_)
                manifest["segments"] = list(manifest["segments"]) + [{"name": name, "n_docs": batch.n}]
                manifest["generation"] = gen
                manifest["n_docs"] = base + batch.n
                manifest["updated"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                write_manifest(self.path, manifest)
                new_seg = name
                _collect_garbage(self.path, manifest)
            self._snap = _load_snapshot(self.path, snap)
        summary = {
            "documents_added": batch.n, "documents_before": base,
            "documents_after": base + batch.n, "segment": new_seg,
            "candidates_old_new": int(q.size), "candidates_new_new": int(istats["candidates"]),
            "pairs": pairs_t.num_rows,
            "pairs_old_new": int(np.count_nonzero(sel_p & ~is_new)),
            "pairs_new_new": int(np.count_nonzero(sel_p & is_new)),
            "containment_pairs": cont_t.num_rows,
            "new_documents_with_old_duplicate": int(np.unique(allp.b[sel_p & ~is_new]).size),
            "drop_candidates": int(np.unique(allp.b[sel_p]).size),
            "threshold": float(cfg.threshold), "containment_threshold": float(cfg.containment),
            "lookup": lstats, "batch_lsh": istats,
            "seconds": round(time.perf_counter() - t0, 4),
        }
        return AddResult(pairs_t, cont_t, summary)

    def set_phrases(self, phrases: str | Path | None) -> int:
        """Replace the known boilerplate phrases (a phrases result directory, e.g. of a
        newer scan; ``None`` removes them).  Atomic like ``add``; returns their number."""
        known = load_phrases(phrases) if phrases is not None else None
        with writer_lock(self.path):
            snap = _load_snapshot(self.path, self._snap)
            manifest = dict(snap.manifest)
            gen = int(manifest["generation"]) + 1
            if known is not None:
                name = f"phrases-{gen:06d}"
                tmp = self.path / f".{name}.tmp"
                shutil.rmtree(tmp, ignore_errors=True)
                known.save(tmp)
                os.replace(tmp, self.path / name)
                manifest["phrases"], manifest["n_phrases"] = name, known.n
            else:
                manifest["phrases"], manifest["n_phrases"] = None, 0
            manifest["generation"] = gen
            write_manifest(self.path, manifest)
            _collect_garbage(self.path, manifest)
            self._snap = _load_snapshot(self.path, snap)
        return 0 if known is None else known.n

    def merge(self, last: int | None = None) -> dict:
        """Compact segments into one (document indices do not change).

        Parameters
        ----------
        last : int, optional
            Merge only the ``last`` newest segments (consecutive, so global
            document indices stay); default all.

        Reads those segments into memory, rebuilds the band tables (and postings)
        from the stored signatures and shingles, writes one segment, swaps the
        manifest, deletes the replaced segments.  Returns a small summary.
        """
        if last is not None and (isinstance(last, bool) or int(last) < 2):
            raise ParameterError(f"last must be >= 2, got {last}")
        t0 = time.perf_counter()
        with writer_lock(self.path):
            snap = _load_snapshot(self.path, self._snap)
            before = len(snap.segments)
            take = before if last is None else min(int(last), before)
            if take <= 1:
                self._snap = snap
                return {"segments_before": before, "segments_after": before, "seconds": 0.0}
            keep = list(snap.manifest["segments"][:before - take])
            segs = [s.data for s in snap.segments[before - take:]]
            offs = [np.asarray(segs[0].shingle_offsets)]
            toffs = [np.asarray(segs[0].text_offsets)]
            for d in segs[1:]:
                offs.append(np.asarray(d.shingle_offsets[1:]) + offs[-1][-1])
                toffs.append(np.asarray(d.text_offsets[1:]) + toffs[-1][-1])
            from ..neardup.shingles import ShingleSets

            sets = ShingleSets(np.concatenate([np.asarray(d.shingles) for d in segs]),
                               np.concatenate(offs), int(self.config.shingle))
            values = np.concatenate([np.asarray(d.signatures) for d in segs])
            docs = pa.concat_tables([d.docs for d in segs])
            n_tokens = docs.column("n_tokens").to_numpy()
            batch = B._batch_from(sets, values, n_tokens, self.config, self.bands, self.rows)
            text = np.concatenate([np.asarray(d.text) for d in segs])
            data_ = B.segment_data(batch, docs, text, np.concatenate(toffs), self.postings_max_df)
            manifest = dict(snap.manifest)
            gen = int(manifest["generation"]) + 1
            name = new_segment_name(gen)
            write_segment(self.path / "segments" / name, data_)
            manifest.update(segments=keep + [{"name": name, "n_docs": batch.n}], generation=gen,
                            updated=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            write_manifest(self.path, manifest)
            _collect_garbage(self.path, manifest)
            self._snap = _load_snapshot(self.path, snap)
        return {"segments_before": before, "segments_after": len(keep) + 1, "documents": batch.n,
                "seconds": round(time.perf_counter() - t0, 4)}

    # -- querying ------------------------------------------------------------------
    def query(self, texts: str | Sequence[str], *, ids: Sequence[str] | None = None,
              threshold: float | None = None, containment: float | None = None,
              fragments: bool = True, phrases: bool = True, limit: int = 20,
              min_shared: int = 3, timeout: float | None = None) -> QueryResult:
        """Check documents against the index without adding them.

        Parameters
        ----------
        texts : str or sequence of str
        threshold : resemblance threshold of ``near_duplicates`` (default: the
            index's; recall at it is the S-curve P(t) of the index's banding,
            reported in ``summary``)
        containment : threshold of the ``contained_in`` / ``contains`` lists
            (documents that hold the query / that the query holds, J below the
            threshold); among LSH candidates only
        fragments : compute shared fragments (aligned spans, character offsets in
            both texts) for every reported match
        phrases : report the known boilerplate phrases the text holds
        limit : at most this many matches per list and fragments per match
        min_shared : with postings (``build(..., postings=True)``), documents that share
            at least this many shingles with the query become candidates too: then
            ``contained_in`` / ``contains`` are exact (up to template shingles) and the
            ``sharing`` list holds the other documents that share text, most first
        timeout : seconds; past them the query stops at its next check (between
            segments of the lookup, between texts and between the matches whose
            fragments it aligns) with :class:`~repetend.errors.DeadlineExceeded`

        Returns
        -------
        QueryResult
        """
        if isinstance(texts, str):
            texts = [texts]
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise ParameterError(f"query document {i}: text must be a string, got {type(t).__name__}")
        t = float(self.config.threshold if threshold is None else threshold)
        c = float(self.config.containment if containment is None else containment)
        if not 0.0 < t <= 1.0:
            raise ParameterError(f"threshold must be in (0, 1], got {t}")
        if not 0.0 < c <= 1.0:
            raise ParameterError(f"containment must be in (0, 1], got {c}")
        if not 1 <= int(limit) <= MAX_LIST:
            raise ParameterError(f"limit must be in 1..{MAX_LIST}, got {limit}")
        if ids is not None and len(ids) != len(texts):
            raise ParameterError(f"{len(ids)} ids for {len(texts)} texts")
        if isinstance(min_shared, bool) or not 1 <= int(min_shared) <= MAX_DOCS:
            raise ParameterError(f"min_shared must be in 1..{MAX_DOCS}, got {min_shared}")
        check = _deadline(timeout, "the query")
        with _serial_if_small(len(texts)):
            return self._query(texts, ids, t, c, fragments, phrases, int(limit), int(min_shared),
                               check)

    def _query(self, texts, ids, t, c, fragments, phrases, limit, min_shared,
               check=lambda: None) -> QueryResult:
        t0 = time.perf_counter()
        snap = self._snap  # one snapshot for the whole call
        from ..corpus.tokenizer import tokenize_batch

        tb = tokenize_batch(texts, unit=self.unit, lang=self.lang)
        hashes = np.ascontiguousarray(tb.hashes, np.uint64)
        n_tok = np.diff(tb.doc_offsets).astype(np.int64)
        sets = shingle_sets(np.arange(hashes.size, dtype=np.int32), tb.doc_offsets, hashes,
                            int(self.config.shingle))
        batch = B.prepare_sets(sets, n_tok, self.config, self.bands, self.rows)
        check()
        q, g, lstats = B.lookup(snap.segments, batch, check=check)
        n_lsh = int(q.size)
        if self.postings_max_df is not None:
            q2, g2 = B.lookup_postings(snap.segments, batch, self.postings_max_df, min_shared,
                                       check=check)
            if q2.size:
                total = int(max(g.max() if g.size else 0, g2.max()) + 1)
                key = sorted_unique(np.concatenate([q * total + g, q2 * total + g2]))
                q, g = key // total, key % total
        check()
        p = B.verify_cross(snap.segments, batch, q, g)
        order = np.lexsort((p.b, -p.jaccard, p.a))
        p = p.select(order)
        cuts = np.searchsorted(p.a, np.arange(len(texts) + 1))
        docs_out = []
        for i, text in enumerate(texts):
            check()
            sl = slice(int(cuts[i]), int(cuts[i + 1]))
            qt = Tokens(text, hashes[tb.doc_offsets[i]:tb.doc_offsets[i + 1]])
            jac, cq, cd, gi = p.jaccard[sl], p.containment_ab[sl], p.containment_ba[sl], p.b[sl]
            shared = np.rint(cq * batch.sets.sizes[i]).astype(np.int64)
            rest = (jac < t) & (cq < c) & (cd < c)
            groups = {"near_duplicates": np.flatnonzero(jac >= t),
                      "contained_in": np.flatnonzero((jac < t) & (cq >= c)),
                      "contains": np.flatnonzero((jac < t) & (cd >= c) & (cq < c))}
            if self.postings_max_df is not None:
                idx_r = np.flatnonzero(rest & (shared >= min_shared))
                groups["sharing"] = idx_r[np.lexsort((gi[idx_r], -shared[idx_r]))]
            entry = {"id": ids[i] if ids is not None else None, "tokens": int(n_tok[i]),
                     "shingles": int(batch.sets.sizes[i]), "candidates": int(jac.size)}
            for rel, sel in groups.items():
                sel = sel[: int(limit)]
                gsel = gi[sel]
                dids = snap.column(gsel, "doc_id")
                urls = snap.column(gsel, "url")
                ms = []
                for j, s in enumerate(sel.tolist()):
                    m = {"doc_index": int(gi[s]), "doc_id": dids[j], "url": urls[j],
                         "jaccard": float(jac[s]), "containment_query_in_doc": float(cq[s]),
                         "containment_doc_in_query": float(cd[s]), "shared_shingles": int(shared[s])}
                    if fragments:
                        check()
                        seg, local = snap.locate(int(gi[s]))
                        other = tokens_of(seg.data.text_of(local), self.unit, self.lang)
                        m["fragments"] = shared_fragments(qt, other, int(self.config.shingle),
                                                          unit=self.unit, lang=self.lang,
                                                          limit=limit)
                    ms.append(m)
                entry[rel] = ms
            if phrases and snap.phrases is not None:
                found, share = snap.phrases.find(qt, self.unit, self.lang, limit=max(int(limit), 200))
                entry["phrases"] = found
                entry["boilerplate_share"] = share
            else:
                entry["phrases"] = []
                entry["boilerplate_share"] = None
            docs_out.append(entry)
        summary = {"documents": len(texts), "index_documents": snap.n_docs,
                   "generation": int(snap.manifest["generation"]), "threshold": t,
                   "containment_threshold": c, "recall_at_threshold": s_curve(t, self.bands, self.rows),
                   "candidates": int(q.size), "lsh_candidates": n_lsh, "lookup": lstats,
                   "postings": self.postings_max_df is not None,
                   "milliseconds": round((time.perf_counter() - t0) * 1000, 3)}
        return QueryResult(docs_out, summary)


def _slice_store(store: TokenStore, a: int, b: int) -> TokenStore:
    """Documents a..b-1 of *store* as a store of their own (views, no copy of the tokens)."""
    off = np.asarray(store.doc_offsets[a:b + 1], np.int64)
    toff = np.asarray(store.text_offsets[a:b + 1], np.int64)
    return TokenStore(tokens=store.tokens[int(off[0]):int(off[-1])], doc_offsets=off - off[0],
                      vocab=store.vocab, df=store.df, docs=store.docs.slice(a, b - a),
                      text_blob=store.text_blob[int(toff[0]):int(toff[-1])],
                      text_offsets=toff - toff[0], unit=store.unit, lang=store.lang)


def _combine(parts: list[AddResult]) -> AddResult:
    """One AddResult for consecutive adds (pairs of all of them; a_is_new means: inside
    the whole build)."""
    pairs = pa.concat_tables([p.pairs for p in parts])
    cont = pa.concat_tables([p.containment for p in parts])
    pairs = pairs.set_column(pairs.schema.get_field_index("a_is_new"), "a_is_new",
                             pa.array(np.ones(pairs.num_rows, bool)))
    cont = cont.set_column(cont.schema.get_field_index("a_is_new"), "a_is_new",
                           pa.array(np.ones(cont.num_rows, bool)))
    s = dict(parts[0].summary) if parts else {}
    if parts:
        n = sum(p.summary["documents_added"] for p in parts)
        s.update({"documents_added": n, "documents_after": parts[-1].summary["documents_after"],
                  "segment": [p.summary["segment"] for p in parts], "pairs": pairs.num_rows,
                  "pairs_old_new": 0, "pairs_new_new": pairs.num_rows,
                  "containment_pairs": cont.num_rows, "new_documents_with_old_duplicate": 0,
                  "candidates_old_new": 0,
                  "candidates_new_new": sum(p.summary["candidates_old_new"] + p.summary["candidates_new_new"]
                                            for p in parts),
                  "seconds": round(sum(p.summary["seconds"] for p in parts), 4),
                  "segments": len(parts)})
    return AddResult(pairs, cont, s)


def _concat(x: Pairs, y: Pairs) -> Pairs:
    return Pairs(np.concatenate([x.a, y.a]).astype(np.int64), np.concatenate([x.b, y.b]).astype(np.int64),
                 np.concatenate([x.jaccard, y.jaccard]),
                 np.concatenate([x.containment_ab, y.containment_ab]),
                 np.concatenate([x.containment_ba, y.containment_ba]))


def _manifest_stamp(path: Path):
    try:
        st = os.stat(path / "MANIFEST.json")
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _build_of(manifest: dict) -> tuple:
    """What tells two builds at one path apart (``build_id`` is absent in indexes
    written before it existed)."""
    return manifest.get("created"), manifest.get("build_id")


def _load_snapshot(path: Path, previous: _Snapshot | None = None, attempts: int = 5) -> _Snapshot:
    """Read the manifest and map its segments; segments (immutable) and phrase tables
    already mapped by *previous* are reused, not opened again."""
    last: Exception | None = None
    for _ in range(attempts):
        stamp = _manifest_stamp(path)
        if stamp is None:  # between a build's two renames: wait for it, or undo a killed one
            recover(path)
            stamp = _manifest_stamp(path)
        m = read_manifest(path)
        # segment names are random, phrase table names are not: reuse those of the
        # same build only (an overwrite build puts another index at this path)
        same = previous is not None and _build_of(previous.manifest) == _build_of(m)
        known = {s.name: s.data for s in previous.segments} if same else {}
        try:
            segs = []
            base = 0
            for s in m["segments"]:
                d: SegmentData | None = known.get(s["name"])
                if d is None:
                    d = open_segment(path / "segments" / s["name"], s["name"], s["n_docs"])
                segs.append(Segment(s["name"], path / "segments" / s["name"], d, base))
                base += d.n_docs
            if not m.get("phrases"):
                ph = None
            elif same and previous.manifest.get("phrases") == m["phrases"]:
                ph = previous.phrases
            else:
                ph = KnownPhrases.open(path / m["phrases"])
            return _Snapshot(m, tuple(segs), ph, stamp)
        except FileNotFoundError as exc:  # a merge removed a segment between our reads
            last = exc
            time.sleep(0.05)
    raise InputError(f"index segment missing: {last}", path=str(path))


def _collect_garbage(path: Path, manifest: dict) -> None:
    """Remove segment directories the manifest does not name (crash leftovers,
    segments replaced by a merge).  Called under the writer lock."""
    keep = {s["name"] for s in manifest["segments"]}
    segdir = path / "segments"
    for p in segdir.iterdir():
        if p.name not in keep:
            shutil.rmtree(p, ignore_errors=True)
    for p in path.iterdir():  # replaced phrase tables and leftovers of their writing
        if p.is_dir() and p.name.lstrip(".").startswith("phrases-") and p.name != manifest.get("phrases"):
            shutil.rmtree(p, ignore_errors=True)
