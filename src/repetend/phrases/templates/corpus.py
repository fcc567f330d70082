"""The corpus the layer reads: tokens, document offsets, vocabulary, store."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...errors import InputError
from .._corpus_check import checked_offsets


@dataclass
class _Corpus:
    tokens: np.ndarray
    doc_offsets: np.ndarray
    vocab: Sequence[str] | None
    doc_ids: list[str]
    store: Any
    texts: dict = field(default_factory=dict)   # doc -> (token spans, text), for examples
    # the documents' lengths where they are not those of doc_offsets: a corpus that
    # holds only parts of its documents (Spark's widened corpus) compares the whole
    # documents' lengths when it picks an example (the shortest document)
    lengths: np.ndarray | None = None

    def length_offsets(self) -> np.ndarray:
        """Offsets whose differences are the documents' lengths (``doc_offsets``
        unless ``lengths`` is given; computed once)."""
        if self.lengths is None:
            return np.asarray(self.doc_offsets, np.int64)
        off = self.__dict__.get("_length_offsets")
        if off is None:
            off = np.zeros(len(self.lengths) + 1, np.int64)
            np.cumsum(np.asarray(self.lengths, np.int64), out=off[1:])
            self.__dict__["_length_offsets"] = off
        return off


def _as_corpus(corpus) -> _Corpus:
    from ...corpus.store import TokenStore

    if isinstance(corpus, (str, Path)):
        corpus = TokenStore.open(corpus)
    if isinstance(corpus, TokenStore):
        return _Corpus(np.ascontiguousarray(corpus.tokens, np.int32),
                       np.asarray(corpus.doc_offsets, np.int64), corpus.vocab,
                       corpus.doc_ids, corpus,
                       lengths=getattr(corpus, "original_lengths", None))
    if isinstance(corpus, (tuple, list)) and len(corpus) in (2, 3):
        tokens = np.asarray(corpus[0])
        vocab = corpus[2] if len(corpus) == 3 else None
        # ids below 2^31 - 2: the layer adds a number id and a gap id after them;
        # documents without tokens are fine here (the layer finds nothing)
        offsets = checked_offsets(tokens, np.asarray(corpus[1]), vocab, id_limit=2**31 - 2,
                                  allow_no_tokens=True)
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


def _vocab_array(c: _Corpus):
    """The vocabulary as an Arrow string array, built once per corpus (the
    number mask and the post-passes' word lookups read it)."""
    va = getattr(c, "_vocab_array", None)
    if va is None:
        import pyarrow as pa

        va = c._vocab_array = pa.array(list(c.vocab), pa.string())
    return va
