"""Batch tokenization (PLACEHOLDER: pure-Python; the tokenizer helper replaces
this module with the compiled scanner, keeping the same contract)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np

from .tokenize_ref import tokenize_reference

Unit = Literal["word", "char", "code"]


def tokenize(text: str) -> list[str]:
    return tokenize_reference(text)


@dataclass(slots=True)
class TokenizedBatch:
    hashes: np.ndarray        # uint64, one per token
    doc_offsets: np.ndarray   # int64, len(texts) + 1
    _strings: list

    def strings(self, token_indices) -> list[str]:
        return [self._strings[int(i)] for i in token_indices]


def _h(s: str) -> int:
    return int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(), "little")


def tokenize_batch(texts: Sequence[str], unit: Unit = "word", lang: str | None = None,
                   names: Sequence[str] | None = None) -> TokenizedBatch:
    toks: list[str] = []
    offs = [0]
    for t in texts:
        toks.extend(tokenize_reference(t))
        offs.append(len(toks))
    return TokenizedBatch(np.array([_h(s) for s in toks], dtype=np.uint64),
                          np.array(offs, dtype=np.int64), toks)


def token_spans(text: str, unit: Unit = "word", lang: str | None = None, name: str | None = None) -> np.ndarray:
    raise NotImplementedError("placeholder")
