"""Steps 4-5: word-slot siblings merged into patterns, per-pattern statistics,
and joins of a short pattern with its neighbour."""

from __future__ import annotations

import numpy as np

from . import _kernels_patterns as KT


def _final_keys(groups: set[bytes], gap_id: int, num_id: int, word_slots: int
                ) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    """The patterns to report, each with its member candidates: candidates that
    differ only in a window of up to *word_slots* fixed tokens are merged into
    one pattern with a wildcard (-1) wherever they differ (a low-cardinality
    variable part: an author, a month); a candidate alone is kept when it has a
    slot (a gap or a number)."""
    ordered = sorted(groups)
    if not ordered:
        return [], []
    # one array of all candidates (each a view of it: no array per candidate
    # that is dropped)
    flat = np.frombuffer(b"".join(ordered), dtype=np.int32)
    key_off = np.zeros(len(ordered) + 1, dtype=np.int64)
    np.cumsum([len(k) for k in ordered], out=key_off[1:])
    key_off //= 4
    if word_slots > 0:
        root = KT.sibling_groups(flat, key_off, np.int64(word_slots),
                                np.int32(num_id if num_id >= 0 else gap_id))
    else:
        root = np.arange(len(ordered))
    # which candidates hold a slot (a gap or a number), all at once
    is_slot = (flat == gap_id) | (flat == num_id) if num_id >= 0 else flat == gap_id
    n_slot = np.zeros(flat.size + 1, dtype=np.int64)
    np.cumsum(is_slot, out=n_slot[1:])
    has_slot = (n_slot[key_off[1:]] > n_slot[key_off[:-1]]).tolist()
    bounds = key_off.tolist()
    # the groups in the order of their roots (smallest member), members ascending
    order = np.argsort(root, kind="stable")
    r_sorted = root[order]
    g_off = np.flatnonzero(np.concatenate(([True], r_sorted[1:] != r_sorted[:-1]))).tolist()
    g_off.append(len(ordered))
    order = order.tolist()
    out, mem = [], []
    for g in range(len(g_off) - 1):
        a, b = g_off[g], g_off[g + 1]
        if b - a == 1:
            i = order[a]
            if has_slot[i]:
                x = flat[bounds[i]:bounds[i + 1]]
                out.append(x)
                mem.append([x])
            continue
        ms = [flat[bounds[i]:bounds[i + 1]] for i in order[a:b]]
        stack = np.stack(ms)
        pattern = stack[0].copy()
        pattern[(stack != stack[0]).any(axis=0)] = -1
        out.append(pattern)
        mem.append(ms)
    return out, mem



def _variant_evidence(members: list[list[np.ndarray]], gap_id: int, num_id: int,
                      min_fixed: int) -> np.ndarray:
    """Per pattern of :func:`_final_keys`: whether it is the merge of ≥ 2
    candidates (word-slot siblings) each of which has at least *min_fixed*
    fixed tokens (neither a gap nor a number) — variants that would each be
    a template, so that the merged pattern may keep fewer fixed tokens
    (``TemplateConfig.variant_evidence``: «Автор: ▢ ▢, ▢ ▢ ▢», the authors'
    names fixed in each variant)."""
    out = np.zeros(len(members), dtype=bool)
    for i, ms in enumerate(members):
        if len(ms) < 2:
            continue
        out[i] = all(int(np.count_nonzero((m != gap_id) & (m != num_id))) >= min_fixed
                     for m in ms)
    return out

# pairs of pattern occurrences held at once while joining (20 bytes each, twice
# while sorted); the joins are the same whatever the batch
JOIN_BATCH = 1 << 24


