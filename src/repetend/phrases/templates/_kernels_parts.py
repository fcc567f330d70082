"""Compiled kernels of the template layer's parts stage: number masking, the
packed L'-gram count and the covered runs (:mod:`.parts`).

Only ``@jit`` functions over arrays and scalars: no I/O, no Python objects.
"""

from __future__ import annotations

import numpy as np

from ..._jit import jit

_MIX = np.uint64(0x9E3779B97F4A7C15)


@jit
def mask_tokens(tokens, is_slot, slot_id):
    """Copy of *tokens* with every token ``t`` where ``is_slot[t]`` replaced by *slot_id*."""
    out = np.empty(tokens.shape[0], dtype=np.int32)
    for i in range(tokens.shape[0]):
        t = tokens[i]
        out[i] = slot_id if is_slot[t] else t
    return out


@jit
def ngram_runs(doc_offsets, pos, s_start, s_end, n):
    """The covered runs of the frequent n-grams: every position inside an
    occurrence ``[pos[i], pos[i] + n)`` of a kept n-gram (``i`` in some
    ``[s_start[s], s_end[s])``), merged per document into maximal stretches of
    covered positions (occurrences never cross a document boundary).  Returns
    ``(run_offsets, starts, ends)`` as :class:`repetend.phrases.frequent_spans.
    FrequentSpans` has them (global positions, end exclusive)."""
    n_docs = doc_offsets.shape[0] - 1
    cov = np.zeros(doc_offsets[n_docs] + 1, dtype=np.bool_)
    for s in range(s_start.shape[0]):
        for i in range(s_start[s], s_end[s]):
            p = pos[i]
            for j in range(p, p + n):
                cov[j] = True
    return cover_runs(doc_offsets, cov)


@jit
def cover_runs(doc_offsets, cov):
    """Maximal stretches of ``cov`` per document: ``(run_offsets, starts, ends)``."""
    n_docs = doc_offsets.shape[0] - 1
    runs = np.zeros(n_docs + 1, dtype=np.int64)
    for d in range(n_docs):
        c = 0
        prev = False
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            if cov[p] and not prev:
                c += 1
            prev = cov[p]
        runs[d + 1] = runs[d] + c
    starts = np.empty(runs[n_docs], dtype=np.int64)
    ends = np.empty(runs[n_docs], dtype=np.int64)
    for d in range(n_docs):
        w = runs[d]
        b = doc_offsets[d + 1]
        p = doc_offsets[d]
        while p < b:
            if not cov[p]:
                p += 1
                continue
            q = p
            while q < b and cov[q]:
                q += 1
            starts[w] = p
            ends[w] = q
            w += 1
            p = q
    return runs, starts, ends


@jit
def packed_ngrams(tokens, pos, n, code, bits):
    """The n-gram at each position in *pos* packed exactly into 64 bits: the
    dense codes ``code[t]`` (< 2**bits, ``n · bits <= 64``) side by side."""
    out = np.empty(pos.shape[0], dtype=np.uint64)
    for i in range(pos.shape[0]):
        k = np.uint64(0)
        for j in range(pos[i], pos[i] + n):
            k = (k << np.uint64(bits)) | np.uint64(code[tokens[j]])
        out[i] = k
    return out


@jit
def _mix32(k):
    return ((k * _MIX) >> np.uint64(32)) & np.uint64(0xFFFFFFFF)


@jit
def sort_packed(keys, pos, doc):
    """Sort (exact key, position, document) triples by a 32-bit mix of the key,
    stably (LSD radix, two 16-bit digits): equal keys end up adjacent with
    their positions ascending; keys sharing a mix may interleave."""
    m = keys.shape[0]
    k, p, d = keys, pos, doc
    if m < 2:
        return k, p, d
    k2 = np.empty_like(k)
    p2 = np.empty_like(p)
    d2 = np.empty_like(d)
    cnt = np.empty(65537, dtype=np.int64)
    for sh in (np.uint64(0), np.uint64(16)):
        cnt[:] = 0
        for j in range(m):
            cnt[((_mix32(k[j]) >> sh) & np.uint64(0xFFFF)) + 1] += 1
        for b in range(65536):
            cnt[b + 1] += cnt[b]
        for j in range(m):
            dg = (_mix32(k[j]) >> sh) & np.uint64(0xFFFF)
            t = cnt[dg]
            cnt[dg] = t + 1
            k2[t] = k[j]
            p2[t] = p[j]
            d2[t] = d[j]
        k, k2 = k2, k
        p, p2 = p2, p
        d, d2 = d2, d
    return k, p, d


@jit
def frequent_packed_cover(keys, pos, doc, n, sigma, n_tok):
    """Coverage of the n-grams with df >= σ from the survivors sorted by
    :func:`sort_packed`: bool ``[n_tok + 1]`` (every position inside an
    occurrence of a frequent n-gram) and the number of frequent n-grams.  A run
    of equal mixes holding several keys (a 32-bit collision) is split by key."""
    cov = np.zeros(n_tok + 1, dtype=np.bool_)
    m = keys.shape[0]
    kept = 0
    a = 0
    while a < m:
        h = _mix32(keys[a])
        b = a + 1
        mixed = False
        while b < m and _mix32(keys[b]) == h:
            if keys[b] != keys[a]:
                mixed = True
            b += 1
        if mixed:
            order = np.argsort(keys[a:b], kind="mergesort")   # stable: docs stay sorted
            lo = 0
            while lo < b - a:
                hi = lo + 1
                while hi < b - a and keys[a + order[hi]] == keys[a + order[lo]]:
                    hi += 1
                df = 1
                for x in range(lo + 1, hi):
                    if doc[a + order[x]] != doc[a + order[x - 1]]:
                        df += 1
                if df >= sigma:
                    kept += 1
                    for x in range(lo, hi):
                        p0 = pos[a + order[x]]
                        for j in range(p0, p0 + n):
                            cov[j] = True
                lo = hi
        else:
            df = 1
            for x in range(a + 1, b):
                if doc[x] != doc[x - 1]:
                    df += 1
            if df >= sigma:
                kept += 1
                for x in range(a, b):
                    for j in range(pos[x], pos[x] + n):
                        cov[j] = True
        a = b
    return cov, kept
