"""Heads and tails: a template takes in the short parts and slots at its ends
that recur on its pages.

A fixed part shorter than L′ (default 4 tokens) is in no frequent L′-gram, so
the parts stage never sees «posted by» before «▢ ▢ on ▢.▢.▢. Comments are
closed …», and a number before a variable word before «Ltd.» («© 2019 Acme
Ltd.», the © not being a token) leaves the footer starting at «Ltd.».  This
post-pass counts, exactly, over every template's occurrences, what lies just
before its start (and after its end): for each *class* — one token, or «any
all-digit token» (a number slot) — the documents where it occurs within the
g + 1 tokens before the occurrence (the nearest one counts).  The class found in
the most documents extends the template when those are at least σ and at least
``share`` (default 0.8) of the template's documents: it becomes the template's
new first element (last, for a tail), with a gap slot in between when it is not
adjacent everywhere.  The occurrences without it go: they keep a template of
their own (the old pattern, counted again) if they are in ≥ σ documents, else
they are left out.  Round after round (at most ``max_rounds`` per end, 16),
over the templates that grew in the round before.  Body text before a block
varies from page to page, so it never reaches the share.  What is extended is
counted again on its occurrences (df, span, slots) as in :mod:`.variants`.
A tail never grows onto a token from which an exact phrase (≥ L tokens, σ
documents) runs on for ≥ L tokens past the template's end, nor a head
symmetrically: that is another block, adjacent on these pages («Showing ▢–▢ of ▢ items» right before
a site's newsletter box stays a template of its own).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from . import _kernels_variants as KV
from .variants import (_NUM, _VAR, _WORD, _elements, _rebuild, _row, _slot_kinds,
                       _vocab_maps)

_KIND = {_VAR: "gap", _WORD: "word", _NUM: "number"}


def _pattern(el: list, kinds: list[str], g: int):
    """Kernel pattern, slot bounds, (kind, value) elements and slot kinds of a
    list of element codes (:func:`.variants._elements`)."""
    pat, lo, hi, elements, slot_kind, run = [], [], [], [], [], []
    it = iter(kinds)
    for v in el:
        if v >= 0:
            pat.append(v)
            run.append(v)
            continue
        if run:
            elements.append(("f", run))
            run = []
        pat.append(-1)
        lo.append(1 if v == _NUM else 0)
        hi.append(1 if v == _NUM else g)
        elements.append(("s", len(slot_kind)))
        slot_kind.append(next(it))
    if run:
        elements.append(("f", run))
    pat_a = np.array(pat, dtype=np.int32)
    slot_of = (np.cumsum(pat_a < 0) - 1).astype(np.int64)
    return (pat_a, slot_of, np.array(lo, np.int64), np.array(hi, np.int64), elements,
            slot_kind)


def _best_class(c, is_num, tid, od, gs, ge, n, g, head: bool, doc_lo, doc_hi, groups,
                stop=None):
    """Per template: the class (token id, or ``_NUM``) nearest its start (end)
    in the most documents, that count, and per occurrence the distance to it
    (-1: absent)."""
    if stop is not None:      # another block (a long exact phrase) runs on from there
        back, reach, L = stop
        keys, vals = (back._e, back._m) if head else (reach._s, reach._m)
    else:
        keys = vals = np.zeros(0, np.int64)
        L = 0
    # the class at each of the g + 1 positions next to each occurrence, and
    # whether it counts (inside the document, no other block from there)
    cls, valid = KV.window_classes(c.tokens, is_num, np.ascontiguousarray(gs, np.int64),
                                   np.ascontiguousarray(ge, np.int64),
                                   np.ascontiguousarray(doc_lo, np.int64),
                                   np.ascontiguousarray(doc_hi, np.int64), bool(head),
                                   np.int64(g), keys, vals, stop is not None, np.int64(L),
                                   np.int64(_NUM))
    unit = (groups.label[od] if groups is not None else od).astype(np.int64)
    # per occurrence the nearest k of each class; per template the class in
    # the most units, then nearest on average, then the smallest (compiled)
    return KV.nearest_classes(np.ascontiguousarray(tid, np.int64), unit, cls, valid,
                              np.int64(n))


class _Reach:
    """``reach[p]``: the largest end of an exact-phrase occurrence starting at or
    before p (−1 if none), for an array of positions p — the prefix maximum over
    the occurrences sorted by start, looked up by binary search, so nothing of
    the corpus's size is allocated (a dense array is 8 B/token)."""

    def __init__(self, starts: np.ndarray, ends: np.ndarray) -> None:
        o = np.argsort(starts, kind="stable")
        self._s = starts[o]
        self._m = np.maximum.accumulate(ends[o])

    def __getitem__(self, p):
        i = np.searchsorted(self._s, p, side="right") - 1
        return np.where(i >= 0, self._m[np.maximum(i, 0)], -1)


class _Back:
    """``back[p]``: the smallest start of an exact-phrase occurrence whose last
    token is at or after p (int64 max if none), as :class:`_Reach` the other way."""

    def __init__(self, starts: np.ndarray, ends: np.ndarray) -> None:
        last = ends - 1
        o = np.argsort(last, kind="stable")
        self._e = last[o]
        self._m = np.minimum.accumulate(starts[o][::-1])[::-1]

    def __getitem__(self, p):
        i = np.searchsorted(self._e, p, side="left")
        ok = i < self._e.size
        return np.where(ok, self._m[np.minimum(i, self._e.size - 1)],
                        np.iinfo(np.int64).max)


