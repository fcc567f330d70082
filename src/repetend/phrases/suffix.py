"""The ``suffix`` phrase engine: suffix array + LCP intervals, exact.

The BloomSpan paper, §3 (classical approaches; docs/references.md): all
occurrences of a phrase lie next to each other in the suffix array, and the
LCP array marks where such blocks start and end.  This engine is of the family
of Fischer, Heun & Kramer 2006 (FHK: distinct-document counting on LCP
intervals):

1. an exact filter: tokens with df < σ can be in no frequent phrase, nor can
   k-grams (k = min(L, 16)) that a counting filter (byte counters ≥
   occurrences ≥ df, so one-sided) shows to be rarer than σ; a phrase of
   length ≥ L (or a one-token extension of it) lies inside a stretch of ≥ L
   positions covered by passing k-grams; the text to sort is those stretches,
   each followed by a separator ``0``, with the frequent tokens renamed to
   dense codes ``1..V'`` (:func:`~repetend.phrases._suffix_kernels.compact_runs`)
   stored as uint8/uint16 when ``V'`` allows — ``pydivsufsort`` sorts the
   bytes of its input, so this halves or quarters the sort;
2. its suffix array (``pydivsufsort``, the optional extra ``suffix``) and an
   LCP array clamped at separators (Kasai et al. 2001);
3. one bottom-up traversal of the LCP intervals with a stack (Abouelhoda,
   Kurtz & Ohlebusch 2004) that counts distinct documents per interval in
   linear time (Hui 1992, colour set size), and keeps the frequent intervals
   with no frequent child: the right-maximal frequent strings;
4. the left-maximality test of the MCFP definition on those intervals (which
   are disjoint): the string is dropped when *any* one-token left extension
   is still frequent;
5. the occurrences of the kept intervals, sorted per phrase.

Memory, per kept position m (m ≤ n + runs): the text (1, 2 or 4 bytes), the
suffix array (4), LCP (4), the document of every suffix (4) and one int32
scratch array, plus ``pydivsufsort``'s copy of the text and a suffix array
over its *bytes* (4 bytes per byte of text) during the sort.  Time: ``O(n log n)`` at worst (the sorts in steps 4–5), linear in
practice.
"""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt

from ..errors import ParameterError, require
from . import _suffix_kernels as K
from ._raw import RawPhrases
from .groups import DocGroups, engine_labels

__all__ = ["mine_suffix"]

KMAX = 16  # longest k-gram of the pre-filter


def _empty(stats: dict) -> RawPhrases:
    z = np.zeros(0, dtype=np.int64)
    return RawPhrases(lengths=z, df=z.copy(), occ_offsets=np.zeros(1, dtype=np.int64),
                      occ_starts=z.copy(), stats=stats)


