"""The phrases API: :class:`PhraseConfig` in, :class:`PhraseResult` out.

:func:`find_phrases` validates the corpus and the parameters, runs one engine
(``bloomspan``, ``suffix``, or ``auto`` — see :mod:`repetend.phrases.auto`),
puts the phrases in the canonical order (Ψ = length·df descending, then
longer first, then lexicographic on token ids, so that both engines give
bit-identical tables), and computes the coverage figures of seed 000, part 6.

Output tables (``PhraseResult.write``):

``phrases``      phrase_id, tokens (list<string>), text, df, occurrences, length, psi, example_doc_id
``documents``    doc_index, doc_id, url, host, n_tokens, covered_tokens, boilerplate_share,
                 frequent_tokens, frequent_share
``hosts``        host, documents, tokens, covered_tokens, covered_share, frequent_tokens,
                 frequent_share   (only when urls are known)
``occurrences``  phrase_id, doc_index, doc_id, start, end   (token positions within the document)
``spans``        doc_index, doc_id, start, end, phrase_id   (merged frequent spans, see below)

Two coverage measures. ``covered``/``boilerplate_share`` is the seed's: the
tokens inside an occurrence of a reported (maximal) phrase. ``frequent`` is
the tokens inside *any* phrase of ≥ L tokens with df ≥ σ, maximal or not
(:mod:`repetend.phrases.frequent_spans`): it also counts a shared block
where it stands without the context that made a longer phrase maximal, so
it is the answer to "how much of the corpus is template", the basis of the
drop candidates, and what ``repetend clean`` removes by default.
``summary.json`` parameters, engine, coverage, distribution, index eaters, drop candidates, timings
"""

from __future__ import annotations

import contextlib
import json
import resource
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from .._atomic import write_json, write_jsonl, write_parquet
from .._memory import MemoryBudget, format_size, parse_size, rss_now
from ..errors import InputError, ParameterError
from . import _coverage_kernels as CK
from ._corpus_check import checked_offsets
from ._raw import RawPhrases
from .coverage import covered_per_document, share_distribution
from .frequent_spans import FrequentSpans, frequent_spans

__all__ = ["PhraseConfig", "PhraseResult", "find_phrases", "canonical_order", "read_result"]

Engine = Literal["auto", "bloomspan", "suffix"]
ENGINES = ("auto", "bloomspan", "suffix")
TABLES = ("phrases", "documents", "hosts", "occurrences", "spans")


