"""A persistent near-duplicate index: check new documents against everything seen.

:class:`NearDupIndex` (``build`` / ``open`` / ``add`` / ``query`` / ``merge``)
keeps MinHash signatures, sorted memory-mappable LSH band tables, shingle sets
for exact verification, document metadata, the original texts and the known
boilerplate phrases of a scan, in append-only segments under a versioned,
atomically replaced manifest.  See ``docs/persistent-index.md``.
"""

from __future__ import annotations

from .align import KnownPhrases, load_phrases, shared_fragments, tokens_of
from .api import AddResult, NearDupIndex, QueryResult
from .format import FORMAT_VERSION

__all__ = sorted([
    "AddResult",
    "FORMAT_VERSION",
    "KnownPhrases",
    "NearDupIndex",
    "QueryResult",
    "load_phrases",
    "shared_fragments",
    "tokens_of",
])
