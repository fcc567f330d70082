"""Compiled kernels for shingle normalization: rewrite the token stream through a vocabulary remap."""

from __future__ import annotations

import numpy as np

from .._jit import pjit, prange


@pjit
def kept_counts(tokens, doc_offsets, remap):
    """Number of tokens of each document whose remapped id is not -1 (not a stop word)."""
    n_docs = doc_offsets.shape[0] - 1
    out = np.empty(n_docs, dtype=np.int64)
    for d in prange(n_docs):
        c = 0
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            if remap[tokens[p]] >= 0:
                c += 1
        out[d] = c
    return out


@pjit
def remap_fill(tokens, doc_offsets, remap, new_offsets, out):
    """Write each document's remapped tokens (stop words dropped) at ``out[new_offsets[d]:]``."""
    n_docs = doc_offsets.shape[0] - 1
    for d in prange(n_docs):
        q = new_offsets[d]
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            t = remap[tokens[p]]
            if t >= 0:
                out[q] = t
                q += 1