@dataclass(slots=True)
class PhraseConfig:
    """Parameters of boilerplate mining (seed 000, parts 2 and 6).

    Attributes
    ----------
    min_docs : int
        σ: a phrase is frequent when it occurs in at least this many documents.
    min_len : int
        L: report maximal frequent phrases of at least this many tokens.
    engine : {"auto", "bloomspan", "suffix"}
        Mining engine; all give the same phrases.
    seed_len, filter_bytes : int or None
        ``bloomspan`` only: seed length and counting-filter size (None: its default).
    near_full_share : float
        Documents whose boilerplate share is at least this are drop candidates.
    top_k : int
        How many index eaters (phrases by Ψ) the summary lists.
    max_drop_candidates : int
        Cap on the drop candidates listed in the summary (all are counted).
    histogram_bins : int
        Bins of the per-document share histogram over [0, 1].
    templates : bool
        Also find templates with variable parts (:mod:`repetend.phrases.templates`);
        an extra layer that leaves the exact phrases as they are (needs σ ≥ 2).
    max_gap : int
        Templates: the longest variable part (slot) between fixed parts, in tokens.
    template_min_span : int or None
        Templates: the shortest template, in tokens (median occurrence span,
        slots included); None: L.  Lower it for short signatures such as
        «Posted by ▢ on ▢» (6 tokens).
    template_parts : bool
        Templates may have fixed parts shorter than ``min_len`` (the default;
        :class:`~repetend.phrases.templates.TemplateConfig` ``short_parts``).
        False only chains the exact phrases: about a third of the mining time
        instead of 2-4 times it on natural text (``docs/templates.md``), for less coverage.
    template_prune : bool
        Templates: leave chains of covered runs too short to hold a template
        out of the layer's gapped sequence
        (:class:`~repetend.phrases.templates.TemplateConfig` ``prune``): 13-22 %
        cheaper on natural text, a few joins lost; off by default.
    memory_limit : int, str or None
        Mine out of core (``bloomspan`` in shards over the memory-mapped store,
        seeds spilled to disk) keeping private memory under this many bytes
        (``"8G"`` works too); None mines in memory.
    """

    min_docs: int = 20
    min_len: int = 10
    engine: Engine = "auto"
    seed_len: int | None = None
    filter_bytes: int | None = None
    near_full_share: float = 0.8
    top_k: int = 20
    max_drop_candidates: int = 1000
    histogram_bins: int = 20
    templates: bool = True
    max_gap: int = 4
    template_parts: bool = True
    template_min_span: int | None = None
    template_prune: bool = False
    memory_limit: int | str | None = None

    def validate(self) -> "PhraseConfig":
        """Raise :class:`~repetend.errors.ParameterError` on a value out of its domain."""
        def _int(name: str, lo: int) -> None:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ParameterError(f"{name} must be an integer, got {v!r}")
            if v < lo:
                raise ParameterError(f"{name} must be >= {lo}, got {v}")

        _int("min_docs", 1)
        _int("max_gap", 0)
        if self.template_min_span is not None:
            _int("template_min_span", 1)
        _int("min_len", 1)
        _int("top_k", 0)
        _int("max_drop_candidates", 0)
        _int("histogram_bins", 1)
        if self.engine not in ENGINES:
            raise ParameterError(f"engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        for name in ("seed_len", "filter_bytes"):
            if getattr(self, name) is not None:
                _int(name, 1)
        if not (0.0 < float(self.near_full_share) <= 1.0):
            raise ParameterError(
                f"near_full_share must be in (0, 1], got {self.near_full_share}")
        for name in ("templates", "template_parts", "template_prune"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ParameterError(f"{name} must be True or False, got {getattr(self, name)!r}")
        return self


@dataclass
class PhraseResult:
    """Maximal frequent phrases with their coverage; see the module docstring
    for the columns.  ``raw`` holds the phrases in canonical order (phrase i
    of ``raw`` is ``phrase_id`` i)."""

    phrases: pa.Table
    documents: pa.Table
    hosts: pa.Table | None
    occurrences: pa.Table
    summary: dict
    config: PhraseConfig
    raw: RawPhrases | None = field(default=None, repr=False)
    n_tokens: int = 0
    spans: pa.Table | None = None
    templates: Any = None   # TemplateResult, when templates were looked for

    @property
    def n_phrases(self) -> int:
        return self.phrases.num_rows

    def table(self, name: str) -> pa.Table | None:
        if name not in TABLES:
            raise ParameterError(f"no table {name!r}; tables: {', '.join(TABLES)}")
        return getattr(self, name)

    def to_pandas(self, table: str = "phrases"):
        """One table as a pandas DataFrame (``phrases`` by default)."""
        t = self.table(table)
        if t is None:
            raise ParameterError(f"table {table!r} is empty: the corpus has no urls")
        return t.to_pandas()

    def coverage_mask(self) -> npt.NDArray[np.bool_]:
        """Boolean mask over all token positions (needs ``raw``)."""
        from .coverage import coverage_mask

        if self.raw is None:
            raise ParameterError("coverage_mask needs the raw phrases (a result read "
                                 "from disk has only the tables)")
        return coverage_mask(self.raw, self.n_tokens)

    def write(self, out: str | Path, format: Literal["parquet", "jsonl"] = "parquet") -> Path:
        """Write every table and ``summary.json`` into directory *out*, each file
        atomically (an interrupted run leaves whole files only), templates
        included, in *format*; the other format's tables are removed."""
        if format not in ("parquet", "jsonl"):
            raise ParameterError(f"format must be parquet or jsonl, got {format!r}")
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise InputError("output path exists and is not a directory", path=str(out))
        out.mkdir(parents=True, exist_ok=True)
        for name in TABLES:
            # a table left by an earlier run — of the other format, or one this
            # result has not (hosts) — would be read back with this one
            t = getattr(self, name)
            for fmt in ("parquet", "jsonl"):
                if t is None or fmt != format:
                    (out / f"{name}.{fmt}").unlink(missing_ok=True)
            if t is None:
                continue
            if format == "parquet":
                write_parquet(out / f"{name}.parquet", t)
            else:
                write_jsonl(out / f"{name}.jsonl", t)
        if self.templates is not None:
            self.templates.write(out, format)
        elif "templates" not in self.summary:
            # no layer this time (not asked, or skipped under the memory limit): a
            # previous run's templates left here would reach the report and `clean`
            # (a result read back has the summary's "templates" and keeps them)
            for name in ("templates.parquet", "template_occurrences.parquet",
                         "templates.jsonl", "template_occurrences.jsonl",
                         "templates_summary.json"):
                (out / name).unlink(missing_ok=True)
        write_json(out / "summary.json", self.summary)
        return out

    def to_parquet(self, out: str | Path) -> Path:
        """Same as ``write(out, "parquet")``."""
        return self.write(out, "parquet")

    @classmethod
    def read(cls, path: str | Path) -> "PhraseResult":
        """Read a result directory written by :meth:`write` (Parquet or JSONL)."""
        return read_result(path)


def read_result(path: str | Path) -> PhraseResult:
    """Read a result directory written by :meth:`PhraseResult.write`."""
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    path = Path(path)
    summary_file = path / "summary.json"
    if not summary_file.is_file():
        raise InputError("not a phrases result (no summary.json)", path=str(path))
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    tables: dict[str, pa.Table | None] = {}
    for name in TABLES:
        if (path / f"{name}.parquet").is_file():
            tables[name] = pq.read_table(path / f"{name}.parquet")
        elif (path / f"{name}.jsonl").is_file():
            f = path / f"{name}.jsonl"
            tables[name] = pj.read_json(f) if f.stat().st_size else pa.table({})
        else:
            tables[name] = None
    params = summary.get("parameters", {})
    known = {k: v for k, v in params.items() if k in PhraseConfig.__slots__}
    return PhraseResult(phrases=tables["phrases"], documents=tables["documents"],
                        hosts=tables["hosts"], occurrences=tables["occurrences"],
                        summary=summary, config=PhraseConfig(**known),
                        n_tokens=int(summary.get("tokens", 0)), spans=tables["spans"])


# -- corpus ----------------------------------------------------------------------

@dataclass
class _Corpus:
    tokens: np.ndarray
    doc_offsets: np.ndarray
    vocab: Sequence[str] | None
    doc_ids: list[str]
    urls: list[str | None] | None
    hosts: list[str | None] | None
    df: np.ndarray | None
    store: Any


def _as_corpus(corpus) -> _Corpus:
    from ..corpus.store import TokenStore

    if isinstance(corpus, (str, Path)):
        corpus = TokenStore.open(corpus)
    if isinstance(corpus, TokenStore):
        tokens, offsets = corpus.tokens, np.asarray(corpus.doc_offsets, np.int64)
        has_urls = corpus.n_docs > 0 and corpus.has_urls
        c = _Corpus(tokens=tokens, doc_offsets=offsets, vocab=corpus.vocab,
                    doc_ids=corpus.doc_ids,
                    urls=corpus.docs.column("url").to_pylist() if has_urls else None,
                    hosts=corpus.docs.column("host").to_pylist() if has_urls else None,
                    df=corpus.df, store=corpus)
    elif isinstance(corpus, (tuple, list)) and len(corpus) in (2, 3):
        tokens, offsets = np.asarray(corpus[0]), np.asarray(corpus[1])
        vocab = corpus[2] if len(corpus) == 3 else None
        c = _Corpus(tokens=tokens, doc_offsets=offsets, vocab=vocab,
                    doc_ids=[str(i) for i in range(max(offsets.size - 1, 0))], urls=None,
                    hosts=None, df=None, store=None)
    else:
        raise InputError("find_phrases takes a TokenStore, a store path, or "
                         f"(tokens, doc_offsets[, vocab]); got {type(corpus).__name__}")
    c.doc_offsets = checked_offsets(np.asarray(c.tokens), c.doc_offsets, c.vocab,
                                    id_limit=2**31 - 1, allow_no_tokens=False)
    return c


# -- engines ---------------------------------------------------------------------

def _run_engine(name: str, c: _Corpus, cfg: PhraseConfig) -> RawPhrases:
    if cfg.memory_limit is not None:
        from .outofcore import mine_bloomspan_ooc

        vocab_size = len(c.vocab) if c.vocab is not None else int(np.max(c.tokens)) + 1
        kwargs = {"token_df": c.df} if c.df is not None and len(c.df) == vocab_size else {}
        # c.tokens as it is: a memory-mapped store is read in shards, never copied
        return mine_bloomspan_ooc(c.tokens, c.doc_offsets, cfg.min_docs, cfg.min_len,
                                  memory_limit=cfg.memory_limit, seed_len=cfg.seed_len,
                                  filter_bytes=cfg.filter_bytes, vocab_size=vocab_size, **kwargs)
    tokens = np.ascontiguousarray(c.tokens, dtype=np.int32)
    if name == "suffix":
        from .suffix import mine_suffix

        return mine_suffix(tokens, c.doc_offsets, cfg.min_docs, cfg.min_len, token_df=c.df)
    from .bloomspan import mine_bloomspan

    vocab_size = len(c.vocab) if c.vocab is not None else int(tokens.max()) + 1
    kwargs = {}
    if c.df is not None and len(c.df) == vocab_size:
        kwargs["token_df"] = c.df  # the store already counted it
    return mine_bloomspan(tokens, c.doc_offsets, cfg.min_docs, cfg.min_len,
                          seed_len=cfg.seed_len, filter_bytes=cfg.filter_bytes,
                          vocab_size=vocab_size, **kwargs)


def canonical_order(raw: RawPhrases, tokens: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Permutation putting phrases in canonical order: Ψ = length·df descending,
    then longer first, then lexicographic on the token ids."""
    lengths = np.asarray(raw.lengths, np.int64)
    psi = lengths * np.asarray(raw.df, np.int64)
    order = np.lexsort((-lengths, -psi))
    if order.size < 2:
        return order.astype(np.int64)
    tokens = np.asarray(tokens)
    ps, ls = psi[order], lengths[order]
    tie = (ps[1:] == ps[:-1]) & (ls[1:] == ls[:-1])
    if not tie.any():
        return order.astype(np.int64)
    starts = np.asarray(raw.occ_starts)[np.asarray(raw.occ_offsets)[:-1]]
    # runs of equal (psi, length): sort each by token ids
    bounds = np.flatnonzero(np.concatenate(([True], ~tie, [True])))
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b - a < 2:
            continue
        idx = order[a:b]
        ln = int(ls[a])
        rows = np.stack([np.asarray(tokens[int(starts[i]):int(starts[i]) + ln], np.int64)
                         for i in idx])
        order[a:b] = idx[np.lexsort(rows.T[::-1])]
    return order.astype(np.int64)


def _reorder(raw: RawPhrases, order: np.ndarray) -> RawPhrases:
    counts = np.diff(raw.occ_offsets)[order]
    offsets = np.zeros(order.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    if order.size:
        # gather the occurrence blocks in the new order
        src_start = np.asarray(raw.occ_offsets, np.int64)[order]
        idx = np.arange(offsets[-1], dtype=np.int64) + np.repeat(src_start - offsets[:-1], counts)
        starts = np.asarray(raw.occ_starts, np.int64)[idx]
    else:
        starts = np.zeros(0, np.int64)
    return RawPhrases(lengths=np.asarray(raw.lengths, np.int64)[order],
                      df=np.asarray(raw.df, np.int64)[order], occ_offsets=offsets,
                      occ_starts=starts, stats=raw.stats)


# -- tables ----------------------------------------------------------------------

def _surface_texts(c: _Corpus, first_doc: np.ndarray, first_local: np.ndarray,
                   lengths: np.ndarray, token_lists: list[list[str]]) -> list[str]:
    texts = [" ".join(t) for t in token_lists]
    store = c.store
    if store is None or len(texts) == 0:
        return texts
    by_doc: dict[int, list[int]] = {}
    for i, d in enumerate(first_doc.tolist()):
        by_doc.setdefault(d, []).append(i)
    for d, items in by_doc.items():
        try:
            spans = store.token_spans(d)
            text = store.text(d)
        except (NotImplementedError, InputError, AttributeError):
            return texts  # the store cannot map tokens back: joined tokens it is
        for i in items:
            s = int(first_local[i])
            e = s + int(lengths[i])
            texts[i] = text[int(spans[s, 0]):int(spans[e - 1, 1])]
    return texts


def phrase_tables(tokens_col, texts: list, lengths: np.ndarray, df: np.ndarray,
                  counts: np.ndarray, first_doc: np.ndarray, phrase_of: np.ndarray,
                  occ_doc: np.ndarray, occ_local: np.ndarray, doc_ids):
    """The ``phrases`` and ``occurrences`` tables (local and Spark results):
    ``tokens_col`` a list<string> column, ``doc_ids`` an Arrow string array;
    occurrences by phrase, with document-local token starts."""
    import pyarrow as pa

    phrases = pa.table({
        "phrase_id": pa.array(np.arange(lengths.shape[0], dtype=np.int64)),
        "tokens": tokens_col,
        "text": pa.array(texts, pa.string()),
        "df": pa.array(df),
        "occurrences": pa.array(counts),
        "length": pa.array(lengths),
        "psi": pa.array(lengths * df),
        "example_doc_id": doc_ids.take(pa.array(first_doc)),
    })
    occurrences = pa.table({
        "phrase_id": pa.array(phrase_of),
        "doc_index": pa.array(occ_doc),
        "doc_id": doc_ids.take(pa.array(occ_doc)),
        "start": pa.array(occ_local),
        "end": pa.array(occ_local + np.repeat(lengths, counts)),
    })
    return phrases, occurrences


def _build_tables(c: _Corpus, raw: RawPhrases, cfg: PhraseConfig, fs: FrequentSpans):
    n_docs = c.doc_offsets.size - 1
    P = raw.n_phrases
    lengths = np.asarray(raw.lengths, np.int64)
    df = np.asarray(raw.df, np.int64)
    counts = np.diff(raw.occ_offsets).astype(np.int64)
    starts = np.asarray(raw.occ_starts, np.int64)
    occ_doc = (np.searchsorted(c.doc_offsets, starts, side="right") - 1).astype(np.int64)
    occ_local = starts - c.doc_offsets[occ_doc]
    phrase_of = np.repeat(np.arange(P, dtype=np.int64), counts)
    first = np.asarray(raw.occ_offsets[:-1], np.int64)
    first_doc = occ_doc[first] if P else np.zeros(0, np.int64)
    first_local = occ_local[first] if P else np.zeros(0, np.int64)

    tok_offsets, tok_ids = CK.phrase_token_ids(np.ascontiguousarray(c.tokens, np.int32),
                                               np.asarray(raw.occ_offsets, np.int64),
                                               starts, lengths)
    if c.vocab is not None:
        vocab_arr = pa.array(list(c.vocab), pa.string())
        values = vocab_arr.take(pa.array(tok_ids))
    else:
        values = pa.array(tok_ids.astype(str).tolist() if tok_ids.size else [], pa.string())
    tokens_col = pa.ListArray.from_arrays(pa.array(tok_offsets.astype(np.int32)), values)
    token_lists = tokens_col.to_pylist()
    texts = _surface_texts(c, first_doc, first_local, lengths, token_lists)
    doc_ids = pa.array(c.doc_ids, pa.string())

    phrases, occurrences = phrase_tables(tokens_col, texts, lengths, df, counts, first_doc,
                                         phrase_of, occ_doc, occ_local, doc_ids)

    n_tok = np.diff(c.doc_offsets).astype(np.int64)
    covered = covered_per_document(raw, c.doc_offsets)
    share = np.divide(covered, n_tok, out=np.zeros(n_docs, np.float64), where=n_tok > 0)
    fshare = np.divide(fs.covered, n_tok, out=np.zeros(n_docs, np.float64), where=n_tok > 0)
    span_doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(fs.run_offsets))
    spans = pa.table({
        "doc_index": pa.array(span_doc),
        "doc_id": doc_ids.take(pa.array(span_doc)),
        "start": pa.array(fs.starts - c.doc_offsets[span_doc]),
        "end": pa.array(fs.ends - c.doc_offsets[span_doc]),
        "phrase_id": pa.array(fs.phrase),
    })
    documents = pa.table({
        "doc_index": pa.array(np.arange(n_docs, dtype=np.int64)),
        "doc_id": doc_ids,
        "url": pa.array(c.urls if c.urls is not None else [None] * n_docs, pa.string()),
        "host": pa.array(c.hosts if c.hosts is not None else [None] * n_docs, pa.string()),
        "n_tokens": pa.array(n_tok),
        "covered_tokens": pa.array(covered),
        "boilerplate_share": pa.array(share),
        "frequent_tokens": pa.array(fs.covered),
        "frequent_share": pa.array(fshare),
    })
    hosts = hosts_table(documents) if c.hosts is not None else None
    return phrases, documents, hosts, occurrences, spans, covered, share, fshare, texts


def hosts_table(documents: pa.Table) -> pa.Table:
    """Per-host figures from the documents table (documents, tokens, covered and
    frequent tokens and shares), most covered first."""
    g = documents.group_by("host").aggregate([
        ("doc_index", "count"), ("n_tokens", "sum"), ("covered_tokens", "sum"),
        ("frequent_tokens", "sum")])
    tok = g.column("n_tokens_sum").to_numpy()
    cov = g.column("covered_tokens_sum").to_numpy()
    fcov = g.column("frequent_tokens_sum").to_numpy()

    def share(x):
        return pa.array(np.divide(x, tok, out=np.zeros(tok.size, np.float64), where=tok > 0))

    return pa.table({
        "host": g.column("host"),
        "documents": g.column("doc_index_count").cast(pa.int64()),
        "tokens": pa.array(tok.astype(np.int64)),
        "covered_tokens": pa.array(cov.astype(np.int64)),
        "covered_share": share(cov),
        "frequent_tokens": pa.array(fcov.astype(np.int64)),
        "frequent_share": share(fcov),
    }).sort_by([("covered_tokens", "descending"), ("host", "ascending")])


def _peak_memory_bytes() -> int:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)


def phrase_summary(cfg: PhraseConfig, engine: str, reason: dict, n_tok: np.ndarray,
                   covered: np.ndarray, share: np.ndarray, frequent_total: int,
                   fshare: np.ndarray, *, n_spans: int, n_occurrences: int, psi: np.ndarray,
                   df: np.ndarray, lengths: np.ndarray, occurrences: np.ndarray, texts: list,
                   doc_ids, timings: dict, engine_stats: dict) -> dict:
    """``summary.json`` of a phrase run (local or Spark): coverage, the index eaters
    (the first ``top_k`` phrases, already in Ψ order), drop candidates by the
    frequent-span share.  Per-document arrays are indexed by document; ``doc_ids[d]``
    is a string."""
    n_docs = int(n_tok.shape[0])
    n_tokens = int(n_tok.sum())
    nonempty = n_tok > 0
    cov_total = int(covered.sum())
    drop = np.flatnonzero(nonempty & (fshare >= cfg.near_full_share))
    drop = drop[np.argsort(-fshare[drop], kind="stable")]
    k = min(cfg.top_k, int(psi.shape[0]))
    return {
        "parameters": asdict(cfg),
        "engine": engine,
        "engine_choice": reason,
        "documents": n_docs,
        "empty_documents": int(np.count_nonzero(~nonempty)),
        "tokens": n_tokens,
        "covered_tokens": cov_total,
        "covered_share": cov_total / n_tokens if n_tokens else 0.0,
        "frequent_tokens": int(frequent_total),
        "frequent_share": int(frequent_total) / n_tokens if n_tokens else 0.0,
        "frequent_spans": int(n_spans),
        "phrases": int(psi.shape[0]),
        "occurrences": int(n_occurrences),
        "document_share": share_distribution(share[nonempty], bins=cfg.histogram_bins),
        "index_eaters": [
            {"phrase_id": i, "psi": int(psi[i]), "df": int(df[i]), "length": int(lengths[i]),
             "occurrences": int(occurrences[i]), "text": texts[i]} for i in range(k)],
        "drop_candidates": {
            "threshold": cfg.near_full_share,
            "count": int(drop.size),
            "measure": "frequent_share",
            "documents": [{"doc_index": int(d), "doc_id": doc_ids[d],
                           "share": float(fshare[d]), "boilerplate_share": float(share[d]),
                           "n_tokens": int(n_tok[d])}
                          for d in drop[:cfg.max_drop_candidates]],
        },
        "timings": timings,
        "peak_memory_bytes": _peak_memory_bytes(),
        "engine_stats": engine_stats,
    }


# Private bytes per corpus token the template layer needs at its peak, measured
# (``docs/templates.md``, "Memory"): the default layer 31 B on the Debian
# documentation store, 38 B on the Zipfian web corpus; merge-only 5.9 B and
# 16.8 B, growing with the share of tokens inside frequent phrases (10.8 % and
# 23.3 %).  Rounded up: an estimate decides, the run is measured.
_TEMPLATE_BYTES_PER_TOKEN = 40
_MERGE_BYTES_PER_TOKEN = 2
_MERGE_BYTES_PER_COVERED = 72


def _template_plan(cfg: PhraseConfig, n_tokens: int, frequent_tokens: int) -> dict:
    """Which template layer fits the memory limit: the one asked for when there
    is no limit or it fits; else merge-only (the exact phrases chained, no second
    mining run) when that fits; else none.  The layer runs in memory, so under
    ``memory_limit`` it must not be started blind on a corpus it cannot hold."""
    asked = "default" if cfg.template_parts else "merge-only"
    plan: dict[str, Any] = {"asked": asked, "mode": asked}
    if cfg.memory_limit is None:
        return plan
    limit = int(parse_size(cfg.memory_limit))
    available = max(0, limit - rss_now()["anon"])
    need = {"default": _TEMPLATE_BYTES_PER_TOKEN * n_tokens,
            "merge-only": _MERGE_BYTES_PER_TOKEN * n_tokens
            + _MERGE_BYTES_PER_COVERED * int(frequent_tokens)}
    plan.update(memory_limit=limit, available_bytes=available,
                estimate_bytes={k: int(v) for k, v in need.items()})
    for mode in (("default", "merge-only") if asked == "default" else ("merge-only",)):
        if need[mode] <= available:
            plan["mode"] = mode
            if mode != asked:
                plan["reason"] = (f"the default layer needs about {format_size(need['default'])}, "
                                  f"over the {format_size(available)} left under the memory "
                                  f"limit: merge-only (fixed parts of >= L tokens only)")
            return plan
    plan["mode"] = "skipped"
    plan["reason"] = (f"the template layer runs in memory and needs about "
                      f"{format_size(need['merge-only'])} even merge-only, over the "
                      f"{format_size(available)} left under the memory limit; raise "
                      f"--memory-limit, or pass --no-templates to silence this")
    return plan


def run_templates(corpus, raw: RawPhrases, cfg: PhraseConfig, n_tokens: int,
                  frequent_tokens: int, spans: FrequentSpans | None = None
                  ) -> tuple[Any, dict]:
    """The template layer over exact phrases *raw* of *corpus*, as *cfg* asks
    and its memory limit allows (:func:`_template_plan`).

    Returns ``(TemplateResult or None, plan)``; the plan is also
    ``result.summary["memory_plan"]``, and None comes with ``plan["mode"] ==
    "skipped"`` and its reason.  Used by :func:`find_phrases` and by ``scan``
    after phrases mined on Spark (the raw positions are global token positions
    of the local store)."""
    from .templates import TemplateConfig, find_templates

    plan = _template_plan(cfg, n_tokens, frequent_tokens)
    if plan["mode"] == "skipped":
        return None, plan
    tcfg = TemplateConfig(max_gap=cfg.max_gap, min_span=cfg.template_min_span,
                          prune=bool(cfg.template_prune),
                          short_parts=plan["mode"] == "default")
    budget = MemoryBudget(cfg.memory_limit) if cfg.memory_limit is not None else None
    with budget if budget is not None else contextlib.nullcontext():
        templates = find_templates(corpus, raw, cfg.min_docs, cfg.min_len, tcfg, spans=spans)
    if budget is not None:
        plan["peak_anon_bytes"] = budget.report()["peak_anon"]
    templates.summary["memory_plan"] = plan
    return templates, plan


def find_phrases(corpus, config: PhraseConfig | None = None, **overrides: Any) -> PhraseResult:
    """Find the maximal contiguous frequent phrases of a corpus and their coverage.

    Parameters
    ----------
    corpus : TokenStore, path of a token store, or (tokens, doc_offsets[, vocab])
        The tokenized corpus.  With a store, phrase texts are the original
        surface form (case, punctuation) of one occurrence; with bare arrays,
        the token strings (or ids) joined by spaces.
    config : PhraseConfig, optional
        Parameters; keyword arguments override its fields
        (``find_phrases(store, min_docs=5, min_len=8)``).

    Returns
    -------
    PhraseResult
        Phrases in canonical order (Ψ = length·df descending, then longer,
        then lexicographic on token ids), documents with their boilerplate
        share, hosts, occurrences, and a summary.

    Raises
    ------
    ParameterError
        A parameter is out of its domain (σ < 1, L < 1, unknown engine, …).
    InputError
        The corpus is empty or its arrays are inconsistent.

    Notes
    -----
    Problem and definitions: seed 000, part 2 (MCFP); engines: part 3 step 3
    (suffix array, FHK) and part 4 (BloomSpan); coverage and "index eaters":
    part 6.

    Examples
    --------
    >>> import numpy as np
    >>> toks = np.array([1, 2, 3, 9, 1, 2, 3, 8, 7, 1, 2, 3], dtype=np.int32)
    >>> res = find_phrases((toks, np.array([0, 4, 9, 12])), min_docs=3, min_len=2)
    >>> res.phrases.column("tokens").to_pylist()
    [['1', '2', '3']]
    """
    unknown = sorted(set(overrides) - set(PhraseConfig.__slots__))
    if unknown:
        raise ParameterError(f"unknown parameter(s) {', '.join(unknown)}; PhraseConfig has "
                             f"{', '.join(PhraseConfig.__slots__)}")
    cfg = PhraseConfig(**{**(asdict(config) if config is not None else {}), **overrides})
    cfg.validate()
    t_start = time.perf_counter()
    timings: dict[str, float] = {}
    c = _as_corpus(corpus)
    n_tokens = int(c.tokens.shape[0])
    engine = cfg.engine
    reason: dict = {"rule": "requested"}
    if cfg.memory_limit is not None:
        engine, reason = "bloomspan", {"rule": f"out of core, memory limit {cfg.memory_limit}"}
    elif engine == "auto":
        from .auto import choose_engine

        t0 = time.perf_counter()
        engine, reason = choose_engine(c.tokens, c.doc_offsets, cfg.min_docs, cfg.min_len,
                                       df=c.df)
        timings["auto"] = time.perf_counter() - t0
    elif engine == "bloomspan":
        from .auto import bloomspan_available

        if not bloomspan_available():
            raise ParameterError("engine 'bloomspan' is not available in this installation; "
                                 "use engine='suffix' or 'auto'")
    t0 = time.perf_counter()
    raw = _run_engine(engine, c, cfg)
    timings["mine"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    raw = _reorder(raw, canonical_order(raw, c.tokens))
    timings["order"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    fs = frequent_spans(c.tokens, c.doc_offsets, raw, cfg.min_len)
    timings["frequent_spans"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    (phrases, documents, hosts, occurrences, spans, covered, share, fshare,
     texts) = _build_tables(c, raw, cfg, fs)
    timings["tables"] = time.perf_counter() - t0
    timings["total"] = time.perf_counter() - t_start

    templates = None
    template_plan = None
    if cfg.templates and cfg.min_docs >= 2 and n_tokens:
        t0 = time.perf_counter()
        templates, template_plan = run_templates(
            c.store if c.store is not None else (c.tokens, c.doc_offsets), raw, cfg, n_tokens,
            fs.total, spans=fs)
        timings["templates"] = time.perf_counter() - t0
        timings["total"] = time.perf_counter() - t_start

    summary = phrase_summary(
        cfg, engine, reason, np.diff(c.doc_offsets), covered, share, fs.total, fshare,
        n_spans=int(fs.starts.shape[0]), n_occurrences=int(raw.occ_starts.shape[0]),
        psi=phrases.column("psi").to_numpy(), df=phrases.column("df").to_numpy(),
        lengths=phrases.column("length").to_numpy(),
        occurrences=phrases.column("occurrences").to_numpy(), texts=texts, doc_ids=c.doc_ids,
        timings=timings, engine_stats=raw.stats)
    if hosts is not None:
        summary["hosts"] = hosts.num_rows
    if templates is not None:
        summary["templates"] = templates.summary
    elif template_plan is not None:
        summary["templates_skipped"] = template_plan
    return PhraseResult(phrases=phrases, documents=documents, hosts=hosts,
                        occurrences=occurrences, summary=summary, config=cfg, raw=raw,
                        n_tokens=n_tokens, spans=spans, templates=templates)
