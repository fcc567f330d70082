"""repetend: find the text that repeats across a corpus."""

from __future__ import annotations

__version__ = "0.1.0"

from .corpus.record import Record
from .corpus.store import TokenStore, build_store, open_store
from .corpus.tokenizer import tokenize

__all__ = sorted([
    "Record",
    "TokenStore",
    "__version__",
    "build_store",
    "open_store",
    "tokenize",
])
