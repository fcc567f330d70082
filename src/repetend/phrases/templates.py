"""Templates with variable parts: one template with slots instead of loose pieces.

Seed 000 (part 6, «На что обратить внимание») names the limit of exact
phrases: a template with a variable part — «Показано 1–20 из 345 товаров»,
«© 2019» / «© 2024», an author's name in a signature — falls apart into
several phrases between the variable insertions, each found alone (or, when
the fixed pieces are shorter than L, not at all).  This module is the "next
step" the seed names.  It is an extra layer over the exact phrases: it reads
them and never changes them.

How a template is found
-----------------------
1. **Parts.**  The fixed parts are the tokens covered by a frequent phrase of
   a short part length L' (``TemplateConfig.part_len``, default ``min(L, 4)``),
   maximal or not, over the corpus with every number token replaced by one
   *number* token (``mask_numbers``) — a number is a one-token slot, so
   «показано 1 20 из 345 товаров» and «показано 41 60 из 97 товаров» are the
   same masked text.  That set is the union of the occurrences of the L'-grams
   with df ≥ σ (:mod:`repetend.phrases.frequent_spans`), so only L'-grams are
   counted: bloomspan's word-df and counting filters, then the survivors as
   exact 64-bit keys (L' dense codes of frequent words) sorted and grouped
   (compiled); no maximal phrase is grown.  With ``short_parts=False`` the
   parts are the given exact phrases (L, no masking, no counting): the cheap
   "merge only" mode.
2. **Gapped sequence.**  Per document, the covered runs are written one after
   the other; an uncovered stretch of 1 … ``max_gap`` tokens between two runs
   becomes one *gap* token (a slot, whatever its length), a longer one a
   unique sentinel.  This sequence holds only the template-like part of the
   corpus (a few % to a few tens of % of the tokens).
3. **Candidates.**  Its maximal frequent phrases (σ documents, exact: the
   suffix-array engine's LCP-interval kernels on the layer's own suffix array,
   built once over the runs of frequent tokens in a prefix-free byte code and
   kept for step 4), gap tokens at their edges trimmed.  Peeling rounds
   (``rounds``): the occurrences found are replaced by sentinels and the rest
   (compacted) is mined again, so that a phrase hidden by a frequent extension
   (a footer that is often, not always, preceded by the same block) surfaces.
4. **Word slots.**  Candidates that differ only in an inner window of up to
   ``word_slots`` words (fixed tokens on both sides) are merged into one
   pattern with a *word* slot there: a low-cardinality variable part whose
   every value is frequent (a company in a shared cookie banner, an author, a
   month) — hashing of the windowed keys, then union-find (compiled).  A
   candidate left alone is kept when it has a slot (a gap or a number).  Then
   *every* occurrence of every pattern is located: the suffix array of step 3,
   a binary search for the longest wildcard-free segment (the skip budget)
   and for the rarest one (the range scanned), a check of the whole pattern
   (compiled).
5. **Joins.**  A short pattern (median span < ``min_span``) whose occurrences
   overlap, touch or are one gap away from those of another pattern, at the
   same offset, in ≥ σ documents, is joined with it into one pattern («posted
   by ▢ ▢ on» + «on ▢ # #»: an author slot, then a date); the overlap must
   agree token for token.  Joined patterns are located like the others.
6. **Slots.**  For each slot the values at every occurrence are hashed (a
   compiled kernel), counted, and the top values decoded; a slot with one
   value only is folded back into the fixed text.  A candidate is a template
   when at least one slot varies, it has at least ``min_fixed`` fixed tokens,
   and its median span (slots included) is at least ``min_span`` (default L)
   — so a template whose fixed parts are each shorter than L is reported when
   the whole is long.

Adjacent template blocks with no gap between them (a "read also" box right
before a footer with a year) are one run, so they form one template; a block
shared across sites then appears inside several templates, one per context
that is itself frequent.

Cost: two filter passes and a sort of the surviving L'-grams over the corpus,
then a suffix array of the gapped sequence (about a third of the corpus on
real text) and two smaller ones for the peeling rounds; about 2.5-3 × the
exact mining on the Debian documentation store (``benchmarks/bench_templates.py
--store``, ``docs/templates.md``).

Output tables (:meth:`TemplateResult.write`)
--------------------------------------------
``templates.parquet``             template_id, parts (list<string>, ``▢`` for a
                                  slot), n_slots, slots (list<struct: slot, kind,
                                  distinct, empty, top_values list<struct: value,
                                  count>>), df, occurrences, span_tokens
                                  (median), fixed_tokens, psi (span_tokens·df),
                                  text (one occurrence's surface form, slots as
                                  ``▢``), example_doc_id
``template_occurrences.parquet``  template_id, doc_index, doc_id, start, end
                                  (token positions in the document, slots
                                  included, end exclusive)
``templates_summary.json``        parameters, counts, coverage gained over the
                                  exact phrases, timings
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from .._atomic import write_json, write_parquet
from ..errors import InputError, ParameterError
from . import _template_kernels as K
from ._raw import RawPhrases

__all__ = ["SLOT", "TemplateConfig", "TemplateResult", "find_templates", "read_templates",
           "template_spans"]

#: The marker of a slot in ``parts`` and in the example text.
SLOT = "▢"

_SLOT_TYPE = pa.struct([
    ("slot", pa.int32()),
    ("kind", pa.string()),
    ("distinct", pa.int64()),
    ("empty", pa.int64()),
    ("top_values", pa.list_(pa.struct([("value", pa.string()), ("count", pa.int64())]))),
])
TEMPLATE_SCHEMA = pa.schema([
    ("template_id", pa.int64()),
    ("parts", pa.list_(pa.string())),
    ("n_slots", pa.int32()),
    ("slots", pa.list_(_SLOT_TYPE)),
    ("df", pa.int64()),
    ("occurrences", pa.int64()),
    ("span_tokens", pa.int64()),
    ("fixed_tokens", pa.int64()),
    ("psi", pa.int64()),
    ("text", pa.string()),
    ("example_doc_id", pa.string()),
])
OCCURRENCE_SCHEMA = pa.schema([
    ("template_id", pa.int64()),
    ("doc_index", pa.int64()),
    ("doc_id", pa.string()),
    ("start", pa.int64()),
    ("end", pa.int64()),
])


@dataclass(slots=True)
class TemplateConfig:
    """Parameters of the template layer.

    Attributes
    ----------
    max_gap : int
        g: longest slot between two fixed parts, in tokens (0 … g).
    part_len : int or None
        L': shortest fixed part when ``short_parts`` (default ``min(L, 4)``).
    short_parts : bool
        Mine the fixed parts again at L' (numbers masked); False chains the
        given exact phrases only (no second mining run).
    mask_numbers : bool
        With ``short_parts``: every all-digit token is a one-token slot
        (needs the vocabulary).
    min_span : int or None
        Shortest template (median occurrence span, slots included; default L).
    min_fixed : int
        Fewest fixed tokens in a template.
    top_values : int
        Slot values listed per slot (the most frequent first).
    rounds : int
        Peeling rounds of the chain miner (1: maximal chains only).
    word_slots : int
        Candidates that differ only in a window of up to this many words are
        merged into one template with word slots there (an author's name, a
        month); 0: off.
    join_share : float
        Two patterns, one shorter than ``min_span``, that overlap or touch are
        joined when they do so in at least this share of the documents of the
        rarer one (and in ≥ σ documents); 1.0 is strictest.
    engine : {"bloomspan", "suffix", "auto"}
        How the parts are found (the same parts with any): ``bloomspan`` and
        ``auto`` count the L'-grams with bloomspan's filters (no phrase is
        grown); ``suffix`` mines the maximal phrases at L' with the suffix
        engine and scans their windows (slower; an independent path).
    """

    max_gap: int = 4
    part_len: int | None = None
    short_parts: bool = True
    mask_numbers: bool = True
    min_span: int | None = None
    min_fixed: int = 2
    top_values: int = 5
    rounds: int = 3
    word_slots: int = 2
    join_share: float = 0.5
    engine: str = "bloomspan"

    def validate(self) -> "TemplateConfig":
        """Raise :class:`~repetend.errors.ParameterError` on a value out of its domain."""
        for name, lo in (("max_gap", 0), ("min_fixed", 0), ("top_values", 0),
                         ("part_len", 1), ("min_span", 1), ("rounds", 1),
                         ("word_slots", 0)):
            v = getattr(self, name)
            if v is None and name in ("part_len", "min_span"):
                continue
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ParameterError(f"templates: {name} must be an integer, got {v!r}")
            if v < lo:
                raise ParameterError(f"templates: {name} must be >= {lo}, got {v}")
        if not (0.0 <= float(self.join_share) <= 1.0):
            raise ParameterError(f"templates: join_share must be in [0, 1], got {self.join_share}")
        if self.engine not in ("auto", "bloomspan", "suffix"):
            raise ParameterError(f"templates: engine must be auto, bloomspan or suffix, "
                                 f"got {self.engine!r}")
        return self


@dataclass
class TemplateResult:
    """Templates with slots; see the module docstring for the columns.

    ``table`` is ``templates.parquet``, ``occurrences`` is
    ``template_occurrences.parquet``."""

    table: pa.Table
    occurrences: pa.Table
    summary: dict
    config: TemplateConfig = field(default_factory=TemplateConfig)

    @property
    def n_templates(self) -> int:
        return self.table.num_rows

    def to_pandas(self, table: str = "templates"):
        """``templates`` (default) or ``occurrences`` as a pandas DataFrame."""
        if table not in ("templates", "occurrences"):
            raise ParameterError(f"no table {table!r}; tables: templates, occurrences")
        return (self.table if table == "templates" else self.occurrences).to_pandas()

    def write(self, out: str | Path) -> Path:
        """Write ``templates.parquet``, ``template_occurrences.parquet`` and
        ``templates_summary.json`` into directory *out*, each atomically."""
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise InputError("output path exists and is not a directory", path=str(out))
        out.mkdir(parents=True, exist_ok=True)
        write_parquet(out / "templates.parquet", self.table)
        write_parquet(out / "template_occurrences.parquet", self.occurrences)
        write_json(out / "templates_summary.json", self.summary)
        return out

    to_parquet = write


def read_templates(path: str | Path) -> TemplateResult:
    """Read a directory written by :meth:`TemplateResult.write`."""
    import pyarrow.parquet as pq

    path = Path(path)
    f = path / "templates.parquet"
    if not f.is_file():
        raise InputError("no templates.parquet", path=str(path))
    occ = path / "template_occurrences.parquet"
    summary_file = path / "templates_summary.json"
    summary = json.loads(summary_file.read_text(encoding="utf-8")) if summary_file.is_file() else {}
    params = summary.get("parameters", {})
    known = {k: v for k, v in params.items() if k in TemplateConfig.__slots__}
    return TemplateResult(table=pq.read_table(f),
                          occurrences=pq.read_table(occ) if occ.is_file()
                          else OCCURRENCE_SCHEMA.empty_table(),
                          summary=summary, config=TemplateConfig(**known))


def template_spans(source: "TemplateResult | pa.Table | str | Path"
                   ) -> dict[int, npt.NDArray[np.int64]]:
    """Token spans to cut, per document: the template occurrences (slots
    included) merged where they overlap or touch.

    Parameters
    ----------
    source : TemplateResult, the occurrences table, or a directory holding
        ``template_occurrences.parquet`` (a phrases or scan output directory).

    Returns
    -------
    dict
        ``doc_index -> int64 array [k, 2]`` of ``(start, end)`` token positions
        within the document, sorted, disjoint.  Documents without a template are
        absent.  The character span of ``(s, e)`` is
        ``[token_spans[s, 0], token_spans[e - 1, 1])``, as for phrase occurrences
        (:mod:`repetend.clean.spans`).
    """
    if isinstance(source, TemplateResult):
        occ = source.occurrences
    elif isinstance(source, pa.Table):
        occ = source
    else:
        import pyarrow.parquet as pq

        p = Path(source)
        f = p / "template_occurrences.parquet" if p.is_dir() else p
        if not f.is_file():
            raise InputError("no template_occurrences.parquet", path=str(p))
        occ = pq.read_table(f, columns=["doc_index", "start", "end"])
    if occ.num_rows == 0:
        return {}
    d = occ.column("doc_index").to_numpy().astype(np.int64)
    s = occ.column("start").to_numpy().astype(np.int64)
    e = occ.column("end").to_numpy().astype(np.int64)
    order = np.lexsort((s, d))
    d, s, e = d[order], s[order], e[order]
    # merge overlapping/touching spans per document (vectorised running max)
    out: dict[int, np.ndarray] = {}
    bounds = np.flatnonzero(np.diff(d)) + 1
    for lo, hi in zip(np.concatenate(([0], bounds)), np.concatenate((bounds, [d.size]))):
        ss, ee = s[lo:hi], e[lo:hi]
        run_end = np.maximum.accumulate(ee)
        new = np.ones(ss.size, dtype=bool)
        new[1:] = ss[1:] > run_end[:-1]
        starts = ss[new]
        idx = np.flatnonzero(new)
        ends = run_end[np.concatenate((idx[1:] - 1, [ss.size - 1]))]
        out[int(d[lo])] = np.stack([starts, ends], axis=1)
    return out


# -- corpus ------------------------------------------------------------------------

@dataclass
class _Corpus:
    tokens: np.ndarray
    doc_offsets: np.ndarray
    vocab: Sequence[str] | None
    doc_ids: list[str]
    store: Any
    texts: dict = field(default_factory=dict)   # doc -> (token spans, text), for examples


def _as_corpus(corpus) -> _Corpus:
    from ..corpus.store import TokenStore

    if isinstance(corpus, (str, Path)):
        corpus = TokenStore.open(corpus)
    if isinstance(corpus, TokenStore):
        return _Corpus(np.ascontiguousarray(corpus.tokens, np.int32),
                       np.asarray(corpus.doc_offsets, np.int64), corpus.vocab,
                       corpus.doc_ids, corpus)
    if isinstance(corpus, (tuple, list)) and len(corpus) in (2, 3):
        tokens = np.asarray(corpus[0])
        offsets = np.asarray(corpus[1])
        vocab = corpus[2] if len(corpus) == 3 else None
        if tokens.ndim != 1 or offsets.ndim != 1:
            raise InputError("tokens and doc_offsets must be one-dimensional arrays")
        if tokens.size and not np.issubdtype(tokens.dtype, np.integer):
            raise InputError(f"tokens must be integers, got {tokens.dtype}")
        offsets = offsets.astype(np.int64)
        if offsets.size < 2 or offsets[0] != 0 or offsets[-1] != tokens.size \
                or np.any(np.diff(offsets) < 0):
            raise InputError("doc_offsets must start at 0, never decrease and end at "
                             f"len(tokens) ({tokens.size})")
        if tokens.size and (tokens.min() < 0 or tokens.max() >= 2**31 - 2):
            raise InputError("token ids must be in [0, 2^31 - 2)")
        return _Corpus(np.ascontiguousarray(tokens, np.int32), offsets, vocab,
                       [str(i) for i in range(offsets.size - 1)], None)
    raise InputError("find_templates takes a TokenStore, a store path, or "
                     f"(tokens, doc_offsets[, vocab]); got {type(corpus).__name__}")


def _number_mask(vocab: Sequence[str]) -> np.ndarray:
    arr = pa.array(list(vocab), pa.string())
    return pc.utf8_is_digit(arr).to_numpy(zero_copy_only=False).astype(np.bool_)


def _strings(c: _Corpus, ids: np.ndarray | list[int]) -> list[str]:
    ids = ids.tolist() if isinstance(ids, np.ndarray) else ids
    if c.vocab is not None:
        vocab = c.vocab
        return [vocab[i] for i in ids]
    return [str(i) for i in ids]


# -- the finder --------------------------------------------------------------------

def _empty_result(cfg: TemplateConfig, summary: dict) -> TemplateResult:
    return TemplateResult(TEMPLATE_SCHEMA.empty_table(), OCCURRENCE_SCHEMA.empty_table(),
                          summary, cfg)


def _surface(c: _Corpus, d: int, ls: int, le: int, elements: list, slot_ranges: dict
             ) -> str | None:
    """Surface text of tokens ``ls:le`` of document *d* with the variable slots
    (local token ranges in *slot_ranges*) shown as ``▢``; None when the
    store cannot map tokens back."""
    store = c.store
    if store is None:
        return None
    if d not in c.texts:
        try:
            c.texts[d] = (store.token_spans(d), store.text(d))
        except (NotImplementedError, InputError, AttributeError, OSError):
            c.texts[d] = None
    if c.texts[d] is None:
        return None
    spans, text = c.texts[d]
    out, pos = [], int(spans[ls, 0])
    for kind, val in elements:
        if kind != "s":
            continue
        a, b = slot_ranges[val]
        if b > a:
            ca, cb = int(spans[a, 0]), int(spans[b - 1, 1])
            out.append(text[pos:ca])
            out.append(SLOT)
            pos = cb
        else:
            ca = int(spans[a, 0]) if a < spans.shape[0] else int(spans[le - 1, 1])
            out.append(text[pos:ca])
            out.append(SLOT + " ")
            pos = ca
    out.append(text[pos:int(spans[le - 1, 1])])
    return "".join(out)


def find_templates(corpus, raw: RawPhrases | None, min_docs: int, min_len: int,
                   config: TemplateConfig | None = None) -> TemplateResult:
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
    Seed 000, part 6: a template with a variable part falls apart into exact
    phrases; supporting almost-matching phrases is the next step.  Parts and
    chains are mined exactly with the suffix-array engine of part 3 (FHK
    style); see the module docstring for the steps.  Deterministic: the output
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
    sigma, L = int(min_docs), int(min_len)
    part_len = int(cfg.part_len) if cfg.part_len is not None else min(L, 4)
    min_span = int(cfg.min_span) if cfg.min_span is not None else L
    clock = _Clock()
    c = _as_corpus(corpus)
    tokens, offsets = c.tokens, c.doc_offsets
    n_docs, n_tokens = offsets.size - 1, int(tokens.size)
    params = {**asdict(cfg), "min_docs": sigma, "min_len": L,
              "resolved": {"part_len": part_len, "min_span": min_span}}

    # 1. parts: the covered runs (every token inside a frequent phrase of ≥ L'
    #    tokens, numbers masked), and 2. the gapped sequence over them
    slot_id = -1
    anchor_tokens = tokens
    if cfg.short_parts:
        if cfg.mask_numbers and c.vocab is not None and len(c.vocab):
            is_num = _number_mask(c.vocab)
            if is_num.any():
                slot_id = len(c.vocab)
                anchor_tokens = K.mask_tokens(tokens, is_num, np.int32(slot_id))
        vocab_size = (slot_id + 1) if slot_id >= 0 else (len(c.vocab) if c.vocab is not None
                                                           else None)
        runs, part_counts, parts_engine = _part_runs(anchor_tokens, offsets, sigma, part_len,
                                                     cfg.engine, vocab_size)
    else:
        runs, part_counts, parts_engine = _given_runs(anchor_tokens, offsets, raw, L)
    clock.lap("parts")
    summary: dict[str, Any] = {"parameters": params, "documents": n_docs, "tokens": n_tokens,
                               "parts_engine": parts_engine, **part_counts}
    if runs is None:
        summary.update(_coverage_summary(c, raw, np.zeros(0, np.int64), np.zeros(0, np.int64)),
                       templates=0, template_occurrences=0, covered_runs=0, gapped_length=0,
                       **clock.total())
        return _empty_result(cfg, summary)
    run_offsets, run_starts, run_ends = runs

    base = (len(c.vocab) if c.vocab is not None else int(tokens.max(initial=-1)) + 1) + 1
    num_id = base - 1 if slot_id >= 0 else -1
    gap_id = base
    t, g_start, g_end, t_off = K.gapped_corpus(
        anchor_tokens, offsets, run_offsets, run_starts, run_ends,
        np.int64(cfg.max_gap), np.int32(gap_id), np.int32(gap_id + 1))
    clock.lap("gapped")

    # 3. maximal frequent phrases of that sequence: the candidate templates.
    #    Peeling rounds: the occurrences found are replaced by sentinels and the
    #    rest mined again, so that a phrase hidden by a frequent extension (a
    #    footer that is often, not always, preceded by the same block) surfaces.
    groups: set[bytes] = set()
    residue = t.copy()
    next_sentinel = np.int32(int(t.max(initial=gap_id)) + 1)
    n_candidates, rounds = 0, 0
    ix = _gapped_index(t, t_off, gap_id, sigma) if t.size else None
    for r in range(cfg.rounds):
        if r == 0:      # round 1 on the index kept for locating the patterns
            c_len, c_off, c_starts = _mine_indexed(ix, n_docs, sigma, 2) if t.size else \
                (np.zeros(0, np.int64),) * 3
        else:           # the residue (peeled positions are sentinels), compacted
            r, r_off, r_pos = K.residue_runs(residue, t_off, np.int32(gap_id + 1),
                                             np.int32(gap_id + 1))
            c_len, c_off, c_starts = _mine_indexed(
                _gapped_index(r, r_off, gap_id, sigma, 2, True), n_docs, sigma, 2)
            c_starts = r_pos[c_starts]
        if c_len.size == 0:
            break
        rounds += 1
        n_candidates += int(c_len.size)
        lo, hi = K.trimmed_ranges(t, c_off, c_starts, c_len, np.int32(gap_id))
        for a, b in zip(lo.tolist(), hi.tolist()):      # a gap at an edge is no slot
            if b > a:
                groups.add(t[a:b].tobytes())
        next_sentinel = K.peel(residue, c_off, c_starts, c_len, np.int32(next_sentinel))
    clock.lap("chains")

    # 4. slots, filters, tables
    rows: list[dict] = []
    keys, members = _final_keys(groups, gap_id, num_id, cfg.word_slots)
    n_siblings = sum(1 for k in keys if (k < 0).any())
    clock.lap("siblings")
    n_fallback = n_joined = 0
    if keys:
        # every occurrence of each pattern, not only those of the maximal phrases
        # it came from (a frequent left or right context, e.g. a short gap before
        # it, would otherwise hide the rest): a suffix array of the gapped
        # sequence, a binary search for the pattern's longest wildcard-free
        # segment, a check of the whole pattern (compiled)
        t_doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(t_off))
        inf = np.iinfo(np.int64).max
        exact = [m for ms, k in zip(members, keys) if (k < 0).any() for m in ms]
        exact_pos, _ = _locate(ix, t, t_doc, exact, gap_id, np.full(len(exact), inf))
        # a word-slot pattern whose segment is common (a short fixed part) would
        # check a huge range: past max(4096, 16 × its members' occurrences) it
        # takes its members' occurrences instead (values seen in ≥ σ docs each)
        budget, fallback, j = [], [], 0
        for ms, k in zip(members, keys):
            if (k < 0).any():
                mine = exact_pos[j:j + len(ms)]
                j += len(ms)
                fallback.append(_distinct(np.concatenate(mine)))
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
        stats = _pattern_stats(keys, found, g_start, g_end, t_doc)
        joined, joined_pos = _joins(keys, found, t, t_doc, stats, gap_id, sigma,
                                    min_span, cfg.join_share)
        n_joined = len(joined)
        if joined:
            more, more_skipped = _locate(ix, t, t_doc, joined, gap_id,
                                         np.array([max(4096, 16 * x.size) for x in joined_pos],
                                                  np.int64))
            keys = keys + joined
            found = found + [joined_pos[i] if more_skipped[i] else more[i]
                             for i in range(len(joined))]
            n_fallback += int(np.count_nonzero(more_skipped))
        clock.lap("joins")
        if joined:
            more_stats = _pattern_stats(joined, found[len(found) - len(joined):], g_start,
                                        g_end, t_doc)
            stats = (np.concatenate((stats[0], more_stats[0])),
                     np.concatenate((stats[1], more_stats[1])))
        occ, slots = _slot_stats(c, keys, found, g_start, g_end, gap_id, num_id, cfg.top_values,
                                 min_span, stats)
        for i in np.flatnonzero(occ["keep"]).tolist():
            row = _template(c, keys[i], i, occ, slots, gap_id, num_id, cfg)
            if row is not None:
                rows.append(row)
    clock.lap("slots")
    rows.sort(key=lambda r: (-r["psi"], -r["df"], r["parts"]))
    doc_ids = pa.array(c.doc_ids, pa.string())
    ranges = []
    for i, r in enumerate(rows):
        r["template_id"] = i
        ranges.append(r.pop("_occ"))
        r["example_doc_id"] = c.doc_ids[r.pop("_example_doc")]
    table = pa.Table.from_pylist([{k: r[k] for k in TEMPLATE_SCHEMA.names} for r in rows],
                                 schema=TEMPLATE_SCHEMA)
    if rows:
        lo_a = np.array([a for a, _ in ranges], dtype=np.int64)
        n_a = np.array([b - a for a, b in ranges], dtype=np.int64)
        tid_a = np.repeat(np.arange(len(rows), dtype=np.int64), n_a)
        idx = np.arange(int(n_a.sum()), dtype=np.int64) + np.repeat(
            lo_a - (np.cumsum(n_a) - n_a), n_a)
        od_a = occ["docs"][idx].astype(np.int64)
        gs, ge = occ["starts"][idx], occ["ends"][idx]
        # per template the positions ascend (gapped positions in order), so
        # (template, document, start) is sorted already; sort only if not
        if tid_a.size > 1 and not np.all((tid_a[1:] > tid_a[:-1]) | (gs[1:] > gs[:-1])):
            o = np.lexsort((gs, od_a, tid_a))
            tid_a, od_a, gs, ge = tid_a[o], od_a[o], gs[o], ge[o]
        occurrences = pa.table({
            "template_id": pa.array(tid_a), "doc_index": pa.array(od_a),
            "doc_id": doc_ids.take(pa.array(od_a)),
            "start": pa.array(gs - offsets[od_a]), "end": pa.array(ge - offsets[od_a])},
            schema=OCCURRENCE_SCHEMA)
    else:
        gs = ge = np.zeros(0, np.int64)
        occurrences = OCCURRENCE_SCHEMA.empty_table()
    clock.lap("tables")
    summary.update(_coverage_summary(c, raw, gs, ge))
    summary.update(templates=len(rows), template_occurrences=int(gs.size),
                   covered_runs=int(run_starts.size),
                   gapped_length=int(t.size),
                   candidate_phrases=n_candidates, candidates=len(groups),
                   sibling_patterns=n_siblings, patterns=len(keys),
                   sibling_fallbacks=n_fallback, joined_patterns=n_joined,
                   rounds=rounds,
                   **clock.total())
    return TemplateResult(table, occurrences, summary, cfg)


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


def _final_keys(groups: set[bytes], gap_id: int, num_id: int, word_slots: int
                ) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    """The patterns to report, each with its member candidates: candidates that
    differ only in a window of up to *word_slots* fixed tokens are merged into
    one pattern with a wildcard (-1) wherever they differ (a low-cardinality
    variable part: an author, a month); a candidate alone is kept when it has a
    slot (a gap or a number)."""
    cands = [np.frombuffer(k, dtype=np.int32) for k in sorted(groups)]
    if not cands:
        return [], []
    if word_slots > 0:
        key_off = np.zeros(len(cands) + 1, dtype=np.int64)
        np.cumsum([x.size for x in cands], out=key_off[1:])
        root = K.sibling_groups(np.concatenate(cands), key_off, np.int64(word_slots),
                                np.int32(num_id if num_id >= 0 else gap_id))
    else:
        root = np.arange(len(cands))
    members: dict[int, list[int]] = {}
    for i, r in enumerate(root.tolist()):
        members.setdefault(r, []).append(i)
    out, mem = [], []
    for r in sorted(members):
        idx = members[r]
        if len(idx) == 1:
            x = cands[idx[0]]
            if (x == gap_id).any() or (num_id >= 0 and (x == num_id).any()):
                out.append(x)
                mem.append([x])
            continue
        stack = np.stack([cands[i] for i in idx])
        pattern = stack[0].copy()
        pattern[(stack != stack[0]).any(axis=0)] = -1
        out.append(pattern)
        mem.append([cands[i] for i in idx])
    return out, mem


def _joins(keys: list[np.ndarray], found: list[np.ndarray], t: np.ndarray, t_doc: np.ndarray,
           stats: tuple[np.ndarray, np.ndarray], gap_id: int, sigma: int, min_span: int,
           share: float) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Patterns made of two patterns, one of them short (median span < min_span),
    whose occurrences overlap, touch or are one gap apart, in the same order
    and at the same offset, in at least max(σ, share × the smaller of their
    two dfs) documents (they belong together, not only meet); with their joined
    occurrences.  The overlap must agree token for token."""
    if len(keys) < 1:
        return [], []
    klen = np.array([k.size for k in keys], dtype=np.int64)
    n_occ = np.array([x.size for x in found], dtype=np.int64)
    occ_off = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(n_occ, out=occ_off[1:])
    med, key_df = stats            # median span and df of each pattern
    short = (n_occ > 0) & (med < min_span)
    if not short.any():
        return [], []
    n_keys = len(keys)
    # (position, pattern) order
    q, key = K.by_position(np.concatenate(found).astype(np.int64, copy=False), occ_off)
    d_max = int(klen.max()) + 2                 # offsets are at most len(A) + 1
    code, pos, docs = K.pair_groups(q, key, klen, t_doc, short, t, np.int32(gap_id),
                                    np.int64(n_keys), np.int64(d_max))
    if code.size == 0:
        return [], []
    # group the pairs by (A, B, offset): a stable sort keeps each group's
    # positions (distinct: one B occurrence per A occurrence and offset) and
    # documents increasing
    from ._bloomspan_kernels import radix_sort_occurrences

    code, pos, docs = radix_sort_occurrences(code, pos, docs, int(code.max()).bit_length())
    bounds, df = K.code_groups(code, docs)
    ucode = code[bounds[:-1]].astype(np.int64)
    uniq = np.stack([ucode // d_max // n_keys, ucode // d_max % n_keys, ucode % d_max], axis=1)
    need = np.maximum(sigma, share * np.minimum(key_df[uniq[:, 0]], key_df[uniq[:, 1]]))
    existing = {k.tobytes() for k in keys}
    out, out_pos = [], []
    for u in np.flatnonzero(df >= need):
        i, j, off = (int(x) for x in uniq[u])
        A, B = keys[i], keys[j]
        if off <= A.size:
            ov = A.size - off
            if ov and not np.array_equal(A[off:], B[:ov]):
                continue
            joined = np.concatenate((A, B[ov:]))
        else:                                   # one gap token between them
            joined = np.concatenate((A, np.array([gap_id], np.int32), B))
        joined = joined.astype(np.int32)
        if joined.tobytes() in existing:
            continue
        existing.add(joined.tobytes())
        out.append(joined)
        out_pos.append(pos[bounds[u]:bounds[u + 1]].copy())
    return out, out_pos


def _pattern_stats(keys: list[np.ndarray], found: list[np.ndarray], g_start: np.ndarray,
                   g_end: np.ndarray, t_doc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Median span (corpus tokens, slots included) and df of each pattern from
    its occurrences (gapped positions, increasing), all patterns at once."""
    off = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum([x.size for x in found], out=off[1:])
    q = np.concatenate(found).astype(np.int64, copy=False) if found else np.zeros(0, np.int64)
    return K.pattern_stats(q, off, np.array([k.size for k in keys], dtype=np.int64),
                           g_start, g_end, t_doc)


def _distinct(x: np.ndarray) -> np.ndarray:
    """``np.unique(x)`` (sorted distinct values) by a sort: numpy 2.4's hash-based
    ``unique`` is ~100× slower on large integer arrays."""
    x = np.sort(x)
    if x.size > 1:
        keep = np.empty(x.size, dtype=np.bool_)
        keep[0] = True
        np.not_equal(x[1:], x[:-1], out=keep[1:])
        x = x[keep]
    return x


@dataclass
class _GappedIndex:
    """The suffix array of the gapped sequence *t*, built once for the first
    chain round and for locating every pattern: the runs of frequent tokens
    (df ≥ σ in *t*; sentinels and rare tokens split runs) with dense codes
    ``1..V'`` (order-preserving), each run followed by a separator 0, as the
    suffix engine lays its text out (:func:`repetend.phrases._suffix_kernels.
    compact_runs`, with every run kept)."""

    text: np.ndarray
    sa: np.ndarray
    code: np.ndarray         # token (sentinels clipped to gap_id + 1) -> code, 0: none
    t_of: np.ndarray         # text position -> position in t (-1: separator)
    seg_doc: np.ndarray
    seg_orig: np.ndarray
    seg_cstart: np.ndarray
    seg_len: np.ndarray


def _gapped_index(t: np.ndarray, t_off: np.ndarray, gap_id: int, sigma: int,
                  min_len: int = 1, kgram_filter: bool = False) -> _GappedIndex:
    """The index of *t* (a gapped sequence or a peeled residue of it: tokens
    above *gap_id* are sentinels).  ``min_len=1`` without the filter keeps
    every frequent token (the index that locates the patterns); ``min_len=2``
    with the k-gram filter keeps what the chain miner needs, as
    :func:`repetend.phrases.suffix.mine_suffix` does."""
    from . import _suffix_kernels as S

    top = gap_id + 1                            # every sentinel counted as one id
    df, occ = K.token_counts(t, t_off, np.int64(top))
    frequent = df >= sigma
    frequent[top] = False                       # sentinels (unique, df 1 each)
    n_codes = int(np.count_nonzero(frequent))
    # dense codes, the most frequent tokens first: with more than 255 codes the
    # suffix array sorts a prefix-free byte string in which the first
    # ``one_byte`` codes take one byte (see _suffix_array); any order of the
    # codes gives the same phrases, and keys are searched in the same codes
    one_byte = min(n_codes, (255 * 256 - n_codes) // 255) if n_codes >= 2**8 else n_codes
    code = np.zeros(top + 1, dtype=np.int32)
    ids = np.flatnonzero(frequent)
    if 0 < one_byte < n_codes:
        first = np.argsort(-occ[ids], kind="stable")[:one_byte]
        rest = np.ones(ids.size, dtype=np.bool_)
        rest[first] = False
        ids = np.concatenate((ids[first], ids[rest]))
    code[ids] = np.arange(1, n_codes + 1, dtype=np.int32)
    dtype = np.uint8 if n_codes < 2**8 else np.uint16 if n_codes < 2**16 else np.int32
    if kgram_filter:
        clipped = np.minimum(t, np.int32(top))
        n = int(t.size)
        bits = int(min(29, max(10, int(n - 1).bit_length()
                               - (2 if sigma >= 8 else 1 if sigma >= 4 else 0))))
        cover = S.kgram_cover(clipped, t_off, code, min_len, bits, min(sigma, 255))
        text32, seg_doc, seg_orig, seg_cstart, seg_len = S.compact_runs(
            clipped, t_off, code, min_len, cover)
        del cover, clipped
        text = text32.astype(dtype) if dtype is not np.int32 else text32
        t_of = K.text_positions(seg_orig, seg_cstart, seg_len, np.int64(text.size))
    else:                                       # every run of frequent tokens
        m, n_runs = K.coded_runs_size(t, t_off, code, np.int64(top))
        text = np.empty(m, dtype=dtype)
        seg_doc, seg_orig, seg_cstart, seg_len, t_of = K.coded_runs(
            t, t_off, code, np.int64(top), text, n_runs)
    return _GappedIndex(text, _suffix_array(text, max(one_byte, 0)), code, t_of,
                        seg_doc, seg_orig, seg_cstart, seg_len)


def _suffix_array(text: np.ndarray, one_byte: int = 0) -> np.ndarray:
    """int32 suffix array of *text* (codes; separators 0) with ``pydivsufsort``,
    which sorts bytes.  Codes under 256: the text as bytes.  Otherwise, when
    ``one_byte`` allows (codes ``1 … one_byte`` one byte, the others two, the
    first byte below 256), a prefix-free byte string that sorts like the codes
    (:func:`~repetend.phrases._template_kernels.encode_bytes`; on Zipfian text
    most symbols are frequent words, so ~1.25 bytes per symbol instead of 2),
    and the suffixes starting a symbol are kept; else big-endian fixed width."""
    from ..errors import require

    divsufsort = require("pydivsufsort", "suffix", "templates").divsufsort
    if text.size == 0:
        return np.zeros(0, np.int32)
    top = int(text.max())
    if top < 2**8:
        return np.asarray(divsufsort(text.astype(np.uint8, copy=False)), np.int32)
    if 0 < one_byte and one_byte + 1 + (top - one_byte - 1) // 256 < 256:
        data, starts, before = K.encode_bytes(text, np.int64(one_byte))
        return K.symbol_order(divsufsort(data), starts, before, np.int64(text.size))
    be = text.astype(">u2" if top < 2**16 else ">u4")
    return K.symbol_suffixes(divsufsort(be.view(np.uint8)), np.int64(be.dtype.itemsize))


def _mine_indexed(ix: _GappedIndex, n_docs: int, sigma: int, min_len: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The maximal frequent phrases (≥ *min_len* tokens, σ documents) of the
    gapped sequence from its index: steps 2–5 of
    :func:`repetend.phrases.suffix.mine_suffix` on the same kernels (the same
    phrases and occurrences: its filters only drop suffixes that can be in no
    frequent interval).  Returns ``(lengths, occ_offsets, occ_starts)``,
    positions in the gapped sequence."""
    from . import _suffix_kernels as S

    m = int(ix.text.size)
    if m == 0:
        z = np.zeros(0, np.int64)
        return z, np.zeros(1, np.int64), z
    lcp, docsa = K.lcp_and_docs(ix.text, ix.sa, ix.seg_doc, ix.seg_cstart, ix.seg_len)
    cap = bound = m // max(sigma, 1) + 1       # disjoint intervals of ≥ σ suffixes each
    while True:
        lbs, rbs, lens, _, _, _, n_found = S.frequent_leaves(
            ix.sa, lcp, docsa, n_docs, ix.seg_cstart, ix.seg_len, sigma, min_len, cap)
        if n_found <= cap:
            break
        cap = min(bound, int(n_found))
    del lcp
    keep = S.left_maximal(ix.text, ix.sa, docsa, lbs, rbs, sigma, n_docs)
    occ_offsets, occ_starts = K.emit_positions(ix.sa, ix.t_of, lbs[keep], rbs[keep])
    return lens[keep], occ_offsets, occ_starts


def _locate(ix: _GappedIndex, t: np.ndarray, t_doc: np.ndarray, keys: list[np.ndarray],
            gap_id: int, max_range: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """All occurrences of each key in the gapped sequence (wildcards: -1), and
    which keys were skipped for a segment range longer than *max_range*."""
    if not keys:
        return [], np.zeros(0, dtype=bool)
    key_off = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum([x.size for x in keys], out=key_off[1:])
    flat = np.concatenate(keys)
    # key tokens in codes (wildcards: -1, never searched); every fixed key
    # token is frequent in t (keys are made of frequent phrases), so ≥ 1
    kcodes = np.where(flat >= 0, ix.code[np.clip(flat, 0, gap_id + 1)], -1).astype(np.int32)
    off, pos, skipped = K.match_all_text(ix.text, ix.sa, ix.t_of, t, t_doc, flat, kcodes,
                                         key_off, np.int32(gap_id),
                                         np.asarray(max_range, np.int64))
    return [pos[off[i]:off[i + 1]] for i in range(len(keys))], skipped


def _part_runs(tokens: np.ndarray, offsets: np.ndarray, sigma: int, part_len: int,
               engine: str, vocab_size: int | None) -> tuple[tuple | None, dict, str]:
    """The covered runs of the parts: every position inside a phrase of ≥ L'
    (*part_len*) tokens with df ≥ σ, maximal or not, merged per document.

    That set is the union of the occurrences of the frequent L'-grams (see
    :mod:`repetend.phrases.frequent_spans`), so the default path counts the
    L'-grams only — bloomspan's word-df filter, counting filter and exact
    grouping (its seed stage, :func:`_frequent_ngrams`) — and never grows the
    maximal phrases.  ``engine="suffix"`` mines the maximal phrases with the
    suffix engine and scans their L'-windows (the same runs, slower; kept as
    an independent path).  Returns ``(runs or None, counts, engine used)``."""
    from .auto import bloomspan_available

    if tokens.size == 0:
        return None, {"part_phrases": 0}, "none"
    if engine == "suffix" or not bloomspan_available():
        from .frequent_spans import frequent_spans
        from .suffix import mine_suffix

        parts = mine_suffix(tokens, offsets, sigma, part_len)
        if parts.n_phrases == 0:
            return None, {"part_phrases": 0}, "suffix"
        fs = frequent_spans(tokens, offsets, parts, part_len)
        return ((np.asarray(fs.run_offsets, np.int64), np.asarray(fs.starts, np.int64),
                 np.asarray(fs.ends, np.int64)), {"part_phrases": int(parts.n_phrases)}, "suffix")
    vs = max(vocab_size or 0, int(tokens.max(initial=0)) + 1)
    packed = _packed_ngram_cover(tokens, offsets, sigma, part_len, vs)
    if packed is not None:
        cov, kept = packed
        if kept == 0:
            return None, {"part_ngrams": 0}, "ngrams"
        return K.cover_runs(offsets, cov), {"part_ngrams": kept}, "ngrams"
    pos, s_start, s_end = _frequent_ngrams(tokens, offsets, sigma, part_len, vs)
    counts = {"part_ngrams": int(s_start.size)}
    if s_start.size == 0:
        return None, counts, "ngrams"
    return K.ngram_runs(offsets, pos, s_start, s_end, np.int64(part_len)), counts, "ngrams"


def _survivors(tokens: np.ndarray, offsets: np.ndarray, sigma: int, n: int, vocab_size: int,
               word_ok: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The n-gram positions that bloomspan's filters keep (word df ≥ σ for every
    token, a one-sided counting filter): a superset of the occurrences of the
    n-grams with df ≥ σ.  Returns ``(pos, doc, word_ok)``, positions ascending."""
    from . import _bloomspan_kernels as B
    from .bloomspan import build_filter, default_filter_bytes

    n_tok = int(tokens.size)
    if word_ok is None:
        word_ok = B.word_df(tokens, offsets, vocab_size) >= sigma
    word_ok = word_ok.astype(np.uint8)
    use_filter = n >= 2
    if use_filter:
        filt, shift = build_filter(tokens, offsets, n, default_filter_bytes(n_tok, sigma),
                                   word_ok)
    else:
        filt, shift = np.zeros(1, dtype=np.uint8), 63
    block = 1 << 16
    nb = (n_tok + block - 1) // block
    block_doc = (np.searchsorted(offsets, np.arange(nb, dtype=np.int64) * block, side="right")
                 - 1).astype(np.int64)
    bits = np.zeros((n_tok + 63) // 64, dtype=np.uint64)
    counts = np.zeros(nb, dtype=np.int64)
    B.mark_survivors(tokens, offsets, block_doc, block, n, word_ok, filt, shift, use_filter,
                     min(sigma, 255), bits, counts)
    del filt
    starts = np.zeros(nb, dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    pos = np.empty(int(counts.sum()), dtype=np.int64)
    doc = np.empty(pos.size, dtype=np.int32)
    B.fill_survivors(bits, offsets, block_doc, block, n_tok, starts, pos, doc)
    return pos, doc, word_ok


def _packed_ngram_cover(tokens: np.ndarray, offsets: np.ndarray, sigma: int, n: int,
                        vocab_size: int) -> tuple[np.ndarray, int] | None:
    """Coverage of the n-grams with df ≥ σ when an n-gram of frequent words
    packs exactly into 64 bits (dense codes of the words with df ≥ σ, n ·
    bits ≤ 64: L' = 4 and < 65,536 such words): the survivors sorted by a
    32-bit mix of the packed key and grouped by the key itself, no token is
    read again.  None when the n-grams do not pack (then
    :func:`_frequent_ngrams`); ``(cov, frequent n-grams)`` otherwise."""
    n_tok, n_docs = int(tokens.size), int(offsets.size - 1)
    if sigma > n_docs or n_tok == 0:
        return np.zeros(n_tok + 1, dtype=np.bool_), 0
    from . import _bloomspan_kernels as B

    word_ok = B.word_df(tokens, offsets, vocab_size) >= sigma
    n_ok = int(np.count_nonzero(word_ok))
    bits = max(1, n_ok.bit_length())
    if n * bits > 64:
        return None
    pos, doc, _ = _survivors(tokens, offsets, sigma, n, vocab_size, word_ok)
    code = np.zeros(vocab_size, dtype=np.int64)
    code[word_ok] = np.arange(1, n_ok + 1)
    keys = K.packed_ngrams(tokens, pos, np.int64(n), code, np.int64(bits))
    keys, pos, doc = K.sort_packed(keys, pos, doc)
    return K.frequent_packed_cover(keys, pos, doc, np.int64(n), np.int64(sigma), np.int64(n_tok))


def _frequent_ngrams(tokens: np.ndarray, offsets: np.ndarray, sigma: int, n: int,
                     vocab_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every n-gram with df ≥ σ and all its occurrences, exactly: the seed
    stage of :func:`repetend.phrases.bloomspan.mine_bloomspan` (word df, a
    one-sided counting filter, the survivors sorted by hash and grouped by
    content with exact df).  Returns ``(pos, s_start, s_end)``: the
    occurrences of kept n-gram s are ``pos[s_start[s]:s_end[s]]``."""
    from . import _bloomspan_kernels as B

    empty = np.zeros(0, np.int64)
    n_tok, n_docs = int(tokens.size), int(offsets.size - 1)
    if sigma > n_docs or n_tok == 0:
        return empty, empty, empty
    pos, doc, _ = _survivors(tokens, offsets, sigma, n, vocab_size)
    keys = B.ngram_keys(tokens, pos, n)
    keys, pos, doc = B.radix_sort_occurrences(keys, pos, doc, 32 if n != 2 else 64)
    s_start, s_end, _ = B.group_seeds(tokens, pos, doc, keys, n, sigma)
    return pos, s_start, s_end


def _given_runs(tokens: np.ndarray, offsets: np.ndarray, raw: RawPhrases, L: int
                ) -> tuple[tuple | None, dict, str]:
    """Merge-only mode: the covered runs of the given exact phrases (length ≥ L)."""
    from .frequent_spans import frequent_spans

    if raw is None or raw.n_phrases == 0 or tokens.size == 0:
        return None, {"part_phrases": 0}, "given"
    fs = frequent_spans(tokens, offsets, raw, L)
    return ((np.asarray(fs.run_offsets, np.int64), np.asarray(fs.starts, np.int64),
             np.asarray(fs.ends, np.int64)), {"part_phrases": int(raw.n_phrases)}, "given")


def _coverage_summary(c: _Corpus, raw: RawPhrases | None, gs: np.ndarray, ge: np.ndarray
                      ) -> dict:
    if raw is not None and raw.n_phrases:
        counts = np.diff(np.asarray(raw.occ_offsets, np.int64))
        rs = np.asarray(raw.occ_starts, np.int64)
        re_ = rs + np.repeat(np.asarray(raw.lengths, np.int64), counts)
    else:
        rs = re_ = np.zeros(0, np.int64)
    per_doc = K.union_covered(c.doc_offsets, np.ascontiguousarray(gs, np.int64),
                              np.ascontiguousarray(ge, np.int64), rs, re_)
    tpl, exact, both = (int(x) for x in per_doc.sum(axis=0))
    n = max(int(c.tokens.size), 1)
    return {"template_covered_tokens": tpl, "exact_covered_tokens": exact,
            "union_covered_tokens": both, "gained_tokens": both - exact,
            "template_covered_share": tpl / n, "exact_covered_share": exact / n,
            "union_covered_share": both / n, "gained_share": (both - exact) / n,
            "documents_with_templates": int(np.count_nonzero(per_doc[:, 0])),
            "exact_phrases_given": raw is not None}


def _slot_stats(c: _Corpus, keys: list[np.ndarray], found: list[np.ndarray],
                t_start: np.ndarray, t_end: np.ndarray, gap_id: int, num_id: int,
                top_values: int, min_span: int, stats: tuple[np.ndarray, np.ndarray]
                ) -> tuple[dict, dict]:
    """Occurrence and slot statistics of all patterns at once (a few sorts over
    all occurrences instead of a few per pattern).

    Returns ``(occ, slots)``.  ``occ``: per occurrence (concatenated in pattern
    order, ``off`` the offsets) its global ``starts``/``ends`` and ``docs``; per
    pattern ``df``, ``span`` (median) and ``keep`` (occurs, median span ≥
    min_span).  ``slots``: per slot position of a kept pattern (``key``, ``pos``,
    in pattern order, ``first`` the index of a pattern's first slot) the value
    ranges ``ss``/``se`` of its occurrences (offsets ``off``), ``distinct``,
    ``empty``, and the top values as in ``np.unique`` + ``lexsort((uniq, -cnt))``
    (``top_first``: occurrence index of each one's first occurrence within the
    slot, ``top_count``, grouped by slot with offsets ``top_off``)."""
    n_keys = len(keys)
    klen = np.array([k.size for k in keys], dtype=np.int64)
    n_occ = np.array([x.size for x in found], dtype=np.int64)
    off = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum(n_occ, out=off[1:])
    q = np.concatenate(found).astype(np.int64, copy=False)
    key = np.repeat(np.arange(n_keys, dtype=np.int64), n_occ)
    starts = t_start[q]
    ends = t_end[q + klen[key] - 1]
    docs = np.searchsorted(c.doc_offsets, starts, side="right") - 1
    has = n_occ > 0
    med, df = stats
    keep = has & (med >= min_span)
    occ = {"off": off, "starts": starts.astype(np.int64, copy=False),
           "ends": ends.astype(np.int64, copy=False), "docs": docs, "df": df, "span": med,
           "keep": keep, "doc_len": np.diff(c.doc_offsets)[docs]}
    # the slot positions of the kept patterns
    sl_key_l, sl_pos_l = [], []
    for i in np.flatnonzero(keep).tolist():
        k = keys[i]
        js = np.flatnonzero((k == gap_id) | (k == num_id) | (k < 0))
        sl_key_l.append(np.full(js.size, i, np.int64))
        sl_pos_l.append(js.astype(np.int64))
    sl_key = np.concatenate(sl_key_l) if sl_key_l else np.zeros(0, np.int64)
    sl_pos = np.concatenate(sl_pos_l) if sl_pos_l else np.zeros(0, np.int64)
    n_sl = sl_key.size
    first = np.full(n_keys + 1, n_sl, dtype=np.int64)
    if n_sl:
        bnd = np.flatnonzero(np.concatenate(([True], sl_key[1:] != sl_key[:-1])))
        first[sl_key[bnd]] = bnd
    sl_n = n_occ[sl_key]
    sl_off = np.zeros(n_sl + 1, dtype=np.int64)
    np.cumsum(sl_n, out=sl_off[1:])
    ss, se = K.slot_ranges(q, off, sl_key, sl_pos, sl_off, t_start, t_end)
    h = K.value_hashes(c.tokens, ss, se)
    distinct, empty, top_first, top_count, top_off = K.slot_values(h, ss, se, sl_off,
                                                                   np.int64(top_values))
    slots = {"key": sl_key, "pos": sl_pos, "first": first, "off": sl_off, "ss": ss, "se": se,
             "distinct": distinct, "empty": empty, "top_first": top_first,
             "top_count": top_count, "top_off": top_off}
    return occ, slots


def _template(c: _Corpus, inner: np.ndarray, key: int, occ: dict, sl: dict, gap_id: int,
              num_id: int, cfg: TemplateConfig) -> dict | None:
    """One candidate (gapped-sequence content *inner*, pattern *key* of the
    statistics of :func:`_slot_stats`) → a table row, or None when it is not a
    template."""
    tokens = c.tokens
    lo, hi = int(occ["off"][key]), int(occ["off"][key + 1])
    starts, ends, docs = occ["starts"][lo:hi], occ["ends"][lo:hi], occ["docs"][lo:hi]
    df = int(occ["df"][key])
    span_med = int(occ["span"][key])
    s_next = int(sl["first"][key])
    elements: list[tuple[str, Any]] = []      # ("f", [ids]) / ("s", slot index)
    slots: list[dict] = []
    slot_arrays: list[tuple[np.ndarray, np.ndarray]] = []
    fixed_run: list[int] = []                 # fixed ids since the last variable slot
    sl_off, sl_ss, sl_se, sl_distinct = sl["off"], sl["ss"], sl["se"], sl["distinct"]
    for v in inner.tolist():
        if not (v == gap_id or v == num_id or v < 0):
            fixed_run.append(v)
            continue
        skind = "gap" if v == gap_id else "number" if v == num_id else "word"
        s = s_next
        s_next += 1
        a, b = int(sl_off[s]), int(sl_off[s + 1])
        ss, se = sl_ss[a:b], sl_se[a:b]
        distinct = int(sl_distinct[s])
        if distinct == 1:                             # a constant: fixed text after all
            fixed_run.extend(tokens[int(ss[0]):int(se[0])].tolist())
            continue
        if fixed_run:
            elements.append(("f", fixed_run))
            fixed_run = []
        values = []
        for u in range(int(sl["top_off"][s]), int(sl["top_off"][s + 1])):
            i = int(sl["top_first"][u])
            values.append({"value": " ".join(_strings(c, tokens[int(ss[i]):int(se[i])])),
                           "count": int(sl["top_count"][u])})
        values.sort(key=lambda v: (-v["count"], v["value"]))
        slots.append({"slot": len(slots), "kind": skind, "distinct": distinct,
                      "empty": int(sl["empty"][s]), "top_values": values})
        slot_arrays.append((ss, se))
        elements.append(("s", len(slots) - 1))
    if fixed_run:
        elements.append(("f", fixed_run))
    if not slots:
        return None
    fixed = sum(len(v) for kind, v in elements if kind == "f")
    if fixed < cfg.min_fixed:
        return None
    parts = [" ".join(_strings(c, v)) if kind == "f" else SLOT
             for kind, v in elements]
    # example: an occurrence whose slots are all non-empty, if there is one
    nonempty = np.ones(starts.size, dtype=bool)
    for ss, se in slot_arrays:
        nonempty &= se > ss
    # (in the shortest such document: mapping tokens back to text costs its length)
    doc_len = occ["doc_len"][lo:hi]
    order = np.lexsort((starts, doc_len, ~nonempty))
    pick = int(order[0])
    d = int(docs[pick])
    base = int(c.doc_offsets[d])
    slot_ranges = {i: (int(ss[pick]) - base, int(se[pick]) - base)
                   for i, (ss, se) in enumerate(slot_arrays)}
    text = _surface(c, d, int(starts[pick]) - base, int(ends[pick]) - base, elements,
                    slot_ranges)
    if text is None:
        text = " ".join(parts)
    return {"parts": parts, "n_slots": len(slots), "slots": slots, "df": df,
            "occurrences": int(starts.size), "span_tokens": span_med, "fixed_tokens": fixed,
            "psi": span_med * df, "text": text, "_example_doc": d, "_occ": (lo, hi)}
