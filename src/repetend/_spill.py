"""External distribution sort helpers shared by the out-of-core paths.

Records are routed to ``2^p`` partition files by a hash of their key and
appended there shard after shard; runs of items are cut to fit a budget.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["append_partitioned", "cuts_by_cumulative", "cost_cuts", "hash_partition"]

_MIX = np.uint64(0x9E3779B97F4A7C15)


def cuts_by_cumulative(cum: np.ndarray, cap: int) -> np.ndarray:
    """Cuts ``[0, ..., n]`` of consecutive items whose cost (``cum``: the n + 1
    running totals, ``cum[0] = 0``) sums to at most ``cap`` per run; an item dearer
    than ``cap`` is a run alone."""
    n = int(cum.shape[0] - 1)
    cuts = [0]
    while cuts[-1] < n:
        i = cuts[-1]
        j = int(np.searchsorted(cum, cum[i] + int(cap), side="right")) - 1
        cuts.append(min(max(j, i + 1), n))
    return np.asarray(cuts, dtype=np.int64)


def cost_cuts(cost: np.ndarray, cap: int) -> np.ndarray:
    """:func:`cuts_by_cumulative` of per-item costs."""
    cum = np.zeros(int(cost.shape[0]) + 1, dtype=np.int64)
    np.cumsum(cost, out=cum[1:])
    return cuts_by_cumulative(cum, cap)


def hash_partition(keys: np.ndarray, pbits: int) -> np.ndarray:
    """Partition ``0 .. 2^pbits - 1`` of each uint64 key (its top bits after a
    multiplicative mix)."""
    if pbits == 0:
        return np.zeros(keys.shape[0], dtype=np.int64)
    with np.errstate(over="ignore"):
        return ((keys * _MIX) >> np.uint64(64 - pbits)).astype(np.int64)


def append_partitioned(spill: Path, name: str, arrays: dict, part: np.ndarray,
                       n_parts: int) -> np.ndarray:
    """Append each record (``arrays`` column by column) to ``spill/{name}{j}.{column}``
    of its partition j, keeping the records' order within a partition; returns the
    records per partition."""
    order = np.argsort(part, kind="stable")
    cnt = np.bincount(part, minlength=n_parts)
    bnd = np.zeros(n_parts + 1, dtype=np.int64)
    np.cumsum(cnt, out=bnd[1:])
    for col, v in arrays.items():
        v = v[order]
        for j in np.flatnonzero(cnt):
            with open(spill / f"{name}{j}.{col}", "ab") as f:
                v[bnd[j]:bnd[j + 1]].tofile(f)
    return cnt
