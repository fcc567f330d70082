"""Compiled kernels of the template layer (:mod:`repetend.phrases.templates`).

Only ``@jit`` functions over arrays and scalars: no I/O, no Python objects.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from ._bloomspan_kernels import set_range

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
def gapped_corpus(tokens, doc_offsets, run_offsets, run_starts, run_ends, max_gap, gap_id,
                  sentinel_base):
    """The covered runs of each document as one token sequence for the chain miner.

    Covered tokens are copied; an uncovered stretch of 1 … *max_gap* tokens
    between two runs of a document becomes one *gap_id* token (a slot); a
    longer one becomes a fresh sentinel (``sentinel_base``, +1, …, never
    repeated, so no frequent phrase crosses it).  Returns ``(t, t_start,
    t_end, t_off)``: the sequence, the original global token range of each of
    its positions (a gap: the whole stretch), and per-document offsets.
    """
    n_docs = doc_offsets.shape[0] - 1
    total = 0
    for d in range(n_docs):
        for r in range(run_offsets[d], run_offsets[d + 1]):
            total += run_ends[r] - run_starts[r] + 1
    t = np.empty(total, dtype=np.int32)
    t_start = np.empty(total, dtype=np.int64)
    t_end = np.empty(total, dtype=np.int64)
    t_off = np.zeros(n_docs + 1, dtype=np.int64)
    pos = 0
    sentinel = sentinel_base
    for d in range(n_docs):
        t_off[d] = pos
        for r in range(run_offsets[d], run_offsets[d + 1]):
            if r > run_offsets[d]:
                g0 = run_ends[r - 1]
                g1 = run_starts[r]
                if g1 - g0 <= max_gap:
                    t[pos] = gap_id
                else:
                    t[pos] = sentinel
                    sentinel += 1
                t_start[pos] = g0
                t_end[pos] = g1
                pos += 1
            for p in range(run_starts[r], run_ends[r]):
                t[pos] = tokens[p]
                t_start[pos] = p
                t_end[pos] = p + 1
                pos += 1
    t_off[n_docs] = pos
    return t[:pos], t_start[:pos], t_end[:pos], t_off


@jit
def peel(t, occ_offsets, occ_starts, lengths, next_sentinel):
    """Replace every position of every occurrence (phrase i has length
    ``lengths[i]`` and starts ``occ_starts[occ_offsets[i]:occ_offsets[i + 1]]``)
    by a fresh sentinel, in place; returns the next unused sentinel."""
    s = next_sentinel
    for i in range(lengths.shape[0]):
        for k in range(occ_offsets[i], occ_offsets[i + 1]):
            q = occ_starts[k]
            for j in range(lengths[i]):
                if t[q + j] < next_sentinel:
                    t[q + j] = s
                    s += 1
    return s


@jit
def _find(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@jit
def _mix64(h):
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


@jit
def _window_fixed(keys, a, j, k, fixed_below):
    for p in range(a + j, a + j + k):
        if keys[p] < 0 or keys[p] >= fixed_below:
            return False
    return True


@jit
def sibling_groups(keys, key_off, max_width, fixed_below):
    """Union-find of keys that differ only inside one window of 1 … *max_width*
    consecutive positions holding fixed tokens in both (ids in ``[0,
    fixed_below)``: not a slot), strictly inside the key (a position on either
    side: a differing edge is only another context).  Keys of different
    lengths are never siblings.  Returns the group root (the
    smallest member index) of every key."""
    n_k = key_off.shape[0] - 1
    total = 0
    for i in range(n_k):
        m = key_off[i + 1] - key_off[i]
        for k in range(1, max_width + 1):
            if m - k >= 2:
                total += m - k - 1
    hs = np.empty(total, dtype=np.uint64)
    who = np.empty(total, dtype=np.int64)
    wj = np.empty(total, dtype=np.int64)
    wk = np.empty(total, dtype=np.int64)
    r = 0
    longest = 0
    for i in range(n_k):
        if key_off[i + 1] - key_off[i] > longest:
            longest = key_off[i + 1] - key_off[i]
    pre = np.zeros(longest + 1, dtype=np.uint64)   # prefix sums of mixed tokens
    for i in range(n_k):
        a = key_off[i]
        m = key_off[i + 1] - a
        for p in range(m):                   # the key without a window: the sum of
            pre[p + 1] = pre[p] + _mix64(     # its tokens mixed with their positions
                np.uint64(np.uint32(keys[a + p])) * np.uint64(0x9E3779B97F4A7C15)
                + np.uint64(p))
        for k in range(1, max_width + 1):
            if m - k < 2:
                continue
            for j in range(1, m - k):            # inside: a fixed token on either side
                h = pre[m] - (pre[j + k] - pre[j])
                hs[r] = _mix64(h ^ _mix64(np.uint64(m) << np.uint64(40)
                                          ^ np.uint64(j) << np.uint64(8) ^ np.uint64(k)))
                who[r] = i
                wj[r] = j
                wk[r] = k
                r += 1
    parent = np.arange(n_k)
    order = np.argsort(hs, kind="mergesort")
    lo = 0
    while lo < total:
        hi = lo + 1
        while hi < total and hs[order[hi]] == hs[order[lo]]:
            hi += 1
        rep = -1
        for x in range(lo, hi):
            e = order[x]
            i, j, k = who[e], wj[e], wk[e]
            a = key_off[i]
            if not _window_fixed(keys, a, j, k, fixed_below):
                continue
            if rep < 0:
                rep = e
                continue
            i0 = who[rep]
            a0 = key_off[i0]
            m = key_off[i + 1] - a
            if i0 == i or wj[rep] != j or wk[rep] != k or key_off[i0 + 1] - a0 != m:
                continue                      # a hash collision: leave it alone
            ok = True
            for p in range(m):
                if (p < j or p >= j + k) and keys[a + p] != keys[a0 + p]:
                    ok = False
                    break
            if ok:
                r1, r2 = _find(parent, i0), _find(parent, i)
                if r1 != r2:
                    if r1 < r2:
                        parent[r2] = r1
                    else:
                        parent[r1] = r2
        lo = hi
    for i in range(n_k):
        parent[i] = _find(parent, i)
    return parent


@jit
def _cmp_suffix(t, p, keys, a, m):
    """Compare the suffix ``t[p:]`` with ``keys[a:a+m]`` on m tokens: -1, 0, 1."""
    n = t.shape[0]
    for j in range(m):
        if p + j >= n:
            return -1
        x = t[p + j]
        y = keys[a + j]
        if x < y:
            return -1
        if x > y:
            return 1
    return 0


@jit
def _sa_range(t, sa, keys, a, m):
    n = sa.shape[0]
    lo, hi = 0, n
    while lo < hi:                      # first suffix >= key
        mid = (lo + hi) // 2
        if _cmp_suffix(t, sa[mid], keys, a, m) < 0:
            lo = mid + 1
        else:
            hi = mid
    first = lo
    hi = n
    while lo < hi:                      # first suffix > key (on m tokens)
        mid = (lo + hi) // 2
        if _cmp_suffix(t, sa[mid], keys, a, m) <= 0:
            lo = mid + 1
        else:
            hi = mid
    return first, lo


@jit
def pair_groups(q, key, klen, t_doc, short, t, gap_id, n_keys, d_max):
    """Pairs of pattern occurrences to join: occurrence b (of pattern B) starts
    inside occurrence a (of A), right after it, or after exactly one gap
    token, without lying inside it, in the same document, and A or B is
    short.  *q* (gapped positions) must be sorted, ties by pattern; ``key[i]``
    is the pattern of occurrence i and ``klen[k]`` the length of pattern k.
    Returns, per pair in the order of a, its group ``code = (A · n_keys + B) ·
    d_max + d`` (d = ``q[b] - q[a] < d_max``; uint64), ``q[a]`` and the
    document."""
    n = q.shape[0]
    cnt = 0
    for pass_ in range(2):
        if pass_ == 1:
            code = np.empty(cnt, dtype=np.uint64)
            pos = np.empty(cnt, dtype=np.int64)
            doc = np.empty(cnt, dtype=np.int32)
            cnt = 0
        for a in range(n):
            ka = key[a]
            la = klen[ka]
            qa = q[a]
            da = t_doc[qa]
            b = a + 1
            while b < n and q[b] <= qa + la + 1:
                d = q[b] - qa
                kb = key[b]
                lb = klen[kb]
                if d >= 1 and d + lb > la and t_doc[q[b]] == da \
                        and (short[ka] or short[kb]) \
                        and (d <= la or t[qa + la] == gap_id):
                    if pass_ == 1:
                        code[cnt] = np.uint64((ka * n_keys + kb) * d_max + d)
                        pos[cnt] = qa
                        doc[cnt] = da
                    cnt += 1
                b += 1
    return code, pos, doc


@jit
def code_groups(code, doc):
    """Runs of equal codes in sorted *code* (documents ascending inside a run):
    ``(bounds, df)``, run g is ``[bounds[g], bounds[g + 1])`` and holds
    ``df[g]`` distinct documents."""
    n = code.shape[0]
    ng = 0
    for i in range(n):
        if i == 0 or code[i] != code[i - 1]:
            ng += 1
    bounds = np.empty(ng + 1, dtype=np.int64)
    df = np.zeros(ng, dtype=np.int64)
    g = -1
    for i in range(n):
        if i == 0 or code[i] != code[i - 1]:
            g += 1
            bounds[g] = i
            df[g] = 1
        elif doc[i] != doc[i - 1]:
            df[g] += 1
    bounds[ng] = n
    return bounds, df


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
def trimmed_ranges(t, occ_offsets, occ_starts, lengths, gap_id):
    """The content of each phrase (its first occurrence in *t*) without the gap
    tokens at its edges: ``(lo, hi)`` per phrase, ``lo == hi`` when nothing is left."""
    n = lengths.shape[0]
    lo = np.empty(n, dtype=np.int64)
    hi = np.empty(n, dtype=np.int64)
    for k in range(n):
        a = occ_starts[occ_offsets[k]]
        b = a + lengths[k]
        while a < b and t[a] == gap_id:
            a += 1
        while b > a and t[b - 1] == gap_id:
            b -= 1
        lo[k] = a
        hi[k] = b
    return lo, hi


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


_MIX = np.uint64(0x9E3779B97F4A7C15)


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


@jit
def text_positions(seg_orig, seg_cstart, seg_len, m):
    """Position in the gapped sequence of every position of the compacted text
    (runs of ``seg_len[s]`` tokens from ``seg_orig[s]``, copied to
    ``seg_cstart[s]`` and each followed by a separator); -1 at a separator."""
    out = np.full(m, -1, dtype=np.int64)
    for s in range(seg_orig.shape[0]):
        c = seg_cstart[s]
        o = seg_orig[s]
        for k in range(seg_len[s]):
            out[c + k] = o + k
    return out


@jit
def match_all_text(text, sa, t_of, t, t_doc, keys, kcodes, key_off, wild_below, max_range):
    """Every occurrence of every key (``keys[key_off[i]:key_off[i + 1]]``) in
    *t* within one document, through the suffix array *sa* of a compacted text
    (the runs of frequent tokens of *t* in dense codes, each run followed by a
    separator 0; ``t_of`` maps a text position to its position in *t*).  A
    negative key token is a wildcard: any token ``< wild_below``.

    Key i is skipped (``skipped[i]``, no positions) when the suffix-array range
    of its segment (its longest wildcard-free run, the first of equals) is
    longer than ``max_range[i]``.  Otherwise the range of its *rarest* wildcard-free
    run (a binary search in codes, ``kcodes``, each ``>= 1``) is scanned and
    every hit checked whole in *t*; a run that is the whole key needs no check
    (a text run lies in one document, between sentinels).  Returns
    ``(offsets, positions, skipped)``; positions of key i are increasing.  One
    pass: the positions go to a buffer that doubles when full."""
    n = t.shape[0]
    n_k = key_off.shape[0] - 1
    out_off = np.zeros(n_k + 1, dtype=np.int64)
    skipped = np.zeros(n_k, dtype=np.bool_)
    out = np.empty(1 << 16, dtype=np.int64)
    w = 0
    for i in range(n_k):
        a = key_off[i]
        m = key_off[i + 1] - a
        seg0 = 0
        seg_n = 0
        j = 0
        while j < m:                      # the longest wildcard-free run
            if keys[a + j] < 0:
                j += 1
                continue
            k = j
            while k < m and keys[a + k] >= 0:
                k += 1
            if k - j > seg_n:
                seg0 = j
                seg_n = k - j
            j = k
        lo, hi = _sa_range(text, sa, kcodes, a + seg0, seg_n)
        if hi - lo > max_range[i]:
            skipped[i] = True
            out_off[i + 1] = w
            continue
        s0 = seg0
        ln = seg_n
        j = 0
        while j < m:                      # the other wildcard-free runs: the rarest
            if keys[a + j] < 0:
                j += 1
                continue
            k = j
            while k < m and keys[a + k] >= 0:
                k += 1
            if j != seg0 and hi - lo > 0:
                lo2, hi2 = _sa_range(text, sa, kcodes, a + j, k - j)
                if hi2 - lo2 < hi - lo:
                    lo, hi, s0, ln = lo2, hi2, j, k - j
            j = k
        whole = s0 == 0 and ln == m
        begin = w
        for r in range(lo, hi):
            q = t_of[sa[r]] - s0
            if not whole:
                if q < 0 or q + m > n or t_doc[q + m - 1] != t_doc[q]:
                    continue
                ok = True
                for j in range(m):
                    kv = keys[a + j]
                    if kv < 0:
                        if t[q + j] >= wild_below:
                            ok = False
                            break
                    elif t[q + j] != kv:
                        ok = False
                        break
                if not ok:
                    continue
            if w == out.shape[0]:
                bigger = np.empty(2 * out.shape[0], dtype=np.int64)
                bigger[:w] = out[:w]
                out = bigger
            out[w] = q
            w += 1
        out[begin:w] = np.sort(out[begin:w])
        out_off[i + 1] = w
    return out_off, out[:w].copy(), skipped


@jit
def emit_positions(sa, t_of, lbs, rbs):
    """The occurrences of suffix-array intervals ``[lbs[c], rbs[c]]`` as
    positions in *t* (``t_of`` of each suffix), sorted per interval; returns
    ``(occ_offsets, occ_starts)``."""
    k = lbs.shape[0]
    offsets = np.empty(k + 1, dtype=np.int64)
    offsets[0] = 0
    for c in range(k):
        offsets[c + 1] = offsets[c] + rbs[c] - lbs[c] + 1
    starts = np.empty(offsets[k], dtype=np.int64)
    for c in range(k):
        o = offsets[c]
        for i in range(lbs[c], rbs[c] + 1):
            starts[o] = t_of[sa[i]]
            o += 1
        starts[offsets[c]:offsets[c + 1]].sort()
    return offsets, starts


@jit
def symbol_suffixes(byte_sa, width):
    """The suffix array of a text of *width*-byte big-endian symbols from the
    suffix array of its bytes: the suffixes starting on a symbol boundary, in
    order (big-endian bytes compare as the symbols do)."""
    out = np.empty(byte_sa.shape[0] // width, dtype=np.int32)
    k = 0
    for i in range(byte_sa.shape[0]):
        x = byte_sa[i]
        if x % width == 0:
            out[k] = x // width
            k += 1
    return out


@jit
def encode_bytes(text, one_byte):
    """*text* (codes ``0 … V'``) as a prefix-free byte string that sorts like
    the codes: a code ``c <= one_byte`` is the byte ``c``; a larger one the two
    bytes ``one_byte + 1 + (c - one_byte - 1) // 256`` and ``(c - one_byte - 1)
    % 256`` (the caller makes sure the first stays below 256).  Returns the
    bytes, a bitmask of the bytes that start a symbol (bit ``p & 63`` of word
    ``p >> 6``) and the number of symbols before each word."""
    n = text.shape[0]
    nb = n
    for i in range(n):
        if text[i] > one_byte:
            nb += 1
    out = np.empty(nb, dtype=np.uint8)
    starts = np.zeros((nb + 63) >> 6, dtype=np.uint64)
    w = 0
    for i in range(n):
        c = np.int64(text[i])
        starts[w >> 6] |= np.uint64(1) << np.uint64(w & 63)
        if c <= one_byte:
            out[w] = c
            w += 1
        else:
            r = c - one_byte - 1
            out[w] = one_byte + 1 + r // 256
            out[w + 1] = r % 256
            w += 2
    before = np.empty(starts.shape[0], dtype=np.int64)
    acc = 0
    for k in range(starts.shape[0]):
        before[k] = acc
        acc += _popcount(starts[k])
    return out, starts, before


@jit
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@jit
def symbol_order(byte_sa, starts, before, n):
    """The suffix array of the symbols from that of their bytes: the suffixes
    that start a symbol (set in the bitmask *starts*), as symbol indices (the
    rank of the byte among the starts), in order."""
    out = np.empty(n, dtype=np.int32)
    k = 0
    for i in range(byte_sa.shape[0]):
        x = byte_sa[i]
        word = starts[x >> 6]
        bit = np.uint64(x & 63)
        if (word >> bit) & np.uint64(1):
            below = word & ((np.uint64(1) << bit) - np.uint64(1))
            out[k] = before[x >> 6] + _popcount(below)
            k += 1
    return out


@jit
def residue_runs(residue, t_off, first_sentinel, sentinel):
    """The unpeeled part of a residue of the gapped sequence: every stretch of
    positions below *first_sentinel* (peeled positions and long gaps are
    sentinels), a run of sentinels collapsed to one *sentinel* token.  Returns
    ``(r, r_off, r_pos)``: the compacted sequence, its per-document offsets
    and the position in the residue of each of its tokens (-1 for a
    sentinel)."""
    n_docs = t_off.shape[0] - 1
    total = 0
    for d in range(n_docs):
        prev_sent = True
        for p in range(t_off[d], t_off[d + 1]):
            if residue[p] < first_sentinel:
                total += 1
                prev_sent = False
            elif not prev_sent:
                total += 1
                prev_sent = True
    r = np.empty(total, dtype=np.int32)
    r_pos = np.empty(total, dtype=np.int64)
    r_off = np.zeros(n_docs + 1, dtype=np.int64)
    w = 0
    for d in range(n_docs):
        r_off[d] = w
        prev_sent = True
        for p in range(t_off[d], t_off[d + 1]):
            if residue[p] < first_sentinel:
                r[w] = residue[p]
                r_pos[w] = p
                w += 1
                prev_sent = False
            elif not prev_sent:
                r[w] = sentinel
                r_pos[w] = -1
                w += 1
                prev_sent = True
    r_off[n_docs] = w
    return r, r_off, r_pos


@jit
def pattern_stats(q, off, klen, g_start, g_end, t_doc):
    """Per pattern i (occurrences: gapped positions ``q[off[i]:off[i + 1]]``,
    increasing; length ``klen[i]``): the median span in corpus tokens
    (``sorted(spans)[n // 2]``, span = ``g_end[q + klen - 1] - g_start[q]``)
    and the number of distinct documents; 0 when it has no occurrence."""
    n = off.shape[0] - 1
    med = np.zeros(n, dtype=np.int64)
    df = np.zeros(n, dtype=np.int64)
    for i in range(n):
        a = off[i]
        b = off[i + 1]
        if b == a:
            continue
        sp = np.empty(b - a, dtype=np.int64)
        c = 1
        for x in range(a, b):
            sp[x - a] = g_end[q[x] + klen[i] - 1] - g_start[q[x]]
            if x > a and t_doc[q[x]] != t_doc[q[x - 1]]:
                c += 1
        sp.sort()
        med[i] = sp[(b - a) // 2]
        df[i] = c
    return med, df


@jit
def by_position(q, off):
    """``(q, key)`` of all occurrences sorted by position, ties by pattern
    (pattern k's positions ``q[off[k]:off[k + 1]]``, each increasing): a
    stable LSD radix sort of the concatenation on 16-bit digits."""
    m = q.shape[0]
    key = np.empty(m, dtype=np.int64)
    for k in range(off.shape[0] - 1):
        for x in range(off[k], off[k + 1]):
            key[x] = k
    a = q.copy()
    b = key
    if m < 2:
        return a, b
    top = 0
    for x in range(m):
        if a[x] > top:
            top = a[x]
    a2 = np.empty_like(a)
    b2 = np.empty_like(b)
    cnt = np.empty(65537, dtype=np.int64)
    sh = 0
    while (top >> sh) > 0:
        cnt[:] = 0
        for x in range(m):
            cnt[((a[x] >> sh) & 0xFFFF) + 1] += 1
        for d in range(65536):
            cnt[d + 1] += cnt[d]
        for x in range(m):
            dg = (a[x] >> sh) & 0xFFFF
            t = cnt[dg]
            cnt[dg] = t + 1
            a2[t] = a[x]
            b2[t] = b[x]
        a, a2 = a2, a
        b, b2 = b2, b
        sh += 16
    return a, b


@jit
def token_counts(t, t_off, top):
    """Document frequency and occurrences of every token id of *t*, ids above
    *top* counted as *top* (the sentinels): two int64 arrays ``[top + 1]``."""
    df = np.zeros(top + 1, dtype=np.int64)
    occ = np.zeros(top + 1, dtype=np.int64)
    last = np.full(top + 1, -1, dtype=np.int64)
    for d in range(t_off.shape[0] - 1):
        for p in range(t_off[d], t_off[d + 1]):
            v = min(t[p], top)
            occ[v] += 1
            if last[v] != d:
                last[v] = d
                df[v] += 1
    return df, occ


@jit
def coded_runs_size(t, t_off, code, top):
    """``(m, runs)`` of :func:`coded_runs`: text length (separators included)
    and number of runs."""
    m = 0
    runs = 0
    for d in range(t_off.shape[0] - 1):
        inside = False
        for p in range(t_off[d], t_off[d + 1]):
            if code[min(t[p], top)] != 0:
                m += 1
                if not inside:
                    runs += 1
                    inside = True
            else:
                inside = False
    return m + runs, runs


@jit
def coded_runs(t, t_off, code, top, text, n_runs):
    """Every maximal run of tokens of *t* with a code (``code[min(t, top)] !=
    0``) inside a document, in codes, each followed by a separator 0, into
    *text* (sized by :func:`coded_runs_size`); as
    :func:`repetend.phrases._suffix_kernels.compact_runs` with every run kept,
    plus ``t_of`` (position in *t* of each text position, -1 at a separator).
    Returns ``(seg_doc, seg_orig, seg_cstart, seg_len, t_of)``."""
    m = text.shape[0]
    seg_doc = np.empty(n_runs, dtype=np.int32)
    seg_orig = np.empty(n_runs, dtype=np.int64)
    seg_cstart = np.empty(n_runs, dtype=np.int64)
    seg_len = np.empty(n_runs, dtype=np.int64)
    t_of = np.empty(m, dtype=np.int64)
    w = 0
    s = -1
    for d in range(t_off.shape[0] - 1):
        inside = False
        for p in range(t_off[d], t_off[d + 1] + 1):
            c = code[min(t[p], top)] if p < t_off[d + 1] else 0
            if c != 0:
                if not inside:
                    s += 1
                    seg_doc[s] = d
                    seg_orig[s] = p
                    seg_cstart[s] = w
                    inside = True
                text[w] = c
                t_of[w] = p
                w += 1
            elif inside:
                seg_len[s] = w - seg_cstart[s]
                text[w] = 0
                t_of[w] = -1
                w += 1
                inside = False
    return seg_doc, seg_orig, seg_cstart, seg_len, t_of


@jit
def lcp_and_docs(text, sa, seg_doc, seg_cstart, seg_len):
    """The LCP array of *sa* clamped at separators (0) and the document of
    every suffix in SA order (-1 for a separator suffix): the results of
    :func:`repetend.phrases._suffix_kernels.kasai_clamped` and
    ``docs_in_sa_order``, by the Φ method (Kärkkäinen, Manzini & Puglisi,
    CPM 2009): the permuted LCP is computed in text order, then the LCP and
    the document of each suffix are read together, one random access per
    suffix instead of Kasai's rank array and a second gather."""
    m = sa.shape[0]
    # phi[p] = the suffix before p in SA order (-1 for the first)
    phi = np.empty(m, dtype=np.int64)
    if m == 0:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
    phi[sa[0]] = -1
    for i in range(1, m):
        phi[sa[i]] = sa[i - 1]
    # document of every text position (-1 at separators)
    pdoc = np.full(m, -1, dtype=np.int64)
    for s in range(seg_doc.shape[0]):
        c = seg_cstart[s]
        for q in range(c, c + seg_len[s]):
            pdoc[q] = seg_doc[s]
    # permuted LCP in text order, packed with the document: plcp | (doc + 1) << 32
    h = 0
    for p in range(m):
        q = phi[p]
        if q < 0:
            h = 0
            phi[p] = (pdoc[p] + 1) << 32
            continue
        while text[p + h] != 0 and text[p + h] == text[q + h]:
            h += 1
        phi[p] = h | ((pdoc[p] + 1) << 32)
        if h > 0:
            h -= 1
    lcp = np.empty(m, dtype=np.int32)
    docsa = np.empty(m, dtype=np.int32)
    for i in range(m):
        v = phi[sa[i]]
        lcp[i] = v & 0xFFFFFFFF
        docsa[i] = (v >> 32) - 1
    lcp[0] = 0
    return lcp, docsa
