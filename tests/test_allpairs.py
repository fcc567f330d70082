"""Exact all-pairs join (AllPairs / PPJoin) against the brute-force oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from naive_neardup import naive_pairs, pairs_as_dict, sets_as_python, sets_from_python
from repetend.errors import ParameterError
from repetend.neardup import _allpairs_kernels as K
from repetend.neardup.allpairs import all_pairs, all_pairs_join, global_ranks
from repetend.neardup.pairs import verify_pairs
from repetend.neardup.shingles import shingle_sets, token_hashes

THRESHOLDS = [1e-9, 0.01, 0.1, 0.2, 1 / 3, 0.5, 0.6, 2 / 3, 0.7, 0.8, 0.9, 0.95, 1.0]


def _check(py, t):
    sets = sets_from_python(py)
    got = all_pairs(sets, t)
    assert np.all(got.a < got.b)
    assert pairs_as_dict(got) == naive_pairs(py, t)
    return got


@settings(max_examples=200, deadline=None)
@given(st.lists(st.frozensets(st.integers(0, 25), max_size=14), max_size=12),
       st.sampled_from(THRESHOLDS))
def test_random_small_corpora(py, t):
    _check([set(s) for s in py], t)


@pytest.mark.parametrize("seed", range(6))
def test_near_duplicate_families(seed):
    """Mutated copies of a few base sets: many pairs right around each threshold."""
    rng = np.random.default_rng(seed)
    py = []
    for _ in range(6):
        base = set(rng.integers(0, 400, rng.integers(1, 60)).tolist())
        for _ in range(rng.integers(1, 6)):
            s = {x for x in base if rng.random() > rng.random() * 0.4}
            s |= set(rng.integers(0, 400, rng.integers(0, 8)).tolist())
            py.append(s)
    py.append(set())
    rng.shuffle(py)
    for t in THRESHOLDS:
        _check(py, t)


def test_exact_values_equal_verify_pairs():
    rng = np.random.default_rng(7)
    py = [set(rng.integers(0, 30, rng.integers(1, 20)).tolist()) for _ in range(40)]
    sets = sets_from_python(py)
    got = all_pairs(sets, 0.2)
    ref = verify_pairs(sets, got.a, got.b)
    np.testing.assert_array_equal(got.a, ref.a)
    np.testing.assert_array_equal(got.jaccard, ref.jaccard)
    np.testing.assert_array_equal(got.containment_ab, ref.containment_ab)
    np.testing.assert_array_equal(got.containment_ba, ref.containment_ba)


def test_float_boundaries_are_inclusive():
    """J exactly 1/10, 1/3, 2/3 is >= the float threshold 0.1, 1/3, 2/3 (same predicate
    as verify_pairs), and a hair above excludes it."""
    a = set(range(10))
    py = [a, {0}, set(range(3)) | {100}, set(range(6))]
    # J({0..9},{0}) = 0.1; J({0..9},{0,1,2,100}) = 3/11; J({0..9},{0..5}) = 0.6
    assert (0, 1) in pairs_as_dict(_check(py, 0.1))
    assert (0, 1) not in pairs_as_dict(_check(py, np.nextafter(0.1, 1)))
    b = [set(range(3)), set(range(1, 4))]        # J = 2/4
    assert len(_check(b, 0.5)) == 1
    c = [set(range(2)), set(range(3))]           # J = 2/3
    assert len(_check(c, 2 / 3)) == 1
    assert len(_check(c, np.nextafter(2 / 3, 1))) == 0


def test_edge_cases():
    assert len(all_pairs(sets_from_python([]), 0.5)) == 0
    assert len(all_pairs(sets_from_python([set(), set(), {1}]), 0.01)) == 0   # empty never paired
    same = [{1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2}]
    got = _check(same, 1.0)
    assert sorted(zip(got.a.tolist(), got.b.tolist())) == [(0, 1), (0, 2), (1, 2)]
    assert np.all(got.jaccard == 1.0)
    # tiny t: every pair that shares anything
    rng = np.random.default_rng(3)
    py = [set(rng.integers(0, 50, rng.integers(0, 10)).tolist()) for _ in range(30)]
    got = _check(py, 1e-9)
    share = {(a, b) for a in range(30) for b in range(a + 1, 30) if py[a] & py[b]}
    assert set(pairs_as_dict(got)) == share


def test_real_shingles_short_documents():
    """Documents shorter than k have one shingle; identical short documents pair at t = 1."""
    vocab = ["a", "b", "c", "d", "e"]
    docs = [[0, 1], [0, 1], [0, 1, 2, 3, 4, 0, 1], [2, 3, 4, 0, 1, 2], [], [0]]
    tokens = np.array([t for d in docs for t in d], dtype=np.int32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    sets = shingle_sets(tokens, offsets, token_hashes(vocab), 3)
    py = sets_as_python(sets)
    for t in THRESHOLDS:
        got = pairs_as_dict(all_pairs(sets, t))
        assert got == naive_pairs(py, t)
    assert (0, 1) in pairs_as_dict(all_pairs(sets, 1.0))


@pytest.mark.parametrize("t", THRESHOLDS)
def test_bounds_are_the_smallest_integers(t):
    for x in range(1, 60):
        o = K.min_overlap_vs_size(t, x)
        assert o / x >= t and (o == 1 or (o - 1) / x < t)
        o = K.min_overlap_vs_larger(t, x)
        assert o / (2 * x - o) >= t and (o == 1 or (o - 1) / (2 * x - o + 1) < t)
        for y in range(1, 25):
            o = K.min_overlap_pair(t, x, y)
            m = min(x, y)
            ok = [v for v in range(1, m + 1) if v / (x + y - v) >= t]
            assert o == (ok[0] if ok else m + 1)


def test_global_order_is_rare_first():
    py = [{1, 2, 3}, {2, 3}, {3, 4}]
    sets = sets_from_python(py)
    ranks, n_ranks, first_shared = global_ranks(sets)
    assert n_ranks == 4 and first_shared == 2            # 1 and 4 occur once
    df = {1: 1, 2: 2, 3: 3, 4: 1}
    for d in range(3):
        seg = ranks[sets.offsets[d]:sets.offsets[d + 1]]
        assert np.all(np.diff(seg) > 0)
    # the rank order follows df: occurrences per rank are non-decreasing
    assert np.bincount(ranks).tolist() == sorted(df.values())


def test_filters_prune():
    """The join verifies far fewer pairs than all pairs on a corpus with few matches."""
    rng = np.random.default_rng(0)
    py = [set(rng.integers(0, 100_000, 50).tolist()) for _ in range(300)]
    py += [set(list(py[i])[:45]) for i in range(10)]
    res = all_pairs_join(sets_from_python(py), 0.8)
    assert pairs_as_dict(res.pairs) == naive_pairs(py, 0.8)
    assert res.n_candidates < 100


@pytest.mark.parametrize("bad", [0, -0.1, 1.5, float("nan"), "x", None])
def test_bad_threshold(bad):
    with pytest.raises(ParameterError):
        all_pairs(sets_from_python([{1}, {1}]), bad)
