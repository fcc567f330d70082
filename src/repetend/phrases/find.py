"""Finding phrases: :func:`find_phrases`, from a corpus and a :class:`PhraseConfig`
to a :class:`~repetend.phrases.result.PhraseResult`.

:func:`find_phrases` validates the corpus and the parameters, runs one engine
(``bloomspan``, ``suffix``, or ``auto`` — see :mod:`repetend.phrases.auto`),
puts the phrases in the canonical order (:func:`canonical_order`), builds the
tables (:mod:`repetend.phrases.result`) and, unless ``templates`` is None,
runs the template layer as far as the memory limit allows
(:func:`run_templates`).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from .._memory import MemoryBudget, format_size, parse_size, rss_now, substage
from ..errors import InputError, ParameterError
from . import _coverage_kernels as CK
from ._corpus_check import checked_offsets
from ._raw import RawPhrases
from .config import PhraseConfig
from .coverage import covered_per_document
from .frequent_spans import FrequentSpans, frequent_spans
from .groups import DocGroups, doc_groups
from .result import PhraseResult, hosts_table, phrase_summary, phrase_tables

__all__ = ["add_char_offsets", "canonical_order", "find_phrases", "run_templates"]


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


def add_char_offsets(store, occurrences: pa.Table, spans: pa.Table | None, templates=None):
    """``char_start``/``char_end`` beside the token positions of the occurrences,
    the spans and the template occurrences (in place for the templates)."""
    from ..corpus.char_offsets import with_char_columns

    if templates is not None:
        templates.occurrences = with_char_columns(templates.occurrences, store)
    return with_char_columns(occurrences, store), with_char_columns(spans, store)


# -- engines ---------------------------------------------------------------------

def _run_engine(name: str, c: _Corpus, cfg: PhraseConfig,
                groups: DocGroups | None = None) -> RawPhrases:
    if cfg.memory_limit is not None:
        from .outofcore import mine_bloomspan_ooc

        vocab_size = len(c.vocab) if c.vocab is not None else int(np.max(c.tokens)) + 1
        kwargs: dict[str, Any] = (
            {"token_df": c.df} if c.df is not None and len(c.df) == vocab_size else {})
        if groups is not None:
            kwargs["groups"] = groups
        # c.tokens as it is: a memory-mapped store is read in shards, never copied
        return mine_bloomspan_ooc(c.tokens, c.doc_offsets, cfg.min_docs, cfg.min_len,
                                  memory_limit=cfg.memory_limit, seed_len=cfg.seed_len,
                                  filter_bytes=cfg.filter_bytes, vocab_size=vocab_size, **kwargs)
    tokens = np.ascontiguousarray(c.tokens, dtype=np.int32)
    if name == "suffix":
        from .suffix import mine_suffix

        return mine_suffix(tokens, c.doc_offsets, cfg.min_docs, cfg.min_len, token_df=c.df,
                           **({} if groups is None else {"groups": groups}))
    from .bloomspan import mine_bloomspan

    vocab_size = len(c.vocab) if c.vocab is not None else int(tokens.max()) + 1
    kwargs = {} if groups is None else {"groups": groups}
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
                   lengths: np.ndarray, tokens_col: pa.ListArray) -> list[str]:
    # each phrase's tokens joined by spaces, in Arrow: no Python string per token
    # (a phrase can be a whole huge document: one word repeated 20 M times)
    texts = pc.binary_join(tokens_col.cast(pa.list_(pa.large_string())),
                           pa.scalar(" ", pa.large_string())).to_pylist()
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
    texts = _surface_texts(c, first_doc, first_local, lengths, tokens_col)
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
    asked = "default" if cfg.templates.short_parts else "merge-only"
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


def _require_min_docs(cfg: PhraseConfig) -> None:
    if cfg.min_docs is None:
        raise ParameterError("min_docs must be an integer to mine phrases, got None "
                             "(None means chosen from the corpus: the scan job chooses σ)")


def run_templates(corpus, raw: RawPhrases, cfg: PhraseConfig, n_tokens: int,
                  frequent_tokens: int, spans: FrequentSpans | None = None,
                  groups: npt.ArrayLike | DocGroups | None = None) -> tuple[Any, dict]:
    """The template layer over exact phrases *raw* of *corpus*, as
    ``cfg.templates`` asks and ``cfg.memory_limit`` allows (:func:`_template_plan`).

    The layer runs with ``cfg.templates``, its ``short_parts`` set by the plan
    (False when only merge-only fits).

    With ``cfg.df_over == "clusters"`` the layer counts df over *groups*
    (required then, as for :func:`find_phrases`).

    Returns ``(TemplateResult or None, plan)``; the plan is also
    ``result.summary["memory_plan"]``, and None comes with ``plan["mode"] ==
    "skipped"`` and its reason.  Used by :func:`find_phrases` and by ``scan``
    after phrases mined on Spark (the raw positions are global token positions
    of the local store).

    Raises
    ------
    ParameterError
        ``cfg.templates`` is None (no template layer asked for) or
        ``cfg.min_docs`` is None.
    """
    from .templates import find_templates

    if cfg.templates is None:
        raise ParameterError("run_templates needs cfg.templates (a TemplateConfig), got None")
    _require_min_docs(cfg)
    if (cfg.df_over == "clusters") != (groups is not None):
        raise ParameterError("run_templates: groups are given exactly when "
                             "df_over='clusters'")
    plan = _template_plan(cfg, n_tokens, frequent_tokens)
    if plan["mode"] == "skipped":
        return None, plan
    tcfg = replace(cfg.templates, prune=bool(cfg.templates.prune),   # np.bool_ is no JSON
                   short_parts=plan["mode"] == "default")
    budget = MemoryBudget(cfg.memory_limit) if cfg.memory_limit is not None else None
    with budget if budget is not None else contextlib.nullcontext(), substage("templates"):
        templates = find_templates(corpus, raw, cfg.min_docs, cfg.min_len, tcfg, spans=spans,
                                   **({} if groups is None else {"groups": groups}))
    if budget is not None:
        plan["peak_anon_bytes"] = budget.report()["peak_anon"]
    templates.summary["memory_plan"] = plan
    return templates, plan


def find_phrases(corpus, config: PhraseConfig | None = None, *,
                 groups: npt.ArrayLike | None = None, **overrides: Any) -> PhraseResult:
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
    groups : int array, one label per document, optional
        With ``df_over="clusters"`` (required there, refused otherwise): df
        counts distinct labels — near-duplicate clusters, a document in none
        with a label of its own (:func:`~repetend.phrases.groups.groups_from_clusters`
        makes them from cluster ids) — and σ applies to that df.  Occurrences,
        coverage and per-document shares stay on every document.

    Returns
    -------
    PhraseResult
        Phrases in canonical order (Ψ = length·df descending, then longer,
        then lexicographic on token ids), documents with their boilerplate
        share, hosts, occurrences, and a summary.

    Raises
    ------
    ParameterError
        A parameter is out of its domain (σ < 1, L < 1, unknown engine, …), or
        ``min_docs`` is None (the scan job chooses σ from the corpus; here it
        must be given).
    InputError
        The corpus is empty or its arrays are inconsistent.

    Notes
    -----
    Problem and definitions: the BloomSpan paper, §2 (MCFP); engines: its §3
    (the suffix-array method of Fischer, Heun & Kramer 2006) and §4
    (BloomSpan); coverage and "index eaters": §6 (docs/references.md).

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
    cfg = replace(config, **overrides) if config is not None else PhraseConfig(**overrides)
    cfg.validate()
    _require_min_docs(cfg)
    if cfg.df_over == "clusters" and groups is None:
        raise ParameterError("df_over='clusters' needs groups: one cluster label per document")
    if cfg.df_over != "clusters" and groups is not None:
        raise ParameterError("groups given, but df_over is 'documents': pass df_over='clusters' "
                             "to count df over them")
    t_start = time.perf_counter()
    timings: dict[str, float] = {}
    c = _as_corpus(corpus)
    grp = doc_groups(groups, c.doc_offsets.size - 1) if groups is not None else None
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
    raw = _run_engine(engine, c, cfg, grp)
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
    if cfg.templates is not None and cfg.min_docs >= 2 and n_tokens:
        t0 = time.perf_counter()
        templates, template_plan = run_templates(
            c.store if c.store is not None else (c.tokens, c.doc_offsets), raw, cfg, n_tokens,
            fs.total, spans=fs, groups=grp)
        timings["templates"] = time.perf_counter() - t0
        timings["total"] = time.perf_counter() - t_start

    if c.store is not None:   # the original text is known: character offsets too
        t0 = time.perf_counter()
        occurrences, spans = add_char_offsets(c.store, occurrences, spans, templates)
        timings["char_offsets"] = time.perf_counter() - t0
        timings["total"] = time.perf_counter() - t_start

    summary = phrase_summary(
        cfg, engine, reason, np.diff(c.doc_offsets), covered, share, fs.total, fshare,
        n_spans=int(fs.starts.shape[0]), n_occurrences=int(raw.occ_starts.shape[0]),
        psi=phrases.column("psi").to_numpy(), df=phrases.column("df").to_numpy(),
        lengths=phrases.column("length").to_numpy(),
        occurrences=phrases.column("occurrences").to_numpy(), texts=texts, doc_ids=c.doc_ids,
        timings=timings, engine_stats=raw.stats)
    if grp is not None:
        summary["parameters"]["groups"] = grp.n_groups
    if hosts is not None:
        summary["hosts"] = hosts.num_rows
    if templates is not None:
        summary["templates"] = templates.summary
    elif template_plan is not None:
        summary["templates_skipped"] = template_plan
    return PhraseResult(phrases=phrases, documents=documents, hosts=hosts,
                        occurrences=occurrences, summary=summary, config=cfg, raw=raw,
                        n_tokens=n_tokens, spans=spans, templates=templates)
