"""Boilerplate mining: maximal contiguous frequent phrases (the BloomSpan paper).

``find_phrases(store, PhraseConfig(min_docs=σ, min_len=L))`` runs one of the
engines (``bloomspan``, ``suffix``; ``auto`` picks one) and returns a
:class:`PhraseResult` with the phrases, per-document and per-host coverage,
occurrences and a summary (docs/references.md).

Modules
-------
``config``          :class:`PhraseConfig`, the engine names
``find``            :func:`find_phrases`, :func:`canonical_order`, :func:`run_templates`
``result``          :class:`PhraseResult`, :func:`read_result`, the tables and the summary
``auto``            :func:`choose_engine`
``groups``          df over groups of documents (near-duplicate clusters)
``bloomspan``, ``suffix``, ``outofcore``   the engines
``coverage``, ``frequent_spans``           the coverage measures
``templates``       the template layer (templates with variable parts)
"""

from ._raw import RawPhrases
from .auto import choose_engine
from .config import PhraseConfig
from .coverage import coverage_mask, covered_per_document, share_distribution
from .find import canonical_order, find_phrases, run_templates
from .groups import DF_OVER, groups_from_clusters
from .result import (PhraseResult, hosts_table, phrase_summary, phrase_tables, read_result,
                     template_layer_cut)
from .suffix import mine_suffix

__all__ = sorted([
    "DF_OVER",
    "PhraseConfig",
    "PhraseResult",
    "RawPhrases",
    "canonical_order",
    "choose_engine",
    "coverage_mask",
    "covered_per_document",
    "find_phrases",
    "groups_from_clusters",
    "hosts_table",
    "mine_suffix",
    "phrase_summary",
    "phrase_tables",
    "read_result",
    "run_templates",
    "share_distribution",
    "template_layer_cut",
])
