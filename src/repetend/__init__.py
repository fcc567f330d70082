"""repetend: find the text that repeats across a corpus.

Boilerplate phrases (maximal contiguous frequent phrases, the BloomSpan paper) and
near-duplicate documents (exact, Broder, MinHash + LSH, exact all-pairs;
Broder 1997, the shingling and MinHash/LSH articles), as a library, a command line and a report.
"""

from __future__ import annotations

__version__ = "0.1.0"

# Public names are loaded on first use (PEP 562): ``import repetend.neardup`` must not
# pay for the phrase engines, the template layer, the jobs, the index or pyarrow's
# dataset machinery (docs/neardup.md, memory).  ``from repetend import X`` works as before.
_LAZY = {
    "CleanConfig": ".jobs",
    "NearDupConfig": ".neardup",
    "NearDupIndex": ".index",
    "NearDupResult": ".neardup",
    "PhraseConfig": ".phrases",
    "PhraseResult": ".phrases",
    "Record": ".corpus.record",
    "ScanConfig": ".jobs",
    "ScanResult": ".jobs",
    "TemplateConfig": ".phrases.templates",
    "TokenStore": ".corpus.store",
    "build_store": ".corpus.store",
    "clean_corpus": ".jobs",
    "find_near_duplicates": ".neardup",
    "find_phrases": ".phrases",
    "open_store": ".corpus.store",
    "read_corpus": ".corpus.readers",
    "scan": ".jobs",
    "tokenize": ".corpus.tokenizer",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'repetend' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value   # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


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
