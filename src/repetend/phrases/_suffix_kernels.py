"""Compiled kernels of the ``suffix`` phrase engine (arrays and scalars only).

The suffix array is built over a *compacted* text: the stretches of at least
``min_len`` positions covered by k-grams of frequent tokens (df ``>= min_docs``)
that pass a one-sided counting filter — an exact filter: every occurrence of
a frequent phrase of length ``>= min_len >= k``, and of its frequent one-token
extensions, lies in such a stretch — each token renamed to a dense code
``>= 1`` and each run followed by a separator ``0`` (see :func:`kgram_cover`,
:func:`compact_runs`).  All LCP values are clamped at
separators, so an LCP-interval never spans a run or document boundary.
"""

from __future__ import annotations

import numpy as np

from repetend._jit import jit

from ._bloomspan_kernels import word_df as token_df  # noqa: F401  (one df kernel for both engines)

SEP = 0


@jit
def _mix(h, bits):
    h ^= h >> np.uint64(31)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(29)
    return np.int64(h >> np.uint64(64 - bits))


@jit
def kgram_cover(tokens, doc_offsets, code, k, bits, thr):
    """Positions that lie in some k-gram of frequent tokens whose counter in a
    counting filter reaches ``thr`` (bool ``[n]``).

    The filter has ``2**bits`` byte counters saturating at 255, indexed by a
    rolling polynomial hash of the k codes.  A counter is at least the number
    of occurrences — hence the df — of every k-gram hashed to it, so every
    k-gram with df ≥ σ passes (one-sided): every occurrence of a frequent
    phrase of length ≥ k lies inside the returned cover.
    """
    n = tokens.shape[0]
    cnt = np.zeros(np.int64(1) << bits, dtype=np.uint8)
    base = np.uint64(0x100000001B3)
    top = np.uint64(1)
    for _ in range(k - 1):
        top *= base
    cover = np.zeros(n, dtype=np.bool_)
    for sweep in range(2):
        for d in range(doc_offsets.shape[0] - 1):
            a = doc_offsets[d]
            b = doc_offsets[d + 1]
            h = np.uint64(0)
            valid = 0          # frequent tokens in a row ending at p
            end = a            # cover marked up to here (exclusive)
            for p in range(a, b):
                c = code[tokens[p]]
                if c == 0:
                    valid = 0
                    h = np.uint64(0)
                    continue
                if valid >= k:
                    h -= np.uint64(code[tokens[p - k]]) * top
                h = h * base + np.uint64(c)
                valid += 1
                if valid >= k:
                    g = _mix(h, bits)
                    if sweep == 0:
                        if cnt[g] < 255:
                            cnt[g] += 1
                    elif cnt[g] >= thr:
                        s0 = p - k + 1
                        if s0 < end:
                            s0 = end
                        for q in range(s0, p + 1):
                            cover[q] = True
                        end = p + 1
    return cover


@jit
def compact_runs(tokens, doc_offsets, code, min_len, cover):
    """The compacted text and its runs.

    A run is a maximal stretch of ``cover`` inside one document, kept when at
    least ``min_len`` long; ``code[t]`` is the dense code (``>= 1``) of a
    frequent token.  Returns ``(text int32 [m], seg_doc, seg_orig, seg_cstart,
    seg_len)``: run ``s`` of document ``seg_doc[s]`` starts at global token
    position ``seg_orig[s]``, occupies ``text[seg_cstart[s]:seg_cstart[s] +
    seg_len[s]]`` and is followed by a separator.
    """
    n_docs = doc_offsets.shape[0] - 1
    n_seg = 0
    kept = 0
    for d in range(n_docs):
        run = 0
        for p in range(doc_offsets[d], doc_offsets[d + 1] + 1):
            if p < doc_offsets[d + 1] and cover[p]:
                run += 1
            else:
                if run >= min_len:
                    n_seg += 1
                    kept += run
                run = 0
    m = kept + n_seg
    text = np.empty(m, dtype=np.int32)
    seg_doc = np.empty(n_seg, dtype=np.int32)
    seg_orig = np.empty(n_seg, dtype=np.int64)
    seg_cstart = np.empty(n_seg, dtype=np.int64)
    seg_len = np.empty(n_seg, dtype=np.int64)
    s = 0
    q = 0
    for d in range(n_docs):
        run = 0
        for p in range(doc_offsets[d], doc_offsets[d + 1] + 1):
            if p < doc_offsets[d + 1] and cover[p]:
                run += 1
            else:
                if run >= min_len:
                    seg_doc[s] = d
                    seg_orig[s] = p - run
                    seg_cstart[s] = q
                    seg_len[s] = run
                    for r in range(p - run, p):
                        text[q] = code[tokens[r]]
                        q += 1
                    text[q] = SEP
                    q += 1
                    s += 1
                run = 0
    return text, seg_doc, seg_orig, seg_cstart, seg_len


