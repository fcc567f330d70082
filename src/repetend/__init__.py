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
from .phrases import PhraseConfig, PhraseResult, find_phrases
from .scan import ScanConfig, ScanResult, scan

__all__ = sorted([
    "NearDupConfig",
    "NearDupIndex",
    "NearDupResult",
    "PhraseConfig",
    "PhraseResult",
    "Record",
    "ScanConfig",
    "ScanResult",
    "TokenStore",
    "__version__",
    "build_store",
    "find_near_duplicates",
    "find_phrases",
    "open_store",
    "read_corpus",
    "scan",
    "tokenize",
])
