"""Locality-sensitive hashing over MinHash signatures: bands, buckets, candidates.

Banding (Rajaraman & Ullman, *Mining of Massive Datasets*, ch. 3; the MinHash/LSH
article, docs/references.md): the signature is cut into *b* bands of *r* values;
each band of each document is hashed to a 64-bit key (:func:`band_keys`);
documents with equal keys in a band share a bucket, and a pair is a candidate
when it shares at least one bucket.  A pair of resemblance s becomes a
candidate with probability ``P(s) = 1 − (1 − s^r)^b`` (:func:`s_curve`), whose
steep part lies near ``(1/b)^(1/r)`` (:func:`lsh_threshold`).

Buckets are grouped by sorting the keys of each band (``np.argsort``), never
with Python dictionaries; pairs are emitted by a compiled kernel.

Huge buckets
    A bucket of ``m >= max_bucket`` documents would give m(m−1)/2 candidates
    (the MinHash/LSH article: a thousand template-only files are half a million
    pairs).  Such a bucket emits only ``2m − 3`` pairs: its members ordered by (shingle count,
    index), a *star* from the first of them to every other member and a *chain*
    between neighbours in that order.  Members similar to that first member, or
    to their size-neighbour, are found; the cluster of a bucket of true copies
    stays connected; pairs among the other members are not enumerated.  The
    number of capped buckets and of pairs not enumerated is reported (summed over
    buckets: a pair left out of several bands' buckets counts once per bucket).
    ``max_bucket=None`` (or 0) disables the cap.

Near-empty documents
    The MinHash/LSH article warns that empty and almost empty documents collide
    by chance.  Documents without shingles never enter a bucket (their signature is a
    sentinel).  Documents with ``1 <= size < min_shingles`` shingles are kept
    out of the bands and matched *exactly* instead: they are grouped by a
    fingerprint of their whole set (each group of identical sets is one more
    bucket, under the same cap, verified afterwards).  Two different sets of fewer than m shingles, or such a set and
    a larger one, have J <= (m−1)/m, so for thresholds t > (m−1)/m (m = 3: t >
    2/3, which includes the default 0.8) this loses nothing; given the threshold,
    :func:`lsh_candidates` lowers ``min_shingles`` to the largest m with
    t > (m−1)/m (:func:`safe_min_shingles`; t = 0.5 → m = 1, the rule is off).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .._arrays import sorted_unique
from ..errors import ParameterError
from ..limits import MAX_NUM_PERM
from . import _lsh_kernels as K
from . import _minhash_kernels as MK

if TYPE_CHECKING:
    from .shingles import ShingleSets

__all__ = [
    "LSHCandidates",
    "LSHParams",
    "MAX_NUM_PERM",
    "band_keys",
    "banding_params",
    "bucket_pairs",
    "check_banding",
    "check_jaccard_threshold",
    "lsh_candidates",
    "lsh_params",
    "lsh_threshold",
    "s_curve",
    "safe_min_shingles",
    "set_fingerprints",
]

# The longest MinHash signature accepted: 8 bytes a document per value, and the
# banding search looks at every (bands, rows) pair up to it (K = 10^8 grew past
# 9.8 GB); datasketch's and the papers' signatures are 64-512 values.  The value
# lives in repetend.limits with the other bounds (MAX_NUM_PERM = 8192).


def s_curve(s: npt.ArrayLike, bands: int, rows: int):
    """Probability ``1 − (1 − s^r)^b`` that a pair of resemblance s becomes a candidate."""
    s = np.asarray(s, dtype=np.float64)
    out = 1.0 - (1.0 - s ** int(rows)) ** int(bands)
    return float(out) if out.ndim == 0 else out


def lsh_threshold(bands: int, rows: int) -> float:
    """The resemblance ``(1/b)^(1/r)`` near which the S-curve rises."""
    return float((1.0 / bands) ** (1.0 / rows))


@dataclass(frozen=True, slots=True)
class LSHParams:
    """A banding (b, r) and what it costs.

    ``fp_area`` = ∫₀ᵗ P(s) ds (weight of dissimilar pairs that become candidates),
    ``fn_area`` = ∫ₜ¹ (1 − P(s)) ds (weight of similar pairs that are missed),
    ``p_at_threshold`` = P(t), the recall for pairs exactly at the threshold.
    """

    bands: int
    rows: int
    threshold: float          # the target t
    lsh_threshold: float      # (1/b)^(1/r)
    p_at_threshold: float
    fp_area: float
    fn_area: float

    def as_dict(self) -> dict:
        return asdict(self)


_GRID = 1001


_AREA_BLOCK = 128  # bandings per block: temporaries of 128 x 1001 floats (1 MB), not of all


def _areas(threshold: float, b: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The false-positive and false-negative areas of each banding (b[i], r[i]),
    a block of bandings at a time (every row is integrated on its own, so the
    blocks change no value; at K = 128 the whole grid was 22 MB of temporaries)."""
    lo = np.linspace(0.0, threshold, _GRID)
    hi = np.linspace(threshold, 1.0, _GRID)
    n = b.shape[0]
    fp = np.empty(n, dtype=np.float64)
    fn = np.empty(n, dtype=np.float64)
    for s in range(0, n, _AREA_BLOCK):
        bb = b[s:s + _AREA_BLOCK, None].astype(np.float64)
        rr = r[s:s + _AREA_BLOCK, None].astype(np.float64)
        p_lo = 1.0 - (1.0 - lo[None, :] ** rr) ** bb
        fp[s:s + _AREA_BLOCK] = np.trapezoid(p_lo, lo, axis=1)
        del p_lo
        p_hi = 1.0 - (1.0 - hi[None, :] ** rr) ** bb
        fn[s:s + _AREA_BLOCK] = np.trapezoid(1.0 - p_hi, hi, axis=1)
    return fp, fn


