"""Broder's shingle method with mod-m sampling and sort-based clustering (Broder 1997).

Each document keeps only the shingle hashes divisible by m, where m depends on
its rank (size in words, ``doc_n_tokens``)::

    rank 1: < 100 words     m = 10
    rank 2: < 1000 words    m = 20
    rank 3: >= 1000 words   m = 40

The four stages of the seed:

1. the sampled ``[hash, doc]`` table (compiled pass over the shingle sets);
2. the table sorted by hash (numpy stable sort: documents stay in order in a run);
3. pairs of documents sharing a sampled hash with their number of common
   samples -- the seed's ``[doc A, doc B, common]`` table, produced one A at a
   time in document order (compiled), never materialised whole;
4. the threshold on the resemblance estimated from the samples, giving the
   ``[doc A, doc B, sim]`` table. Clusters are the connected components of
   these pairs (:func:`repetend.neardup._uf.components`, done by the API).

**Ranks and compatibility.** The moduli divide each other (10 | 20 | 40), so a
hash sampled at m = 40 is also sampled at 20 and 10: the samples of a coarser
rank are a subset of the samples of a finer one. A pair of documents of
different ranks is compared on the *coarser* sampling of the two,
V_M(A) and V_M(B) with M = max(m_A, m_B), which both documents have. The
estimates are

    r(A, B) ≈ |V_M(A) ∩ V_M(B)| / |V_M(A) ∪ V_M(B)|,
    c(A, B) ≈ |V_M(A) ∩ V_M(B)| / |V_M(A)|.

(The seed compares resemblance within a rank and containment across ranks;
here resemblance is decided for every pair, containment when asked.)

**What the decision means.** Broder decides on samples: a pair whose sampled
resemblance falls below t is lost (likely for short documents, which have few
or no samples: a 50-word page keeps ~5 of its shingles, a page with under ~10
shingles often none), and a pair slightly below t on the full sets can pass.
With ``verify=True`` (default) every pair that passed on samples is measured
exactly (:func:`~repetend.neardup.pairs.verify_pairs`) and pairs whose exact
J < t are **dropped** (unless they pass the exact containment threshold), so
the output has no false positives -- only possible misses; ``slack`` lowers the
sampled threshold to t − slack to trade more exact checks for fewer misses.
With ``verify=False`` the returned values are the sampled estimates.

**Frequent samples.** A sampled hash shared by n documents makes n(n−1)/2
pairs; hashes in more than ``max_bucket`` documents are skipped (their common
count is not credited to any pair) and counted in the result, and a warning is
logged.

References
----------
A. Z. Broder, S. C. Glassman, M. S. Manasse, G. Zweig, "Syntactic Clustering
of the Web", WWW 1997. A. Z. Broder, "On the resemblance and containment of
documents", SEQUENCES 1997 (docs/references.md).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import ParameterError
from . import _broder_kernels as K
from .pairs import Pairs, verify_pairs
from .shingles import ShingleSets

__all__ = ["BroderResult", "broder", "broder_pairs", "doc_moduli"]

log = logging.getLogger(__name__)

DEFAULT_MODULI = (10, 20, 40)
DEFAULT_RANK_BOUNDS = (100, 1000)


def _unit_interval(name: str, v: float, allow_zero: bool = False) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number in (0, 1], got {v!r}") from None
    lo_ok = f >= 0.0 if allow_zero else f > 0.0
    if not (math.isfinite(f) and lo_ok and f <= 1.0):
        raise ParameterError(f"{name} must be in {'[0' if allow_zero else '(0'}, 1], got {v!r}")
    return f


def doc_moduli(doc_n_tokens: npt.ArrayLike, moduli=DEFAULT_MODULI, rank_bounds=DEFAULT_RANK_BOUNDS
               ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64]]:
    """Rank index (0-based) and sampling modulus m of every document.

    A document of n words gets rank i = number of bounds <= n, so with the
    defaults n < 100 -> m = 10, 100 <= n < 1000 -> m = 20, n >= 1000 -> m = 40.
    """
    moduli = tuple(int(m) for m in moduli)
    bounds = tuple(int(b) for b in rank_bounds)
    if len(moduli) != len(bounds) + 1 or not moduli:
        raise ParameterError(f"need one modulus more than rank bounds, got moduli={moduli}, "
                             f"rank_bounds={bounds}")
    if any(m < 1 for m in moduli) or any(moduli[i + 1] % moduli[i] for i in range(len(moduli) - 1)):
        raise ParameterError(f"moduli must be >= 1 and each must divide the next (so ranks "
                             f"stay comparable), got {moduli}")
    if list(bounds) != sorted(bounds) or any(b < 1 for b in bounds):
        raise ParameterError(f"rank_bounds must be increasing positive word counts, got {bounds}")
    n = np.asarray(doc_n_tokens, dtype=np.int64)
    rank = np.searchsorted(np.asarray(bounds, dtype=np.int64), n, side="right").astype(np.int64)
    return rank, np.asarray(moduli, dtype=np.uint64)[rank]


@dataclass(slots=True)
class BroderResult:
    """Pairs and the bookkeeping of the four stages."""

    pairs: Pairs
    verified: bool                # pairs carry exact values (else sampled estimates)
    n_samples: int                # rows of the [hash, doc] table (stage 1)
    n_counted_pairs: int          # pairs sharing >= 1 common sample (stage 3 rows)
    n_passed_samples: int         # pairs over the sampled threshold (stage 4 rows)
    n_skipped_hashes: int         # sampled hashes in more than max_bucket documents
    n_skipped_rows: int           # their rows in the table
    n_unsampled_docs: int         # non-empty documents without a single sample

    def summary(self) -> dict:
        return {k: getattr(self, k) for k in ("verified", "n_samples", "n_counted_pairs",
                                              "n_passed_samples", "n_skipped_hashes",
                                              "n_skipped_rows", "n_unsampled_docs")} | {
            "pairs": len(self.pairs)}


def broder(sets: ShingleSets, doc_n_tokens: npt.ArrayLike, threshold: float = 0.8, *,
           verify: bool = True, containment: float | None = None, slack: float = 0.0,
           moduli=DEFAULT_MODULI, rank_bounds=DEFAULT_RANK_BOUNDS,
           max_bucket: int = 1000) -> BroderResult:
    """Broder's method with its statistics; see :func:`broder_pairs`."""
    t = _unit_interval("threshold", threshold)
    ct = 0.0 if containment is None else _unit_interval("containment", containment)
    slack = float(slack)
    if not (math.isfinite(slack) and 0.0 <= slack < t):
        raise ParameterError(f"slack must be in [0, threshold), got {slack!r}")
    if int(max_bucket) < 2:
        raise ParameterError(f"max_bucket must be >= 2, got {max_bucket!r}")
    offsets = np.ascontiguousarray(sets.offsets, dtype=np.int64)
    hashes = np.ascontiguousarray(sets.hashes, dtype=np.uint64)
    n = offsets.size - 1
    n_tok = np.asarray(doc_n_tokens)
    if n_tok.shape != (n,):
        raise ParameterError(f"doc_n_tokens has shape {n_tok.shape}, expected ({n},) "
                             f"(one word count per document)")
    rank, doc_mod = doc_moduli(n_tok, moduli, rank_bounds)
    mods = np.asarray([int(m) for m in moduli], dtype=np.uint64)
    counts = K.sample_counts(hashes, offsets, mods)               # |V_m(d)| for every m
    own = counts[np.arange(n), rank] if n else np.empty(0, np.int64)
    table_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(own, out=table_offsets[1:])
    th, td = K.sample_table(hashes, offsets, doc_mod, table_offsets)   # stage 1
    order = np.argsort(th, kind="stable")                              # stage 2
    sorted_h = th[order]
    sorted_d = td[order]
    pos = np.empty_like(order)
    pos[order] = np.arange(order.size)
    starts, ends = K.run_bounds(sorted_h)
    run_len = ends - starts
    big = run_len > int(max_bucket)
    n_skipped_rows = int(np.count_nonzero(big))
    n_skipped_hashes = int(np.count_nonzero(big & (starts == np.arange(starts.size))))
    if n_skipped_hashes:
        log.warning("Broder: %d sampled shingle hashes occur in more than %d documents "
                    "(%d table rows); they are not counted towards any pair",
                    n_skipped_hashes, max_bucket, n_skipped_rows)
    a, b, c, j, cab, cba, n_counted = K.count_and_threshold(         # stages 3 + 4
        sorted_h, sorted_d, pos.astype(np.int64), starts, ends, table_offsets, rank, mods,
        counts, np.int64(max_bucket), t - slack, ct)
    n_passed = int(a.size)
    if verify:
        pairs = verify_pairs(sets, a, b)
        keep = pairs.jaccard >= t
        if containment is not None:
            keep |= (pairs.containment_ab >= ct) | (pairs.containment_ba >= ct)
        pairs = pairs.select(keep).sorted()
    else:
        pairs = Pairs(a, b, j, cab, cba).sorted()
    sizes = np.diff(offsets)
    return BroderResult(pairs, bool(verify), int(th.size), int(n_counted), n_passed,
                        n_skipped_hashes, n_skipped_rows,
                        int(np.count_nonzero((sizes > 0) & (own == 0))))


