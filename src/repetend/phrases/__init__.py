"""Boilerplate mining: maximal contiguous frequent phrases (seed 000).

``find_phrases(store, PhraseConfig(min_docs=σ, min_len=L))`` runs one of the
engines (``bloomspan``, ``suffix``; ``auto`` picks one) and returns a
:class:`PhraseResult` with the phrases, per-document and per-host coverage,
occurrences and a summary.
"""

from ._raw import RawPhrases
from .api import PhraseConfig, PhraseResult, canonical_order, find_phrases, read_result
from .auto import choose_engine
from .coverage import coverage_mask, covered_per_document, share_distribution
from .suffix import mine_suffix

__all__ = sorted([
    "PhraseConfig",
    "PhraseResult",
    "RawPhrases",
    "canonical_order",
    "choose_engine",
    "coverage_mask",
    "covered_per_document",
    "find_phrases",
    "mine_suffix",
    "read_result",
    "share_distribution",
])
