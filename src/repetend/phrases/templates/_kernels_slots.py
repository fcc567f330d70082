"""Compiled kernels of slot statistics and coverage: the kept patterns'
occurrences, their slot positions, slot value ranges, value hashes and
counts, the example occurrence of each pattern, and the union coverage
against exact phrases (:mod:`.slots`, :mod:`.find`).

Only ``@jit`` functions over arrays and scalars: no I/O, no Python objects.
"""

from __future__ import annotations

import numpy as np

from ..._jit import jit
from .._bloomspan_kernels import set_range
from ._kernels_index import _popcount

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@jit
def slot_ranges(q, off, sl_key, sl_pos, sl_off, t_start, t_end):
    """The value range of every slot at every occurrence: slot s is position
    ``sl_pos[s]`` of pattern ``sl_key[s]``, whose occurrences (gapped positions)
    are ``q[off[k]:off[k + 1]]``; returns global ``(ss, se)``, slot after slot
    (offsets *sl_off*)."""
    total = sl_off[sl_off.shape[0] - 1]
    ss = np.empty(total, dtype=np.int64)
    se = np.empty(total, dtype=np.int64)
    for s in range(sl_key.shape[0]):
        k = sl_key[s]
        j = sl_pos[s]
        w = sl_off[s]
        for x in range(off[k], off[k + 1]):
            p = q[x] + j
            ss[w] = t_start[p]
            se[w] = t_end[p]
            w += 1
    return ss, se


@jit
def _range_hash(tokens, a, b):
    """64-bit FNV-1a hash of the token range ``tokens[a:b]`` (the length is
    mixed in, so an empty range has its own hash)."""
    h = _FNV_OFFSET
    for p in range(a, b):
        t = np.uint64(np.uint32(tokens[p]))
        for _ in range(4):
            h = (h ^ (t & np.uint64(0xFF))) * _FNV_PRIME
            t = t >> np.uint64(8)
    return (h ^ np.uint64(b - a)) * _FNV_PRIME


@jit
def value_hashes(tokens, starts, ends):
    """64-bit FNV-1a hash of each token range ``tokens[starts[i]:ends[i]]``
    (:func:`_range_hash`)."""
    n = starts.shape[0]
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        out[i] = _range_hash(tokens, starts[i], ends[i])
    return out


@jit
def constant_slots(tokens, q, off, sl_key, sl_pos, t_start, t_end):
    """Per slot s (position ``sl_pos[s]`` of pattern ``sl_key[s]``, whose
    occurrences are the gapped positions ``q[off[k]:off[k + 1]]``): whether
    every value has the hash of the first (one distinct value, as
    :func:`slot_values` counts them; stops at the first other one) and the
    first value's range.  A slot without occurrences is not constant."""
    n = sl_key.shape[0]
    const = np.zeros(n, dtype=np.bool_)
    fss = np.zeros(n, dtype=np.int64)
    fse = np.zeros(n, dtype=np.int64)
    for s in range(n):
        k = sl_key[s]
        j = sl_pos[s]
        a = off[k]
        b = off[k + 1]
        if b == a:
            continue
        p = q[a] + j
        fss[s] = t_start[p]
        fse[s] = t_end[p]
        h0 = _range_hash(tokens, fss[s], fse[s])
        same = True
        for x in range(a + 1, b):
            p = q[x] + j
            if _range_hash(tokens, t_start[p], t_end[p]) != h0:
                same = False
                break
        const[s] = same
    return const, fss, fse


@jit
def kept_occurrences(q, off, kept, klen, t_start, t_end, t_doc, doc_offsets):
    """Global ``(starts, ends, docs, doc_len)`` of every occurrence of the kept
    patterns: pattern ``kept[i]`` (length ``klen[kept[i]]``) occurs at the
    gapped positions ``q[off[kept[i]]:off[kept[i] + 1]]``.  The document is that
    of the gapped position (``t_doc``): no search over the corpus offsets."""
    n = q.shape[0]
    starts = np.empty(n, dtype=np.int64)
    ends = np.empty(n, dtype=np.int64)
    docs = np.empty(n, dtype=np.int64)
    doc_len = np.empty(n, dtype=np.int64)
    for i in range(kept.shape[0]):
        k = kept[i]
        last = klen[k] - 1
        for x in range(off[k], off[k + 1]):
            p = q[x]
            d = t_doc[p]
            starts[x] = t_start[p]
            ends[x] = t_end[p + last]
            docs[x] = d
            doc_len[x] = doc_offsets[d + 1] - doc_offsets[d]
    return starts, ends, docs, doc_len


