"""Compiled kernels of the BloomSpan phrase engine (the BloomSpan paper, §4).

Only ``@jit`` functions over arrays and scalars live here; validation,
allocation of the big arrays and the Python orchestration are in
:mod:`repetend.phrases.bloomspan`.

Conventions: ``tokens`` is the int32 corpus, ``doc_offsets`` the int64
document offsets, ``n`` the seed n-gram length, ``min_docs`` (σ) the minimal
number of distinct documents.  Positions are global token positions (int64); an
occurrence also carries its document (int32) so that its document bounds are
one lookup away.  Bitmasks hold one bit per corpus position in uint64 words
(bit ``p & 63`` of word ``p >> 6``).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit, pjit, prange
from ._periodic_kernels import MIN_OCCURRENCES, periodic_chain

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)

# ----------------------------------------------------------------------------------
# hashing and the two filters


@jit
def fnv1a_ngram(tokens, p, n):
    """FNV-1a 64 over the ``n`` int32 tokens at ``p`` (one 32-bit unit per token)."""
    h = _FNV_OFFSET
    for j in range(p, p + n):
        h ^= np.uint64(np.uint32(tokens[j]))
        h *= _FNV_PRIME
    return h


@jit
def word_df(tokens, doc_offsets, vocab_size):
    """Exact document frequency of every token id (int32 [vocab_size]).
    Branch-free: a token's first sighting in a document is data, not a branch
    (2x faster on real text)."""
    df = np.zeros(vocab_size, dtype=np.int32)
    last = np.full(vocab_size, -1, dtype=np.int32)
    for d in range(doc_offsets.shape[0] - 1):
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            t = tokens[p]
            df[t] += last[t] != d
            last[t] = d
    return df


@jit
def group_word_df(tokens, doc_offsets, doc_order, label, n_groups, vocab_size):
    """Exact number of distinct document *groups* holding every token id (int32
    [vocab_size]): documents are visited in ``doc_order``, which lists the
    documents of each group one after the other, so a token's first sighting in
    a group is a change of the group stamp (as :func:`word_df` per document)."""
    df = np.zeros(vocab_size, dtype=np.int32)
    last = np.full(vocab_size, -1, dtype=np.int32)
    for i in range(doc_order.shape[0]):
        d = doc_order[i]
        g = label[d]
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            t = tokens[p]
            df[t] += last[t] != g
            last[t] = g
    return df


@jit
def new_stamp(label):
    """The stamp array of distinct-group counting (:func:`count_distinct`): one
    slot per group, -1; one dummy slot without labels."""
    if label is None:
        return np.full(1, -1, dtype=np.int64)
    top = 0
    for i in range(label.shape[0]):
        if label[i] > top:
            top = label[i]
    return np.full(top + 1, -1, dtype=np.int64)


@jit
def count_distinct(doc, a, b, label, stamp, run):
    """Distinct documents of ``doc[a:b]`` (ascending there: one count per
    change) or, with ``label`` (the group of every document), distinct groups:
    ``stamp[group] == run`` marks a group seen in this run, so the order does not
    matter; ``run`` must differ from every earlier run on this stamp."""
    c = 0
    if label is None:
        last = -1
        for k in range(a, b):
            if doc[k] != last:
                last = doc[k]
                c += 1
    else:
        for k in range(a, b):
            g = label[doc[k]]
            if stamp[g] != run:
                stamp[g] = run
                c += 1
    return c


_BATCH = 512  # hashed n-grams buffered before their counters are touched


@jit
def _bump(filt, buf, nb):
    for k in range(nb):
        i = buf[k]
        c = filt[i]
        filt[i] = c + (c < 255)  # saturating, branch-free


@jit
def count_filter(tokens, doc_offsets, n, word_ok, filt, shift):
    """One linear pass: every in-document n-gram whose tokens all pass the
    word-df filter (``word_ok[t] != 0``) increments its counter.

    ``filt`` is a uint8 array of ``2**(64 - shift)`` counters; the counter of
    an n-gram is ``filt[fnv1a_ngram >> shift]`` (the top bits of the hash, which
    FNV mixes best).  Counters saturate at 255, so the counter of a counted
    n-gram is never below ``min(true count, 255)``.  n-grams with a rare word
    are not counted: the word filter rejects them anyway, and leaving them out
    saves their hashing and lowers the collisions of the others.

    The hashes are computed for a batch of n-grams first and the counters
    touched afterwards: the independent cache misses then overlap (measured
    1.5-4x faster than hashing and counting in one loop once the filter
    outgrows the L2 cache).
    """
    sh = np.uint64(shift)
    buf = np.empty(_BATCH, dtype=np.uint64)
    nb = 0
    for d in range(doc_offsets.shape[0] - 1):
        s = doc_offsets[d]
        e = doc_offsets[d + 1]
        run = 0
        for q in range(s, e):
            if word_ok[tokens[q]]:
                run += 1
            else:
                run = 0
            if run >= n:
                buf[nb] = fnv1a_ngram(tokens, q - n + 1, n) >> sh
                nb += 1
                if nb == _BATCH:
                    _bump(filt, buf, nb)
                    nb = 0
    _bump(filt, buf, nb)


@jit
def filter_value(filt, shift, tokens, p, n):
    """The counter the filter shows for the n-gram at ``p``."""
    return filt[fnv1a_ngram(tokens, p, n) >> np.uint64(shift)]


@jit
def _flush_survivors(filt, hbuf, pbuf, nb, use_filter, threshold, bits):
    cnt = 0
    for k in range(nb):
        if use_filter and filt[hbuf[k]] < threshold:
            continue
        p = pbuf[k]
        bits[p >> 6] |= _ONE << np.uint64(p & 63)
        cnt += 1
    return cnt


@pjit
def mark_survivors(tokens, doc_offsets, block_doc, block, n, word_ok,
                   filt, shift, use_filter, threshold, bits, counts):
    """Second pass (parallel over blocks of ``block`` positions, a multiple of 64):
    set bit p of ``bits`` when the n-gram at p lies inside one document, all its
    tokens pass the word-df filter and (if ``use_filter``) its counter is at least
    ``threshold`` = min(σ, 255).  ``counts[b]`` receives the survivors of block b;
    ``block_doc[b]`` is the document holding the block's first position.
    Filter lookups are batched as in :func:`count_filter`.
    """
    n_tok = tokens.shape[0]
    nb_blocks = counts.shape[0]
    sh = np.uint64(shift)
    for b in prange(nb_blocks):
        hbuf = np.empty(_BATCH, dtype=np.uint64)
        pbuf = np.empty(_BATCH, dtype=np.int64)
        nb = 0
        lo = b * block
        hi = min(lo + block, n_tok)
        d = block_doc[b]
        cnt = 0
        ok_run = 0      # consecutive word-ok tokens ending at q (inside its document)
        q_doc_end = -1
        # walk q = last token of the n-gram starting at p = q - n + 1
        q = lo
        last_q = min(hi + n - 1, n_tok)
        while q < last_q:
            while doc_offsets[d + 1] <= q:
                d += 1
            if q >= q_doc_end:  # entering a new document: the run restarts
                q_doc_end = doc_offsets[d + 1]
                ok_run = 0
            if word_ok[tokens[q]]:
                ok_run += 1
            else:
                ok_run = 0
            p = q - n + 1
            if p >= lo and ok_run >= n and p >= doc_offsets[d]:
                if use_filter:
                    hbuf[nb] = fnv1a_ngram(tokens, p, n) >> sh
                pbuf[nb] = p
                nb += 1
                if nb == _BATCH:
                    cnt += _flush_survivors(filt, hbuf, pbuf, nb, use_filter, threshold, bits)
                    nb = 0
            q += 1
        cnt += _flush_survivors(filt, hbuf, pbuf, nb, use_filter, threshold, bits)
        counts[b] = cnt


@pjit
def fill_survivors(bits, doc_offsets, block_doc, block, n_tok, starts, out_pos, out_doc):
    """Write the survivors of every block (positions ascending) at ``starts[b]``."""
    nb = starts.shape[0]
    for b in prange(nb):
        lo = b * block
        hi = min(lo + block, n_tok)
        d = block_doc[b]
        k = starts[b]
        for w in range(lo >> 6, (hi + 63) >> 6):
            word = bits[w]
            if word == 0:
                continue
            for j in range(64):
                if (word >> np.uint64(j)) & _ONE:
                    p = (w << 6) + j
                    while doc_offsets[d + 1] <= p:
                        d += 1
                    out_pos[k] = p
                    out_doc[k] = d
                    k += 1


@jit
def ngram_keys(tokens, pos, n):
    """Sort key of each survivor: exact for n <= 2 (token, or two tokens packed
    in 64 bits), the top 32 bits of the FNV-1a hash for n >= 3 (equal n-grams
    get equal keys; different n-grams sharing a key are split by
    :func:`group_seeds`)."""
    m = pos.shape[0]
    out = np.empty(m, dtype=np.uint64)
    for i in range(m):
        p = pos[i]
        if n == 1:
            out[i] = np.uint64(np.uint32(tokens[p]))
        elif n == 2:
            out[i] = (np.uint64(np.uint32(tokens[p])) << np.uint64(32)) | np.uint64(np.uint32(tokens[p + 1]))
        else:
            out[i] = fnv1a_ngram(tokens, p, n) >> np.uint64(32)
    return out


@jit
def radix_sort_occurrences(keys, pos, doc, nbits):
    """Sort (key, position, document) triples by key, stably (positions stay
    ascending inside equal keys): LSD radix, 16-bit digits, keys < 2**nbits.
    The input arrays serve as one of the two ping-pong buffers; returns the
    sorted (keys, pos, doc)."""
    m = keys.shape[0]
    k = keys
    p = pos
    d = doc
    if m < 2:
        return k, p, d
    k2 = np.empty_like(k)
    p2 = np.empty_like(p)
    d2 = np.empty_like(d)
    cnt = np.empty(65537, dtype=np.int64)
    shift = 0
    while shift < nbits:
        sh = np.uint64(shift)
        cnt[:] = 0
        for j in range(m):
            cnt[((k[j] >> sh) & np.uint64(0xFFFF)) + 1] += 1
        if cnt[1 + ((k[0] >> sh) & np.uint64(0xFFFF))] == m:
            shift += 16  # one digit value only: nothing moves
            continue
        for b in range(65536):
            cnt[b + 1] += cnt[b]
        for j in range(m):
            dgt = (k[j] >> sh) & np.uint64(0xFFFF)
            t = cnt[dgt]
            cnt[dgt] = t + 1
            k2[t] = k[j]
            p2[t] = p[j]
            d2[t] = d[j]
        k, k2 = k2, k
        p, p2 = p2, p
        d, d2 = d2, d
        shift += 16
    return k, p, d


@jit
def _same_ngram(tokens, p, q, n):
    for j in range(n):
        if tokens[p + j] != tokens[q + j]:
            return False
    return True


@jit
def group_seeds(tokens, pos, doc, key, n, min_docs, label=None):
    """Merge the key-sorted survivors into seeds with exact df.

    ``pos``/``doc`` are sorted by ``key`` with positions ascending inside equal
    keys.  A run of equal hash keys holding different n-grams (a 64-bit hash
    collision) is split by a stable partition on the n-gram, in place.
    Returns (seed_start, seed_end, seed_df) of the seeds with df >= σ; with
    ``label`` (int32, the group of every document) df counts distinct groups.
    """
    stamp = new_stamp(label)
    run = 0
    m = pos.shape[0]
    s_start = np.empty(m, dtype=np.int64)
    s_end = np.empty(m, dtype=np.int64)
    s_df = np.empty(m, dtype=np.int64)
    ns = 0
    a = 0
    while a < m:
        b = a + 1
        while b < m and key[b] == key[a]:
            b += 1
        mixed = False
        if n >= 3:
            for k in range(a + 1, b):
                if not _same_ngram(tokens, pos[a], pos[k], n):
                    mixed = True
                    break
        if mixed:
            # stable partition of [a, b) by n-gram class (first-seen order)
            r = b - a
            cls = np.empty(r, dtype=np.int64)
            reps = np.empty(r, dtype=np.int64)
            nc = 0
            for k in range(r):
                c = -1
                for t in range(nc):
                    if _same_ngram(tokens, reps[t], pos[a + k], n):
                        c = t
                        break
                if c < 0:
                    reps[nc] = pos[a + k]
                    c = nc
                    nc += 1
                cls[k] = c
            order = np.argsort(cls, kind="mergesort")
            tp = pos[a:b].copy()
            td = doc[a:b].copy()
            for k in range(r):
                pos[a + k] = tp[order[k]]
                doc[a + k] = td[order[k]]
            k0 = 0
            while k0 < r:
                k1 = k0 + 1
                while k1 < r and cls[order[k1]] == cls[order[k0]]:
                    k1 += 1
                df = count_distinct(doc, a + k0, a + k1, label, stamp, run)
                run += 1
                if df >= min_docs:
                    s_start[ns] = a + k0
                    s_end[ns] = a + k1
                    s_df[ns] = df
                    ns += 1
                k0 = k1
        else:
            df = count_distinct(doc, a, b, label, stamp, run)
            run += 1
            if df >= min_docs:
                s_start[ns] = a
                s_end[ns] = b
                s_df[ns] = df
                ns += 1
        a = b
    return s_start[:ns].copy(), s_end[:ns].copy(), s_df[:ns].copy()


@jit
def compact_seeds(pos, doc, s_start, s_end):
    """Copy the occurrences of the kept seeds into fresh arrays (CSR by seed)."""
    ns = s_start.shape[0]
    off = np.empty(ns + 1, dtype=np.int64)
    off[0] = 0
    for i in range(ns):
        off[i + 1] = off[i] + (s_end[i] - s_start[i])
    total = off[ns]
    opos = np.empty(total, dtype=np.int64)
    odoc = np.empty(total, dtype=np.int32)
    for i in range(ns):
        k = off[i]
        for j in range(s_start[i], s_end[i]):
            opos[k] = pos[j]
            odoc[k] = doc[j]
            k += 1
    return off, opos, odoc


# ----------------------------------------------------------------------------------
# coverage bitmask


@jit
def set_range(bits, lo, hi):
    """Set bits [lo, hi)."""
    if hi <= lo:
        return
    w0 = lo >> 6
    w1 = (hi - 1) >> 6
    m0 = _ALL << np.uint64(lo & 63)
    m1 = _ALL >> np.uint64(63 - ((hi - 1) & 63))
    if w0 == w1:
        bits[w0] |= m0 & m1
        return
    bits[w0] |= m0
    for w in range(w0 + 1, w1):
        bits[w] = _ALL
    bits[w1] |= m1


@jit
def all_set(bits, lo, hi):
    """True when bits [lo, hi) are all set."""
    if hi <= lo:
        return True
    w0 = lo >> 6
    w1 = (hi - 1) >> 6
    m0 = _ALL << np.uint64(lo & 63)
    m1 = _ALL >> np.uint64(63 - ((hi - 1) & 63))
    if w0 == w1:
        m = m0 & m1
        return (bits[w0] & m) == m
    if (bits[w0] & m0) != m0:
        return False
    for w in range(w0 + 1, w1):
        if bits[w] != _ALL:
            return False
    return (bits[w1] & m1) == m1


@jit
def popcount_words(bits):
    total = 0
    for w in range(bits.shape[0]):
        x = bits[w]
        x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
        x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
        x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
        total += np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))
    return total


@jit
def mark_occurrences(bits, occ_offsets, occ_starts, lengths, keep):
    """Set the coverage bits of every occurrence of every kept phrase."""
    for i in range(lengths.shape[0]):
        if keep[i]:
            for k in range(occ_offsets[i], occ_offsets[i + 1]):
                set_range(bits, occ_starts[k], occ_starts[k] + lengths[i])


# ----------------------------------------------------------------------------------
# right growth by DFS


@jit
def _grow_i64(a, need):
    if need <= a.shape[0]:
        return a
    m = max(need, 2 * a.shape[0])
    b = np.empty(m, dtype=a.dtype)
    b[:a.shape[0]] = a
    return b


@jit
def _record(c_len, c_df, c_off, c_occ, c_seed, nc, occ_pos, a, r, m, df, cover, s):
    """Append candidate ``nc`` (length m, occurrences occ_pos[a:a+r], grown
    from seed s) and mark its occurrences in the coverage mask; returns the
    (maybe grown) arrays."""
    c_len = _grow_i64(c_len, nc + 1)
    c_seed = _grow_i64(c_seed, nc + 1)
    c_seed[nc] = s
    c_df = _grow_i64(c_df, nc + 1)
    c_off = _grow_i64(c_off, nc + 2)
    base = c_off[nc]
    c_occ = _grow_i64(c_occ, base + r)
    for k in range(r):
        c_occ[base + k] = occ_pos[a + k]
        set_range(cover, occ_pos[a + k], occ_pos[a + k] + m)
    c_len[nc] = m
    c_df[nc] = df
    c_off[nc + 1] = base + r
    return c_len, c_df, c_off, c_occ, c_seed


@jit
def grow_seeds(tokens, doc_offsets, seed_off, occ_pos, occ_doc, seed_df, order,
               n, min_docs, min_len, cover, skip_covered, label=None):
    """Grow every seed to the right by depth-first search on the token array.

    Seeds are visited in ``order`` (Ψ order).  A node is a phrase of length m
    whose occurrences are the segment ``occ_pos[a:b]`` (positions ascending,
    documents in ``occ_doc``).  At a node:

    * left-neighbour rule: if every occurrence has a left token inside its
      document and all these tokens are equal, the node and its whole subtree
      are dropped (each phrase there extends to the left with the same df);
    * occurrences are grouped by their next token (document ends form no
      group); a group covering >= σ documents is a frequent extension and
      becomes a child, its occurrences a sub-segment of the parent's (the
      segment is permuted in place, stable, so each child stays sorted);
    * a node without frequent extension is right-maximal: a candidate, kept
      when m >= ``min_len``; its occurrences are marked in ``cover``.

    A seed whose occurrences are all covered already is counted; it is skipped
    only when ``skip_covered`` (the BloomSpan paper's heuristic, not exact in general).

    Returns the candidates (lengths, df, occurrence offsets, occurrence
    starts), the counters [nodes, pruned_left, seeds_covered,
    seeds_skipped, chain_steps] and the seed each candidate grew from (an
    index into ``seed_off``; the out-of-core path orders candidates by it).
    With ``label`` (int32, the group of every document) a df counts distinct
    groups (:func:`count_distinct`) instead of documents.
    """
    stamp = new_stamp(label)
    run = 0
    ns = seed_off.shape[0] - 1
    max_occ = 1
    for s in range(ns):
        max_occ = max(max_occ, seed_off[s + 1] - seed_off[s])
    st_a = np.empty(max_occ + 1, dtype=np.int64)
    st_b = np.empty(max_occ + 1, dtype=np.int64)
    st_m = np.empty(max_occ + 1, dtype=np.int64)
    st_df = np.empty(max_occ + 1, dtype=np.int64)
    keys = np.empty(max_occ, dtype=np.int64)
    tpos = np.empty(max_occ, dtype=np.int64)
    tdoc = np.empty(max_occ, dtype=np.int32)

    c_len = np.empty(16, dtype=np.int64)
    c_df = np.empty(16, dtype=np.int64)
    c_off = np.zeros(17, dtype=np.int64)
    c_occ = np.empty(64, dtype=np.int64)
    c_seed = np.empty(16, dtype=np.int64)
    nc = 0
    stats = np.zeros(5, dtype=np.int64)

    for oi in range(order.shape[0]):
        s = order[oi]
        a0 = seed_off[s]
        b0 = seed_off[s + 1]
        covered = True
        for k in range(a0, b0):
            if not all_set(cover, occ_pos[k], occ_pos[k] + n):
                covered = False
                break
        if covered:
            stats[2] += 1
            if skip_covered:
                stats[3] += 1
                continue
        top = 0
        st_a[0] = a0
        st_b[0] = b0
        st_m[0] = n
        st_df[0] = seed_df[s]
        top = 1
        while top > 0:
            top -= 1
            a = st_a[top]
            b = st_b[top]
            m = st_m[top]
            df = st_df[top]
            stats[0] += 1
            # left-neighbour rule
            p0 = occ_pos[a]
            if p0 > doc_offsets[occ_doc[a]]:
                lt = tokens[p0 - 1]
                same = True
                for k in range(a + 1, b):
                    p = occ_pos[k]
                    if p == doc_offsets[occ_doc[k]] or tokens[p - 1] != lt:
                        same = False
                        break
                if same:
                    stats[1] += 1
                    continue
            # periodic runs: walk their chain of single-child nodes at once
            if b - a >= MIN_OCCURRENCES:
                pst, pb, pm, pdf = periodic_chain(tokens, doc_offsets, occ_pos, occ_doc,
                                                  a, b, m, df, min_docs, stats, label)
                if pst == 1:
                    continue
                if pst == 2:
                    b = pb
                    m = pm
                    df = pdf
            # all occurrences continue with one token: extend in place (same
            # occurrences, same df, same left neighbours)
            while True:
                p = occ_pos[a]
                q = p + m
                if q >= doc_offsets[occ_doc[a] + 1]:
                    break
                t = tokens[q]
                one = True
                for k in range(a + 1, b):
                    q = occ_pos[k] + m
                    if q >= doc_offsets[occ_doc[k] + 1] or tokens[q] != t:
                        one = False
                        break
                if not one:
                    break
                m += 1
                stats[4] += 1
            # group by next token (-1 = document end)
            r = b - a
            for k in range(r):
                q = occ_pos[a + k] + m
                if q < doc_offsets[occ_doc[a + k] + 1]:
                    keys[k] = tokens[q]
                else:
                    keys[k] = -1
            # fast path: at most one next token besides document ends (a
            # phrase growing while some occurrences stop): stable filter, no sort
            t0 = -1
            multi = False
            for k in range(r):
                kk = keys[k]
                if kk >= 0:
                    if t0 < 0:
                        t0 = kk
                    elif kk != t0:
                        multi = True
                        break
            if not multi:
                gdf = 0
                last = -1
                cnt = 0
                for k in range(r):
                    if t0 >= 0 and keys[k] == t0:
                        cnt += 1
                        if label is None:
                            if occ_doc[a + k] != last:
                                last = occ_doc[a + k]
                                gdf += 1
                        else:
                            gg = label[occ_doc[a + k]]
                            if stamp[gg] != run:
                                stamp[gg] = run
                                gdf += 1
                run += 1
                if t0 >= 0 and gdf >= min_docs:
                    j = a
                    for k in range(r):
                        if keys[k] == t0:
                            occ_pos[j] = occ_pos[a + k]
                            occ_doc[j] = occ_doc[a + k]
                            j += 1
                    st_a[top] = a
                    st_b[top] = j
                    st_m[top] = m + 1
                    st_df[top] = gdf
                    top += 1
                    continue
                if m >= min_len:
                    c_len, c_df, c_off, c_occ, c_seed = _record(
                        c_len, c_df, c_off, c_occ, c_seed, nc, occ_pos, a, r, m, df, cover, s)
                    nc += 1
                continue
            perm = np.argsort(keys[:r], kind="mergesort")
            n_freq = 0
            g0 = 0
            while g0 < r:
                kg = keys[perm[g0]]
                g1 = g0 + 1
                last = occ_doc[a + perm[g0]]
                gdf = 1
                if label is not None:
                    stamp[label[last]] = run
                while g1 < r and keys[perm[g1]] == kg:
                    dd = occ_doc[a + perm[g1]]
                    if label is None:
                        if dd != last:
                            last = dd
                            gdf += 1
                    else:
                        gg = label[dd]
                        if stamp[gg] != run:
                            stamp[gg] = run
                            gdf += 1
                    g1 += 1
                run += 1
                if kg >= 0 and gdf >= min_docs:
                    n_freq += 1
                g0 = g1
            if n_freq == 0:
                if m >= min_len:
                    # candidate: record it, mark its occurrences
                    c_len, c_df, c_off, c_occ, c_seed = _record(
                        c_len, c_df, c_off, c_occ, c_seed, nc, occ_pos, a, r, m, df, cover, s)
                    nc += 1
                continue
            # permute the segment (stable) and push the frequent groups
            for k in range(r):
                tpos[k] = occ_pos[a + perm[k]]
                tdoc[k] = occ_doc[a + perm[k]]
            for k in range(r):
                occ_pos[a + k] = tpos[k]
                occ_doc[a + k] = tdoc[k]
            g0 = 0
            while g0 < r:
                kg = keys[perm[g0]]
                g1 = g0 + 1
                while g1 < r and keys[perm[g1]] == kg:
                    g1 += 1
                gdf = count_distinct(occ_doc, a + g0, a + g1, label, stamp, run)
                run += 1
                if kg >= 0 and gdf >= min_docs:
                    st_a[top] = a + g0
                    st_b[top] = a + g1
                    st_m[top] = m + 1
                    st_df[top] = gdf
                    top += 1
                g0 = g1
    return (c_len[:nc].copy(), c_df[:nc].copy(), c_off[:nc + 1].copy(),
            c_occ[:c_off[nc]].copy(), stats, c_seed[:nc].copy())


# ----------------------------------------------------------------------------------
# maximality: inverted index token -> candidates, queried by the rarest token


@jit
def _contains(tokens, big, big_len, small, small_len):
    for i in range(big_len - small_len + 1):
        ok = True
        for j in range(small_len):
            if tokens[big + i + j] != tokens[small + j]:
                ok = False
                break
        if ok:
            return True
    return False


@jit
def absorb(tokens, first, lengths, vocab_size):
    """keep[i] = 0 when candidate i is a proper substring of another candidate.

    An inverted index maps every token to the candidates containing it; for
    candidate C only the posting list of C's rarest token (shortest list) is
    scanned, since any candidate containing C contains that token.  A longer
    candidate found later thereby absorbs an earlier shorter one, and a shorter
    one is dropped when a longer one exists, whatever the discovery order.
    """
    k_n = lengths.shape[0]
    cnt = np.zeros(vocab_size + 1, dtype=np.int64)
    mark = np.full(vocab_size, -1, dtype=np.int64)
    for i in range(k_n):
        for j in range(first[i], first[i] + lengths[i]):
            t = tokens[j]
            if mark[t] != i:
                mark[t] = i
                cnt[t + 1] += 1
    for t in range(vocab_size):
        cnt[t + 1] += cnt[t]
    post = np.empty(cnt[vocab_size], dtype=np.int64)
    cur = cnt[:vocab_size].copy()
    mark[:] = -1
    for i in range(k_n):
        for j in range(first[i], first[i] + lengths[i]):
            t = tokens[j]
            if mark[t] != i:
                mark[t] = i
                post[cur[t]] = i
                cur[t] += 1
    keep = np.ones(k_n, dtype=np.uint8)
    for i in range(k_n):
        best = -1
        best_len = 1 << 62
        for j in range(first[i], first[i] + lengths[i]):
            t = tokens[j]
            ln = cnt[t + 1] - cnt[t]
            if ln < best_len:
                best_len = ln
                best = t
        for k in range(cnt[best], cnt[best + 1]):
            f = post[k]
            if lengths[f] <= lengths[i]:
                continue
            if _contains(tokens, first[f], lengths[f], first[i], lengths[i]):
                keep[i] = 0
                break
    return keep


@jit
def select_phrases(c_len, c_df, c_off, c_occ, keep):
    """Gather the kept candidates into (lengths, df, occ_offsets, occ_starts)."""
    k_n = c_len.shape[0]
    nk = 0
    tot = 0
    for i in range(k_n):
        if keep[i]:
            nk += 1
            tot += c_off[i + 1] - c_off[i]
    lengths = np.empty(nk, dtype=np.int64)
    df = np.empty(nk, dtype=np.int64)
    off = np.empty(nk + 1, dtype=np.int64)
    occ = np.empty(tot, dtype=np.int64)
    off[0] = 0
    j = 0
    for i in range(k_n):
        if keep[i]:
            lengths[j] = c_len[i]
            df[j] = c_df[i]
            base = off[j]
            for k in range(c_off[i], c_off[i + 1]):
                occ[base + k - c_off[i]] = c_occ[k]
            off[j + 1] = base + c_off[i + 1] - c_off[i]
            j += 1
    return lengths, df, off, occ
