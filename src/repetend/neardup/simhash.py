"""SimHash fingerprints and all pairs within Hamming distance k (permuted tables).

SimHash (Charikar 2002, "Similarity estimation techniques from rounding
algorithms") maps a document's weighted features to a 64-bit fingerprint: each
feature is hashed to 64 bits, each bit position sums +w where the feature's bit
is 1 and -w where it is 0, and the fingerprint keeps the sign of each sum.  Two
documents' fingerprints differ in a bit with probability θ/π, θ the angle of
their feature vectors, so near-duplicates have fingerprints within a small
Hamming distance.  Manku, Jain & Das Sarma (WWW 2007, "Detecting
near-duplicates for web crawling") used 64-bit fingerprints and k = 3 over 8 B
pages.

Features here are the document's shingles (the same hashes MinHash uses),
re-mixed with splitmix64 and a seed; the weight is 1 per distinct shingle
(``weights="binary"``) or the number of times the shingle occurs in the document
(``"count"``, Charikar's term-frequency weighting).

Finding the pairs (Manku et al., section 3): split the 64 bits into B blocks.
Two fingerprints within Hamming distance k differ in at most k blocks, so at
least B − k blocks are equal.  For every choice of B − k blocks — C(B, k)
*tables* — sort the fingerprints by those blocks (the key) and compare only
fingerprints with equal keys; every pair within distance k has equal keys in at
least one table, so the candidate stage misses nothing.  Each pair is emitted by
one table only (the first, in lexicographic order, whose blocks it agrees on).
More blocks mean more tables but longer keys and so fewer random collisions;
:func:`simhash_tables` picks B minimising ``tables × (n log2 n + n² / 2^key_bits)``
(the sorts plus the expected random comparisons) among B = k+1 … k+8 with at most
256 tables.  For k = 3: B = 4 (4 tables, 16-bit keys) up to n ≈ 3·10⁶ fingerprints,
B = 5 (10 tables, ≥ 25-bit keys) up to n ≈ 5·10⁸, B = 6 (20 tables, ≥ 31-bit keys)
beyond — the design range of Manku et al. (20 tables for 8·10⁹ pages at k = 3).

Reach of k: for binary weights and two sets of equal size with Jaccard J, the
cosine of their feature vectors is 2J/(1+J), so a bit differs with probability
p = arccos(2J/(1+J))/π and the distance is about Binomial(64, p)
(:func:`simhash_recall`; unequal sizes only raise the cosine).  Measured on
random sets of 50 and 400 shingles, 3,000 pairs per J, this matches to ±0.03
(k = 3: 0.9 % found at J = 0.8, 9 % at 0.9, 52 % at 0.97; k = 12: 84 % at 0.8).
:func:`check_threshold` warns (:class:`SimHashRecallWarning`) when fewer than
half of the pairs at the requested threshold would be found.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import acos, comb, log2, pi
from typing import Literal

import os
import sys
import warnings

import numpy as np
import numpy.typing as npt

from ..errors import ParameterError
from . import _simhash_kernels as K
from .shingles import ShingleSets

__all__ = ["HammingCandidates", "SimHashRecallWarning", "SimHashTables", "check_threshold",
           "hamming_candidates", "hamming_distance", "simhash_fingerprints", "simhash_recall",
           "simhash_tables"]

MAX_TABLES = 256
SERIAL_COMPARISONS = 1 << 22
DEFAULT_SIMHASH_SEED = 0x5EED5
MIN_RECALL_AT_THRESHOLD = 0.5   # below this, check_threshold warns
BITS = 64


class SimHashRecallWarning(UserWarning):
    """SimHash at the chosen Hamming distance finds few of the pairs at the Jaccard threshold."""


def simhash_recall(jaccard: float, k: int, bits: int = BITS) -> float:
    """Share of pairs with Jaccard *jaccard* whose fingerprints are within Hamming
    distance *k*: ``P(Binomial(bits, p) <= k)``, p = arccos(2J/(1+J))/π (binary
    weights, sets of equal size — the worst case for a given J)."""
    j = min(max(float(jaccard), 0.0), 1.0)
    p = acos(min(1.0, 2.0 * j / (1.0 + j))) / pi
    k = int(k)
    if p <= 0.0:
        return 1.0
    return float(min(1.0, sum(comb(bits, i) * p ** i * (1.0 - p) ** (bits - i)
                              for i in range(min(k, bits) + 1))))


def _outside_package() -> int:
    """stacklevel of the first caller outside the repetend package."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    f = sys._getframe(1)
    level = 1
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(root):
        f = f.f_back
        level += 1
    return level