def broder_pairs(sets: ShingleSets, doc_n_tokens: npt.ArrayLike, threshold: float = 0.8, *,
                 verify: bool = True, containment: float | None = None, slack: float = 0.0,
                 moduli=DEFAULT_MODULI, rank_bounds=DEFAULT_RANK_BOUNDS,
                 max_bucket: int = 1000) -> Pairs:
    """Near-duplicate pairs by Broder's mod-m sampled shingles (Broder 1997).

    Parameters
    ----------
    sets
        Shingle sets (the seed uses w = 10 word shingles).
    doc_n_tokens
        Words per document; sets the rank and the modulus m (see :func:`doc_moduli`).
    threshold
        Resemblance threshold (the seed's sim = 0.8).
    verify
        Measure the pairs that pass on samples exactly and drop those with exact
        J < threshold (default). ``False`` returns the sampled estimates.
    containment
        Also keep pairs where one document's (sampled, then exact) containment
        in the other is >= this value -- a short page inside a long one.
    slack
        Decide on samples at ``threshold - slack`` (fewer misses, more checks).
    moduli, rank_bounds
        m per rank and the word-count bounds between ranks; each modulus must
        divide the next.
    max_bucket
        Sampled hashes in more documents than this are skipped (see module notes).

    Returns
    -------
    Pairs
        Sorted by (a, b), a < b.
    """
    return broder(sets, doc_n_tokens, threshold, verify=verify, containment=containment,
                  slack=slack, moduli=moduli, rank_bounds=rank_bounds,
                  max_bucket=max_bucket).pairs
