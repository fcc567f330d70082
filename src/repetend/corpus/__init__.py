"""Corpus in, tokens out: readers, tokenizers and the token store."""

from .record import ReadStats, Record
from .load import load_store
from .store import TokenStore, build_store, is_store, open_store, open_store_arrays

__all__ = ["ReadStats", "Record", "TokenStore", "build_store", "is_store", "load_store",
           "open_store", "open_store_arrays"]