@jit
def slot_positions(keys, key_off, who, gap_id, num_id):
    """The slot positions of the concatenated keys (key i is
    ``keys[key_off[i]:key_off[i + 1]]``, pattern ``who[i]``): every position
    holding a gap, a number (*num_id*) or a wildcard (< 0), as ``(pattern,
    position)`` pairs in key order."""
    n = 0
    for p in range(keys.shape[0]):
        v = keys[p]
        if v == gap_id or v == num_id or v < 0:
            n += 1
    sl_key = np.empty(n, dtype=np.int64)
    sl_pos = np.empty(n, dtype=np.int64)
    w = 0
    for i in range(key_off.shape[0] - 1):
        a = key_off[i]
        for p in range(a, key_off[i + 1]):
            v = keys[p]
            if v == gap_id or v == num_id or v < 0:
                sl_key[w] = who[i]
                sl_pos[w] = p - a
                w += 1
    return sl_key, sl_pos


@jit
def mark_empty_occurrences(occ_empty, off, sl_key, sl_off, ss, se, variable):
    """Set ``occ_empty[g]`` for every occurrence g (global, pattern ``sl_key[s]``'s
    x-th at ``off[sl_key[s]] + x``) where a *variable* slot s is empty; the
    slot's values are ``ss``/``se`` at ``sl_off[s] + x``.  Called batch after
    batch of slots, it accumulates."""
    for s in range(sl_key.shape[0]):
        if variable[s]:
            a = off[sl_key[s]]
            for w in range(sl_off[s], sl_off[s + 1]):
                if se[w] <= ss[w]:
                    occ_empty[a + w - sl_off[s]] = True


@jit
def example_picks(off, sl_key, occ_empty, doc_len, starts, n_keys):
    """Per pattern with slots (slot s belongs to pattern ``sl_key[s]``): the
    global index of its example occurrence, the first one in
    ``lexsort((starts, doc_len, occ_empty))`` order — every *variable* slot
    non-empty if possible (``occ_empty``, see :func:`mark_empty_occurrences`),
    then the shortest document, then the smallest start.  -1 for a pattern
    without slots."""
    pick = np.full(n_keys, -1, dtype=np.int64)
    empty = occ_empty
    for s in range(sl_key.shape[0]):
        k = sl_key[s]
        if pick[k] >= 0 or off[k + 1] == off[k]:
            continue
        best = off[k]
        for g in range(off[k] + 1, off[k + 1]):
            if empty[g] != empty[best]:
                better = empty[best]
            elif doc_len[g] != doc_len[best]:
                better = doc_len[g] < doc_len[best]
            else:
                better = starts[g] < starts[best]
            if better:
                best = g
        pick[k] = best
    return pick


@jit
def first_values(ss, se, sl_off, out_ss, out_se):
    """The value range of every slot at its pattern's first occurrence
    (``ss``/``se`` at ``sl_off[s]``; 0, 0 for a slot without occurrences)."""
    for s in range(sl_off.shape[0] - 1):
        if sl_off[s + 1] > sl_off[s]:
            out_ss[s] = ss[sl_off[s]]
            out_se[s] = se[sl_off[s]]


@jit
def pick_values(q, off, sl_key, sl_pos, pick, t_start, t_end):
    """The value range of every slot at its pattern's example occurrence
    ``pick[sl_key[s]]`` (a global occurrence index; gapped positions ``q``)."""
    n = sl_key.shape[0]
    ss = np.zeros(n, dtype=np.int64)
    se = np.zeros(n, dtype=np.int64)
    for s in range(n):
        g = pick[sl_key[s]]
        if g >= 0:
            p = q[g] + sl_pos[s]
            ss[s] = t_start[p]
            se[s] = t_end[p]
    return ss, se


