"""Kernels for frequent-span coverage: every position inside a frequent L-gram."""

from __future__ import annotations

import numpy as np

from .._search import lower_bound as _lookup
from .._jit import jit, pjit, prange

_BASE = np.uint64(0x100000001B3)
_BLOOM_BITS = 22  # 4 Mi bits = 512 KiB prefilter before the binary search


@jit
def _pow(base, e):
    r = np.uint64(1)
    for _ in range(e):
        r *= base
    return r


@jit
def _window_hash(tokens, start, L):
    h = np.uint64(0)
    for j in range(start, start + L):
        h = h * _BASE + np.uint64(tokens[j] + 1)
    return h


@jit
def phrase_windows(tokens, occ_offsets, occ_starts, lengths, L):
    """Hash and corpus position of every L-window of every phrase."""
    n = 0
    for i in range(lengths.shape[0]):
        if lengths[i] >= L:
            n += lengths[i] - L + 1
    keys = np.empty(n, dtype=np.uint64)
    pos = np.empty(n, dtype=np.int64)
    phrase = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(lengths.shape[0]):
        if lengths[i] < L:
            continue
        s = occ_starts[occ_offsets[i]]
        for j in range(lengths[i] - L + 1):
            keys[k] = _window_hash(tokens, s + j, L)
            pos[k] = s + j
            phrase[k] = i
            k += 1
    return keys, pos, phrase


@jit
def bloom_of(keys):
    bits = np.zeros((1 << _BLOOM_BITS) // 64, dtype=np.uint64)
    shift = np.uint64(64 - _BLOOM_BITS)
    for i in range(keys.shape[0]):
        b = keys[i] >> shift
        bits[b >> np.uint64(6)] |= np.uint64(1) << (b & np.uint64(63))
    return bits


@jit
def _scan_doc(tokens, a, b, L, keys, refs, phrase, bits, top, spans_s, spans_e, spans_p, out_at,
              emit):
    """Covered token count of document [a, b); when *emit*, write its merged
    covered runs to spans_s/spans_e from index out_at, with the phrase of the
    run's first window in spans_p. Returns (covered, runs)."""
    if b - a < L or keys.shape[0] == 0:
        return 0, 0
    shift = np.uint64(64 - _BLOOM_BITS)
    h = _window_hash(tokens, a, L)
    run_start = -1
    run_phrase = -1
    cov_end = a
    covered = 0
    runs = 0
    for q in range(a, b - L + 1):
        if q > a:
            h = (h - np.uint64(tokens[q - 1] + 1) * top) * _BASE + np.uint64(tokens[q + L - 1] + 1)
        bb = h >> shift
        if (bits[bb >> np.uint64(6)] >> (bb & np.uint64(63))) & np.uint64(1) == 0:
            continue
        i = _lookup(keys, h)
        hit = False
        while i < keys.shape[0] and keys[i] == h:
            r = refs[i]
            same = True
            for j in range(L):
                if tokens[q + j] != tokens[r + j]:
                    same = False
                    break
            if same:
                hit = True
                break
            i += 1
        if not hit:
            continue
        if run_start < 0:
            run_start = q
            run_phrase = phrase[i]
        elif q > cov_end:  # a gap: close the run
            if emit:
                spans_s[out_at + runs] = run_start
                spans_e[out_at + runs] = cov_end
                spans_p[out_at + runs] = run_phrase
            runs += 1
            covered += cov_end - run_start
            run_start = q
            run_phrase = phrase[i]
        if q + L > cov_end:
            cov_end = q + L
    if run_start >= 0:
        if emit:
            spans_s[out_at + runs] = run_start
            spans_e[out_at + runs] = cov_end
            spans_p[out_at + runs] = run_phrase
        runs += 1
        covered += cov_end - run_start
    return covered, runs


@pjit
def scan_counts(tokens, doc_offsets, L, keys, refs, phrase, bits, top, covered, runs):
    dummy = np.empty(0, dtype=np.int64)
    for d in prange(doc_offsets.shape[0] - 1):
        c, r = _scan_doc(tokens, doc_offsets[d], doc_offsets[d + 1], L, keys, refs, phrase, bits,
                         top, dummy, dummy, dummy, 0, False)
        covered[d] = c
        runs[d] = r


@pjit
def scan_spans(tokens, doc_offsets, L, keys, refs, phrase, bits, top, run_offsets, spans_s,
               spans_e, spans_p):
    for d in prange(doc_offsets.shape[0] - 1):
        if run_offsets[d + 1] > run_offsets[d]:
            _scan_doc(tokens, doc_offsets[d], doc_offsets[d + 1], L, keys, refs, phrase, bits,
                      top, spans_s, spans_e, spans_p, run_offsets[d], True)