def check_threshold(threshold: float, k: int) -> float:
    """Warn (:class:`SimHashRecallWarning`) when Hamming distance *k* finds fewer
    than half of the pairs at Jaccard *threshold*; returns that share."""
    r = simhash_recall(threshold, k)
    if r < MIN_RECALL_AT_THRESHOLD:
        need = next((kk for kk in range(int(k) + 1, 33) if simhash_recall(threshold, kk) >= 0.9), None)
        half = next((j / 100 for j in range(1, 101) if simhash_recall(j / 100, k) >= 0.5), 1.0)
        fix = (f"raise the Hamming distance to {need} (hamming= / --hamming; more table "
               f"comparisons) or use method 'minhash' (or 'allpairs')" if need is not None else
               "use method 'minhash' (or 'allpairs')")
        warnings.warn(
            f"SimHash with Hamming distance {int(k)} (of 64 bits) finds only about {r:.0%} of the "
            f"pairs at the Jaccard threshold {float(threshold):g}, and half of them only from "
            f"J ≈ {half:.2f}: {fix}", SimHashRecallWarning, stacklevel=_outside_package())
    return r


def simhash_fingerprints(sets: ShingleSets | None = None, *, weights: Literal["binary", "count"] = "binary",
                         tokens: npt.NDArray[np.int32] | None = None,
                         doc_offsets: npt.NDArray[np.int64] | None = None,
                         tok_hash: npt.NDArray[np.uint64] | None = None, k: int | None = None,
                         seed: int = DEFAULT_SIMHASH_SEED) -> npt.NDArray[np.uint64]:
    """64-bit SimHash fingerprint of each document (compiled, parallel over documents).

    Parameters
    ----------
    sets : ShingleSets
        Needed for ``weights="binary"``: each distinct shingle weighs 1.
    weights : {"binary", "count"}
        ``"count"``: each shingle weighs its number of occurrences; needs the
        token stream (*tokens*, *doc_offsets*, *tok_hash*, shingle size *k*).
    seed : int
        Re-mixes the shingle hashes before their bits are summed.

    Returns
    -------
    ndarray of uint64
        One fingerprint per document; a document without shingles gets 0.

    Notes
    -----
    Charikar (STOC 2002); Manku, Jain & Das Sarma (WWW 2007).
    """
    s = np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF)
    with np.errstate(over="ignore"):
        if weights == "binary":
            if sets is None:
                raise ParameterError("binary SimHash weights need shingle sets")
            return K.simhash_sets(np.ascontiguousarray(sets.hashes, dtype=np.uint64),
                                  np.ascontiguousarray(sets.offsets, dtype=np.int64), s)
        if weights == "count":
            if tokens is None or doc_offsets is None or tok_hash is None or k is None:
                raise ParameterError("count SimHash weights need the token stream (a TokenStore)")
            if int(k) < 1:
                raise ParameterError(f"shingle size k must be >= 1, got {k}")
            return K.simhash_windows(np.ascontiguousarray(tokens, dtype=np.int32),
                                     np.ascontiguousarray(doc_offsets, dtype=np.int64),
                                     np.ascontiguousarray(tok_hash, dtype=np.uint64), np.int64(k), s)
    raise ParameterError(f"SimHash weights must be 'binary' or 'count', got {weights!r}")


