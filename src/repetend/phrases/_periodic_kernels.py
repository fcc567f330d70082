"""Compiled shortcut of BloomSpan's right growth through periodic runs.

On periodic text (one word repeated, a short period of tokens repeated, a
document that is one long run) the occurrences of a phrase overlap: a node of
the growth DFS holds r occurrences that leave it one or a few at a time, over
as many steps as the run is long, and the step-by-step growth costs r per step
— quadratic in the run's length.  :func:`periodic_chain` walks the same chain
of nodes in O(r log r) for the whole chain, from the run ends.

Why it is exact.  Let the node be the phrase P (length m) with occurrence set
S (all occurrences of P in the corpus: the DFS groups are exact).  If two
occurrences of P in one document are π ≤ m apart, P has period π.  Chain the
occurrences of each document into *runs*: consecutive occurrences whose gap is
≤ m and a multiple of π.  The text from a run's first occurrence to its last
occurrence's end then has period π, and so has its continuation up to the run
end E (the first position x past the last occurrence's end with
``tokens[x] != tokens[x - π]``, or the document end).  Every occurrence c of the
run reads the periodic continuation of P, ``P[M mod π]``, at every length
M < E - p_c, and at length λ_c = E - p_c it reads something else (a token that
breaks the period, or the document end).  So the node's future is known from
the λ_c alone: at each length M the occurrences with λ_c = M leave the main
group (grouped by what they read), and the main group is the occurrences with
λ_c > M.  The walk stops, handing the node back to the ordinary step, at the
first length where the ordinary step would do anything but pass on one child:
the main group falls below σ documents, all occurrences leave, or a leaving
group is frequent and not removed by the left-neighbour rule.  The counters
(nodes, left prunes, chain steps) advance as the ordinary step would.

numba's on-disk cache of ``grow_seeds`` does not notice an edit of this file
(it keys on ``_bloomspan_kernels.py`` only): after changing it, delete
``phrases/__pycache__/_bloomspan_kernels.grow_seeds-*`` (a stale copy corrupted
memory while this walk was built).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

__all__ = ["MIN_OCCURRENCES", "periodic_chain"]

MIN_OCCURRENCES = 16  # smaller nodes: the ordinary step costs at most 16 per step


@jit
def _left_token(tokens, doc_offsets, p, d):
    if p > doc_offsets[d]:
        return np.int64(tokens[p - 1])
    return np.int64(-2)


@jit
def periodic_chain(tokens, doc_offsets, occ_pos, occ_doc, a, b, m, df, min_docs, stats,
                   label=None):
    """Walk the chain of single-child nodes from node ``occ_pos[a:b]`` (length m,
    df documents, left-neighbour rule already passed) through periodic runs.

    Returns ``(status, b', m', df')``: status 0 — not periodic, nothing
    changed; 1 — the walk ended in a node the left-neighbour rule removes (its
    subtree is done); 2 — continue the ordinary step with the node
    ``occ_pos[a:b']`` of length m' and df' documents (the segment compacted
    in place, positions ascending).  ``stats`` as in ``grow_seeds``:
    [nodes, pruned_left, seeds_covered, seeds_skipped, chain_steps].
    With ``label`` (the group of every document) df counts distinct groups, as
    in ``grow_seeds``: the walk's units are then the segment's groups.
    """
    r = b - a
    if r < MIN_OCCURRENCES:
        return 0, b, m, df
    per = 0
    for k in range(a + 1, b):
        if occ_doc[k] == occ_doc[k - 1]:
            g = occ_pos[k] - occ_pos[k - 1]
            if g <= m and (per == 0 or g < per):
                per = g
    if per == 0:
        return 0, b, m, df
    # runs and their ends; lam[i] = the length at which occurrence a+i leaves
    lam = np.empty(r, dtype=np.int64)
    n_runs = 0
    i0 = 0
    while i0 < r:
        i1 = i0 + 1
        while (i1 < r and occ_doc[a + i1] == occ_doc[a + i1 - 1]
               and occ_pos[a + i1] - occ_pos[a + i1 - 1] <= m
               and (occ_pos[a + i1] - occ_pos[a + i1 - 1]) % per == 0):
            i1 += 1
        n_runs += 1
        end = doc_offsets[occ_doc[a + i0] + 1]
        x = occ_pos[a + i1 - 1] + m
        while x < end and tokens[x] == tokens[x - per]:
            x += 1
        for i in range(i0, i1):
            lam[i] = x - occ_pos[a + i]
        i0 = i1
    if 4 * n_runs > r:
        return 0, b, m, df
    order = np.argsort(lam)
    # documents (or groups) of the segment -> local index, alive counts per unit
    ldoc = np.empty(r, dtype=np.int64)
    nd = 0
    if label is None:
        for i in range(r):
            if i == 0 or occ_doc[a + i] != occ_doc[a + i - 1]:
                nd += 1
            ldoc[i] = nd - 1
    else:
        glab = np.empty(r, dtype=np.int64)
        for i in range(r):
            glab[i] = label[occ_doc[a + i]]
        go = np.argsort(glab, kind="mergesort")
        for t in range(r):
            i = go[t]
            if t == 0 or glab[i] != glab[go[t - 1]]:
                nd += 1
            ldoc[i] = nd - 1
    seen = np.full(nd, -1, dtype=np.int64)   # stamp per unit: distinct units of a group
    run = 0
    alive_in = np.zeros(nd, dtype=np.int64)
    for i in range(r):
        alive_in[ldoc[i]] += 1
    lt = np.empty(r, dtype=np.int64)
    for i in range(r):
        lt[i] = _left_token(tokens, doc_offsets, occ_pos[a + i], occ_doc[a + i])
    x_tok = lt[order[r - 1]]        # the occurrence that leaves last
    n_x = 0
    if x_tok != -2:
        for i in range(r):
            n_x += lt[i] == x_tok
    n_alive = r
    cur = m
    idx = 0
    keys = np.empty(r, dtype=np.int64)
    status = 2
    while True:
        big = lam[order[idx]]
        stats[4] += big - cur        # steps where every occurrence reads the same token
        cur = big
        j = idx
        while j < r and lam[order[j]] == big:
            j += 1
        if j == r:
            break                    # everything leaves: the ordinary step decides
        # main group's documents after the leavers go
        gone = 0
        for t in range(idx, j):
            i = order[t]
            alive_in[ldoc[i]] -= 1
            gone += alive_in[ldoc[i]] == 0
        ok = df - gone >= min_docs
        # leaving groups by what they read next (-1: document end)
        n_leave_nodes = 0
        if ok:
            e = j - idx
            for t in range(e):
                i = order[idx + t]
                q = occ_pos[a + i] + big
                nxt = np.int64(tokens[q]) if q < doc_offsets[occ_doc[a + i] + 1] else np.int64(-1)
                keys[t] = (nxt + 1) * r + i    # by token, then by position
            srt = np.sort(keys[:e])
            g0 = 0
            while g0 < e and ok:
                tk = srt[g0] // r
                g1 = g0 + 1
                while g1 < e and srt[g1] // r == tk:
                    g1 += 1
                if tk > 0:
                    gdf = 0
                    run += 1
                    for t in range(g0, g1):
                        dd = ldoc[srt[t] % r]
                        if seen[dd] != run:
                            seen[dd] = run
                            gdf += 1
                    if gdf >= min_docs:
                        l0 = lt[srt[g0] % r]
                        same = l0 != -2
                        for t in range(g0 + 1, g1):
                            if not same:
                                break
                            same = lt[srt[t] % r] == l0
                        if same:
                            n_leave_nodes += 1   # a child the left-neighbour rule removes
                        else:
                            ok = False
                g0 = g1
        if not ok:
            for t in range(idx, j):
                alive_in[ldoc[order[t]]] += 1
            break
        # commit: one child (the main group) at length big + 1
        stats[0] += n_leave_nodes + 1
        stats[1] += n_leave_nodes
        df -= gone
        n_alive -= j - idx
        if x_tok != -2:
            for t in range(idx, j):
                n_x -= lt[order[t]] == x_tok
        idx = j
        cur = big + 1
        if x_tok != -2 and n_x == n_alive:
            stats[1] += 1
            status = 1
            break
    if status == 1:
        return 1, b, cur, df
    # compact the alive occurrences (order[idx:]) to the front, positions ascending
    keep = np.zeros(r, dtype=np.uint8)
    for t in range(idx, r):
        keep[order[t]] = 1
    w = a
    for i in range(r):
        if keep[i]:
            occ_pos[w] = occ_pos[a + i]
            occ_doc[w] = occ_doc[a + i]
            w += 1
    return 2, w, cur, df
