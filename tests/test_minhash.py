"""MinHash signatures vs a slow pure-numpy twin, and the estimator's guarantees."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_neardup import sets_from_python
from repetend.errors import ParameterError
from repetend.neardup.minhash import (
    MinHashSignatures,
    OPH_ROUNDS,
    estimate,
    minhash_signatures,
    permutation_seeds,
    standard_error,
)

GAMMA = np.uint64(0x9E3779B97F4A7C15)


def np_splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 written out on numpy arrays (wrapping uint64 arithmetic)."""
    z = np.asarray(x, dtype=np.uint64) + GAMMA
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def twin_seeds(k: int, seed: int) -> np.ndarray:
    state = np.uint64(seed) + np.arange(k, dtype=np.uint64) * GAMMA
    return np_splitmix64(state)


def twin_signature(shingles: list[int], k: int, seed: int, hash: str, bits: int) -> np.ndarray:
    mask = np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(2**64 - 1)
    if not shingles:
        return np.full(k, mask, dtype=np.uint64)
    x = np.array(sorted(shingles), dtype=np.uint64)
    if hash == "crc32":
        x = np.array([zlib.crc32(int(v).to_bytes(8, "little")) for v in x], dtype=np.uint64)
    return np_splitmix64(x[:, None] ^ twin_seeds(k, seed)[None, :]).min(axis=0) & mask


def twin_oph(shingles: list[int], k: int, seed: int, hash: str, bits: int, rounds: int = OPH_ROUNDS) -> np.ndarray:
    """One-permutation hashing in rounds + per-bin classical fallback, written out in Python."""
    mask = (1 << bits) - 1 if bits < 64 else 2**64 - 1
    if not shingles:
        return np.full(k, mask, dtype=np.uint64)
    seeds = twin_seeds(k + rounds, seed)
    x = np.array(sorted(shingles), dtype=np.uint64)
    if hash == "crc32":
        x = np.array([zlib.crc32(int(v).to_bytes(8, "little")) for v in x], dtype=np.uint64)
    row: list[int | None] = [None] * k
    for r in range(rounds):
        this_round: dict[int, int] = {}
        for val in np_splitmix64(x ^ seeds[k + r]).tolist():
            b = ((val & 0xFFFFFFFF) * k) >> 32
            this_round[b] = min(this_round.get(b, 2**64), val)
        for b, val in this_round.items():
            if row[b] is None:
                row[b] = (val >> 32) | ((val & 0xFFFFFFFF) << 32)  # halves swapped
    for i in range(k):
        if row[i] is None:  # empty after every round: the classical value of position i
            row[i] = int(np_splitmix64(x ^ seeds[i]).min())
    return np.array([v & mask for v in row], dtype=np.uint64)


def test_default_scheme_is_oph():
    ss = sets_from_python([set(range(50)), set(range(10, 70))])
    assert np.array_equal(minhash_signatures(ss, 16).values, minhash_signatures(ss, 16, scheme="oph").values)
    assert MinHashSignatures.of(ss, 16).scheme == "oph"


def test_seeds_are_the_splitmix64_stream():
    for seed in (0, 1, 12345, 2**64 - 1):
        assert np.array_equal(permutation_seeds(17, seed), twin_seeds(17, seed))


@settings(max_examples=40, deadline=None)
@given(
    sets=st.lists(st.sets(st.integers(0, 2**64 - 1), max_size=12), min_size=1, max_size=8),
    k=st.integers(1, 40),
    seed=st.integers(0, 2**64 - 1),
    hash=st.sampled_from(["splitmix64", "crc32"]),
    bits=st.sampled_from([64, 32, 16, 8, 5, 1]),
)
def test_signatures_equal_numpy_twin(sets, k, seed, hash, bits):
    ss = sets_from_python(sets)
    sig = minhash_signatures(ss, k, seed=seed, hash=hash, bits=bits, scheme="minhash")
    assert sig.values.shape == (len(sets), k)
    assert sig.values.dtype.itemsize * 8 >= bits
    for d, s in enumerate(sets):
        assert np.array_equal(sig.values[d].astype(np.uint64), twin_signature(list(s), k, seed, hash, bits))
    assert np.array_equal(sig.empty, np.array([len(s) == 0 for s in sets]))


@settings(max_examples=30, deadline=None)
@given(
    sets=st.lists(st.one_of(st.sets(st.integers(0, 2**64 - 1), max_size=12),
                            st.sets(st.integers(0, 2**64 - 1), min_size=200, max_size=700)),
                  min_size=1, max_size=6),
    k=st.sampled_from([1, 2, 7, 64, 200]),
    seed=st.integers(0, 2**64 - 1),
    hash=st.sampled_from(["splitmix64", "crc32"]),
    bits=st.sampled_from([64, 16]),
)
def test_oph_signatures_equal_python_twin(sets, k, seed, hash, bits):
    ss = sets_from_python(sets)
    sig = minhash_signatures(ss, k, seed=seed, hash=hash, bits=bits, scheme="oph")
    for d, s in enumerate(sets):
        assert np.array_equal(sig.values[d].astype(np.uint64), twin_oph(list(s), k, seed, hash, bits))