def mine_suffix(tokens: npt.ArrayLike, doc_offsets: npt.ArrayLike, min_docs: int,
                min_len: int, *, kgram_filter: bool = True,
                filter_bits: int | None = None, token_df: npt.ArrayLike | None = None,
                groups: npt.ArrayLike | DocGroups | None = None) -> RawPhrases:
    """Maximal contiguous frequent phrases with a suffix array and LCP intervals.

    Parameters
    ----------
    tokens : array of int, shape (n,)
        Token ids (non-negative), documents back to back.
    doc_offsets : array of int, shape (n_docs + 1,)
        Document ``d`` owns ``tokens[doc_offsets[d]:doc_offsets[d + 1]]``.
    min_docs : int
        σ: a phrase is frequent when it occurs in at least this many documents.
    min_len : int
        L: report maximal frequent phrases of at least this many tokens.
    kgram_filter : bool
        Keep only the stretches covered by k-grams (k = min(L, 16)) that a
        one-sided counting filter (one byte per token) does not prove rarer
        than σ; exact either way (used when σ ≥ 2 and L ≥ 2).
    filter_bits : int, optional
        The filter has ``2**filter_bits`` byte counters (default: about n,
        n/2 for σ ≥ 4, n/4 for σ ≥ 8; at least 2**10, at most 2**29 = 512 MB).
    groups : int array of one label per document, optional
        Count df over groups of documents (near-duplicate clusters): the colour
        of a suffix in the distinct-colour counting is its document's group
        (:mod:`repetend.phrases.groups`); ``token_df`` is then not used.

    Returns
    -------
    RawPhrases
        The maximal frequent phrases of length ``>= min_len`` (in suffix-array
        order; :func:`repetend.phrases.find_phrases` sorts them canonically),
        their df, and the sorted global starts of all their occurrences.
        ``stats`` holds the timings of each stage and counters.

    Notes
    -----
    Maximality follows the MCFP definition of the BloomSpan paper (§2): a frequent
    phrase is dropped when any one-token extension, left or right, is
    frequent, whatever its length.  Right extensions are children of the
    phrase's LCP interval, so only the frequent intervals without a frequent
    child are candidates; they are disjoint, which keeps the left-extension
    test (group the occurrences by preceding token, count documents per
    group) linear in total.

    References: Kasai et al., "Linear-time longest-common-prefix computation
    in suffix arrays", CPM 2001; Hui, "Color set size problem with
    applications to string matching", CPM 1992; Abouelhoda, Kurtz, Ohlebusch,
    "Replacing suffix trees with enhanced suffix arrays", JDA 2004; Fischer,
    Heun, Kramer, "Optimal string mining under frequency constraints",
    PKDD 2006.
    """
    tokens = np.ascontiguousarray(tokens)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    min_docs = int(min_docs)
    min_len = int(min_len)
    stats: dict = {"engine": "suffix", "timings": {}}
    t = stats["timings"]
    n = int(tokens.shape[0])
    n_docs = int(doc_offsets.shape[0] - 1)
    groups, label, n_units = engine_labels(groups, n_docs)   # documents, or their groups
    if label is not None:
        stats["groups"] = n_units
    if n == 0 or n_docs == 0 or min_docs > n_units:
        stats.update(frequent_intervals=0, candidates=0, phrases=0)
        return _empty(stats)
    if tokens.dtype != np.int32:
        tokens = tokens.astype(np.int32)
    divsufsort = require("pydivsufsort", "suffix", "the suffix engine")

    t0 = time.perf_counter()
    vocab_size = int(tokens.max()) + 1
    if int(tokens.min()) < 0:
        raise ValueError("token ids must be non-negative")
    if label is not None:
        from ._bloomspan_kernels import group_word_df

        df = group_word_df(tokens, doc_offsets, groups.order, label, n_units, vocab_size)
    elif token_df is not None and len(token_df) >= vocab_size:
        df = np.asarray(token_df, dtype=np.int32)[:vocab_size]  # the store already counted it
    else:
        df = K.token_df(tokens, doc_offsets, vocab_size)
    frequent = df >= min_docs
    n_codes = int(np.count_nonzero(frequent))
    code = np.zeros(vocab_size, dtype=np.int32)
    code[frequent] = np.arange(1, n_codes + 1, dtype=np.int32)
    del df, frequent
    if kgram_filter and min_docs >= 2 and min_len >= 2:
        if filter_bits is None:
            # about one counter per token, a quarter of that for σ >= 8: a
            # strict threshold tolerates more collisions, and a table that
            # fits the caches better is 2x faster (measured on web-like text)
            shrink = 2 if min_docs >= 8 else 1 if min_docs >= 4 else 0
            bits = int(min(29, max(10, int(n - 1).bit_length() - shrink)))
        else:
            bits = int(filter_bits)
        k = min(min_len, KMAX)
        cover = K.kgram_cover(tokens, doc_offsets, code, k, bits, min(min_docs, 255))
        stats.update(filter_bytes=1 << bits, filter_k=k)
    else:
        cover = code[tokens] != 0
    text32, seg_doc, seg_orig, seg_cstart, seg_len = K.compact_runs(
        tokens, doc_offsets, code, min_len, cover)
    del cover
    del code
    if label is not None:
        seg_doc = label[seg_doc]   # a suffix's colour is its document's group
    if n_codes >= 2**8 and text32.size:
        # only the codes left in the runs matter: renumber them densely, which
        # can bring the text under 2**16 (or 2**8) symbols
        present = np.bincount(text32, minlength=n_codes + 1) > 0
        present[0] = True
        used = int(np.count_nonzero(present)) - 1
        if used < n_codes:
            rank = (np.cumsum(present) - 1).astype(np.int32)   # separator 0 stays 0
            text32 = rank[text32]
            n_codes = used
            del rank
        del present
    # the smallest unsigned type that holds the codes: pydivsufsort sorts the
    # bytes of the text, so fewer bytes per symbol is a faster, smaller sort
    dtype = np.uint8 if n_codes < 2**8 else np.uint16 if n_codes < 2**16 else np.int32
    text = text32.astype(dtype) if dtype is not np.int32 else text32
    del text32
    m = int(text.shape[0])
    stats.update(kept_tokens=int(seg_len.sum()), runs=int(seg_len.shape[0]),
                 alphabet=n_codes, text_dtype=np.dtype(dtype).name)
    t1 = time.perf_counter()
    if m == 0:
        t["filter"] = t1 - t0
        stats.update(frequent_intervals=0, candidates=0, phrases=0)
        return _empty(stats)
    if m >= 2**31 - 1:
        # ranks, LCPs and the stack are int32: past this the engine would overflow
        raise ParameterError(
            f"the suffix engine holds at most 2^31 - 2 filtered tokens; this corpus keeps {m:,} "
            "after its filters: use engine='bloomspan' (or 'auto')")
    sa = divsufsort.divsufsort(text)
    t2 = time.perf_counter()
    lcp, scratch = K.kasai_clamped(text, sa)
    t3 = time.perf_counter()
    docsa = K.docs_in_sa_order(sa, seg_doc, seg_cstart, seg_len, scratch)
    del scratch
    t4 = time.perf_counter()
    # room for the right-maximal intervals: a guess first, the bound (m // σ + 1,
    # 32/σ bytes per position) only when the guess was too small
    bound = m // max(min_docs, 1) + 1
    cap = min(bound, max(1 << 16, m // 256))
    while True:
        lbs, rbs, lens, dfs, n_frequent, depth, n_found = K.frequent_leaves(
            sa, lcp, docsa, n_units, seg_cstart, seg_len, min_docs, min_len, cap)
        if n_found <= cap:
            break
        cap = min(bound, int(n_found))
    del lcp
    t5 = time.perf_counter()
    keep = K.left_maximal(text, sa, docsa, lbs, rbs, min_docs, n_units)
    lbs, rbs, lens, dfs = lbs[keep], rbs[keep], lens[keep], dfs[keep]
    t6 = time.perf_counter()
    occ_offsets, occ_starts = K.emit_occurrences(sa, seg_orig, seg_cstart, lbs, rbs)
    t7 = time.perf_counter()
    t.update(filter=t1 - t0, suffix_array=t2 - t1, lcp=t3 - t2, docs=t4 - t3,
             intervals=t5 - t4, left_maximal=t6 - t5, occurrences=t7 - t6)
    stats.update(
        frequent_intervals=int(n_frequent),
        candidates=int(keep.shape[0]),
        phrases=int(lens.shape[0]),
        max_stack_depth=int(depth),
        kept_share=m / max(n, 1),
    )
    return RawPhrases(lengths=lens, df=dfs, occ_offsets=occ_offsets, occ_starts=occ_starts,
                      stats=stats)
