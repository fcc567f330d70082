"""Templates with variable parts: one template with slots instead of loose pieces.

The BloomSpan paper (§6, «На что обратить внимание»; docs/references.md)
names the limit of exact phrases: a template with a variable part —
«Показано 1–20 из 345 товаров», «© 2019» / «© 2024», an author's name in a
signature — falls apart into several phrases between the variable
insertions, each found alone (or, when the fixed pieces are shorter than L,
not at all).  This module is the "next step" the paper names.  It is an extra layer over the exact phrases: it reads
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
   counted, exactly and without a sort: each L'-gram of frequent words is a
   64-bit key (L' dense codes), scattered into buckets by the top bits of a
   bijective mix of the key, its distinct documents counted per bucket in a
   small hash table, and a last pass writes the runs of the frequent ones
   (compiled; keys that do not pack take bloomspan's filters and a sort).  No
   maximal phrase is grown.  With ``short_parts=False`` the parts are the
   given exact phrases (L, no masking, no counting): the cheap "merge only"
   mode.
2. **Gapped sequence.**  Per document, the covered runs are written one after
   the other; an uncovered stretch of 1 … ``max_gap`` tokens between two runs
   becomes one *gap* token (a slot, whatever its length), a longer one a
   unique sentinel.  Runs linked so form a *chain*; a chain too short to hold
   a template — its tokens plus g per link fewer than ``min_span`` — can be
   left out (``prune``, off by default, :mod:`.links`: common 4-grams
   recurring by chance; 13-22 % cheaper on natural text, fewer joins).  This
   sequence holds only the template-like part of the corpus (a few % to a few
   tens of % of the tokens).
3. **Candidates.**  Its maximal frequent phrases (σ documents, exact: the
   suffix-array engine's LCP-interval kernels on the layer's own suffix array,
   built once over the runs of frequent tokens in a prefix-free byte code —
   the distinct runs only, each suffix then repeated for every equal run —
   and kept for step 4), gap tokens at their edges trimmed.  Peeling rounds
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
   when at least one slot varies, it has at least ``min_fixed`` fixed tokens
   (one for a merge of ≥ 2 word-slot siblings that each have ``min_fixed``,
   when at most half of its variable slots are numbers: ``variant_evidence``),
   and its median span (slots included) is at least ``min_span`` (default L)
   — so a template whose fixed parts are each shorter than L is reported when
   the whole is long.
7. **Nesting.**  A template whose every occurrence lies inside an occurrence
   of one same other template is a fragment of it and is dropped
   (``drop_nested``, :mod:`.nesting`); no covered token is lost.  Then (after
   the variants and ends post-passes and nesting) every template is searched
   over the whole token sequence (``search_whole``, on by default,
   :mod:`.search`).

Adjacent template blocks with no gap between them (a "read also" box right
before a footer with a year) are one run, so they form one template; a block
shared across sites then appears inside several templates, one per context
that is itself frequent.

Cost: three linear passes over the corpus for the L'-grams, then a suffix
array of the gapped sequence (a third of the corpus on the Debian documentation
store, 58 % on the Zipfian web corpus) and two smaller ones for the peeling
rounds.  CPU next to the exact mining: 0.25 × on the web-like generator, 2.4 ×
on the Debian store, 4.2 × on the 100 M-token Zipfian corpus, where the suffix
array of the gapped sequence is most of it; merge-only 0.35 × on Debian
(``benchmarks/bench_templates.py --store``, ``docs/templates.md``).

Output tables (:meth:`TemplateResult.write`)
--------------------------------------------
``templates.parquet``             template_id, parts (list<string>, ``▢`` for a
                                  slot), n_slots, slots (list<struct: slot, kind,
                                  distinct, empty, top_values list<struct: value,
                                  count>>), df, occurrences, span_tokens
                                  (median), fixed_tokens, psi (span_tokens·df),
                                  text (one occurrence's surface form, slots as
                                  ``▢``), example_doc_id
``template_occurrences.parquet``  template_id, doc_index, doc_id, start, end[, char_start, char_end]
                                  (token positions in the document, slots
                                  included, end exclusive)
``templates_summary.json``        parameters, counts, coverage gained over the
                                  exact phrases, timings

Modules
-------
``config``         :class:`TemplateConfig`
``result``         the tables, :class:`TemplateResult`, :func:`read_templates`,
                   :func:`template_spans`
``find``           :func:`find_templates`: the steps in order
``parts``          step 1 (the covered runs)
``links``          step 2 (which runs go into the gapped sequence)
``gapped_index``   step 3 (the suffix array of the gapped sequence, mining and
                   locating over it)
``patterns``       steps 4-5 (word-slot siblings, joins)
``slots``          step 6 (slot statistics, table rows)
``nesting``        step 7 (fragments of one other template)
``_kernels_*``     the compiled kernels of each
"""

from .config import TemplateConfig
from .find import find_templates
from .result import (OCCURRENCE_SCHEMA, SLOT, TEMPLATE_SCHEMA, TemplateResult, read_table,
                     read_templates, template_file, template_spans)

__all__ = sorted(["OCCURRENCE_SCHEMA", "SLOT", "TEMPLATE_SCHEMA", "TemplateConfig",
                  "TemplateResult", "find_templates", "read_table", "read_templates",
                  "template_file", "template_spans"])