def _pair_sets(rng, j_num: int, union: int, n_pairs: int):
    """n_pairs disjoint pairs of sets with |A∩B| = j_num, |A∪B| = union (J = j_num/union)."""
    py = []
    base = 0
    for _ in range(n_pairs):
        ids = rng.permutation(union) + base
        base += union
        common = ids[:j_num]
        rest = ids[j_num:]
        half = rest.size // 2
        py.append(set(common.tolist()) | set(rest[:half].tolist()))
        py.append(set(common.tolist()) | set(rest[half:].tolist()))
    return py


@pytest.mark.parametrize("j_num", [10, 30, 50, 72, 90])
@pytest.mark.parametrize("scheme", ["minhash", "oph"])
def test_estimate_is_unbiased_with_the_stated_error(j_num, scheme):
    rng = np.random.default_rng(j_num)
    union, n_pairs, k = 100, 300, 64
    j = j_num / union
    ss = sets_from_python(_pair_sets(rng, j_num, union, n_pairs))
    sig = minhash_signatures(ss, k, seed=7, scheme=scheme)
    a = np.arange(0, 2 * n_pairs, 2)
    est = sig.estimate(a, a + 1)
    se = standard_error(j, k)
    # the mean of n_pairs independent estimates is within 4 standard errors of J
    assert abs(est.mean() - j) <= 4 * se / np.sqrt(n_pairs)
    # and their spread is the binomial √(J(1−J)/K) (a loose band: sample std of 300 draws);
    # oph bins sample without replacement, so their spread may only be smaller
    assert (0.8 * se if scheme == "minhash" else 0.0) <= est.std() <= 1.2 * se


@pytest.mark.parametrize("union,j_num", [(16, 8), (24, 6), (400, 300), (3000, 1500)])
@pytest.mark.parametrize("scheme", ["minhash", "oph"])
def test_estimate_is_unbiased_for_small_and_large_sets(union, j_num, scheme):
    """Sets much smaller than K (most oph bins come from later rounds or the fallback)
    and much larger than K (every bin filled in the first round)."""
    rng = np.random.default_rng(union + j_num)
    n_pairs, k = 300, 64
    j = j_num / union
    ss = sets_from_python(_pair_sets(rng, j_num, union, n_pairs))
    sig = minhash_signatures(ss, k, seed=11, scheme=scheme)
    a = np.arange(0, 2 * n_pairs, 2)
    est = sig.estimate(a, a + 1)
    se = standard_error(j, k)
    assert abs(est.mean() - j) <= 4 * se / np.sqrt(n_pairs)
    # oph bins sample without replacement: no more spread than K independent hashes
    assert (0.8 * se if scheme == "minhash" else 0.0) <= est.std() <= 1.2 * se


@pytest.mark.parametrize("s_num,bands,rows", [(30, 16, 4), (60, 16, 4), (80, 16, 4), (60, 8, 8)])
@pytest.mark.parametrize("union", [20, 100, 1000])
def test_oph_candidate_rate_follows_the_s_curve(s_num, bands, rows, union):
    """Banded oph signatures behave like independent rows: P(candidate) = 1 - (1 - s^r)^b."""
    from repetend.neardup.lsh import lsh_candidates, s_curve

    rng = np.random.default_rng(s_num * 100 + bands + union)
    n_pairs = 400
    j_num = s_num * union // 100
    ss = sets_from_python(_pair_sets(rng, j_num, union, n_pairs))
    sig = minhash_signatures(ss, bands * rows, seed=int(rng.integers(2**63)), scheme="oph")
    got = lsh_candidates(sig, ss.sizes, bands, rows, max_bucket=None, min_shingles=1)
    hits = np.count_nonzero((got.a % 2 == 0) & (got.b == got.a + 1))
    p = s_curve(j_num / union, bands, rows)
    sigma = np.sqrt(p * (1 - p) / n_pairs)
    assert abs(hits / n_pairs - p) <= 4 * sigma + 1.0 / n_pairs
    assert len(got) == hits


def test_oph_bins_past_the_rounds_are_the_classical_values():
    """A one-shingle document fills at most R bins; every other position is the
    classical MinHash value, and that fallback is what makes tiny sets comparable."""
    ss = sets_from_python([{12345}, {12345, 999}])
    k = 32
    oph = minhash_signatures(ss, k, seed=5, scheme="oph").values[0]
    classic = minhash_signatures(ss, k, seed=5, scheme="minhash").values[0]
    same = np.count_nonzero(oph == classic)
    assert k - OPH_ROUNDS <= same < k