@jit
def slot_values(h, ss, se, sl_off, top_values):
    """Per slot s (value hashes ``h[sl_off[s]:sl_off[s + 1]]``, one per
    occurrence): the distinct hashes, the empty values (``se == ss``) and the
    *top_values* most frequent hashes, most frequent first, ties by hash
    ascending (as ``np.unique`` + ``np.lexsort((uniq, -counts))``), each as the
    slot-local index of its first occurrence and its count; grouped by slot with
    offsets ``top_off``.  Counted in an open-addressing table per slot (linear
    in the occurrences; no sort)."""
    n_sl = sl_off.shape[0] - 1
    distinct = np.zeros(n_sl, dtype=np.int64)
    empty = np.zeros(n_sl, dtype=np.int64)
    top_first = np.empty(n_sl * top_values, dtype=np.int64)
    top_count = np.empty(n_sl * top_values, dtype=np.int64)
    top_off = np.zeros(n_sl + 1, dtype=np.int64)
    biggest = 1
    for s in range(n_sl):
        if sl_off[s + 1] - sl_off[s] > biggest:
            biggest = sl_off[s + 1] - sl_off[s]
    cap = 8
    while cap < 2 * biggest:
        cap *= 2
    t_h = np.empty(cap, dtype=np.uint64)
    t_c = np.zeros(cap, dtype=np.int64)
    t_f = np.empty(cap, dtype=np.int64)
    best_c = np.empty(top_values + 1, dtype=np.int64)
    best_h = np.empty(top_values + 1, dtype=np.uint64)
    best_f = np.empty(top_values + 1, dtype=np.int64)
    w = 0
    for s in range(n_sl):
        a = sl_off[s]
        b = sl_off[s + 1]
        n = b - a
        for p in range(a, b):
            if se[p] == ss[p]:
                empty[s] += 1
        if n == 0:
            top_off[s + 1] = w
            continue
        size = 8
        bits = 3
        while size < 2 * n:
            size *= 2
            bits += 1
        t_c[:size] = 0
        shift = np.uint64(64 - bits)
        ng = 0
        for x in range(n):
            v = h[a + x]
            i = np.int64((v * np.uint64(0x9E3779B97F4A7C15)) >> shift)
            while t_c[i] != 0 and t_h[i] != v:
                i = (i + 1) & (size - 1)
            if t_c[i] == 0:
                t_h[i] = v
                t_f[i] = x
                ng += 1
            t_c[i] += 1
        distinct[s] = ng
        # the top values: count descending, then hash ascending
        nb = 0
        for i in range(size):
            c = t_c[i]
            if c == 0:
                continue
            v = t_h[i]
            if nb == top_values and (c < best_c[nb - 1]
                                     or (c == best_c[nb - 1] and v > best_h[nb - 1])):
                continue
            r = nb if nb < top_values else top_values - 1
            while r > 0 and (best_c[r - 1] < c or (best_c[r - 1] == c and best_h[r - 1] > v)):
                best_c[r] = best_c[r - 1]
                best_h[r] = best_h[r - 1]
                best_f[r] = best_f[r - 1]
                r -= 1
            best_c[r] = c
            best_h[r] = v
            best_f[r] = t_f[i]
            if nb < top_values:
                nb += 1
        for r in range(nb):
            top_first[w] = best_f[r]
            top_count[w] = best_c[r]
            w += 1
        top_off[s + 1] = w
    return distinct, empty, top_first[:w], top_count[:w], top_off


@jit
def union_covered(doc_offsets, a_starts, a_ends, b_starts, b_ends):
    """Per document: tokens inside some span of A, of B, and of either (global
    positions; spans may overlap).  Two bitmasks (one bit per token), then
    word-wise popcounts per document: linear in tokens / 64 plus the spans'
    lengths / 64."""
    n_docs = doc_offsets.shape[0] - 1
    n = doc_offsets[n_docs]
    nw = (n >> 6) + 1
    ba = np.zeros(nw, dtype=np.uint64)
    bb = np.zeros(nw, dtype=np.uint64)
    for i in range(a_starts.shape[0]):
        set_range(ba, a_starts[i], a_ends[i])
    for i in range(b_starts.shape[0]):
        set_range(bb, b_starts[i], b_ends[i])
    out = np.zeros((n_docs, 3), dtype=np.int64)
    full = np.uint64(0xFFFFFFFFFFFFFFFF)
    for d in range(n_docs):
        lo = doc_offsets[d]
        hi = doc_offsets[d + 1]
        if hi <= lo:
            continue
        w0 = lo >> 6
        w1 = (hi - 1) >> 6
        ca = 0
        cb = 0
        cu = 0
        for w in range(w0, w1 + 1):
            m = full
            if w == w0:
                m &= full << np.uint64(lo & 63)
            if w == w1:
                m &= full >> np.uint64(63 - ((hi - 1) & 63))
            x = ba[w] & m
            y = bb[w] & m
            ca += _popcount(x)
            cb += _popcount(y)
            cu += _popcount(x | y)
        out[d, 0] = ca
        out[d, 1] = cb
        out[d, 2] = cu
    return out
