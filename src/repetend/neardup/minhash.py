"""MinHash signatures of shingle sets, with b-bit storage (Broder 1997; the MinHash/LSH
article, docs/references.md).

The hash family
---------------
Permutation *i* of *K* is simulated by the 64-bit hash

    h_i(x) = splitmix64(f(x) XOR seeds[i])

where ``x`` is a 64-bit shingle hash (:mod:`repetend.neardup.shingles`),
``f`` is the identity (``hash="splitmix64"``, the default) or the CRC-32 fold
of its 8 little-endian bytes (``hash="crc32"``, as in the MinHash/LSH article: the
shingle is folded to 32 bits with CRC-32 first, then mixed), and
``splitmix64(z) = mix(z + 0x9E3779B97F4A7C15)`` with Stafford's *variant 13*
finalizer ``mix`` (shifts 30/27/31, multipliers 0xBF58476D1CE4E5B9 and
0x94D049BB133111EB).  ``seeds`` are the first K outputs of the SplitMix64
generator started at state ``seed``: ``seeds[i] = splitmix64(seed + i·γ)``,
γ = 0x9E3779B97F4A7C15.  The signature of a document is
``sig[i] = min over its shingles of h_i``.

Storage: ``bits=64`` keeps the whole minimum, ``bits=32`` its low 32 bits
(uint32), any ``1 <= bits < 64`` the low *b* bits in the smallest unsigned
dtype that holds them (b-bit MinHash, Li & König 2010).  Two documents agree
on a position with probability J + (1 − J)·2^-b, so the estimate is corrected:
``Ĵ = (E − 2^-b) / (1 − 2^-b)`` with E the fraction of equal positions,
clipped to [0, 1].  Its standard error is √(J(1−J)/K) for full 64-bit values
(a little larger for small b).

Schemes: ``scheme="oph"`` (the default) is one-permutation hashing in rounds
with an exact fallback (Li, Owen & Zhang 2012; the rounds as in Dahlgaard,
Knudsen & Thorup 2017, "Fast Similarity Sketching"; rensa 0.5 uses the same
construction).  With ``seeds`` the first K + R outputs of the generator (R =
:data:`OPH_ROUNDS` = 3): in round r = 0 .. R-1 every shingle is hashed once,
``v = splitmix64(f(x) XOR seeds[K + r])``, into bin ``((v mod 2^32)·K) >> 32``;
a bin still empty before round r keeps the minimum v of round r, stored as
``rot32(v)`` (halves swapped, so the low bits kept by b-bit storage do not
depend on the bin).  A bin empty after R rounds holds the classical value
``min_x splitmix64(f(x) XOR seeds[i])``.  Each position is the first non-empty of
R + 1 document-independent minima, so two documents agree on it with
probability exactly J (the shingle that is smallest over A ∪ B decides); the
bins sample without replacement, so the variance is at most, and for sets not
much larger than K clearly below, the classical √(J(1−J)/K) — no densification,
whose copied bins correlate the rows of an LSH band.  Cost: one hash per
shingle and round (≈ 1.1 per shingle on real corpora, ≈ 2.7 for 300-shingle
documents at K = 128), plus S hashes per bin still empty after R rounds
(documents much shorter than K).  ``scheme="minhash"`` is the classical K-hash
MinHash above: exact by construction, O(K) hashes per shingle, 5–8× slower.

Empty documents (no shingles) get the sentinel signature ``2^b − 1`` in every
position *and* are flagged in :attr:`MinHashSignatures.empty`: every estimate
involving an empty document is 0, and LSH never puts one in a bucket, so the
sentinel never collides with anything, not even another empty document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from ..errors import ParameterError
from . import _minhash_kernels as K
from ._threads import _run_ranges, _work_bounds  # noqa: F401  (_work_bounds: tests)
from .shingles import ShingleSets

__all__ = [
    "MinHashSignatures",
    "estimate",
    "minhash_signatures",
    "permutation_seeds",
    "standard_error",
    "storage_dtype",
]

HashName = Literal["splitmix64", "crc32"]
Scheme = Literal["minhash", "oph"]
DEFAULT_SEED = 0x5EED_0F_2E9E7E4D
OPH_ROUNDS = 3  # one-permutation rounds before the per-bin fallback (scheme="oph")


def storage_dtype(bits: int) -> np.dtype:
    """The smallest unsigned dtype that holds *bits*-bit signature values (b-bit storage)."""
    if bits <= 8:
        return np.dtype(np.uint8)
    if bits <= 16:
        return np.dtype(np.uint16)
    if bits <= 32:
        return np.dtype(np.uint32)
    return np.dtype(np.uint64)


def _check(num_perm: int, bits: int, hash: str, scheme: str = "minhash") -> None:
    if scheme not in ("minhash", "oph"):
        raise ParameterError(f"scheme must be 'minhash' or 'oph', got {scheme!r}")
    if int(num_perm) < 1:
        raise ParameterError(f"num_perm must be >= 1, got {num_perm}")
    if not 1 <= int(bits) <= 64:
        raise ParameterError(f"bits must be in 1..64, got {bits}")
    if hash not in ("splitmix64", "crc32"):
        raise ParameterError(f"hash must be 'splitmix64' or 'crc32', got {hash!r}")


def permutation_seeds(num_perm: int, seed: int = DEFAULT_SEED) -> npt.NDArray[np.uint64]:
    """The K per-permutation seeds: the first K outputs of SplitMix64 from ``seed``."""
    if int(num_perm) < 1:
        raise ParameterError(f"num_perm must be >= 1, got {num_perm}")
    with np.errstate(over="ignore"):  # wrapping uint64 arithmetic (matters with JIT off)
        return K.permutation_seeds(np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF), int(num_perm))


def _correct(frac: np.ndarray | float, bits: int):
    if bits >= 64:
        return frac
    c = 2.0 ** -bits
    return np.clip((np.asarray(frac, dtype=np.float64) - c) / (1.0 - c), 0.0, 1.0)


def estimate(sig_a: npt.ArrayLike, sig_b: npt.ArrayLike, bits: int = 64) -> float:
    """Estimated Jaccard resemblance from two signatures of equal length.

    ``bits < 64`` applies the b-bit correction of Li & König (2010) for random
    agreement of the low bits.
    """
    a = np.asarray(sig_a)
    b = np.asarray(sig_b)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ParameterError(f"signatures must be 1-d and of equal length, got {a.shape} and {b.shape}")
    return float(_correct(np.count_nonzero(a == b) / a.size, bits))


def standard_error(jaccard: npt.ArrayLike, num_perm: int):
    """Standard error √(J(1−J)/K) of the K-permutation MinHash estimate.

    The error the MinHash/LSH article gives for full 64-bit values.
    """
    j = np.asarray(jaccard, dtype=np.float64)
    out = np.sqrt(np.clip(j * (1.0 - j), 0.0, None) / float(num_perm))
    return float(out) if out.ndim == 0 else out


@dataclass(slots=True)
class MinHashSignatures:
    """MinHash signatures of every document of a corpus.

    ``values[d]`` is document d's signature (``num_perm`` values of ``bits``
    bits); ``empty[d]`` says document d has no shingles (sentinel signature).
    """

    values: np.ndarray
    empty: npt.NDArray[np.bool_]
    num_perm: int
    seed: int
    hash: str
    bits: int
    scheme: str = "minhash"

    @classmethod
    def of(cls, sets: ShingleSets, num_perm: int = 128, *, seed: int = DEFAULT_SEED,
           hash: HashName = "splitmix64", bits: int = 64,
           scheme: Scheme = "oph") -> "MinHashSignatures":
        """Signatures of all documents of *sets* (see :func:`minhash_signatures`)."""
        return minhash_signatures(sets, num_perm, seed=seed, hash=hash, bits=bits, scheme=scheme)

    def __len__(self) -> int:
        return int(self.values.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.values.nbytes)

    def jaccard(self, i: int, j: int) -> float:
        """Estimated Jaccard resemblance of documents i and j (0 if either is empty)."""
        return float(self.estimate([i], [j])[0])

    def estimate(self, a: npt.ArrayLike, b: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Estimated resemblance of each pair (a[i], b[i]), one compiled pass."""
        a = np.ascontiguousarray(a, dtype=np.int64)
        b = np.ascontiguousarray(b, dtype=np.int64)
        n = len(self)
        if a.shape != b.shape:
            raise ParameterError("a and b must have the same length")
        if a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n):
            raise ParameterError(f"document index out of range 0..{n - 1}")
        counts = np.empty(a.size, dtype=np.int64)
        K.match_counts(self.values, a, b, counts)
        est = _correct(counts / float(self.num_perm), self.bits)
        est = np.asarray(est, dtype=np.float64)
        est[self.empty[a] | self.empty[b]] = 0.0
        return est

    def standard_error(self, jaccard: npt.ArrayLike):
        """√(J(1−J)/K) for this signature length."""
        return standard_error(jaccard, self.num_perm)