def _joins(keys: list[np.ndarray], found: list[np.ndarray], t: np.ndarray, t_doc: np.ndarray,
           stats: tuple[np.ndarray, np.ndarray], gap_id: int, min_docs: int, min_span: int,
           share: float, groups=None) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Patterns made of two patterns, one of them short (median span < min_span),
    whose occurrences overlap, touch or are one gap apart, in the same order
    and at the same offset, in at least max(σ, share × the smaller of their
    two dfs) documents (they belong together, not only meet); with their joined
    occurrences.  The overlap must agree token for token."""
    if len(keys) < 1:
        return [], []
    klen = np.array([k.size for k in keys], dtype=np.int64)
    n_occ = np.array([x.size for x in found], dtype=np.int64)
    occ_off = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(n_occ, out=occ_off[1:])
    med, key_df = stats            # median span and df of each pattern
    short = (n_occ > 0) & (med < min_span)
    if not short.any():
        return [], []
    n_keys = len(keys)
    # (position, pattern) order
    q, key = KT.by_position(np.concatenate(found).astype(np.int64, copy=False), occ_off)
    d_max = int(klen.max()) + 2                 # offsets are at most len(A) + 1
    args = (q, key, klen, t_doc, short, t, np.int32(gap_id), np.int64(n_keys))
    # the pairs of a batch of patterns A at a time (contiguous: the groups come in
    # the same (A, B, offset) order as from one sort of all pairs), so that the
    # pairs held at once stay about JOIN_BATCH whatever their total
    per_a = KT.pair_counts(*args)
    ends = np.cumsum(per_a)
    if ends[-1] == 0:
        return [], []
    existing = {k.tobytes() for k in keys}
    out: list[np.ndarray] = []
    out_pos: list[np.ndarray] = []
    k_lo = 0
    while k_lo < n_keys:
        base = ends[k_lo - 1] if k_lo else 0
        k_hi = int(np.searchsorted(ends, base + max(int(JOIN_BATCH), 1), side="right"))
        k_hi = min(max(k_hi, k_lo + 1), n_keys)
        total = int(ends[k_hi - 1] - base)
        if total:
            code, pos, docs = KT.pair_range(*args, np.int64(d_max), np.int64(k_lo),
                                            np.int64(k_hi), np.int64(total))
            _join_groups(code, pos, docs, keys, key_df, n_keys, d_max, min_docs, share, gap_id,
                         existing, out, out_pos, groups)
            del code, pos, docs       # before the next batch is allocated
        k_lo = k_hi
    return out, out_pos


def _join_groups(code, pos, docs, keys, key_df, n_keys, d_max, min_docs, share, gap_id,
                 existing, out, out_pos, groups=None) -> None:
    """The joined patterns of one batch of pairs, appended to *out*/*out_pos*
    (with *groups* a join's df counts distinct groups)."""
    # group the pairs by (A, B, offset): a stable sort keeps each group's
    # positions (distinct: one B occurrence per A occurrence and offset) and
    # documents increasing
    from .._bloomspan_kernels import radix_sort_occurrences

    code, pos, docs = radix_sort_occurrences(code, pos, docs, int(code.max()).bit_length())
    bounds, df = KT.code_groups(code, docs)
    if groups is not None:                     # documents → their groups, counted apart
        from ._kernels_groups import distinct_per_run

        df = distinct_per_run(bounds, groups.label[docs], np.int64(groups.n_groups))
    ucode = code[bounds[:-1]].astype(np.int64)
    del code, docs
    uniq = np.stack([ucode // d_max // n_keys, ucode // d_max % n_keys, ucode % d_max], axis=1)
    need = np.maximum(min_docs, share * np.minimum(key_df[uniq[:, 0]], key_df[uniq[:, 1]]))
    for u in np.flatnonzero(df >= need):
        i, j, off = (int(x) for x in uniq[u])
        A, B = keys[i], keys[j]
        if off <= A.size:
            ov = A.size - off
            if ov and not np.array_equal(A[off:], B[:ov]):
                continue
            joined = np.concatenate((A, B[ov:]))
        else:                                   # one gap token between them
            joined = np.concatenate((A, np.array([gap_id], np.int32), B))
        joined = joined.astype(np.int32)
        if joined.tobytes() in existing:
            continue
        existing.add(joined.tobytes())
        out.append(joined)
        out_pos.append(pos[bounds[u]:bounds[u + 1]].copy())


def _pattern_stats(keys: list[np.ndarray], found: list[np.ndarray], g_start: np.ndarray,
                   g_end: np.ndarray, t_doc: np.ndarray, groups=None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Median span (corpus tokens, slots included) and df of each pattern from
    its occurrences (gapped positions, increasing), all patterns at once; with
    *groups* df counts distinct groups."""
    off = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum([x.size for x in found], out=off[1:])
    q = np.concatenate(found).astype(np.int64, copy=False) if found else np.zeros(0, np.int64)
    med, df = KT.pattern_stats(q, off, np.array([k.size for k in keys], dtype=np.int64),
                               g_start, g_end, t_doc)
    if groups is not None:
        from ._kernels_groups import distinct_per_run

        df = distinct_per_run(off, groups.label[t_doc[q]], np.int64(groups.n_groups))
    return med, df