@jit
def kasai_clamped(text, sa):
    """LCP array (Kasai et al. 2001) whose comparisons stop at separators.

    ``lcp[i]`` is the longest common prefix of suffixes ``sa[i-1]`` and
    ``sa[i]`` that contains no separator; ``lcp[0] = 0``.  Returns ``(lcp,
    rank)``; ``rank`` is returned so the caller can reuse its memory.
    """
    m = text.shape[0]
    rank = np.empty(m, dtype=np.int32)
    for i in range(m):
        rank[sa[i]] = i
    lcp = np.zeros(m, dtype=np.int32)
    h = 0
    for p in range(m):
        r = rank[p]
        if r == 0:
            h = 0
            continue
        q = sa[r - 1]
        # the text ends with a separator, so p + h and q + h stay in range
        while text[p + h] != SEP and text[p + h] == text[q + h]:
            h += 1
        lcp[r] = h
        if h > 0:
            h -= 1
    return lcp, rank


@jit
def docs_in_sa_order(sa, seg_doc, seg_cstart, seg_len, scratch):
    """Document of every suffix in SA order (``-1`` for separator suffixes).

    ``scratch`` (int32 ``[m]``) is overwritten with the document of every text
    position.
    """
    for s in range(seg_doc.shape[0]):
        c = seg_cstart[s]
        for q in range(c, c + seg_len[s]):
            scratch[q] = seg_doc[s]
        scratch[c + seg_len[s]] = -1
    m = sa.shape[0]
    out = np.empty(m, dtype=np.int32)
    for i in range(m):
        out[i] = scratch[sa[i]]
    return out


@jit
def frequent_leaves(sa, lcp, docsa, n_docs, seg_cstart, seg_len, min_docs, min_len, ocap):
    """Bottom-up LCP-interval traversal (Abouelhoda, Kurtz & Ohlebusch 2004)
    with distinct-document counting (Hui 1992).

    For every suffix in SA order, the previous suffix of the same document is
    looked up; one correction is charged to their lowest common ancestor, the
    deepest open interval whose left bound is at or before the previous
    suffix (a binary search on the stack, so no RMQ structure is needed).
    ``df(interval) = size - corrections inside it``.

    Returns the intervals ``(lb, rb, length, df)`` that are frequent
    (``df >= min_docs``) and have no frequent child: exactly the right-maximal
    frequent strings.  Only those with ``length >= min_len`` are returned.
    For ``min_docs <= 1`` a single suffix is frequent too and is reported as
    an interval ``[i, i]`` of its length to the end of its run.
    These intervals are disjoint (the leaves of the frequent top of the tree),
    so there are at most ``m // min_docs + 1``; at most ``ocap`` are kept, and
    ``n_found`` (the last value returned) tells the caller to run again with a
    larger ``ocap`` when it exceeds it.
    """
    m = sa.shape[0]
    prev = np.full(max(n_docs, 1), -1, dtype=np.int64)
    # the stack depth is bounded by the longest run + 2; the intervals
    # reported are disjoint and hold >= min_docs suffixes each.  Allocating
    # both once keeps the loop free of array reassignments (which cost a
    # reference-count update per iteration).
    longest = 0
    for s in range(seg_len.shape[0]):
        if seg_len[s] > longest:
            longest = seg_len[s]
    cap = longest + 2
    st_lcp = np.empty(cap, dtype=np.int64)
    st_lb = np.empty(cap, dtype=np.int64)
    st_corr = np.empty(cap, dtype=np.int64)
    st_flag = np.empty(cap, dtype=np.bool_)
    top = 0
    st_lcp[0] = 0
    st_lb[0] = 0
    st_corr[0] = 0
    st_flag[0] = False

    out_lb = np.empty(ocap, dtype=np.int64)
    out_rb = np.empty(ocap, dtype=np.int64)
    out_len = np.empty(ocap, dtype=np.int64)
    out_df = np.empty(ocap, dtype=np.int64)
    n_out = 0
    n_frequent = 0
    max_depth = 1
    pending_leaf = False

    for i in range(m + 1):
        # boundary between suffix i-1 and suffix i (a virtual 0 at the end)
        if i > 0:
            cur = lcp[i] if i < m else -1
            lb = i - 1
            child_corr = 0
            child_flag = pending_leaf
            pending_leaf = False
            while top >= 0 and cur < st_lcp[top]:
                # pop the interval [st_lb[top], i - 1]
                ell = st_lcp[top]
                ilb = st_lb[top]
                size = i - ilb
                corr = st_corr[top]
                df = size - corr
                flag = st_flag[top]
                top -= 1
                lb = ilb
                freq = df >= min_docs
                if freq:
                    n_frequent += 1
                    if not flag and ell >= min_len:
                        if n_out < ocap:
                            out_lb[n_out] = ilb
                            out_rb[n_out] = i - 1
                            out_len[n_out] = ell
                            out_df[n_out] = df
                        n_out += 1
                if top >= 0 and cur <= st_lcp[top]:
                    st_corr[top] += corr
                    st_flag[top] = st_flag[top] or freq
                else:
                    child_corr += corr
                    child_flag = child_flag or freq
            if i == m:
                break
            if cur > st_lcp[top]:
                top += 1
                st_lcp[top] = cur
                st_lb[top] = lb
                st_corr[top] = child_corr
                st_flag[top] = child_flag
                if top + 1 > max_depth:
                    max_depth = top + 1
            else:
                st_corr[top] += child_corr
                st_flag[top] = st_flag[top] or child_flag
        # suffix i
        d = docsa[i]
        if d < 0:
            continue
        j = prev[d]
        prev[d] = i
        if j >= 0:
            # deepest stack entry with lb <= j: the LCA of suffixes j and i
            lo = 0
            hi = top
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if st_lb[mid] <= j:
                    lo = mid
                else:
                    hi = mid - 1
            st_corr[lo] += 1
        if min_docs <= 1:
            g = np.searchsorted(seg_cstart, sa[i], side="right") - 1
            rem = seg_cstart[g] + seg_len[g] - sa[i]
            nxt = lcp[i + 1] if i + 1 < m else 0
            here = lcp[i]
            parent = here if here > nxt else nxt
            if rem > parent:
                n_frequent += 1
                if rem >= min_len:
                    if n_out < ocap:
                        out_lb[n_out] = i
                        out_rb[n_out] = i
                        out_len[n_out] = rem
                        out_df[n_out] = 1
                    n_out += 1
                if nxt > here:
                    pending_leaf = True
                else:
                    st_flag[top] = True
    k = min(n_out, ocap)
    return (out_lb[:k].copy(), out_rb[:k].copy(), out_len[:k].copy(),
            out_df[:k].copy(), n_frequent, max_depth, n_out)


