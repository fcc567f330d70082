"""Compiled kernels of the gapped sequence and its index: the sequence, the
peeling rounds, the byte-coded suffix array, LCP and documents, and locating
patterns (:mod:`.gapped_index`, :mod:`.find`).

Only ``@jit`` functions over arrays and scalars: no I/O, no Python objects.
"""

from __future__ import annotations

import numpy as np

from ..._jit import jit, pjit, prange
from .._bloomspan_kernels import _same_ngram

# chunks of lcp_and_docs's text-order pass (each restarts Kasai's h at 0):
# enough for any thread count here, too few to cost comparisons
_LCP_CHUNKS = 64
# chunks of expand_suffixes's suffix array of the distinct runs (a constant,
# as above: numba does not cache a kernel that asks for the thread count)
_EXPAND_CHUNKS = 64


@jit
def gapped_corpus(tokens, doc_offsets, run_offsets, run_starts, run_ends, keep, link, gap_id,
                  sentinel_base):
    """The kept covered runs of each document as one token sequence for the
    chain miner.

    The tokens of every run ``r`` with ``keep[r]`` are copied; between two kept
    runs of a document comes one *gap_id* token (a slot, whatever its length)
    when they are consecutive runs and ``link[r]`` says the stretch between
    run ``r`` and the next is a slot, else a fresh sentinel (``sentinel_base``,
    +1, …, never repeated, so no frequent phrase crosses it).  Returns ``(t,
    t_start, t_end, t_off)``: the sequence, the original global token range of
    each of its positions (a gap or sentinel: the stretch between the runs),
    and per-document offsets.
    """
    n_docs = doc_offsets.shape[0] - 1
    total = 0
    for d in range(n_docs):
        first = True
        for r in range(run_offsets[d], run_offsets[d + 1]):
            if keep[r]:
                total += run_ends[r] - run_starts[r] + (0 if first else 1)
                first = False
    t = np.empty(total, dtype=np.int32)
    t_start = np.empty(total, dtype=np.int64)
    t_end = np.empty(total, dtype=np.int64)
    t_off = np.zeros(n_docs + 1, dtype=np.int64)
    pos = 0
    sentinel = sentinel_base
    for d in range(n_docs):
        t_off[d] = pos
        prev = -1
        for r in range(run_offsets[d], run_offsets[d + 1]):
            if not keep[r]:
                continue
            if prev >= 0:
                if prev == r - 1 and link[prev]:
                    t[pos] = gap_id
                else:
                    t[pos] = sentinel
                    sentinel += 1
                t_start[pos] = run_ends[prev]
                t_end[pos] = run_starts[r]
                pos += 1
            for p in range(run_starts[r], run_ends[r]):
                t[pos] = tokens[p]
                t_start[pos] = p
                t_end[pos] = p + 1
                pos += 1
            prev = r
    t_off[n_docs] = pos
    return t[:pos], t_start[:pos], t_end[:pos], t_off


@jit
def peel(t, occ_offsets, occ_starts, lengths, next_sentinel):
    """Replace every position of every occurrence (phrase i has length
    ``lengths[i]`` and starts ``occ_starts[occ_offsets[i]:occ_offsets[i + 1]]``)
    by a fresh sentinel, in place; returns the next unused sentinel."""
    s = next_sentinel
    for i in range(lengths.shape[0]):
        # a phrase's occurrences ascend: the part of one occurrence that lies
        # inside the previous ones was peeled by them (overlapping occurrences
        # of a periodic phrase would otherwise cost occurrences × length)
        done = np.int64(-1)
        prev = np.int64(-1)
        for k in range(occ_offsets[i], occ_offsets[i + 1]):
            q = occ_starts[k]
            if q < prev:            # not ascending (never from the miners): no skip
                done = np.int64(-1)
            prev = q
            end = q + lengths[i]
            p = max(q, done)
            while p < end:
                if t[p] < next_sentinel:
                    t[p] = s
                    s += 1
                p += 1
            if end > done:
                done = end
    return s


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


