"""The corpus the layer reads: tokens, document offsets, vocabulary, store."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...errors import InputError


@dataclass
class _Corpus:
    tokens: np.ndarray
    doc_offsets: np.ndarray
    vocab: Sequence[str] | None
    doc_ids: list[str]
    store: Any
    texts: dict = field(default_factory=dict)   # doc -> (token spans, text), for examples


def _as_corpus(corpus) -> _Corpus:
    from ...corpus.store import TokenStore

    if isinstance(corpus, (str, Path)):
        corpus = TokenStore.open(corpus)
    if isinstance(corpus, TokenStore):
        return _Corpus(np.ascontiguousarray(corpus.tokens, np.int32),
                       np.asarray(corpus.doc_offsets, np.int64), corpus.vocab,
                       corpus.doc_ids, corpus)
    if isinstance(corpus, (tuple, list)) and len(corpus) in (2, 3):
        tokens = np.asarray(corpus[0])
        offsets = np.asarray(corpus[1])
        vocab = corpus[2] if len(corpus) == 3 else None
        if tokens.ndim != 1 or offsets.ndim != 1:
            raise InputError("tokens and doc_offsets must be one-dimensional arrays")
        if tokens.size and not np.issubdtype(tokens.dtype, np.integer):
            raise InputError(f"tokens must be integers, got {tokens.dtype}")
        offsets = offsets.astype(np.int64)
        if offsets.size < 2 or offsets[0] != 0 or offsets[-1] != tokens.size \
                or np.any(np.diff(offsets) < 0):
            raise InputError("doc_offsets must start at 0, never decrease and end at "
                             f"len(tokens) ({tokens.size})")
        if tokens.size and (tokens.min() < 0 or tokens.max() >= 2**31 - 2):
            raise InputError("token ids must be in [0, 2^31 - 2)")
        return _Corpus(np.ascontiguousarray(tokens, np.int32), offsets, vocab,
                       [str(i) for i in range(offsets.size - 1)], None)
    raise InputError("find_templates takes a TokenStore, a store path, or "
                     f"(tokens, doc_offsets[, vocab]); got {type(corpus).__name__}")


def _strings(c: _Corpus, ids: np.ndarray | list[int]) -> list[str]:
    ids = ids.tolist() if isinstance(ids, np.ndarray) else ids
    if c.vocab is not None:
        vocab = c.vocab
        return [vocab[i] for i in ids]
    return [str(i) for i in ids]