@pytest.mark.parametrize("bits", [1, 2, 4, 16])
@pytest.mark.parametrize("scheme", ["minhash", "oph"])
def test_bbit_estimate_is_corrected_for_random_collisions(bits, scheme):
    rng = np.random.default_rng(bits)
    union, n_pairs, k, j_num = 100, 300, 128, 40
    ss = sets_from_python(_pair_sets(rng, j_num, union, n_pairs))
    sig = minhash_signatures(ss, k, seed=3, bits=bits, scheme=scheme)
    a = np.arange(0, 2 * n_pairs, 2)
    est = sig.estimate(a, a + 1)
    # the raw agreement would be J + (1-J) 2^-b; the corrected mean is J
    assert abs(est.mean() - 0.4) <= 4 * est.std() / np.sqrt(n_pairs) + 1e-9
    if bits <= 2:
        raw = np.array([np.mean(sig.values[i] == sig.values[i + 1]) for i in a])
        assert raw.mean() > 0.4 + 0.5 * (1 - 0.4) * 2.0**-bits


@pytest.mark.parametrize("scheme", ["minhash", "oph"])
def test_identical_disjoint_and_empty_documents(scheme):
    ss = sets_from_python([{1, 2, 3}, {1, 2, 3}, {4, 5, 6}, set(), set()])
    sig = MinHashSignatures.of(ss, 32, scheme=scheme)
    assert sig.jaccard(0, 1) == 1.0
    assert sig.jaccard(0, 2) == 0.0
    # empty documents: sentinel signature, never similar to anything, not even each other
    assert sig.empty.tolist() == [False, False, False, True, True]
    assert np.all(sig.values[3] == np.uint64(2**64 - 1))
    assert sig.jaccard(3, 4) == 0.0 and sig.jaccard(0, 3) == 0.0
    assert estimate(sig.values[0], sig.values[1]) == 1.0
    assert len(sig) == 5 and sig.nbytes == 5 * 32 * 8


def test_crc32_fold_collapses_shingles_equal_in_their_low_crc():
    # two 64-bit shingles are different, but the signature only sees their CRC-32
    x = 0x0123456789ABCDEF
    ss = sets_from_python([{x}, {x}])
    for scheme in ("minhash", "oph"):
        s1 = minhash_signatures(ss, 8, hash="crc32", scheme=scheme)
        s2 = minhash_signatures(sets_from_python([{zlib.crc32(x.to_bytes(8, "little"))}] * 2), 8, scheme=scheme)
        assert np.array_equal(s1.values[0], s2.values[0])


def test_standard_error_formula():
    assert standard_error(0.72, 48) == pytest.approx(np.sqrt(0.72 * 0.28 / 48))
    assert standard_error(0.72, 48) == pytest.approx(0.065, abs=5e-4)  # seed 003's figure
    assert np.allclose(standard_error(np.array([0.0, 1.0]), 10), 0.0)


@pytest.mark.parametrize("kwargs", [dict(num_perm=0), dict(bits=0), dict(bits=65), dict(hash="md5"),
                                    dict(scheme="superminhash")])
def test_parameter_errors(kwargs):
    ss = sets_from_python([{1}, {2}])
    args = dict(num_perm=8) | kwargs
    with pytest.raises(ParameterError):
        minhash_signatures(ss, **args)


def test_estimate_errors():
    with pytest.raises(ParameterError):
        estimate(np.zeros(3), np.zeros(4))
    sig = minhash_signatures(sets_from_python([{1}, {2}]), 4)
    with pytest.raises(ParameterError):
        sig.estimate([0], [2])


@pytest.mark.parametrize("scheme", ["minhash", "oph"])
def test_threaded_ranges_equal_one_thread(scheme):
    """Corpora above the parallel cut-off are signed in ranges on several threads."""
    import numba

    from repetend.neardup import minhash as M
    from repetend.neardup.shingles import ShingleSets

    rng = np.random.default_rng(4)
    sizes = rng.integers(0, 700, 400)  # skewed sizes, some empty documents
    sizes[::37] = 0
    offsets = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    hashes = np.sort(rng.integers(0, 2**63, offsets[-1], dtype=np.uint64))  # sorted overall is fine
    ss = ShingleSets(hashes, offsets, 5)
    from repetend.neardup import _threads

    old_min = _threads._PARALLEL_MIN_WORK
    _threads._PARALLEL_MIN_WORK = 1000
    try:
        many = minhash_signatures(ss, 24, seed=9, scheme=scheme).values
        threads = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            one = minhash_signatures(ss, 24, seed=9, scheme=scheme).values
        finally:
            numba.set_num_threads(threads)
    finally:
        _threads._PARALLEL_MIN_WORK = old_min
    assert np.array_equal(many, one)
    bounds = M._work_bounds(offsets, 24)
    assert bounds[0] == 0 and bounds[-1] == sizes.size and np.all(np.diff(bounds) > 0)
