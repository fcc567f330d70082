"""Corpus in, tokens out: readers, tokenizers and the token store."""

# Public names are loaded on first use (PEP 562): opening a token store does not load
# the readers or the tokenizer (docs/neardup.md, memory).
_LAZY = {
    "ReadStats": ".record",
    "Record": ".record",
    "TokenStore": ".store",
    "build_store": ".store",
    "is_store": ".store",
    "load_store": ".load",
    "open_store": ".store",
    "open_store_arrays": ".store",
}

__all__ = ["ReadStats", "Record", "TokenStore", "build_store", "is_store", "load_store",
           "open_store", "open_store_arrays"]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'repetend.corpus' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value   # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
