"""Compiled kernels of Broder's mod-m shingle sampling and pair counting (Broder 1997).

Only numba functions over arrays and scalars.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit, pjit, prange


@pjit
def sample_counts(hashes, offsets, moduli):
    """``counts[d, r]`` = number of shingle hashes of document d divisible by ``moduli[r]``."""
    n = offsets.shape[0] - 1
    R = moduli.shape[0]
    out = np.zeros((n, R), dtype=np.int64)
    for d in prange(n):
        for i in range(offsets[d], offsets[d + 1]):
            h = hashes[i]
            for r in range(R):
                if h % moduli[r] == 0:
                    out[d, r] += 1
    return out


@jit
def sample_table(hashes, offsets, doc_mod, table_offsets):
    """Stage 1: the [hash, doc] table of each document's own samples (h % m_d == 0),
    documents back to back (``table_offsets`` from the counts)."""
    n = offsets.shape[0] - 1
    th = np.empty(table_offsets[n], dtype=np.uint64)
    td = np.empty(table_offsets[n], dtype=np.int64)
    for d in range(n):
        p = table_offsets[d]
        m = doc_mod[d]
        for i in range(offsets[d], offsets[d + 1]):
            h = hashes[i]
            if h % m == 0:
                th[p] = h
                td[p] = d
                p += 1
    return th, td


@jit
def run_bounds(sorted_h):
    """For each position of the hash-sorted table, the start and end of its run of equal hashes."""
    n = sorted_h.shape[0]
    starts = np.empty(n, dtype=np.int64)
    ends = np.empty(n, dtype=np.int64)
    s = 0
    for p in range(n):
        if p > 0 and sorted_h[p] != sorted_h[p - 1]:
            s = p
        starts[p] = s
    e = n
    for p in range(n - 1, -1, -1):
        if p + 1 < n and sorted_h[p + 1] != sorted_h[p]:
            e = p + 1
        ends[p] = e
    return starts, ends


@jit
def _grow_i(arr, n):
    out = np.empty(max(2 * arr.shape[0], n, 16), dtype=arr.dtype)
    out[:arr.shape[0]] = arr
    return out


@jit
def _grow_f(arr, n):
    out = np.empty(max(2 * arr.shape[0], n, 16), dtype=arr.dtype)
    out[:arr.shape[0]] = arr
    return out


@jit
def count_and_threshold(sorted_h, sorted_d, pos, starts, ends, table_offsets, rank, moduli, counts,
                        max_bucket, t_sim, t_cont):
    """Stages 3 and 4 fused, one document A at a time (the seed's table sorted by A).

    For every document A, walk its samples in the hash-sorted table and count,
    for every later document B in the same run, the common samples that are
    divisible by the coarser modulus of the pair, M = moduli[max(rank A, rank B)]
    (a hash divisible by 40 is divisible by 20 and 10, so the coarser sampling
    is a subset of both). Runs longer than ``max_bucket`` are skipped. Keep the
    pair when the sampled resemblance c / (|V_M(A)| + |V_M(B)| - c) >= t_sim or,
    with t_cont > 0, when a sampled containment c / |V_M(.)| >= t_cont.

    Returns (a, b, common, sampled J, sampled c_ab, sampled c_ba, n_pairs_counted).
    """
    n = table_offsets.shape[0] - 1
    cnt = np.zeros(n, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    oa = np.empty(64, dtype=np.int64)
    ob = np.empty(64, dtype=np.int64)
    oc = np.empty(64, dtype=np.int64)
    oj = np.empty(64, dtype=np.float64)
    ox = np.empty(64, dtype=np.float64)
    oy = np.empty(64, dtype=np.float64)
    n_out = 0
    n_pairs = 0
    for a in range(n):
        ra = rank[a]
        nt = 0
        for e in range(table_offsets[a], table_offsets[a + 1]):
            p = pos[e]
            end = ends[p]
            if end - starts[p] > max_bucket:
                continue
            h = sorted_h[p]
            for q in range(p + 1, end):
                b = sorted_d[q]
                rb = rank[b]
                r = ra if ra > rb else rb
                if h % moduli[r] == 0:
                    if cnt[b] == 0:
                        touched[nt] = b
                        nt += 1
                    cnt[b] += 1
        for i in range(nt):
            b = touched[i]
            c = cnt[b]
            cnt[b] = 0
            rb = rank[b]
            r = ra if ra > rb else rb
            na = counts[a, r]
            nb = counts[b, r]
            n_pairs += 1
            j = np.float64(c) / np.float64(na + nb - c)
            cab = np.float64(c) / np.float64(na)
            cba = np.float64(c) / np.float64(nb)
            keep = j >= t_sim
            if t_cont > 0.0 and (cab >= t_cont or cba >= t_cont):
                keep = True
            if keep:
                if n_out == oa.shape[0]:
                    oa = _grow_i(oa, n_out + 1)
                    ob = _grow_i(ob, n_out + 1)
                    oc = _grow_i(oc, n_out + 1)
                    oj = _grow_f(oj, n_out + 1)
                    ox = _grow_f(ox, n_out + 1)
                    oy = _grow_f(oy, n_out + 1)
                oa[n_out] = a
                ob[n_out] = b
                oc[n_out] = c
                oj[n_out] = j
                ox[n_out] = cab
                oy[n_out] = cba
                n_out += 1
    return (oa[:n_out].copy(), ob[:n_out].copy(), oc[:n_out].copy(), oj[:n_out].copy(),
            ox[:n_out].copy(), oy[:n_out].copy(), n_pairs)
