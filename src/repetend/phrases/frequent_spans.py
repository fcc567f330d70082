"""Frequent-span coverage: the tokens inside *some* frequent phrase of at least L tokens.

The BloomSpan paper's coverage (:mod:`repetend.phrases.coverage`, §6) marks the occurrences of
the reported *maximal* phrases. By the definition of maximality that misses
text that is boilerplate all the same: a shared disclaimer D on 400 pages, 114
of them preceded by the same "read also" block R, gives the maximal phrase
R·D (df 114) — and D alone is *not* maximal, because its left extension is
frequent; its other 286 occurrences are in no reported occurrence at all.

This module measures what a user means by "how much of my index is
template": a position is covered when it lies inside an occurrence of any
phrase P with df(P) ≥ σ and |P| ≥ L, maximal or not. That set is exactly the
union of the occurrences of the frequent L-grams (every frequent phrase of
length ≥ L is a run of overlapping frequent L-grams, and a frequent L-gram is a
frequent phrase), and the frequent L-grams are exactly the L-windows of the
reported maximal phrases (every frequent phrase extends to a maximal one that
contains it). So one linear pass with a rolling hash over the corpus, looking
each window up among the phrases' windows (a Bloom prefilter, a binary search,
then an exact token comparison — hash collisions cannot add coverage), finds it
exactly. Most windows are never looked up: a window whose last two tokens are
a pair no phrase holds is skipped with the L - 2 windows after it (all hold
that pair; a one-sided filter, so nothing covered is skipped), and inside a
run the next window is compared with the next window of the phrase just
matched. It always contains the maximal-phrase coverage.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from . import _frequent_spans_kernels as K
from ._raw import RawPhrases

__all__ = ["FrequentSpans", "frequent_spans"]


@dataclass(slots=True)
class FrequentSpans:
    """Covered tokens per document and the merged covered runs (global token
    positions, end exclusive, sorted; runs of document d are
    ``run_offsets[d]:run_offsets[d+1]``)."""

    covered: npt.NDArray[np.int64]      # [n_docs]
    run_offsets: npt.NDArray[np.int64]  # [n_docs + 1]
    starts: npt.NDArray[np.int64]
    ends: npt.NDArray[np.int64]
    phrase: npt.NDArray[np.int64]       # a phrase (index in raw) sharing the run's first L-gram

    @property
    def total(self) -> int:
        return int(self.covered.sum())


def frequent_spans(tokens: npt.ArrayLike, doc_offsets: npt.ArrayLike, raw: RawPhrases,
                   min_len: int) -> FrequentSpans:
    """Frequent-span coverage of the corpus, from the maximal phrases in *raw*
    (all maximal frequent phrases of length ≥ ``min_len`` at some σ)."""
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    L = int(min_len)
    n_docs = doc_offsets.shape[0] - 1
    occ_offsets = np.asarray(raw.occ_offsets, np.int64)
    occ_starts = np.asarray(raw.occ_starts, np.int64)
    lengths = np.asarray(raw.lengths, np.int64)
    keys, pos, phrase = K.phrase_windows(tokens, occ_offsets, occ_starts, lengths, L)
    order = np.argsort(keys, kind="stable")
    keys, pos, phrase = keys[order], pos[order], phrase[order]
    last = occ_starts[occ_offsets[phrase]] + lengths[phrase] - L  # the phrase's last window
    bits = K.bloom_of(keys)
    pairs = K.pair_filter(tokens, occ_offsets, occ_starts, lengths, L)
    top = np.uint64(K._pow(np.uint64(0x100000001B3), L - 1))
    covered = np.zeros(n_docs, dtype=np.int64)
    runs = np.zeros(n_docs, dtype=np.int64)
    room = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum((np.diff(doc_offsets) + 1) // (L + 1), out=room[1:])
    s, e, p = (np.empty(int(room[-1]), dtype=np.int64) for _ in range(3))
    K.scan(tokens, doc_offsets, np.int64(L), keys, pos, last, phrase, bits, pairs, top, room, s, e,
           p, covered, runs)
    run_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(runs, out=run_offsets[1:])
    starts = np.empty(int(run_offsets[-1]), dtype=np.int64)
    ends = np.empty_like(starts)
    run_phrase = np.empty_like(starts)
    K.compact_runs(room, run_offsets, s, e, p, starts, ends, run_phrase)
    return FrequentSpans(covered, run_offsets, starts, ends, run_phrase)
