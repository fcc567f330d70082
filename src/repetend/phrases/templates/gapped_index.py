"""Step 3: the index of the gapped sequence (a suffix array over a byte code),
mining its maximal frequent phrases, and locating every occurrence of a
pattern."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from numba import get_num_threads

from . import _kernels_index as KI


@dataclass
class _GappedIndex:
    """The suffix array of the gapped sequence *t*, built once for the first
    chain round and for locating every pattern: the runs of frequent tokens
    (df ≥ σ in *t*; sentinels and rare tokens split runs) with dense codes
    ``1..V'`` (order-preserving), each run followed by a separator 0, as the
    suffix engine lays its text out (:func:`repetend.phrases._suffix_kernels.
    compact_runs`, with every run kept)."""

    text: np.ndarray
    sa: np.ndarray
    code: np.ndarray         # token (sentinels clipped to gap_id + 1) -> code, 0: none
    t_of: np.ndarray         # text position -> position in t (-1: separator)
    seg_doc: np.ndarray
    seg_orig: np.ndarray
    seg_cstart: np.ndarray
    seg_len: np.ndarray


def _gapped_index(t: np.ndarray, t_off: np.ndarray, gap_id: int, min_docs: int,
                  min_len: int = 1, kgram_filter: bool = False, groups=None) -> _GappedIndex:
    """The index of *t* (a gapped sequence or a peeled residue of it: tokens
    above *gap_id* are sentinels).  ``min_len=1`` without the filter keeps
    every frequent token (the index that locates the patterns); ``min_len=2``
    with the k-gram filter keeps what the chain miner needs, as
    :func:`repetend.phrases.suffix.mine_suffix` does.  With *groups* (a
    :class:`~repetend.phrases.groups.DocGroups` of the documents of *t_off*)
    df counts distinct groups, and a run's colour (``seg_doc``) is its
    document's group."""
    from .. import _suffix_kernels as S

    top = gap_id + 1                            # every sentinel counted as one id
    df, occ = KI.token_counts(t, t_off, np.int64(top))
    if groups is not None:
        from ._kernels_groups import group_token_df

        df = group_token_df(t, t_off, groups.order, groups.label, np.int64(top))
    frequent = df >= min_docs
    frequent[top] = False                       # sentinels (unique, df 1 each)
    n_codes = int(np.count_nonzero(frequent))
    # dense codes, the most frequent tokens first: with more than 255 codes the
    # suffix array sorts a prefix-free byte string in which the first
    # ``one_byte`` codes take one byte (see _suffix_array); any order of the
    # codes gives the same phrases, and keys are searched in the same codes
    one_byte = min(n_codes, (255 * 256 - n_codes) // 255) if n_codes >= 2**8 else n_codes
    code = np.zeros(top + 1, dtype=np.int32)
    ids = np.flatnonzero(frequent)
    if 0 < one_byte < n_codes:
        first = np.argsort(-occ[ids], kind="stable")[:one_byte]
        rest = np.ones(ids.size, dtype=np.bool_)
        rest[first] = False
        ids = np.concatenate((ids[first], ids[rest]))
    code[ids] = np.arange(1, n_codes + 1, dtype=np.int32)
    dtype = np.uint8 if n_codes < 2**8 else np.uint16 if n_codes < 2**16 else np.int32
    if kgram_filter:
        clipped = np.minimum(t, np.int32(top))
        n = int(t.size)
        bits = int(min(29, max(10, int(n - 1).bit_length()
                               - (2 if min_docs >= 8 else 1 if min_docs >= 4 else 0))))
        cover = S.kgram_cover(clipped, t_off, code, min_len, bits, min(min_docs, 255))
        text32, seg_doc, seg_orig, seg_cstart, seg_len = S.compact_runs(
            clipped, t_off, code, min_len, cover)
        del cover, clipped
        text = text32.astype(dtype) if dtype is not np.int32 else text32
        t_of = KI.text_positions(seg_orig, seg_cstart, seg_len, np.int64(text.size))
    else:                                       # every run of frequent tokens
        m, n_runs = KI.coded_runs_size(t, t_off, code, np.int64(top))
        text = np.empty(m, dtype=dtype)
        seg_doc, seg_orig, seg_cstart, seg_len, t_of = KI.coded_runs(
            t, t_off, code, np.int64(top), text, n_runs)
    if groups is not None:
        seg_doc = groups.label[seg_doc]         # the colour counted: the document's group
    return _GappedIndex(text, _run_suffix_array(text, seg_cstart, seg_len, max(one_byte, 0)),
                        code, t_of, seg_doc, seg_orig, seg_cstart, seg_len)


def _run_suffix_array(text: np.ndarray, seg_cstart: np.ndarray, seg_len: np.ndarray,
                      one_byte: int, max_distinct: float = 0.5) -> np.ndarray:
    """A suffix array of *text* (runs each followed by a separator 0) sorted
    up to the first separator: :func:`_suffix_array` of the *distinct* runs,
    each suffix then repeated for every run equal to its own.  A gapped
    sequence repeats its template blocks, so the distinct runs are a fraction
    of the text (on Debian 41 % in the first round, 9-16 % in the peeling
    rounds) and the sort costs that much less.  Above half, expanding costs
    more than it saves (the 100 M-token Zipfian corpus: 67 % distinct, 6.2 s
    against 4.9 s for the whole text), so the whole text is sorted
    (``max_distinct``: the share of distinct runs up to which they are sorted
    alone)."""
    n_runs = int(seg_len.size)
    if n_runs == 0:
        return _suffix_array(text, one_byte)
    bits = max(4, (2 * n_runs - 1).bit_length())
    cls, reps = KI.run_classes(text, seg_cstart, seg_len, bits)
    d_m = int(seg_len[reps].sum()) + int(reps.size)
    if d_m == text.size or d_m > max_distinct * text.size:     # mostly distinct runs
        return _suffix_array(text, one_byte)
    dtext = np.empty(d_m, dtype=text.dtype)
    dstart, dclass, mem_off, mem_start = KI.distinct_runs(text, seg_cstart, seg_len, cls,
                                                         reps, dtext)
    dsa = _suffix_array(dtext, one_byte)
    return KI.expand_suffixes(dsa, dclass, dstart, mem_off, mem_start, seg_cstart, seg_len,
                              np.int64(text.size))


def _suffix_array(text: np.ndarray, one_byte: int = 0) -> np.ndarray:
    """int32 suffix array of *text* (codes; separators 0) with ``pydivsufsort``,
    which sorts bytes.  Codes under 256: the text as bytes.  Otherwise, when
    ``one_byte`` allows (codes ``1 … one_byte`` one byte, the others two, the
    first byte below 256), a prefix-free byte string that sorts like the codes
    (:func:`~repetend.phrases.templates._kernels_index.encode_bytes`; on Zipfian text
    most symbols are frequent words, so ~1.25 bytes per symbol instead of 2),
    and the suffixes starting a symbol are kept; else big-endian fixed width."""
    from ...errors import require

    divsufsort = require("pydivsufsort", "suffix", "templates").divsufsort
    if text.size == 0:
        return np.zeros(0, np.int32)
    top = int(text.max())
    if top < 2**8:
        return np.asarray(divsufsort(text.astype(np.uint8, copy=False)), np.int32)
    if 0 < one_byte and one_byte + 1 + (top - one_byte - 1) // 256 < 256:
        data, starts, before = KI.encode_bytes(text, np.int64(one_byte))
        return KI.symbol_order(divsufsort(data), starts, before, np.int64(text.size))
    be = text.astype(">u2" if top < 2**16 else ">u4")
    return KI.symbol_suffixes(divsufsort(be.view(np.uint8)), np.int64(be.dtype.itemsize))


def _mine_indexed(ix: _GappedIndex, n_docs: int, min_docs: int, min_len: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The maximal frequent phrases (≥ *min_len* tokens, σ documents) of the
    gapped sequence from its index: steps 2–5 of
    :func:`repetend.phrases.suffix.mine_suffix` on the same kernels (the same
    phrases and occurrences: its filters only drop suffixes that can be in no
    frequent interval).  Returns ``(lengths, occ_offsets, occ_starts)``,
    positions in the gapped sequence."""
    from .. import _suffix_kernels as S

    m = int(ix.text.size)
    if m == 0:
        z = np.zeros(0, np.int64)
        return z, np.zeros(1, np.int64), z
    lcp, docsa = KI.lcp_and_docs(ix.text, ix.sa, ix.seg_doc, ix.seg_cstart, ix.seg_len)
    cap = bound = m // max(min_docs, 1) + 1       # disjoint intervals of ≥ σ suffixes each
    while True:
        lbs, rbs, lens, _, _, _, n_found = S.frequent_leaves(
            ix.sa, lcp, docsa, n_docs, ix.seg_cstart, ix.seg_len, min_docs, min_len, cap)
        if n_found <= cap:
            break
        cap = min(bound, int(n_found))
    del lcp
    keep = S.left_maximal(ix.text, ix.sa, docsa, lbs, rbs, min_docs, n_docs)
    occ_offsets, occ_starts = KI.emit_positions(ix.sa, ix.t_of, lbs[keep], rbs[keep])
    return lens[keep], occ_offsets, occ_starts


def _locate(ix: _GappedIndex, t: np.ndarray, t_doc: np.ndarray, keys: list[np.ndarray],
            gap_id: int, max_range: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """All occurrences of each key in the gapped sequence (wildcards: -1), and
    which keys were skipped for a segment range longer than *max_range*."""
    if not keys:
        return [], np.zeros(0, dtype=bool)
    key_off = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum([x.size for x in keys], out=key_off[1:])
    flat = np.concatenate(keys)
    # key tokens in codes (wildcards: -1, never searched); every fixed key
    # token is frequent in t (keys are made of frequent phrases), so ≥ 1
    kcodes = np.where(flat >= 0, ix.code[np.clip(flat, 0, gap_id + 1)], -1).astype(np.int32)
    max_range = np.asarray(max_range, np.int64)

    def match(k0: int, k1: int) -> tuple[list[np.ndarray], np.ndarray]:
        a, b = int(key_off[k0]), int(key_off[k1])
        off, pos, skipped = KI.match_all_text(ix.text, ix.sa, ix.t_of, t, t_doc, flat[a:b],
                                              kcodes[a:b], key_off[k0:k1 + 1] - a,
                                              np.int32(gap_id), max_range[k0:k1],
                                              np.int64(ix.code[gap_id]))
        return [pos[off[i]:off[i + 1]] for i in range(k1 - k0)], skipped

    # keys are independent: blocks of them on plain threads (the kernel
    # releases the GIL), handed out one at a time so that a block of costly
    # keys does not hold the others back
    threads = get_num_threads()
    n_keys = len(keys)
    n_blocks = min(8 * threads, max(1, n_keys // _KEYS_PER_BLOCK)) if threads > 1 else 1
    bounds = [n_keys * i // n_blocks for i in range(n_blocks + 1)]
    if n_blocks == 1:
        return match(0, n_keys)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        parts = list(pool.map(match, bounds[:-1], bounds[1:]))
    return [p for ps, _ in parts for p in ps], np.concatenate([sk for _, sk in parts])


_KEYS_PER_BLOCK = 64        # keys a block at least (under twice this: one block, no thread)


def _mine_chains(ix: _GappedIndex | None, t: np.ndarray, t_off: np.ndarray, gap_id: int,
                 min_docs: int, n_docs: int, rounds: int, grp=None
                 ) -> tuple[set[bytes], int, int]:
    """Step 3's candidates: the maximal frequent phrases of the gapped sequence
    *t* (round 1 on its index *ix*), gap tokens at their edges trimmed, in up
    to *rounds* peeling rounds — the occurrences found become sentinels and
    the rest, compacted, is mined again, so that a phrase hidden by a frequent
    extension (a footer that is often, not always, preceded by the same block)
    surfaces.  Returns ``(candidates as int32 bytes, phrases mined, rounds
    run)``."""
    groups: set[bytes] = set()
    if ix is None:
        return groups, 0, 0
    residue = t.copy() if rounds > 1 else t
    next_sentinel = np.int32(int(t.max(initial=gap_id)) + 1)
    n_candidates, done = 0, 0
    for r in range(rounds):
        if r == 0:      # round 1 on the index kept for locating the patterns
            c_len, c_off, c_starts = _mine_indexed(ix, n_docs, min_docs, 2)
        else:           # the residue (peeled positions are sentinels), compacted
            rest, r_off, r_pos = KI.residue_runs(residue, t_off, np.int32(gap_id + 1),
                                                 np.int32(gap_id + 1))
            c_len, c_off, c_starts = _mine_indexed(
                _gapped_index(rest, r_off, gap_id, min_docs, 2, True, grp), n_docs,
                min_docs, 2)
            c_starts = r_pos[c_starts]
        if c_len.size == 0:
            break
        done += 1
        n_candidates += int(c_len.size)
        lo, hi = KI.trimmed_ranges(t, c_off, c_starts, c_len, np.int32(gap_id))
        for a, b in zip(lo.tolist(), hi.tolist()):      # a gap at an edge is no slot
            if b > a:
                groups.add(t[a:b].tobytes())
        if r + 1 < rounds:              # the last round's residue is never mined
            next_sentinel = KI.peel(residue, c_off, c_starts, c_len, np.int32(next_sentinel))
    return groups, n_candidates, done
