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


@pjit
def used_by_row(tokens, doc_offsets, doc_row, n_rows, n_vocab):
    """``used[r, t]``: token *t* occurs in a document of row (language) *r*."""
    used = np.zeros((n_rows, n_vocab), dtype=np.bool_)
    n_docs = doc_offsets.shape[0] - 1
    for r in prange(n_rows):   # each row written by one thread
        for d in range(n_docs):
            if doc_row[d] == r:
                for p in range(doc_offsets[d], doc_offsets[d + 1]):
                    used[r, tokens[p]] = True
    return used


@pjit
def kept_counts_rows(tokens, doc_offsets, doc_row, remap2d):
    """:func:`kept_counts` with document *d* remapped through ``remap2d[doc_row[d]]``."""
    n_docs = doc_offsets.shape[0] - 1
    out = np.empty(n_docs, dtype=np.int64)
    for d in prange(n_docs):
        r = doc_row[d]
        c = 0
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            if remap2d[r, tokens[p]] >= 0:
                c += 1
        out[d] = c
    return out


@pjit
def remap_fill_rows(tokens, doc_offsets, doc_row, remap2d, new_offsets, out):
    """:func:`remap_fill` with document *d* remapped through ``remap2d[doc_row[d]]``."""
    n_docs = doc_offsets.shape[0] - 1
    for d in prange(n_docs):
        r = doc_row[d]
        q = new_offsets[d]
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            t = remap2d[r, tokens[p]]
            if t >= 0:
                out[q] = t
                q += 1