@pjit
def lcp_and_docs(text, sa, seg_doc, seg_cstart, seg_len):
    """The LCP array of *sa* clamped at separators (0) and the document of
    every suffix in SA order (-1 for a separator suffix): the results of
    :func:`repetend.phrases._suffix_kernels.kasai_clamped` and
    ``docs_in_sa_order``.  One scatter stores, at each text position, the
    suffix before it in SA order (Φ, Kärkkäinen, Manzini & Puglisi, CPM 2009)
    and its rank; the LCPs are then computed in text order (Kasai's
    amortization) and written with the documents at their ranks: random
    writes instead of the random reads of a gather, which cost less.

    Both passes run on every core: the scatter writes each text position
    once, and the text is cut at run starts into ``_LCP_CHUNKS`` chunks,
    each computing its LCPs from h = 0 (Kasai's carried h is only a lower
    bound, so a chunk that starts from 0 does a few more comparisons and
    writes the same values)."""
    m = sa.shape[0]
    if m == 0:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
    # at text position sa[i]: (sa[i - 1] + 1) | i << 32, 0 for the first suffix
    pr = np.empty(m, dtype=np.int64)
    pr[sa[0]] = 0
    for i in prange(1, m):
        pr[sa[i]] = (np.int64(sa[i - 1]) + 1) | (np.int64(i) << 32)
    lcp = np.empty(m, dtype=np.int32)
    docsa = np.empty(m, dtype=np.int32)
    n_seg = seg_doc.shape[0]
    # chunk c covers runs cut[c] .. cut[c + 1] - 1 with the separators before
    # each; the last chunk also the separators after the last run
    n_chunks = max(1, min(_LCP_CHUNKS, n_seg))
    cut = np.empty(n_chunks + 1, dtype=np.int64)
    for k in range(n_chunks):          # nondecreasing, cut[0] = 0
        cut[k] = np.searchsorted(seg_cstart, (m * k) // n_chunks)
    cut[n_chunks] = n_seg + 1
    for ci in prange(n_chunks):
        s_lo = cut[ci]
        s_hi = cut[ci + 1]
        p = 0 if s_lo == 0 else seg_cstart[s_lo - 1] + seg_len[s_lo - 1]
        h = 0
        for s in range(s_lo, s_hi):
            # the separators before run s (document -1), then run s
            if s < n_seg:
                rb = seg_cstart[s]
                re = rb + seg_len[s]
                d = seg_doc[s]
            else:
                rb = m
                re = m
                d = -1
            for part in range(2):
                stop = rb if part == 0 else re
                doc = -1 if part == 0 else d
                while p < stop:
                    v = pr[p]
                    q = (v & 0xFFFFFFFF) - 1
                    r = v >> 32
                    if q < 0:
                        h = 0
                    else:
                        while text[p + h] != 0 and text[p + h] == text[q + h]:
                            h += 1
                    lcp[r] = h
                    docsa[r] = doc
                    if h > 0:
                        h -= 1
                    p += 1
    lcp[0] = 0
    return lcp, docsa


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
def _sort_positions(x, tmp, bits):
    """Sort *x* (non-negative, below ``2**bits``) in place: an LSD radix sort
    in 12-bit digits (or fewer, in equal passes) for long ranges, where it
    beats a comparison sort; *tmp* holds at least ``x.shape[0]`` values."""
    k = x.shape[0]
    if k < 2048:
        x.sort()
        return
    n_pass = (bits + 11) // 12
    digit = (bits + n_pass - 1) // n_pass
    mask = (1 << digit) - 1
    cnt = np.empty(1 << digit, dtype=np.int64)
    src = x
    dst = tmp[:k]
    shift = 0
    for _ in range(n_pass):
        cnt[:] = 0
        for i in range(k):
            cnt[(src[i] >> shift) & mask] += 1
        acc = 0
        for d in range(cnt.shape[0]):
            c = cnt[d]
            cnt[d] = acc
            acc += c
        for i in range(k):
            v = src[i]
            d = (v >> shift) & mask
            dst[cnt[d]] = v
            cnt[d] += 1
        src, dst = dst, src
        shift += digit
    if n_pass % 2 == 1:
        x[:] = src


@jit
def match_all_text(text, sa, t_of, t, t_doc, keys, kcodes, key_off, wild_below, max_range,
                   wild_code):
    """Every occurrence of every key (``keys[key_off[i]:key_off[i + 1]]``) in
    *t* within one document, through the suffix array *sa* of a compacted text
    (the runs of frequent tokens of *t* in dense codes, each run followed by a
    separator 0; ``t_of`` maps a text position to its position in *t*).  A
    negative key token is a wildcard: any token ``< wild_below``, whose code
    (in a run) is anything but *wild_code* (the code of ``wild_below``, 0 if
    it has none).

    Key i is skipped (``skipped[i]``, no positions) when the suffix-array range
    of its segment (its longest wildcard-free run, the first of equals) is
    longer than ``max_range[i]``.  Otherwise the range of its *rarest* wildcard-free
    run (a binary search in codes, ``kcodes``, each ``>= 1``) is scanned and
    every hit checked whole; a run that is the whole key needs no check
    (a text run lies in one document, between sentinels).  The check reads
    the text outwards from the hit while it stays inside the hit's run
    (consecutive positions of *t* in one document, every token coded), so
    most hits cost no access to *t*; a key that leaves the run is checked in
    *t*.  Returns
    ``(offsets, positions, skipped)``; positions of key i are increasing.  One
    pass: the positions go to a buffer that doubles when full."""
    n = t.shape[0]
    mt = text.shape[0]
    n_k = key_off.shape[0] - 1
    out_off = np.zeros(n_k + 1, dtype=np.int64)
    skipped = np.zeros(n_k, dtype=np.bool_)
    out = np.empty(1 << 16, dtype=np.int64)
    tmp = np.empty(1 << 16, dtype=np.int64)
    bits = 1
    while (np.int64(1) << bits) <= n:
        bits += 1
    w = 0
    for i in range(n_k):
        a = key_off[i]
        m = key_off[i + 1] - a
        seg0 = 0
        seg_n = 0
        coded = True
        j = 0
        while j < m:                      # the longest wildcard-free run
            if keys[a + j] < 0:
                j += 1
                continue
            k = j
            while k < m and keys[a + k] >= 0:
                if kcodes[a + k] <= 0:
                    coded = False
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
        if w + hi - lo > out.shape[0]:
            bigger = np.empty(max(2 * out.shape[0], w + hi - lo), dtype=np.int64)
            bigger[:w] = out[:w]
            out = bigger
        if tmp.shape[0] < hi - lo:
            tmp = np.empty(hi - lo, dtype=np.int64)
        begin = w
        for r in range(lo, hi):
            if whole:
                out[w] = t_of[sa[r]]
                w += 1
                continue
            p = sa[r] - s0
            if coded and p >= 0 and p + m <= mt:
                # outwards from the hit (its segment matches): while no
                # separator is crossed, the text is t, token for token (two
                # loops: one helper for both directions made this kernel
                # 30-40 % slower on Debian, same-process A/B)
                inside = True
                ok = True
                for j in range(s0 - 1, -1, -1):
                    x = text[p + j]
                    if x == 0:
                        inside = False
                        break
                    kc = kcodes[a + j]
                    if x == wild_code if kc < 0 else x != kc:
                        ok = False
                        break
                if ok and inside:
                    for j in range(s0 + ln, m):
                        x = text[p + j]
                        if x == 0:
                            inside = False
                            break
                        kc = kcodes[a + j]
                        if x == wild_code if kc < 0 else x != kc:
                            ok = False
                            break
                if not ok:
                    continue
                if inside:
                    out[w] = t_of[p]
                    w += 1
                    continue
            q = t_of[sa[r]] - s0
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
            if ok:
                out[w] = q
                w += 1
        _sort_positions(out[begin:w], tmp, bits)
        out_off[i + 1] = w
    return out_off, out[:w].copy(), skipped


@jit
def run_classes(text, seg_cstart, seg_len, bits):
    """Equal runs of the text (``text[seg_cstart[s]:seg_cstart[s] +
    seg_len[s]]``) in one class: a hash table of ``2**bits`` slots (more than
    the runs) on a hash of the codes, every match checked code by code.
    Returns ``(cls, reps)``: the class of each run, numbered by first
    appearance, and the first run of each class."""
    n_runs = seg_cstart.shape[0]
    size = np.int64(1) << bits
    slot_h = np.zeros(size, dtype=np.uint64)
    slot_c = np.full(size, -1, dtype=np.int64)
    cls = np.empty(n_runs, dtype=np.int64)
    reps = np.empty(n_runs, dtype=np.int64)
    n_cls = 0
    for s in range(n_runs):
        c = seg_cstart[s]
        n = seg_len[s]
        h = np.uint64(n) * np.uint64(0x9E3779B97F4A7C15)
        for k in range(n):
            h = (h ^ np.uint64(text[c + k])) * np.uint64(0x100000001B3)
        h ^= h >> np.uint64(29)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(32)
        g = np.int64(h >> np.uint64(64 - bits))
        while True:
            u = slot_c[g]
            if u < 0:                   # a new class
                slot_c[g] = n_cls
                slot_h[g] = h
                cls[s] = n_cls
                reps[n_cls] = s
                n_cls += 1
                break
            if slot_h[g] == h:
                r = reps[u]
                if seg_len[r] == n and _same_ngram(text, seg_cstart[r], c, n):
                    cls[s] = u
                    break
            g = (g + 1) & (size - 1)
    return cls, reps[:n_cls].copy()


@jit
def distinct_runs(text, seg_cstart, seg_len, cls, reps, dtext):
    """The first run of each class, each followed by a separator, into
    *dtext*; returns ``(dstart, dclass, mem_off, mem_start)``: where each
    class starts in *dtext*, the class of each position of *dtext* (-1 at a
    separator), and where the runs of each class start in the text, in text
    order (``mem_start[mem_off[u]:mem_off[u + 1]]``)."""
    n_cls = reps.shape[0]
    dstart = np.empty(n_cls, dtype=np.int64)
    dclass = np.empty(dtext.shape[0], dtype=np.int32)
    w = 0
    for u in range(n_cls):
        r = reps[u]
        c = seg_cstart[r]
        dstart[u] = w
        for k in range(seg_len[r]):
            dtext[w] = text[c + k]
            dclass[w] = u
            w += 1
        dtext[w] = 0
        dclass[w] = -1
        w += 1
    n_runs = cls.shape[0]
    mem_off = np.zeros(n_cls + 1, dtype=np.int64)
    for s in range(n_runs):
        mem_off[cls[s] + 1] += 1
    for u in range(n_cls):
        mem_off[u + 1] += mem_off[u]
    fill = mem_off[:n_cls].copy()
    mem_start = np.empty(n_runs, dtype=np.int64)
    for s in range(n_runs):
        u = cls[s]
        mem_start[fill[u]] = seg_cstart[s]
        fill[u] += 1
    return dstart, dclass, mem_off, mem_start


@pjit
def expand_suffixes(dsa, dclass, dstart, mem_off, mem_start, seg_cstart, seg_len, m):
    """A suffix array of the text (*m* symbols: its runs, each followed by a
    separator) from that of its distinct runs (*dsa*): first every separator
    in text order, then each suffix of a distinct run as the same suffix in
    every run of its class, in text order.  Suffixes equal up to their first
    separator come out in another order than a full sort's (consecutive all
    the same), which no user of the index depends on: the LCPs clamp at
    separators, and intervals and located positions are sets.

    On every core: *dsa* is cut into ``_EXPAND_CHUNKS`` even chunks, each
    counts the suffixes it writes, a prefix sum over the chunks places them,
    and each chunk then writes its own slice (the same output as one pass)."""
    out = np.empty(m, dtype=np.int32)
    n_runs = seg_cstart.shape[0]
    for s in prange(n_runs):
        out[s] = seg_cstart[s] + seg_len[s]
    n_d = dsa.shape[0]
    n_chunks = max(1, min(_EXPAND_CHUNKS, n_d))
    at = np.zeros(n_chunks + 1, dtype=np.int64)
    for ci in prange(n_chunks):
        w = 0
        for i in range((n_d * ci) // n_chunks, (n_d * (ci + 1)) // n_chunks):
            u = dclass[dsa[i]]
            if u >= 0:
                w += mem_off[u + 1] - mem_off[u]
        at[ci + 1] = w
    at[0] = n_runs
    for ci in range(n_chunks):
        at[ci + 1] += at[ci]
    for ci in prange(n_chunks):
        w = at[ci]
        for i in range((n_d * ci) // n_chunks, (n_d * (ci + 1)) // n_chunks):
            x = dsa[i]
            u = dclass[x]
            if u < 0:
                continue
            j = x - dstart[u]
            for k in range(mem_off[u], mem_off[u + 1]):
                out[w] = mem_start[k] + j
                w += 1
    return out