@jit
def left_maximal(text, sa, docsa, lbs, rbs, min_docs, n_docs):
    """Keep the intervals whose string has no frequent one-token left extension.

    For interval k, the occurrences are grouped by their preceding token (an
    occurrence at a document start has none); the string is left-maximal iff
    every group covers fewer than ``min_docs`` documents.  The intervals are
    disjoint, so the total work is ``O(m log m)`` (one sort per interval).
    """
    k = lbs.shape[0]
    keep = np.zeros(k, dtype=np.bool_)
    biggest = 0
    for c in range(k):
        s = rbs[c] - lbs[c] + 1
        if s > biggest:
            biggest = s
    keys = np.empty(biggest, dtype=np.int64)
    nd = np.int64(max(n_docs, 1))
    for c in range(k):
        # fast path (the BloomSpan paper's left-neighbour rule): every occurrence has the
        # same preceding token a, so df(aP) = df(P) >= min_docs
        first = -1
        same = True
        for i in range(lbs[c], rbs[c] + 1):
            p = sa[i]
            a = text[p - 1] if p > 0 else SEP
            if a == SEP:
                same = False
                break
            if first < 0:
                first = a
            elif a != first:
                same = False
                break
        if same:
            keep[c] = False
            continue
        cnt = 0
        for i in range(lbs[c], rbs[c] + 1):
            p = sa[i]
            if p == 0:
                continue
            a = text[p - 1]
            if a == SEP:
                continue
            keys[cnt] = np.int64(a) * nd + docsa[i]
            cnt += 1
        if cnt < min_docs:
            keep[c] = True
            continue
        buf = keys[:cnt]
        buf.sort()
        ok = True
        run_docs = 1
        for t in range(1, cnt + 1):
            if t == cnt or buf[t] // nd != buf[t - 1] // nd:
                if run_docs >= min_docs:
                    ok = False
                    break
                run_docs = 1
            elif buf[t] != buf[t - 1]:
                run_docs += 1
        keep[c] = ok
    return keep


@jit
def emit_occurrences(sa, seg_orig, seg_cstart, lbs, rbs):
    """Occurrence starts of the kept intervals as original global token
    positions, sorted per interval; returns ``(occ_offsets, occ_starts)``."""
    k = lbs.shape[0]
    offsets = np.empty(k + 1, dtype=np.int64)
    offsets[0] = 0
    for c in range(k):
        offsets[c + 1] = offsets[c] + rbs[c] - lbs[c] + 1
    starts = np.empty(offsets[k], dtype=np.int64)
    for c in range(k):
        o = offsets[c]
        for i in range(lbs[c], rbs[c] + 1):
            p = np.int64(sa[i])
            g = np.searchsorted(seg_cstart, p, side="right") - 1
            starts[o] = seg_orig[g] + p - seg_cstart[g]
            o += 1
        starts[offsets[c]:offsets[c + 1]].sort()
    return offsets, starts