def hamming_distance(x: npt.ArrayLike, y: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Bitwise Hamming distance of uint64 fingerprints, element by element."""
    z = np.bitwise_xor(np.asarray(x, dtype=np.uint64), np.asarray(y, dtype=np.uint64))
    return np.unpackbits(np.atleast_1d(z).view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1).astype(np.int64)


@dataclass(slots=True)
class SimHashTables:
    """The permuted-table design: B blocks of the 64 bits, one table per choice of B − k equal blocks."""

    k: int
    blocks: int
    block_masks: npt.NDArray[np.uint64]   # bits of each block
    combos: list[tuple[int, ...]]          # the blocks that form each table's key (lexicographic)

    @property
    def n_tables(self) -> int:
        return len(self.combos)

    def key_mask(self, t: int) -> np.uint64:
        m = np.uint64(0)
        for j in self.combos[t]:
            m |= self.block_masks[j]
        return m

    @property
    def min_key_bits(self) -> int:
        return min(int(np.unpackbits(np.array([self.key_mask(t)], np.uint64).view(np.uint8)).sum())
                   for t in range(self.n_tables))


def _block_masks(blocks: int) -> np.ndarray:
    sizes = [64 // blocks + (1 if j < 64 % blocks else 0) for j in range(blocks)]
    masks = np.zeros(blocks, dtype=np.uint64)
    start = 0
    for j, s in enumerate(sizes):
        masks[j] = np.uint64(((1 << s) - 1) << start)
        start += s
    return masks


def _check_k(k: int) -> int:
    k = int(k)
    if not 0 <= k <= 32:
        raise ParameterError(f"Hamming distance k must be in 0..32, got {k}")
    return k


def simhash_tables(k: int, n: int, blocks: int | None = None) -> SimHashTables:
    """Choose the block count B for distance *k* and *n* fingerprints (or take *blocks*).

    Cost model: each table sorts n keys and compares the pairs of equal keys,
    about n² / 2^key_bits of them for random fingerprints; B minimises
    ``C(B, k) × (n log2 n + n² / 2^(min key bits))`` over B = k+1 … k+8 (≤ 64) with at most
    256 tables.  k = 0 is one table keyed on all 64 bits.
    """
    k = _check_k(k)
    if blocks is not None:
        blocks = int(blocks)
        if not k + 1 <= blocks <= 64:
            raise ParameterError(f"SimHash blocks must be in {k + 1}..64 for k = {k}, got {blocks}")
        if comb(blocks, k) > 4096:
            raise ParameterError(f"{blocks} blocks at k = {k} would need {comb(blocks, k)} tables (max 4096)")
    elif k == 0:
        blocks = 1
    else:
        best = None
        nn = float(max(n, 2))
        sort_cost = max(1.0, log2(nn))
        for b in range(k + 1, min(64, k + 8) + 1):
            t = comb(b, k)
            if t > MAX_TABLES and best is not None:
                break
            key_bits = (b - k) * (64 // b)
            cost = t * (sort_cost * nn + nn * nn / 2.0 ** key_bits)
            if best is None or cost < best[0]:
                best = (cost, b)
        blocks = best[1]
    m = blocks - k
    combos = list(combinations(range(blocks), m))
    return SimHashTables(k, blocks, _block_masks(blocks), combos)


@dataclass(slots=True)
class HammingCandidates:
    """Document pairs (a < b) whose fingerprints are within Hamming distance k, each once."""

    a: npt.NDArray[np.int64]
    b: npt.NDArray[np.int64]
    stats: dict

    def __len__(self) -> int:
        return int(self.a.shape[0])


def hamming_candidates(fps: npt.NDArray[np.uint64], k: int = 3, *, valid: npt.NDArray[np.bool_] | None = None,
                       blocks: int | None = None, max_group: int | None = None,
                       sizes: npt.NDArray[np.int64] | None = None) -> HammingCandidates:
    """All pairs of fingerprints within Hamming distance *k*, by permuted tables (Manku et al. 2007).

    Parameters
    ----------
    fps : ndarray of uint64
        One fingerprint per document.
    k : int
        Maximal Hamming distance (0..32).
    valid : ndarray of bool, optional
        Documents to consider (e.g. those with shingles); others are never paired.
    blocks : int, optional
        Number of blocks B (default: chosen by :func:`simhash_tables`).
    max_group : int, optional
        Cap on groups of *identical* fingerprints (exact copies en masse): a group
        of m >= max_group documents, ordered by (*sizes*, index), emits a star from
        its first member to the others and a chain between neighbours (2m − 3
        pairs, like a capped LSH bucket) and only its first member enters the
        tables; the pairs left out are counted in ``stats["pairs_not_enumerated"]``.
        None or 0: no cap.
    sizes : ndarray of int64, optional
        Shingle-set sizes, to order the members of a capped group.

    Returns
    -------
    HammingCandidates
        Without a cap, exactly the pairs within distance k (no pair missed, none
        repeated); ``stats`` holds the table design and the number of comparisons.
    """
    fps = np.ascontiguousarray(fps, dtype=np.uint64)
    idx = np.arange(fps.shape[0], dtype=np.int64) if valid is None else np.flatnonzero(np.asarray(valid, bool))
    cap = 0 if max_group is None else int(max_group)
    if cap and cap < 3:
        raise ParameterError(f"max_group must be None, 0 or >= 3, got {max_group}")
    group_a, group_b, weight = [], [], None
    capped_groups = 0
    not_enumerated = 0
    if cap and idx.size >= cap:
        uniq, inverse, counts = np.unique(fps[idx], return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
        big = counts >= cap
        if big.any():
            in_big = big[inverse]
            mem = np.flatnonzero(in_big)
            sz = np.zeros(mem.size, np.int64) if sizes is None else np.asarray(sizes, np.int64)[idx[mem]]
            mem = mem[np.lexsort((mem, sz, inverse[mem]))]
            grp = inverse[mem]
            head = np.ones(mem.size, dtype=bool)
            head[1:] = grp[1:] != grp[:-1]
            first = np.maximum.accumulate(np.where(head, np.arange(mem.size), 0))
            star = ~head
            group_a.append(idx[mem[first[star]]])
            group_b.append(idx[mem[star]])
            chain = star[:-1] & star[1:]                         # neighbours after the first
            group_a.append(idx[mem[:-1][chain]])
            group_b.append(idx[mem[1:][chain]])
            m = counts[big]
            capped_groups = int(m.size)
            not_enumerated += int((m * (m - 1) // 2 - (2 * m - 3)).sum())
            keep = ~in_big | np.isin(np.arange(idx.size), mem[head])
            w_all = np.where(big[inverse], counts[inverse], 1).astype(np.int64)
            weight = w_all[keep]
            idx = idx[keep]
    sub = np.ascontiguousarray(fps[idx])
    n = int(sub.shape[0])
    design = simhash_tables(k, n, blocks)
    a_parts, b_parts = [], []
    comparisons = 0
    largest_run = 0
    for t, combo in enumerate(design.combos):
        mask = design.key_mask(t)
        keys = sub & mask
        order = np.argsort(keys).astype(np.int64)
        ks = keys[order]
        if n < 2:
            break
        cut = np.flatnonzero(ks[1:] != ks[:-1]) + 1
        starts = np.concatenate(([0], cut, [n])).astype(np.int64)
        lens = np.diff(starts)
        multi = np.flatnonzero(lens > 1)
        if multi.size == 0:
            continue
        rs = np.ascontiguousarray(starts[multi])
        re = np.ascontiguousarray(starts[multi + 1])
        ln = lens[multi]
        n_cmp = int((ln * (ln - 1) // 2).sum())
        comparisons += n_cmp
        largest_run = max(largest_run, int(ln.max()))
        # runs of >= 2 equal keys, compacted into their own order array
        order2 = np.ascontiguousarray(order[_ranges(rs, re)])
        sfp = np.ascontiguousarray(sub[order2])     # runs contiguous: sequential reads in the kernel
        bounds = np.zeros(multi.size + 1, dtype=np.int64)
        np.cumsum(ln, out=bounds[1:])
        combo_bits = np.int64(sum(1 << j for j in combo))
        if n_cmp <= SERIAL_COMPARISONS:   # small table: one serial pass, no thread start-up
            a = np.empty(n_cmp, dtype=np.int64)
            b = np.empty(n_cmp, dtype=np.int64)
            with np.errstate(over="ignore"):  # popcount wraps on purpose (JIT-off runs warn)
                c = K.run_pairs_serial(sfp, order2, bounds, np.int64(design.k), design.block_masks,
                                       np.int64(len(combo)), combo_bits, a, b)
            if c:
                a_parts.append(a[:c].copy())
                b_parts.append(b[:c].copy())
            continue
        with np.errstate(over="ignore"):
            cnt = K.run_pair_counts(sfp, order2, bounds, np.int64(design.k), design.block_masks,
                                    np.int64(len(combo)), combo_bits)
        pos = np.zeros(cnt.shape[0] + 1, dtype=np.int64)
        np.cumsum(cnt, out=pos[1:])
        total = int(pos[-1])
        if total == 0:
            continue
        a = np.empty(total, dtype=np.int64)
        b = np.empty(total, dtype=np.int64)
        with np.errstate(over="ignore"):
            K.run_pair_fill(sfp, order2, bounds, np.int64(design.k), design.block_masks,
                            np.int64(len(combo)), combo_bits, pos, a, b)
        a_parts.append(a)
        b_parts.append(b)
    if a_parts:
        pa_, pb_ = np.concatenate(a_parts), np.concatenate(b_parts)
        if weight is not None:       # a capped group's first member stands for all of them
            not_enumerated += int((weight[pa_] * weight[pb_] - 1).sum())
        group_a.append(idx[pa_])
        group_b.append(idx[pb_])
    if group_a:
        a = np.concatenate(group_a)
        b = np.concatenate(group_b)
        lo, hi = np.minimum(a, b), np.maximum(a, b)
    else:
        lo = np.empty(0, np.int64)
        hi = np.empty(0, np.int64)
    stats = {"hamming": design.k, "blocks": design.blocks, "tables": design.n_tables,
             "key_bits_min": design.min_key_bits if design.n_tables else 0,
             "fingerprints": n, "comparisons": comparisons, "largest_run": largest_run,
             "pairs_within_k": int(lo.shape[0]), "max_group": cap or None,
             "capped_groups": capped_groups, "pairs_not_enumerated": not_enumerated}
    return HammingCandidates(lo, hi, stats)


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Concatenation of arange(s, e) for each (s, e), vectorised."""
    lens = ends - starts
    total = int(lens.sum())
    out = np.ones(total, dtype=np.int64)
    first = np.zeros(lens.shape[0], dtype=np.int64)
    np.cumsum(lens[:-1], out=first[1:])
    out[first] = starts
    out[first[1:]] -= ends[:-1] - 1
    return np.cumsum(out)
