"""Corpus generators whose right answer is known (the BloomSpan paper, §5; SPEC §2 "Generators").

- :func:`synthetic1` — the paper's Synthetic 1: unique random 8-letter words with three
  planted phrases of supports 3, 5 and 4.
- :func:`synthetic2` — the paper's Synthetic 2: 300 heavily overlapping phrases of
  decreasing length, the worst case for BloomSpan.
- :func:`weblike` / :func:`demo_corpus` — sites with templates around Zipfian English
  and Russian text, plus planted near-duplicates, with exact ground truth.

Each returns a :class:`SynthCorpus` (records + truth) that can be written as
``corpus.jsonl`` + ``truth.json`` or tokenized into a :class:`repetend.TokenStore`.
"""

from __future__ import annotations

from .corpus import SynthCorpus
from .synthetic import SYNTHETIC1_PHRASES, synthetic1, synthetic2
from .weblike import COPY_KINDS, DEMO_PAGES, demo_corpus, weblike

GENERATORS = {"synthetic1": synthetic1, "synthetic2": synthetic2, "weblike": weblike}

__all__ = sorted([
    "COPY_KINDS",
    "DEMO_PAGES",
    "GENERATORS",
    "SYNTHETIC1_PHRASES",
    "SynthCorpus",
    "demo_corpus",
    "synthetic1",
    "synthetic2",
    "weblike",
])
