"""The template finder: the steps of :mod:`repetend.phrases.templates` in order."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

import numpy as np
import pyarrow as pa

from ..._arrays import sorted_unique
from ...errors import InputError, ParameterError
from .._raw import RawPhrases
from . import _kernels_index as KI
from . import _kernels_parts as KP
from . import _kernels_slots as KS
from .config import TemplateConfig
from .result import TEMPLATE_SCHEMA, OCCURRENCE_SCHEMA, TemplateResult
from .corpus import _Corpus, _as_corpus
from .parts import _number_mask, _part_runs, _given_runs
from .gapped_index import _gapped_index, _locate, _mine_chains
from .links import _kept_runs
from .patterns import _final_keys, _joins, _pattern_stats, _variant_evidence
from .nesting import _drop_redundant
from .variants import merge_variants
from .ends import extend_ends
from .slots import _slot_stats, _template_table, _templates


def _empty_result(cfg: TemplateConfig, summary: dict) -> TemplateResult:
    return TemplateResult(TEMPLATE_SCHEMA.empty_table(), OCCURRENCE_SCHEMA.empty_table(),
                          summary, cfg)


def find_templates(corpus, raw: RawPhrases | None, min_docs: int, min_len: int,
                   config: TemplateConfig | None = None, spans=None,
                   groups=None) -> TemplateResult:
    """Templates with variable parts (slots) over a corpus and its exact phrases.

    Parameters
    ----------
    corpus : TokenStore, path of a token store, or (tokens, doc_offsets[, vocab])
        The tokenized corpus the phrases were mined from.
    raw : RawPhrases or None
        The exact maximal frequent phrases (σ, L) with all their occurrences
        (``PhraseResult.raw``).  They are the parts with
        ``short_parts=False``; otherwise only the coverage comparison uses them
        (None: no comparison).
    min_docs : int
        σ (at least 2): a template occurs in at least this many documents.
    min_len : int
        L of the exact phrases: the default shortest template span.
    config : TemplateConfig, optional
        Gap, part length, masking and filters.
    spans : FrequentSpans, optional
        ``frequent_spans(tokens, doc_offsets, raw, min_len)`` when the caller has
        it (``find_phrases`` does): merge-only mode takes its runs instead of
        scanning the corpus again.
    groups : int array of one label per document, or DocGroups, optional
        Count df over groups of documents (near-duplicate clusters,
        :mod:`repetend.phrases.groups`), as the exact phrases *raw* were: the
        parts, the chains, the joins and each template's df count distinct
        groups; occurrences stay on every document.

    Returns
    -------
    TemplateResult
        Templates ordered by Ψ = span·df descending (then df, then parts), their
        occurrences and a summary with the coverage gained over the exact phrases.

    Raises
    ------
    ParameterError
        σ < 2, L < 1, a config value out of its domain, or ``short_parts=False``
        without ``raw``.
    InputError
        The corpus arrays are inconsistent.

    Notes
    -----
    The BloomSpan paper, §6: a template with a variable part falls apart into exact
    phrases; supporting almost-matching phrases is the next step.  Parts and
    chains are mined exactly with the suffix-array engine of its §3 (Fischer,
    Heun & Kramer 2006); see the module docstring for the steps.  Deterministic: the output
    is a function of the corpus and the parameters.

    Examples
    --------
    >>> import numpy as np
    >>> docs = [[50 + i, 1, 2, 3, 100 + i, 4, 5, 6, 150 + i] for i in range(4)]
    >>> toks = np.array(sum(docs, []), dtype=np.int32)
    >>> res = find_templates((toks, np.arange(0, 37, 9)), None, 3, 6,
    ...                      TemplateConfig(part_len=3))
    >>> res.table.column("parts").to_pylist()
    [['1 2 3', '▢', '4 5 6']]
    """

    cfg = TemplateConfig(**asdict(config)) if config is not None else TemplateConfig()
    cfg.validate()
    for name, v, lo in (("min_docs", min_docs, 2), ("min_len", min_len, 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ParameterError(f"templates: {name} must be an integer >= {lo}, got {v!r}")
    if not cfg.short_parts and raw is None:
        raise ParameterError("templates: short_parts=False chains the exact phrases: pass raw")
    min_docs, L = int(min_docs), int(min_len)
    cfg = cfg.resolved(L)            # slotted_min_span "auto" / 0 -> an integer or None
    part_len = int(cfg.part_len) if cfg.part_len is not None else min(L, 4)
    min_span = int(cfg.min_span) if cfg.min_span is not None else L
    clock = _Clock()
    c = _as_corpus(corpus)
    tokens, offsets = c.tokens, c.doc_offsets
    n_docs, n_tokens = offsets.size - 1, int(tokens.size)
    params = {**{k: v for k, v in asdict(cfg).items()
                 if k not in ("search_whole", "variant_evidence") or v},  # only when set
              "min_docs": min_docs, "min_len": L,
              "resolved": {"part_len": part_len, "min_span": min_span}}
    grp = None
    if groups is not None:
        from ..groups import DocGroups, doc_groups

        grp = groups if isinstance(groups, DocGroups) else doc_groups(groups, n_docs)
        params.update(df_over="clusters", groups=grp.n_groups)

    # 1. parts: the covered runs (every token inside a frequent phrase of ≥ L'
    #    tokens, numbers masked), and 2. the gapped sequence over them
    slot_id = -1
    anchor_tokens = tokens
    if cfg.short_parts:
        if cfg.mask_numbers and c.vocab is not None and len(c.vocab):
            is_num = _number_mask(c)
            if is_num.any():
                slot_id = len(c.vocab)
                anchor_tokens = KP.mask_tokens(tokens, is_num, np.int32(slot_id))
        vocab_size = (slot_id + 1) if slot_id >= 0 else (len(c.vocab) if c.vocab is not None
                                                           else None)
        runs, part_counts, parts_engine = _part_runs(anchor_tokens, offsets, min_docs, part_len,
                                                     cfg.engine, vocab_size, grp)
    else:
        if spans is not None and np.asarray(spans.run_offsets).size != n_docs + 1:
            raise InputError("templates: spans are not of this corpus "
                             f"({np.asarray(spans.run_offsets).size - 1} documents, not {n_docs})")
        runs, part_counts, parts_engine = _given_runs(anchor_tokens, offsets, raw, L, spans)
    clock.lap("parts")
    summary: dict[str, Any] = {"parameters": params, "documents": n_docs, "tokens": n_tokens,
                               "parts_engine": parts_engine, **part_counts}
    if runs is None:
        summary.update(_coverage_summary(c, raw, np.zeros(0, np.int64), np.zeros(0, np.int64)),
                       templates=0, template_occurrences=0, nested_dropped=0, composites_dropped=0,
                       covered_runs=0,
                       gapped_length=0,
                       **clock.total())
        return _empty_result(cfg, summary)
    run_offsets, run_starts, run_ends = runs

    base = (len(c.vocab) if c.vocab is not None else int(tokens.max(initial=-1)) + 1) + 1
    num_id = base - 1 if slot_id >= 0 else -1
    gap_id = base
    # pruning keeps every chain that could hold a template of the shortest span kept
    prune_span = min(min_span, int(cfg.slotted_min_span)) if cfg.slotted_min_span else min_span
    keep, link, link_counts = _kept_runs(run_offsets, run_starts, run_ends, cfg.max_gap,
                                         prune_span, cfg.prune)
    summary.update(link_counts)
    t, g_start, g_end, t_off = KI.gapped_corpus(
        anchor_tokens, offsets, run_offsets, run_starts, run_ends, keep, link,
        np.int32(gap_id), np.int32(gap_id + 1))
    # what the summary needs of the runs and of the gapped sequence, so that the
    # large intermediates can go as soon as they are used last (the masked copy of
    # the tokens is 4 B per token; nothing below reads it)
    n_runs, n_gapped = int(run_starts.size), int(t.size)
    del anchor_tokens, runs, run_offsets, run_starts, run_ends, keep, link
    clock.lap("gapped")

    # 3. maximal frequent phrases of that sequence (peeling rounds): the candidates
    ix = _gapped_index(t, t_off, gap_id, min_docs, groups=grp) if t.size else None
    groups, n_candidates, rounds = _mine_chains(ix, t, t_off, gap_id, min_docs, n_docs,
                                                cfg.rounds, grp)
    clock.lap("chains")

    # 4. slots, filters, tables
    tpl: dict | None = None
    keys, members = _final_keys(groups, gap_id, num_id, cfg.word_slots)
    # a pattern of several candidates has a wildcard where they differ; one
    # candidate alone has none (the gapped sequence holds no negative id)
    is_sib = [len(ms) > 1 for ms in members]
    n_siblings = sum(is_sib)
    # fewest fixed tokens per pattern: min_fixed, or one for the merge of
    # variants that each have min_fixed (variant evidence)
    need_fixed = np.full(len(keys), int(cfg.min_fixed), dtype=np.int64)
    n_evidence = 0
    if cfg.variant_evidence and cfg.min_fixed > 1 and keys:
        evidence = _variant_evidence(members, gap_id, num_id, int(cfg.min_fixed))
        need_fixed[evidence] = 1
        n_evidence = int(np.count_nonzero(evidence))
    clock.lap("siblings")
    n_fallback = n_joined = n_short_dropped = 0
    if keys:
        # every occurrence of each pattern, not only those of the maximal phrases
        # it came from (a frequent left or right context, e.g. a short gap before
        # it, would otherwise hide the rest): a suffix array of the gapped
        # sequence, a binary search for the pattern's longest wildcard-free
        # segment, a check of the whole pattern (compiled)
        t_doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(t_off))
        inf = np.iinfo(np.int64).max
        exact = [m for ms, sib in zip(members, is_sib) if sib for m in ms]
        exact_pos, _ = _locate(ix, t, t_doc, exact, gap_id, np.full(len(exact), inf))
        # a word-slot pattern whose segment is common (a short fixed part) would
        # check a huge range: past max(4096, 16 × its members' occurrences) it
        # takes its members' occurrences instead (values seen in ≥ σ docs each)
        budget, fallback, j = [], [], 0
        for ms, sib in zip(members, is_sib):
            if sib:
                mine = exact_pos[j:j + len(ms)]
                j += len(ms)
                fallback.append(sorted_unique(np.concatenate(mine)))
                budget.append(max(4096, 16 * sum(x.size for x in mine)))
            else:
                fallback.append(None)
                budget.append(inf)
        found, skipped = _locate(ix, t, t_doc, keys, gap_id, np.array(budget, np.int64))
        found = [fallback[i] if skipped[i] else found[i] for i in range(len(keys))]
        n_fallback = int(np.count_nonzero(skipped))
        clock.lap("locate")
        # joins: a short pattern that overlaps or touches another one in ≥ σ
        # documents forms one template with it (an author slot, then a date)
        stats = _pattern_stats(keys, found, g_start, g_end, t_doc, grp)
        joined, joined_pos = _joins(keys, found, t, t_doc, stats, gap_id, min_docs,
                                    min_span, cfg.join_share, grp)
        n_joined = len(joined)
        if joined:
            more, more_skipped = _locate(ix, t, t_doc, joined, gap_id,
                                         np.array([max(4096, 16 * x.size) for x in joined_pos],
                                                  np.int64))
            keys = keys + joined
            need_fixed = np.concatenate((need_fixed,
                                         np.full(len(joined), int(cfg.min_fixed), np.int64)))
            found = found + [joined_pos[i] if more_skipped[i] else more[i]
                             for i in range(len(joined))]
            n_fallback += int(np.count_nonzero(more_skipped))
        del ix, t                 # the suffix index of the gapped sequence: used last here
        clock.lap("joins")
        if joined:
            more_stats = _pattern_stats(joined, found[len(found) - len(joined):], g_start,
                                        g_end, t_doc, grp)
            stats = (np.concatenate((stats[0], more_stats[0])),
                     np.concatenate((stats[1], more_stats[1])))
        occ, slots = _slot_stats(c, keys, found, g_start, g_end, t_doc, gap_id, num_id,
                                 cfg.top_values,
                                 min_span, stats, slotted_min_span=cfg.slotted_min_span,
                                 min_fixed=need_fixed)
        del found, t_doc, g_start, g_end, stats
        tpl = _templates(c, keys, occ, slots, gap_id, num_id, cfg, need_fixed)
        if (cfg.slotted_min_span is not None and cfg.slotted_min_span < min_span
                and cfg.short_slots != "any"):
            tpl, n_short_dropped = _short_slot_kinds(
                tpl, min_span, ("number",) if cfg.short_slots == "number" else ("number", "word"))
    clock.lap("slots")
    doc_ids = pa.array(c.doc_ids, pa.string())
    n_templates = len(tpl["parts"]) if tpl is not None else 0
    n_nested = n_composite = n_variants = n_ends = 0
    search_counts: dict = {}
    if n_templates:
        table, lo_a, hi_a = _template_table(c, tpl, slots)
        n_a = hi_a - lo_a
        tid_a = np.repeat(np.arange(n_templates, dtype=np.int64), n_a)
        idx = np.arange(int(n_a.sum()), dtype=np.int64) + np.repeat(
            lo_a - (np.cumsum(n_a) - n_a), n_a)
        od_a = occ["docs"][idx].astype(np.int64)
        gs, ge = occ["starts"][idx], occ["ends"][idx]
        del occ, slots, idx
        # per template the positions ascend (gapped positions in order), so
        # (template, document, start) is sorted already; sort only if not
        if tid_a.size > 1 and not np.all((tid_a[1:] > tid_a[:-1]) | (gs[1:] > gs[:-1])):
            o = np.lexsort((gs, od_a, tid_a))
            tid_a, od_a, gs, ge = tid_a[o], od_a[o], gs[o], ge[o]
        if cfg.merge_variants:
            # one template where a frequent slot value split it into variants
            table, (tid_a, od_a, gs, ge), n_variants = merge_variants(
                c, table, tid_a, od_a, gs, ge, cfg.max_gap, cfg.word_slots, cfg.top_values, grp)
        if cfg.ends:
            # heads and tails: the short parts and slots at the ends that recur
            table, (tid_a, od_a, gs, ge), n_ends = extend_ends(
                c, table, tid_a, od_a, gs, ge, cfg.max_gap, cfg.word_slots, cfg.top_values,
                min_docs, cfg.ends_share, grp, raw=raw, min_len=L)
            if cfg.merge_variants and n_ends:
                # a template grown to its whole block may now have variants
                table, (tid_a, od_a, gs, ge), more = merge_variants(
                    c, table, tid_a, od_a, gs, ge, cfg.max_gap, cfg.word_slots,
                    cfg.top_values, grp)
                n_variants += more
        if cfg.drop_nested:
            # fragments of one other template go, then composites of templates found on
            # more documents (blocks side by side on some pages); the covered tokens
            # stay the same
            table, (tid_a, od_a, gs, ge), n_nested, n_composite = _drop_redundant(
                table, tid_a, od_a, gs, ge)
        if cfg.search_whole:
            # established templates searched over the whole token sequence
            from .search import search_whole

            table, (tid_a, od_a, gs, ge), search_counts = search_whole(
                c, table, tid_a, od_a, gs, ge, cfg.max_gap, cfg.word_slots, cfg.top_values,
                grp)
        occurrences = pa.table({
            "template_id": pa.array(tid_a), "doc_index": pa.array(od_a),
            "doc_id": doc_ids.take(pa.array(od_a)),
            "start": pa.array(gs - offsets[od_a]), "end": pa.array(ge - offsets[od_a])},
            schema=OCCURRENCE_SCHEMA)
    else:
        gs = ge = np.zeros(0, np.int64)
        table = TEMPLATE_SCHEMA.empty_table()
        occurrences = OCCURRENCE_SCHEMA.empty_table()
    clock.lap("tables")
    summary.update(_coverage_summary(c, raw, gs, ge))
    summary.update(templates=table.num_rows, template_occurrences=occurrences.num_rows,
                   nested_dropped=n_nested, composites_dropped=n_composite,
                   variants_merged=n_variants, ends_extended=n_ends,
                   covered_runs=n_runs,
                   gapped_length=n_gapped,
                   candidate_phrases=n_candidates, candidates=len(groups),
                   sibling_patterns=n_siblings, patterns=len(keys),
                   **({"variant_evidence": {
                       "patterns": n_evidence,
                       "templates": int(np.count_nonzero(
                           table.column("fixed_tokens").to_numpy() < int(cfg.min_fixed)))}}
                      if cfg.variant_evidence and cfg.min_fixed > 1 else {}),
                   sibling_fallbacks=n_fallback, joined_patterns=n_joined,
                   **({"short_slotted_dropped": n_short_dropped}
                      if cfg.slotted_min_span is not None and cfg.slotted_min_span < min_span
                      else {}),
                   rounds=rounds,
                   **({"search_whole": search_counts} if cfg.search_whole else {}),
                   **clock.total())
    if c.store is not None:  # the original text is known: character offsets too
        from ...corpus.char_offsets import with_char_columns

        occurrences = with_char_columns(occurrences, c.store)
    return TemplateResult(table, occurrences, summary, cfg)


def _short_slot_kinds(tpl: dict, min_span: int, allowed: tuple[str, ...]) -> tuple[dict, int]:
    """The templates of :func:`~.slots._templates` (columns) without those shorter
    than *min_span* that have a variable slot of a kind not *allowed*
    (``TemplateConfig.short_slots``), and how many went."""
    n = len(tpl["parts"])
    n_slots = tpl["n_slots"]
    s_off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.asarray(n_slots, dtype=np.int64), out=s_off[1:])
    kinds = tpl["kind"]
    keep = [tpl["span_tokens"][i] >= min_span
            or all(k in allowed for k in kinds[s_off[i]:s_off[i + 1]]) for i in range(n)]
    n_drop = keep.count(False)
    if not n_drop:
        return tpl, 0
    per_slot = np.repeat(np.array(keep, dtype=bool), np.asarray(n_slots, dtype=np.int64))
    out = {}
    for k, v in tpl.items():
        if k in ("slot_index", "kind"):
            out[k] = [x for x, m in zip(v, per_slot.tolist()) if m]
        else:
            out[k] = [x for x, m in zip(v, keep) if m]
    return out, n_drop


class _Clock:
    """Wall and CPU seconds per stage (CPU: all threads of the process; the
    figure to compare on a shared machine)."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.t0 = self.t = time.perf_counter()
        self.c0 = self.c = time.process_time()

    def lap(self, name: str) -> None:
        t, c = time.perf_counter(), time.process_time()
        self.wall[name], self.cpu[name] = t - self.t, c - self.c
        self.t, self.c = t, c

    def total(self) -> dict:
        """``timings`` (wall) and ``cpu_timings``, each with its ``total``."""
        return {"timings": {**self.wall, "total": time.perf_counter() - self.t0},
                "cpu_timings": {**self.cpu, "total": time.process_time() - self.c0}}


def _coverage_summary(c: _Corpus, raw: RawPhrases | None, gs: np.ndarray, ge: np.ndarray
                      ) -> dict:
    if raw is not None and raw.n_phrases:
        counts = np.diff(np.asarray(raw.occ_offsets, np.int64))
        rs = np.asarray(raw.occ_starts, np.int64)
        re_ = rs + np.repeat(np.asarray(raw.lengths, np.int64), counts)
    else:
        rs = re_ = np.zeros(0, np.int64)
    per_doc = KS.union_covered(c.doc_offsets, np.ascontiguousarray(gs, np.int64),
                              np.ascontiguousarray(ge, np.int64), rs, re_)
    tpl, exact, both = (int(x) for x in per_doc.sum(axis=0))
    n = max(int(c.tokens.size), 1)
    return {"template_covered_tokens": tpl, "exact_covered_tokens": exact,
            "union_covered_tokens": both, "gained_tokens": both - exact,
            "template_covered_share": tpl / n, "exact_covered_share": exact / n,
            "union_covered_share": both / n, "gained_share": (both - exact) / n,
            "documents_with_templates": int(np.count_nonzero(per_doc[:, 0])),
            "exact_phrases_given": raw is not None}