def minhash_signatures(sets: ShingleSets, num_perm: int = 128, *, seed: int = DEFAULT_SEED,
                       hash: HashName = "splitmix64", bits: int = 64,
                       scheme: Scheme = "oph") -> MinHashSignatures:
    """MinHash signatures of every document, compiled, on several threads.

    Parameters
    ----------
    sets : ShingleSets
        Per-document sorted shingle hashes (:func:`repetend.neardup.shingles.shingle_sets`).
    num_perm : int
        Signature length K (number of hash functions), default 128.
    seed : int
        Seed of the SplitMix64 generator that yields the K permutation seeds.
    hash : {"splitmix64", "crc32"}
        ``"crc32"`` folds each 64-bit shingle to 32 bits with CRC-32 before mixing
        (as in the MinHash/LSH article).
    bits : int
        Bits kept per value: 64 (uint64), 32 (uint32) or b < 64 for b-bit MinHash.
    scheme : {"oph", "minhash"}
        One-permutation hashing in rounds with a classical fallback for bins left
        empty (default; about one hash per shingle; module docs), or K independent
        hashes per shingle (classical MinHash).

    Returns
    -------
    MinHashSignatures

    Notes
    -----
    Broder (1997), "On the resemblance and containment of documents":
    P[min h(A) = min h(B)] = J(A, B).  Li & König (2010), "b-Bit Minwise
    Hashing", for the low-bit storage and its correction.  Li, Owen & Zhang
    (2012), "One Permutation Hashing"; Dahlgaard, Knudsen & Thorup (2017), "Fast
    Similarity Sketching", for filling empty bins by further rounds.  Cost
    O(K·S) for S shingles in total (``oph``: O(S + K·n) plus the fallback of
    documents much shorter than K); memory K·bits/8 bytes per document.  With
    ``hash="crc32"`` the folded shingles are computed once (8 bytes per shingle).
    """
    _check(num_perm, bits, hash, scheme)
    k = int(num_perm)
    hashes = np.ascontiguousarray(sets.hashes, dtype=np.uint64)
    offsets = np.ascontiguousarray(sets.offsets, dtype=np.int64)
    n = offsets.shape[0] - 1
    dtype = storage_dtype(int(bits))
    mask = np.uint64((1 << int(bits)) - 1) if bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    out = np.empty((n, k), dtype=dtype)
    with np.errstate(over="ignore"):  # wrapping uint64 arithmetic (matters with JIT off)
        if hash == "crc32":  # fold once (8 bytes per shingle), not once per hash function
            folded = np.empty_like(hashes)
            K.crc32_fold(hashes, folded)
            hashes = folded
        if scheme == "oph":
            seeds = permutation_seeds(k + OPH_ROUNDS, seed)
            _run_ranges(K.oph_signatures, (hashes, offsets, seeds[k:], seeds[:k], mask, out),
                        offsets, k)
        else:
            seeds = permutation_seeds(k, seed)
            _run_ranges(K.signatures, (hashes, offsets, seeds, mask, out), offsets, 1)
    empty = np.diff(offsets) == 0
    return MinHashSignatures(out, empty, int(num_perm), int(seed), hash, int(bits), scheme)
