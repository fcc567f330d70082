"""Checks of a corpus given as arrays — tokens, document offsets, optional
vocabulary — shared by the phrase miner (:mod:`repetend.phrases.find`) and the
template layer (:mod:`repetend.phrases.templates.corpus`): the compiled kernels
index arrays by token id without bounds checks, so a bad id must stop here."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError


def checked_offsets(tokens: np.ndarray, offsets: np.ndarray, vocab: Sequence[str] | None, *,
                    id_limit: int, allow_no_tokens: bool) -> np.ndarray:
    """*offsets* as int64 after checking the corpus.

    Raises :class:`~repetend.errors.InputError` when an array is not
    one-dimensional or not integer, there is no document, the offsets do not
    start at 0, decrease or do not end at ``len(tokens)``, there is no token
    (unless *allow_no_tokens*), a token id is outside ``[0, id_limit)``, or
    outside the vocabulary when one is given.
    """
    if tokens.ndim != 1 or offsets.ndim != 1:
        raise InputError("tokens and doc_offsets must be one-dimensional arrays")
    if tokens.size and not np.issubdtype(tokens.dtype, np.integer):
        raise InputError(f"tokens must be integers, got {tokens.dtype}")
    if offsets.size and not np.issubdtype(offsets.dtype, np.integer):
        raise InputError(f"doc_offsets must be integers, got {offsets.dtype}")
    offsets = np.asarray(offsets, dtype=np.int64)
    if offsets.size < 2:
        raise InputError("empty corpus: no documents")
    if offsets[0] != 0 or offsets[-1] != tokens.shape[0] or np.any(np.diff(offsets) < 0):
        raise InputError("doc_offsets must start at 0, never decrease and end at len(tokens) "
                         f"({tokens.shape[0]})")
    if tokens.shape[0] == 0:
        if allow_no_tokens:
            return offsets
        raise InputError(f"empty corpus: {offsets.size - 1} documents but no tokens")
    lo, hi = int(tokens.min()), int(tokens.max())
    if lo < 0 or hi >= id_limit:
        raise InputError(f"token ids must be in [0, {id_limit}), got [{lo}, {hi}]")
    if vocab is not None and hi >= len(vocab):
        raise InputError(f"token id {hi} is outside the vocabulary ({len(vocab)} entries)")
    return offsets