def banding_params(threshold: float, bands: int, rows: int) -> LSHParams:
    """The :class:`LSHParams` of a given banding: its S-curve threshold, P(t) and areas.

    Parameters
    ----------
    threshold : float
        The target resemblance t.
    bands, rows : int
        The banding (b, r), taken as it is (:func:`lsh_params` chooses one).

    Returns
    -------
    LSHParams
    """
    fp, fn = _areas(threshold, np.array([bands]), np.array([rows]))
    return LSHParams(int(bands), int(rows), float(threshold), lsh_threshold(bands, rows),
                     s_curve(threshold, bands, rows), float(fp[0]), float(fn[0]))


def check_jaccard_threshold(threshold: float) -> None:
    """Raise :class:`~repetend.errors.ParameterError` unless 0 < *threshold* <= 1."""
    if not (0.0 < float(threshold) <= 1.0):
        raise ParameterError(f"threshold must be in (0, 1], got {threshold}")


def check_banding(num_perm: int, bands: int | None, rows: int | None) -> tuple[int | None, int | None]:
    """Validate a user's bands/rows against K; fill the missing one when the other is given."""
    if not 1 <= int(num_perm) <= MAX_NUM_PERM:
        raise ParameterError(f"num_perm must be in 1..{MAX_NUM_PERM}, got {num_perm}")
    for name, v in (("bands", bands), ("rows", rows)):
        if v is not None and int(v) < 1:
            raise ParameterError(f"{name} must be >= 1, got {v}")
    if bands is not None and rows is None:
        if num_perm % bands:
            raise ParameterError(f"num_perm={num_perm} is not divisible into {bands} bands")
        rows = num_perm // bands
    elif rows is not None and bands is None:
        if num_perm % rows:
            raise ParameterError(f"num_perm={num_perm} is not divisible into bands of {rows} rows")
        bands = num_perm // rows
    if bands is not None and rows is not None and bands * rows > num_perm:
        raise ParameterError(
            f"{bands} bands x {rows} rows = {bands * rows} signature values, "
            f"but num_perm is only {num_perm}")
    return bands, rows


