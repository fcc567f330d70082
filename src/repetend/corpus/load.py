"""A corpus to a token store in one call: the readers, then the store builder."""

from __future__ import annotations

import os
from typing import Sequence

from .readers import read_corpus
from .record import ReadStats
from .store import TokenStore, build_store, is_store

__all__ = ["load_corpus", "load_store"]

_READ_KEYS = ("text_field", "id_field", "url_field", "fmt", "glob", "limit", "on_error", "html",
              "duplicate_ids")


def load_store(inputs: Sequence[str | os.PathLike], *, out: str | os.PathLike | None = None,
               progress=None, **options) -> TokenStore:
    """Open *inputs* if it is one token store, else read and tokenize it (into the
    store directory *out* when given, else in memory).

    *options* are the read options of :func:`repetend.corpus.readers.read_corpus`
    (``text_field``, ``id_field``, ``url_field``, ``fmt``, ``glob``, ``limit``,
    ``on_error``, ``html``, ``duplicate_ids``) and the tokenizer's ``unit`` and ``lang``; ``progress``
    is called with the number of characters of each tokenized batch."""
    inputs = list(inputs)
    if len(inputs) == 1 and is_store(inputs[0]):
        return TokenStore.open(inputs[0])
    stats = ReadStats()
    records = read_corpus(inputs, stats=stats,
                          **{k: options[k] for k in _READ_KEYS if k in options})
    return build_store(records, out=out, unit=options.get("unit", "word"),
                       lang=options.get("lang"), read_stats=stats, progress=progress,
                       lang_detect=bool(options.get("lang_detect")))


def load_corpus(inputs: Sequence[str | os.PathLike], *, out: str | os.PathLike | None = None,
                quiet: bool = True, **options) -> TokenStore:
    """:func:`load_store` with a tokenizing progress bar on stderr unless *quiet*
    (no bar when *inputs* is one token store: nothing to tokenize)."""
    from .._progress import Progress

    inputs = list(inputs)
    if len(inputs) == 1 and is_store(inputs[0]):
        return TokenStore.open(inputs[0])
    with Progress("tokenize", unit="B", quiet=quiet) as bar:
        return load_store(inputs, out=out, progress=bar.update, **options)
