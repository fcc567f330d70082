"""repetend: find the text that repeats across a corpus.

Boilerplate phrases (maximal contiguous frequent phrases, the BloomSpan paper) and
near-duplicate documents (exact, Broder, MinHash + LSH, exact all-pairs;
Broder 1997, the shingling and MinHash/LSH articles), as a library, a command line and a report.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .corpus.readers import read_corpus
from .corpus.record import Record
from .corpus.store import TokenStore, build_store, open_store
from .corpus.tokenizer import tokenize
from .index import NearDupIndex
from .neardup import NearDupConfig, NearDupResult, find_near_duplicates
from .jobs import CleanConfig, ScanConfig, ScanResult, clean_corpus, scan
from .phrases import PhraseConfig, PhraseResult, find_phrases
from .phrases.templates import TemplateConfig

__all__ = sorted([
    "CleanConfig",
    "NearDupConfig",
    "NearDupIndex",
    "NearDupResult",
    "PhraseConfig",
    "PhraseResult",
    "Record",
    "ScanConfig",
    "ScanResult",
    "TemplateConfig",
    "TokenStore",
    "__version__",
    "build_store",
    "clean_corpus",
    "find_near_duplicates",
    "find_phrases",
    "open_store",
    "read_corpus",
    "scan",
    "tokenize",
])