def lsh_params(threshold: float, num_perm: int, fp_weight: float = 0.5, fn_weight: float = 0.5,
               *, min_recall: float | None = 0.98) -> LSHParams:
    """Choose (bands, rows) with ``bands·rows <= num_perm`` for a resemblance threshold.

    Parameters
    ----------
    threshold : float
        Target resemblance t in (0, 1].
    num_perm : int
        Signature length K.
    fp_weight, fn_weight : float
        Weights of the false-positive area ∫₀ᵗ P and the false-negative area
        ∫ₜ¹ (1 − P) in the cost that is minimised.
    min_recall : float or None
        Only bandings with ``P(t) >= min_recall`` are eligible (default 0.98); if
        none is, the one with the largest P(t) is returned.  ``None`` gives
        exactly datasketch's rule (``_optimal_param``).

    Notes
    -----
    datasketch minimises ``fp_weight·FP + fn_weight·FN`` alone, which at
    t = 0.8 and K = 128 puts the curve's midpoint near t and misses a sizeable
    share of pairs just above t.  Here a missed pair cannot be recovered while an
    extra candidate is removed by exact verification (the MinHash/LSH article:
    "the threshold should stand a little below the wanted similarity"), so P(t) itself must be
    high; the cost of that choice is the larger ``fp_area`` (more candidates to
    verify), which ``repetend lsh-params`` prints beside datasketch's choice.
    """
    check_jaccard_threshold(threshold)
    if not 1 <= int(num_perm) <= MAX_NUM_PERM:
        raise ParameterError(f"num_perm must be in 1..{MAX_NUM_PERM}, got {num_perm}")
    if min_recall is not None and not 0.0 <= min_recall <= 1.0:
        raise ParameterError(f"min_recall must be in [0, 1], got {min_recall}")
    for name, w in (("fp_weight", fp_weight), ("fn_weight", fn_weight)):
        if not 0.0 <= float(w) <= 1.0:
            raise ParameterError(f"{name} must be in [0, 1], got {w}")
    bs, rs = [], []
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            bs.append(b)
            rs.append(r)
    b = np.array(bs)
    r = np.array(rs)
    fp, fn = _areas(float(threshold), b, r)
    cost = fp_weight * fp + fn_weight * fn
    p_t = 1.0 - (1.0 - float(threshold) ** r.astype(np.float64)) ** b
    if min_recall is not None:
        ok = p_t >= min_recall
        if ok.any():
            cost = np.where(ok, cost, np.inf)
        else:
            cost = -p_t
    # ties: lowest cost, then most signature values used, then fewer bands
    i = int(np.lexsort((b, -(b * r), np.round(cost, 12)))[0])
    return banding_params(float(threshold), int(b[i]), int(r[i]))


@dataclass(slots=True)
class LSHCandidates:
    """Candidate pairs (a < b, distinct, sorted) and what the banding saw."""

    a: npt.NDArray[np.int64]
    b: npt.NDArray[np.int64]
    stats: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.a.shape[0])


def _runs(sorted_keys: np.ndarray) -> np.ndarray:
    """Start offsets of runs of equal keys (plus the end), runs of length >= 2 only."""
    n = sorted_keys.shape[0]
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    cut = np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1
    starts = np.concatenate(([0], cut, [n])).astype(np.int64)
    return starts


def _collect(members: np.ndarray, starts: np.ndarray, out_members: list, out_lens: list) -> None:
    """Append the buckets of >= 2 members (``members[starts[i]:starts[i+1]]``)."""
    lens = np.diff(starts)
    keep = lens >= 2
    if not keep.any():
        return
    sel_starts = starts[:-1][keep]
    sel_lens = lens[keep]
    idx = np.repeat(sel_starts, sel_lens) + (np.arange(sel_lens.sum()) -
                                             np.repeat(np.cumsum(sel_lens) - sel_lens, sel_lens))
    out_members.append(members[idx])
    out_lens.append(sel_lens)


def band_keys(signatures: npt.ArrayLike, docs: npt.ArrayLike, bands: int,
              rows: int) -> npt.NDArray[np.uint64]:
    """The 64-bit key of every band of the signatures of documents *docs*.

    Band j of a document is its signature values ``j*rows .. j*rows+rows-1``,
    hashed as ``h = mix(j + 1); h = mix(h ^ v)`` for each value v (SplitMix64's
    finalizer); two documents share a bucket of band j when their keys agree.

    Parameters
    ----------
    signatures : ndarray [n_docs, K]
        MinHash signature values (any unsigned dtype), ``bands * rows <= K``.
    docs : array of int
        The rows of *signatures* to band.
    bands, rows : int
        The banding.

    Returns
    -------
    ndarray of uint64 [len(docs), bands]
    """
    docs = np.ascontiguousarray(docs, dtype=np.int64)
    keys = np.empty((docs.shape[0], int(bands)), dtype=np.uint64)
    if docs.shape[0]:
        with np.errstate(over="ignore"):  # wrapping uint64 arithmetic (matters with JIT off)
            K.band_keys(np.ascontiguousarray(signatures), docs, int(bands), int(rows), keys)
    return keys