def extend_ends(c, table: pa.Table, tid, od, gs, ge, max_gap: int, word_slots: int,
                top_values: int, min_docs: int, share: float = 0.8, groups=None,
                max_rounds: int = 16, raw=None, min_len: int = 1):
    """Heads and tails (module docstring) over the template columns, in and out
    as :func:`.variants.merge_variants`.  Returns ``(table, (tid, od, gs, ge),
    n_extended)``."""
    n = table.num_rows
    if n == 0 or c.vocab is None:
        return table, (tid, od, gs, ge), 0
    g = max(int(max_gap), int(word_slots), 1)
    parts = table.column("parts").to_pylist()
    kinds = _slot_kinds(table)
    df = table.column("df").to_numpy()
    word_id, is_num = _vocab_maps(c, parts)
    els = [_elements(parts[i], kinds[i], word_id) for i in range(n)]
    doc_offsets = np.asarray(c.doc_offsets, np.int64)
    # how far the exact phrases covering each token reach to the right (left):
    # a tail does not grow onto a token from which an exact phrase runs on for
    # ≥ L more tokens past the template's end — that is another block
    reach = back = None
    if raw is not None and raw.n_phrases:
        rs = np.asarray(raw.occ_starts, np.int64)
        re_ = rs + np.repeat(np.asarray(raw.lengths, np.int64),
                             np.diff(np.asarray(raw.occ_offsets, np.int64)))
        reach, back = _Reach(rs, re_), _Back(rs, re_)
    occ_lo = np.searchsorted(tid, np.arange(n + 1), side="left")
    # per template: its occurrences (start, end, doc) and pattern, as they grow
    S = [gs[occ_lo[t]:occ_lo[t + 1]].astype(np.int64) for t in range(n)]
    E = [ge[occ_lo[t]:occ_lo[t + 1]].astype(np.int64) for t in range(n)]
    D = [od[occ_lo[t]:occ_lo[t + 1]].astype(np.int64) for t in range(n)]
    K = [list(k) for k in kinds]
    grown = np.zeros(n, dtype=bool)
    rest: dict[int, tuple] = {}          # template -> occurrences without the new end
    for head in (True, False):
        moving = np.ones(n, dtype=bool)          # round 1: all; then those that moved
        for _ in range(max_rounds):
            live = [t for t in range(n) if moving[t] and els[t] is not None and S[t].size]
            if not live:
                break
            t_a = np.concatenate([np.full(S[t].size, t, np.int64) for t in live])
            s_a, e_a, d_a = (np.concatenate([X[t] for t in live]) for X in (S, E, D))
            best_cls, best_docs, dist = _best_class(
                c, is_num, t_a, d_a, s_a, e_a, n, g, head, doc_offsets[d_a],
                doc_offsets[d_a + 1], groups,
                None if reach is None else (back, reach, int(min_len)))
            moved = 0
            moving[:] = False
            off = np.concatenate(([0], np.cumsum([S[t].size for t in live])))
            for j, t in enumerate(live):
                if best_docs[t] < max(min_docs, share * df[t]):
                    continue
                dk = dist[off[j]:off[j + 1]]
                has = dk >= 0
                edge = els[t][0] if head else els[t][-1]
                if dk[has].max(initial=0) > 0 and edge < 0:
                    continue             # a gap next to a slot: lengths not decidable
                cls = int(best_cls[t])
                add = [cls] + ([_VAR] if dk[has].max(initial=0) > 0 else [])
                add_k = (["number"] if cls == _NUM else []) + \
                        (["gap"] if dk[has].max(initial=0) > 0 else [])
                new_el = (add + els[t]) if head else (els[t] + add[::-1])
                new_k = (add_k + K[t]) if head else (K[t] + add_k[::-1])
                ns = np.where(has, S[t] - 1 - dk, S[t]) if head else S[t]
                ne = E[t] if head else np.where(has, E[t] + 1 + dk, E[t])
                if not has.all() and t not in rest:
                    keep = ~has
                    rest[t] = (els[t], list(K[t]), S[t][keep], E[t][keep], D[t][keep])
                els[t], K[t] = new_el, new_k
                S[t], E[t], D[t] = ns[has], ne[has], D[t][has]
                grown[t] = True
                moving[t] = True
                moved += 1
            if not moved:
                break
    if not grown.any():
        return table, (tid, od, gs, ge), 0
    new_rows, new_occ, gone = {}, {}, set()
    extra = []
    for t in np.flatnonzero(grown).tolist():
        got = _recount(c, is_num, els[t], K[t], S[t], E[t], D[t], g, top_values, groups)
        if got is None:
            continue
        new_rows[t], new_occ[t] = got
        if t in rest:
            el0, k0, s0, e0, d0 = rest[t]
            if np.unique(groups.label[d0] if groups is not None else d0).size >= min_docs:
                more = _recount(c, is_num, el0, k0, s0, e0, d0, g, top_values, groups)
                if more is not None:
                    extra.append(more)
    if not new_rows:
        return table, (tid, od, gs, ge), 0
    table2, occ2 = _rebuild(c, table, tid, od, gs, ge, new_rows, new_occ, gone, extra)
    return table2, occ2, len(new_rows)


def _recount(c, is_num, el, kinds, S, E, D, g, top_values, groups):
    pat, slot_of, lo, hi, elements, slot_kind = _pattern(el, kinds, g)
    o = np.lexsort((E, S))
    S, E, D = S[o], E[o], D[o]
    s_, e_, ss, se, ok = KV.align_core(c.tokens, is_num, pat, slot_of, lo, hi,
                                       np.ascontiguousarray(S), np.ascontiguousarray(E),
                                       np.int64(0))
    if not ok.all() or not (e_ == E).all():
        return None
    return (_row(c, None, -1, S, E, D, ss, se, elements, slot_kind, top_values, groups),
            (D, S, E))
