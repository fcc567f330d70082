"""Compiled kernels of the template layer (:mod:`repetend.phrases.templates`).

Only ``@jit`` functions over arrays and scalars: no I/O, no Python objects.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@jit
def mask_tokens(tokens, is_slot, slot_id):
    """Copy of *tokens* with every token ``t`` where ``is_slot[t]`` replaced by *slot_id*."""
    out = np.empty(tokens.shape[0], dtype=np.int32)
    for i in range(tokens.shape[0]):
        t = tokens[i]
        out[i] = slot_id if is_slot[t] else t
    return out


@jit
def build_stream(starts, ends, phrase, doc, max_gap, n_phrases, n_docs):
    """Chain anchor occurrences into a stream of phrase ids.

    The occurrences must be sorted by (start ascending, end descending); they
    are global token positions, ``doc[i]`` the document of occurrence i.
    An occurrence inside the span of the previous kept one is dropped. Two
    consecutive kept occurrences of one document are linked when the gap
    ``start[b] - end[a]`` is in ``[0, max_gap]``; otherwise a fresh sentinel
    id (``n_phrases``, ``n_phrases + 1``, …, never repeated, so never part of
    a frequent sequence) separates them.

    Returns ``(stream, anchor, doc_off, n)``: the stream tokens, for each
    stream position the index of its occurrence (or -1 for a sentinel), the
    stream offsets of each document (``n_docs + 1``) and the stream length.
    """
    m = starts.shape[0]
    stream = np.empty(2 * m + 1, dtype=np.int32)
    anchor = np.empty(2 * m + 1, dtype=np.int64)
    doc_off = np.zeros(n_docs + 1, dtype=np.int64)
    pos = 0
    sentinel = n_phrases
    prev_doc = -1
    cur_end = -1
    for i in range(m):
        d = doc[i]
        if d != prev_doc:
            for dd in range(prev_doc + 1, d + 1):
                doc_off[dd] = pos
            prev_doc = d
        else:
            if ends[i] <= cur_end:
                continue                        # inside the previous kept occurrence
            gap = starts[i] - cur_end
            if gap < 0 or gap > max_gap:
                stream[pos] = sentinel
                anchor[pos] = -1
                sentinel += 1
                pos += 1
        stream[pos] = phrase[i]
        anchor[pos] = i
        pos += 1
        cur_end = ends[i]
    for dd in range(prev_doc + 1, n_docs + 1):
        doc_off[dd] = pos
    return stream[:pos], anchor[:pos], doc_off, pos


@jit
def value_hashes(tokens, starts, ends):
    """64-bit FNV-1a hash of each token range ``tokens[starts[i]:ends[i]]``
    (the length is mixed in, so an empty range has its own hash)."""
    n = starts.shape[0]
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h = _FNV_OFFSET
        for p in range(starts[i], ends[i]):
            t = np.uint64(np.uint32(tokens[p]))
            for _ in range(4):
                h = (h ^ (t & np.uint64(0xFF))) * _FNV_PRIME
                t = t >> np.uint64(8)
        h = (h ^ np.uint64(ends[i] - starts[i])) * _FNV_PRIME
        out[i] = h
    return out


@jit
def union_covered(doc_offsets, a_starts, a_ends, b_starts, b_ends):
    """Per document: tokens inside some span of A, of B, and of either (global
    positions; spans may overlap).  Difference arrays: linear in tokens plus
    spans, whatever the overlap."""
    n_docs = doc_offsets.shape[0] - 1
    n = doc_offsets[n_docs]
    da = np.zeros(n + 1, dtype=np.int32)
    db = np.zeros(n + 1, dtype=np.int32)
    for i in range(a_starts.shape[0]):
        if a_ends[i] > a_starts[i]:
            da[a_starts[i]] += 1
            da[a_ends[i]] -= 1
    for i in range(b_starts.shape[0]):
        if b_ends[i] > b_starts[i]:
            db[b_starts[i]] += 1
            db[b_ends[i]] -= 1
    out = np.zeros((n_docs, 3), dtype=np.int64)
    ca = 0
    cb = 0
    for d in range(n_docs):
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            ca += da[p]
            cb += db[p]
            if ca > 0:
                out[d, 0] += 1
            if cb > 0:
                out[d, 1] += 1
            if ca > 0 or cb > 0:
                out[d, 2] += 1
    return out