def set_fingerprints(sets: "ShingleSets") -> npt.NDArray[np.uint64]:
    """A 64-bit fingerprint of each document's whole (sorted) shingle set.

    The bucket key of near-empty documents, which are grouped by identical sets
    instead of banded (module docstring).

    Parameters
    ----------
    sets : ShingleSets

    Returns
    -------
    ndarray of uint64 [n_docs]
    """
    offsets = np.ascontiguousarray(sets.offsets, dtype=np.int64)
    fp = np.empty(offsets.shape[0] - 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        MK.set_fingerprints(np.ascontiguousarray(sets.hashes, dtype=np.uint64), offsets, fp)
    return fp


def bucket_pairs(members: npt.NDArray[np.int64], starts: npt.NDArray[np.int64],
                 sizes: npt.NDArray[np.int64], max_bucket: int
                 ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The candidate pairs of buckets: all pairs below the cap, a star + chain from it on.

    Parameters
    ----------
    members : array of int64
        Document indices, bucket after bucket.
    starts : array of int64
        Bucket i is ``members[starts[i]:starts[i+1]]``.
    sizes : array of int64
        Shingle count of each document (the order of a capped bucket's star + chain).
    max_bucket : int
        Buckets of this many members or more emit ``2m − 3`` pairs; 0 disables the cap.

    Returns
    -------
    a, b : ndarray of int64
        The pairs, bucket after bucket, each with the smaller index first
        (not deduplicated).
    """
    counts = K.bucket_pair_counts(starts, np.int64(max_bucket))
    po = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=po[1:])
    total = int(po[-1])
    out_a = np.empty(total, dtype=np.int64)
    out_b = np.empty(total, dtype=np.int64)
    K.bucket_pairs(members, starts, sizes, np.int64(max_bucket), po, out_a, out_b)
    return out_a, out_b


def _emit(out_members: list, out_lens: list, sizes: np.ndarray, cap: int, stats: dict):
    """All buckets' candidate pairs in one compiled call."""
    if not out_lens:
        return None
    mem = np.ascontiguousarray(np.concatenate(out_members), dtype=np.int64)
    lens = np.concatenate(out_lens).astype(np.int64)
    st = np.zeros(lens.size + 1, dtype=np.int64)
    np.cumsum(lens, out=st[1:])
    out_a, out_b = bucket_pairs(mem, st, sizes, cap)
    if cap > 0:
        big = lens >= cap
        stats["capped_buckets"] += int(big.sum())
        m = lens[big]
        stats["pairs_not_enumerated"] += int((m * (m - 1) // 2 - (2 * m - 3)).sum())
    stats["largest_bucket"] = max(stats["largest_bucket"], int(lens.max()))
    stats["buckets_with_pairs"] += int(lens.size)
    return out_a, out_b


def _unique_pairs(parts: list[tuple[np.ndarray, np.ndarray]], n: int):
    if not parts:
        z = np.empty(0, dtype=np.int64)
        return z, z.copy(), 0
    a = np.concatenate([p[0] for p in parts])
    b = np.concatenate([p[1] for p in parts])
    raw = int(a.size)
    key = sorted_unique(a * np.int64(n) + b)
    return key // n, key % n, raw


def safe_min_shingles(min_shingles: int, threshold: float | None) -> int:
    """The largest m <= ``min_shingles`` for which exact identity grouping of the
    documents with fewer than m shingles loses no pair with J >= threshold,
    i.e. ``threshold > (m - 1) / m`` (m = 1 disables the rule)."""
    m = int(min_shingles)
    if threshold is None:
        return m
    while m > 1 and float(threshold) <= (m - 1) / m:
        m -= 1
    return m


def lsh_candidates(signatures, sizes: npt.ArrayLike, bands: int, rows: int, *,
                   max_bucket: int | None = 200, min_shingles: int = 3,
                   sets=None, threshold: float | None = None,
                   fingerprints: npt.ArrayLike | None = None) -> LSHCandidates:
    """Candidate pairs of documents from banded MinHash signatures.

    Parameters
    ----------
    signatures : MinHashSignatures or ndarray [n_docs, K]
        The signatures (any unsigned dtype).
    sizes : array of int
        Shingle-set size of each document (0 = empty: never a candidate).
    bands, rows : int
        The banding; ``bands * rows <= K`` (the first ``bands*rows`` values are used).
    max_bucket : int or None
        Buckets of this many documents or more emit a star + chain only (module docs).
    min_shingles : int
        Documents with fewer shingles skip the bands and are grouped by exact set
        identity (needs ``sets``; without it they are banded like the others).
    sets : ShingleSets, optional
        The shingle sets, for the exact grouping of near-empty documents.
    fingerprints : array of uint64, optional
        Instead of ``sets``: their :func:`set_fingerprints`, of which only the
        entries of the near-empty documents are read (the streamed path,
        :mod:`repetend.neardup.streamed`, computes those while each set is alive).
    threshold : float, optional
        The resemblance threshold the candidates are for; when given,
        ``min_shingles`` is lowered to :func:`safe_min_shingles` so that the
        near-empty rule never loses a pair with J >= threshold.

    Returns
    -------
    LSHCandidates
        Distinct pairs ``a < b`` sorted by (a, b), and ``stats``: documents banded,
        near-empty documents, empty documents, buckets with pairs, capped buckets,
        pairs not enumerated, largest bucket, raw pairs before deduplication.
    """
    values = getattr(signatures, "values", signatures)
    values = np.ascontiguousarray(values)
    if values.ndim != 2:
        raise ParameterError("signatures must be a 2-d array [n_docs, num_perm]")
    n, k = values.shape
    check_banding(k, bands, rows)
    sizes = np.ascontiguousarray(sizes, dtype=np.int64)
    if sizes.shape[0] != n:
        raise ParameterError(f"sizes has {sizes.shape[0]} entries for {n} signatures")
    cap = 0 if max_bucket is None else int(max_bucket)
    if cap < 0 or cap == 1 or cap == 2:
        raise ParameterError(f"max_bucket must be None, 0 or >= 3, got {max_bucket}")
    if min_shingles < 1:
        raise ParameterError(f"min_shingles must be >= 1, got {min_shingles}")
    if threshold is not None:
        check_jaccard_threshold(threshold)
    eff = safe_min_shingles(min_shingles, threshold)
    tiny_limit = eff if (sets is not None or fingerprints is not None) else 1
    banded = np.flatnonzero(sizes >= tiny_limit).astype(np.int64)
    tiny = np.flatnonzero((sizes >= 1) & (sizes < tiny_limit)).astype(np.int64)
    stats = {"documents": int(n), "banded_documents": int(banded.size),
             "near_empty_documents": int(tiny.size),
             "empty_documents": int(np.count_nonzero(sizes == 0)),
             "bands": int(bands), "rows": int(rows), "max_bucket": cap or None,
             "min_shingles": int(tiny_limit),
             "buckets_with_pairs": 0, "capped_buckets": 0, "pairs_not_enumerated": 0,
             "largest_bucket": 0}
    out_members: list = []
    out_lens: list = []
    if banded.size >= 2:
        keys = band_keys(values, banded, bands, rows)
        for j in range(int(bands)):
            col = keys[:, j]
            order = np.argsort(col, kind="stable")
            _collect(banded[order], _runs(col[order]), out_members, out_lens)
    if tiny.size >= 2:
        f = (set_fingerprints(sets)[tiny] if sets is not None
             else np.asarray(fingerprints, dtype=np.uint64)[tiny])
        order = np.argsort(f, kind="stable")
        # identical sets form one bucket each, under the same cap as the bands
        _collect(tiny[order], _runs(f[order]), out_members, out_lens)
    got = _emit(out_members, out_lens, sizes, cap, stats)
    parts = [got] if got is not None else []
    a, b, raw = _unique_pairs(parts, max(n, 1))
    stats["raw_pairs"] = raw
    stats["candidates"] = int(a.size)
    return LSHCandidates(a, b, stats)
