"""Step 2: which covered runs go into the gapped sequence.

Two consecutive covered runs of a document with 1 … g uncovered tokens between
them are *linked* by a gap slot; runs linked one to the next form a *chain*,
and every occurrence of every pattern lies inside one chain.  A pattern's span
is its fixed tokens plus its slots, a gap slot at most g tokens, so a pattern
found inside a chain whose tokens plus g per link are fewer than ``min_span``
is shorter than ``min_span`` wherever it occurs: it is never a template by
itself.  Such short chains — common 4-grams that recur by chance at a small
σ, alone or a few together — are left out of the gapped sequence (17 % of the
covered tokens on the Zipfian corpus, 24 % on the Debian store), and the
suffix array, the chain mining and locating get that much smaller.

What changes: a short pattern that was frequent only with its occurrences in
short chains is no candidate any more, so no sibling group or join is built
on it (``tests/test_templates_links.py`` has such a case); a template's
occurrences inside short chains are not counted.  Measured
(``benchmarks/bench_templates.py --prune both``, one run each): on the Debian
store the layer costs 2.10 × the mining instead of 2.42 ×, with the same
coverage (8.74 % of the tokens against 8.72 %); on the Zipfian corpus 3.41 ×
instead of 4.35 × (4.68 % against 4.65 %); but on the web-like generator the
signatures are found whole on 37.4 % of their occurrences instead of 42.3 %:
the Russian one, «… Автор: ▢ ▢, ▢ ▢ ▢», loses its last two slots on about
50 pages (268 of 92,502 template tokens) — the join that added them is gone,
as in the test case.  So ``TemplateConfig.prune`` is off by default
(``--template-prune`` on the command line).

A stricter link rule was tried and dropped: a stretch as a slot only when its
two neighbouring tokens recur around a stretch in ≥ σ documents.  A word slot
may stand next to the gap, and its rare values then lost their occurrences
(4 % of the merge-only templates' coverage on Debian).
"""

from __future__ import annotations

import numpy as np


def _kept_runs(run_offsets: np.ndarray, run_starts: np.ndarray, run_ends: np.ndarray,
               max_gap: int, min_span: int, prune: bool) -> tuple[np.ndarray, np.ndarray, dict]:
    """``(keep, link, counts)``: per run, whether it goes into the gapped
    sequence, and whether the stretch to the next run is a gap slot (≤
    *max_gap* tokens, same document); *counts* for the summary (empty when
    not *prune*)."""
    n = int(run_starts.size)
    n_docs = int(run_offsets.size) - 1
    link = np.zeros(n, dtype=np.bool_)
    if n > 1:
        doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(run_offsets))
        link[:-1] = (doc[1:] == doc[:-1]) & (run_starts[1:] - run_ends[:-1] <= max_gap)
    if not prune:
        return np.ones(n, dtype=np.bool_), link, {}
    keep = np.zeros(n, dtype=np.bool_)
    lengths = run_ends - run_starts
    short_chains = 0
    if n:
        chain_start = np.ones(n, dtype=np.bool_)
        chain_start[1:] = ~link[:-1]
        heads = np.flatnonzero(chain_start)
        long_enough = np.add.reduceat(lengths + link * np.int64(max_gap), heads) >= min_span
        keep = np.repeat(long_enough, np.diff(np.append(heads, n)))
        short_chains = int(np.count_nonzero(~long_enough))
    return keep, link, {"short_chains_dropped": short_chains,
                        "short_runs_dropped": int(n - np.count_nonzero(keep)),
                        "short_tokens_dropped": int(lengths[~keep].sum())}
