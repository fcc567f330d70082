"""Compiled kernels of the coverage mask (the BloomSpan paper, §6): arrays only."""

from __future__ import annotations

import numpy as np

from repetend._jit import jit


@jit
def coverage_delta(occ_offsets, occ_starts, lengths, n_tokens):
    """Difference array of the occurrence spans: ``+1`` at every start and
    ``-1`` one past every end; int32 ``[n_tokens + 1]``."""
    delta = np.zeros(n_tokens + 1, dtype=np.int32)
    for k in range(lengths.shape[0]):
        ln = lengths[k]
        for o in range(occ_offsets[k], occ_offsets[k + 1]):
            s = occ_starts[o]
            delta[s] += 1
            delta[s + ln] -= 1
    return delta


@jit
def covered_per_document(delta, doc_offsets):
    """Number of covered tokens of every document (a token is covered when it
    lies inside at least one occurrence).  Spans never cross a document end,
    so the running sum is back at 0 at every document boundary."""
    n_docs = doc_offsets.shape[0] - 1
    out = np.zeros(n_docs, dtype=np.int64)
    run = 0
    for d in range(n_docs):
        c = 0
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            run += delta[p]
            if run > 0:
                c += 1
        out[d] = c
    return out


@jit
def coverage_mask_from_delta(delta, n_tokens):
    """Boolean mask of the covered positions."""
    mask = np.zeros(n_tokens, dtype=np.bool_)
    run = 0
    for p in range(n_tokens):
        run += delta[p]
        mask[p] = run > 0
    return mask


@jit
def phrase_token_ids(tokens, occ_offsets, occ_starts, lengths):
    """The token ids of every phrase (its first occurrence), back to back,
    with int64 offsets ``[P + 1]``."""
    k = lengths.shape[0]
    offsets = np.empty(k + 1, dtype=np.int64)
    offsets[0] = 0
    for i in range(k):
        offsets[i + 1] = offsets[i] + lengths[i]
    out = np.empty(offsets[k], dtype=np.int32)
    for i in range(k):
        s = occ_starts[occ_offsets[i]]
        for j in range(lengths[i]):
            out[offsets[i] + j] = tokens[s + j]
    return offsets, out
