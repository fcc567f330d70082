"""Kernels for frequent-span coverage: every position inside a frequent L-gram."""

from __future__ import annotations

import numpy as np

from .._search import lower_bound as _lookup
from .._jit import jit, pjit, prange
from ._bloomspan_kernels import _same_ngram

_BASE = np.uint64(0x100000001B3)
_BLOOM_BITS = 22  # 4 Mi bits = 512 KiB prefilter before the binary search
_PAIR_BITS = 20   # 1 Mi bits = 128 KiB: the token pairs of the phrases
_MIX = np.uint64(0x9E3779B97F4A7C15)


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
def _pair_slot(x, y):
    k = (np.uint64(np.uint32(x)) << np.uint64(32)) | np.uint64(np.uint32(y))
    return (k * _MIX) >> np.uint64(64 - _PAIR_BITS)


@jit
def pair_filter(tokens, occ_offsets, occ_starts, lengths, L):
    """One bit per hashed token pair that occurs inside a phrase of >= L tokens:
    a window holding a pair without its bit is no phrase window."""
    bits = np.zeros((1 << _PAIR_BITS) // 64, dtype=np.uint64)
    for i in range(lengths.shape[0]):
        if lengths[i] < L:
            continue
        s = occ_starts[occ_offsets[i]]
        for j in range(s, s + lengths[i] - 1):
            x = _pair_slot(tokens[j], tokens[j + 1])
            bits[x >> np.uint64(6)] |= np.uint64(1) << (x & np.uint64(63))
    return bits


@jit
def _scan_doc(tokens, a, b, L, keys, refs, last, phrase, bits, pairs, top, spans_s, spans_e,
              spans_p, out_at):
    """Covered token count and merged covered runs of document [a, b): the runs
    go to spans_s/spans_e from index out_at, with the phrase of the run's
    first window in spans_p. Returns (covered, runs).

    Most windows are never hashed: when the last two tokens of the window at q
    form a pair no phrase holds, no window from q to q + L - 2 (all of which
    hold that pair) is a phrase window, and the scan jumps to q + L - 1.  Nor
    are most windows inside a run looked up: when the window at p - 1 equals
    the phrase window at r and r + 1 is a window of the same phrase
    (``r < last``), the window at p equals it when one more token does."""
    if b - a < L or keys.shape[0] == 0:
        return 0, 0
    shift = np.uint64(64 - _BLOOM_BITS)
    h = np.uint64(0)
    hashed = False      # h is the hash of the window at p - 1
    cr = -1             # the phrase window the window at p - 1 equals, if any
    cl = -1
    run_start = -1
    run_phrase = -1
    cov_end = a
    covered = 0
    runs = 0
    q = a
    while q <= b - L:
        p = q
        q += 1
        if cr >= 0 and cr < cl and tokens[p + L - 1] == tokens[cr + L]:
            cr += 1         # inside the open run: it only grows
            hashed = False
            cov_end = p + L
            continue
        cr = -1
        if L >= 2:
            x = _pair_slot(tokens[p + L - 2], tokens[p + L - 1])
            if (pairs[x >> np.uint64(6)] >> (x & np.uint64(63))) & np.uint64(1) == 0:
                q = p + L - 1
                hashed = False
                continue
        if hashed:
            h = (h - np.uint64(tokens[p - 1] + 1) * top) * _BASE + np.uint64(tokens[p + L - 1] + 1)
        else:
            h = _window_hash(tokens, p, L)
            hashed = True
        bb = h >> shift
        if (bits[bb >> np.uint64(6)] >> (bb & np.uint64(63))) & np.uint64(1) == 0:
            continue
        i = _lookup(keys, h)
        hit = False
        while i < keys.shape[0] and keys[i] == h:
            if _same_ngram(tokens, p, refs[i], L):
                hit = True
                break
            i += 1
        if not hit:
            continue
        cr = refs[i]
        cl = last[i]
        if run_start < 0:
            run_start = p
            run_phrase = phrase[i]
        elif p > cov_end:  # a gap: close the run
            spans_s[out_at + runs] = run_start
            spans_e[out_at + runs] = cov_end
            spans_p[out_at + runs] = run_phrase
            runs += 1
            covered += cov_end - run_start
            run_start = p
            run_phrase = phrase[i]
        if p + L > cov_end:
            cov_end = p + L
    if run_start >= 0:
        spans_s[out_at + runs] = run_start
        spans_e[out_at + runs] = cov_end
        spans_p[out_at + runs] = run_phrase
        runs += 1
        covered += cov_end - run_start
    return covered, runs


@pjit
def scan(tokens, doc_offsets, L, keys, refs, last, phrase, bits, pairs, top, room, spans_s,
         spans_e, spans_p, covered, runs):
    """One pass over the documents: document d writes its runs at ``room[d]``
    (room for (length + 1) // (L + 1) runs: each holds >= L tokens and the
    next starts past a gap) and its covered count and run count."""
    for d in prange(doc_offsets.shape[0] - 1):
        c, r = _scan_doc(tokens, doc_offsets[d], doc_offsets[d + 1], L, keys, refs, last, phrase,
                         bits, pairs, top, spans_s, spans_e, spans_p, room[d])
        covered[d] = c
        runs[d] = r


@pjit
def compact_runs(room, run_offsets, src_s, src_e, src_p, spans_s, spans_e, spans_p):
    """Move the runs of every document from its room to ``run_offsets[d]``."""
    for d in prange(run_offsets.shape[0] - 1):
        a = room[d]
        for j in range(run_offsets[d + 1] - run_offsets[d]):
            spans_s[run_offsets[d] + j] = src_s[a + j]
            spans_e[run_offsets[d] + j] = src_e[a + j]
            spans_p[run_offsets[d] + j] = src_p[a + j]
