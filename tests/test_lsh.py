"""LSH banding: grouping vs a dict-of-bands twin, the S-curve, the cap, the chooser."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_neardup import naive_pairs, sets_from_python
from repetend.errors import ParameterError
from repetend.neardup.lsh import (
    band_keys,
    banding_params,
    bucket_pairs,
    lsh_candidates,
    lsh_params,
    lsh_threshold,
    s_curve,
    set_fingerprints,
)
from repetend.neardup.minhash import minhash_signatures


def twin_candidates(values: np.ndarray, eligible, bands: int, rows: int) -> set[tuple[int, int]]:
    """Plain Python: one dict per band from the band's value tuple to its documents."""
    out = set()
    for j in range(bands):
        buckets: dict[tuple, list[int]] = {}
        for d in eligible:
            key = tuple(int(v) for v in values[d, j * rows:(j + 1) * rows])
            buckets.setdefault(key, []).append(d)
        for docs in buckets.values():
            out.update(itertools.combinations(sorted(docs), 2))
    return out


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(0, 25), bands=st.integers(1, 5), rows=st.integers(1, 4),
       alphabet=st.integers(1, 4), spare=st.integers(0, 3))
def test_candidates_equal_dict_of_bands_twin(data, n, bands, rows, alphabet, spare):
    k = bands * rows + spare
    values = np.array(data.draw(st.lists(st.lists(st.integers(0, alphabet - 1), min_size=k, max_size=k),
                                         min_size=n, max_size=n)), dtype=np.uint64).reshape(n, k)
    sizes = np.array(data.draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)), dtype=np.int64)
    got = lsh_candidates(values, sizes, bands, rows, max_bucket=None, min_shingles=1)
    want = twin_candidates(values, [d for d in range(n) if sizes[d] > 0], bands, rows)
    assert set(zip(got.a.tolist(), got.b.tolist())) == want
    assert np.all(got.a < got.b)
    assert len(got) == len(want) == got.stats["candidates"]


def test_s_curve_and_threshold_formulas():
    assert s_curve(0.8, 12, 4) == pytest.approx(0.998, abs=5e-4)   # seed 003's figures
    assert s_curve(0.2, 12, 4) == pytest.approx(0.019, abs=5e-4)
    assert lsh_threshold(12, 4) == pytest.approx((1 / 12) ** 0.25)
    s = np.linspace(0, 1, 11)
    assert np.all(np.diff(s_curve(s, 16, 3)) >= 0)


@pytest.mark.parametrize("s_num,bands,rows", [(30, 16, 4), (50, 16, 4), (70, 16, 4),
                                              (80, 16, 4), (60, 8, 8), (90, 20, 6)])
def test_candidate_rate_follows_the_s_curve(s_num, bands, rows):
    """Pairs of sets with known resemblance s become candidates with probability P(s)."""
    rng = np.random.default_rng(s_num * 100 + bands)
    union, n_pairs = 100, 400
    py = []
    for p in range(n_pairs):
        ids = (rng.permutation(union) + p * union).tolist()
        common, rest = ids[:s_num], ids[s_num:]
        py.append(set(common) | set(rest[:len(rest) // 2]))
        py.append(set(common) | set(rest[len(rest) // 2:]))
    ss = sets_from_python(py)
    sig = minhash_signatures(ss, bands * rows, seed=rng.integers(2**63))
    got = lsh_candidates(sig, ss.sizes, bands, rows, max_bucket=None, min_shingles=1)
    hits = np.count_nonzero((got.a % 2 == 0) & (got.b == got.a + 1))
    p = s_curve(s_num / union, bands, rows)
    sigma = np.sqrt(p * (1 - p) / n_pairs)
    assert abs(hits / n_pairs - p) <= 4 * sigma + 1.0 / n_pairs
    # pairs of different sets are disjoint: no other candidates
    assert len(got) == hits


def test_huge_bucket_is_capped_and_stays_connected():
    m = 300
    py = [{1, 2, 3, 4, 5, 6, 7, 8}] * m + [{100 + i, 200 + i, 300 + i} for i in range(20)]
    ss = sets_from_python(py)
    sig = minhash_signatures(ss, 32)
    capped = lsh_candidates(sig, ss.sizes, 8, 4, max_bucket=50)
    assert capped.stats["capped_buckets"] == 8          # one huge bucket per band
    assert len(capped) <= 2 * m - 3
    assert capped.stats["pairs_not_enumerated"] == 8 * (m * (m - 1) // 2 - (2 * m - 3))
    # the candidate graph over the identical documents is connected
    from repetend.neardup._uf import components

    lab = components(len(py), capped.a, capped.b)
    assert np.all(lab[:m] == 0)
    full = lsh_candidates(sig, ss.sizes, 8, 4, max_bucket=None)
    assert len(full) == m * (m - 1) // 2
    assert full.stats["capped_buckets"] == 0


def test_near_empty_documents_are_matched_by_exact_identity():
    # all sets smaller than min_shingles=3: no banding, exact for t > 2/3
    rng = np.random.default_rng(5)
    py = [set(rng.integers(0, 4, size=rng.integers(0, 3)).tolist()) for _ in range(60)]
    ss = sets_from_python(py)
    sig = minhash_signatures(ss, 16)
    got = lsh_candidates(sig, ss.sizes, 4, 4, min_shingles=3, sets=ss)
    assert got.stats["banded_documents"] == 0
    from repetend.neardup.pairs import verify_pairs

    v = verify_pairs(ss, got.a, got.b)
    found = {(a, b) for a, b, j in zip(v.a.tolist(), v.b.tolist(), v.jaccard) if j >= 0.7}
    assert found == set(naive_pairs(py, 0.7))


def test_chooser_reaches_recall_at_the_threshold():
    for t in (0.5, 0.7, 0.8, 0.9):
        for k in (48, 128):
            p = lsh_params(t, k)
            assert p.bands * p.rows <= k
            assert p.p_at_threshold >= 0.98
            assert p.p_at_threshold == pytest.approx(s_curve(t, p.bands, p.rows))
            assert p.lsh_threshold < t


def test_chooser_without_recall_floor_is_datasketchs_rule():
    dl = pytest.importorskip("datasketch.lsh")
    for t in (0.3, 0.5, 0.8, 0.9):
        p = lsh_params(t, 64, min_recall=None)
        want = dl._optimal_param(t, 64, 0.5, 0.5)
        if (p.bands, p.rows) != want:  # only a near tie may be decided otherwise
            q = banding_params(t, *want)
            assert abs((p.fp_area + p.fn_area) - (q.fp_area + q.fn_area)) <= 1e-6


@pytest.mark.parametrize("call", [
    lambda: lsh_params(0.0, 128),
    lambda: lsh_params(1.5, 128),
    lambda: lsh_params(0.8, 0),
    lambda: lsh_candidates(np.zeros((3, 8), np.uint64), [1, 1, 1], 3, 3),
    lambda: lsh_candidates(np.zeros((3, 8), np.uint64), [1, 1, 1], 3, None),
    lambda: lsh_candidates(np.zeros((3, 8), np.uint64), [1, 1, 1], 2, 2, max_bucket=2),
    lambda: lsh_candidates(np.zeros((3, 8), np.uint64), [1, 1, 1], 2, 2, min_shingles=0),
    lambda: lsh_candidates(np.zeros(8, np.uint64), [1], 2, 2),
    lambda: lsh_candidates(np.zeros((3, 8), np.uint64), [1, 1], 2, 2),
])
def test_parameter_errors(call):
    with pytest.raises(ParameterError):
        call()


def test_near_empty_rule_is_lowered_so_it_loses_nothing():
    from repetend.neardup.lsh import safe_min_shingles

    assert safe_min_shingles(3, 0.8) == 3
    assert safe_min_shingles(3, 0.6) == 2        # 0.6 <= 2/3 but > 1/2
    assert safe_min_shingles(3, 0.5) == 1        # {a} vs {a, b} has J = 0.5
    assert safe_min_shingles(10, 0.95) == 10 and safe_min_shingles(30, 0.95) == 19
    # {1} and {1, 2}: J = 0.5; at t = 0.5 they must be banded, not grouped by identity
    ss = sets_from_python([{1}, {1, 2}, {7}])
    sig = minhash_signatures(ss, 64)
    got = lsh_candidates(sig, ss.sizes, 64, 1, min_shingles=3, sets=ss, threshold=0.5)
    assert got.stats["min_shingles"] == 1
    assert (0, 1) in set(zip(got.a.tolist(), got.b.tolist()))   # P(0.5) = 1 - 0.5^64
    high = lsh_candidates(sig, ss.sizes, 64, 1, min_shingles=3, sets=ss, threshold=0.8)
    assert high.stats["near_empty_documents"] == 3 and len(high) == 0


def twin_capped(values, sizes, bands, rows, cap):
    """Dict-of-bands twin with the documented cap: star from the first member in
    (size, index) order plus a chain between neighbours in that order."""
    out = set()
    n = values.shape[0]
    for j in range(bands):
        buckets: dict[tuple, list[int]] = {}
        for d in range(n):
            if sizes[d] > 0:
                buckets.setdefault(tuple(int(v) for v in values[d, j * rows:(j + 1) * rows]), []).append(d)
        for docs in buckets.values():
            if len(docs) < cap:
                out.update(itertools.combinations(sorted(docs), 2))
                continue
            order = sorted(docs, key=lambda d: (sizes[d], d))
            out.update(tuple(sorted((order[0], x))) for x in order[1:])
            out.update(tuple(sorted(p)) for p in zip(order[:-1], order[1:]))
    return out


@settings(max_examples=40, deadline=None)
@given(data=st.data(), n=st.integers(0, 40), cap=st.integers(3, 8))
def test_capped_buckets_equal_twin(data, n, cap):
    values = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n * 4, max_size=n * 4)),
                      dtype=np.uint64).reshape(n, 4)
    sizes = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int64)
    got = lsh_candidates(values, sizes, 2, 2, max_bucket=cap, min_shingles=1)
    assert set(zip(got.a.tolist(), got.b.tolist())) == twin_capped(values, sizes, 2, 2, cap)


def test_band_keys_agree_exactly_on_the_bands_whose_values_agree():
    sig = np.array([[1, 2, 3, 4], [1, 2, 9, 4], [7, 2, 3, 4]], dtype=np.uint64)
    keys = band_keys(sig, np.array([0, 1, 2]), 2, 2)
    assert keys.shape == (3, 2) and keys.dtype == np.uint64
    assert keys[0, 0] == keys[1, 0] and keys[0, 1] != keys[1, 1]
    assert keys[0, 0] != keys[2, 0] and keys[0, 1] == keys[2, 1]
    assert band_keys(sig, np.array([2, 0]), 2, 2).tolist() == keys[[2, 0]].tolist()
    assert band_keys(sig, np.array([], dtype=np.int64), 2, 2).shape == (0, 2)


def test_set_fingerprints_equal_for_equal_sets_only():
    ss = sets_from_python([{1, 2}, {1, 2}, {1, 3}, set(), {1}])
    fp = set_fingerprints(ss)
    assert fp.shape == (5,) and fp.dtype == np.uint64
    assert fp[0] == fp[1] and len({int(fp[i]) for i in (0, 2, 3, 4)}) == 4


def test_bucket_pairs_all_pairs_below_the_cap_star_and_chain_from_it():
    members = np.array([5, 3, 8, 1, 2], dtype=np.int64)
    starts = np.array([0, 3, 5], dtype=np.int64)
    sizes = np.array([0, 7, 7, 4, 0, 9, 0, 0, 2], dtype=np.int64)
    a, b = bucket_pairs(members, starts, sizes, 0)
    assert sorted(zip(a.tolist(), b.tolist())) == [(1, 2), (3, 5), (3, 8), (5, 8)]
    a, b = bucket_pairs(members, starts, sizes, 3)   # by size: 8 (2), 3 (4), 5 (9)
    assert list(zip(a.tolist(), b.tolist())) == [(3, 8), (5, 8), (3, 5), (1, 2)]


def test_banding_areas_in_blocks_equal_the_whole_grid():
    """The chooser integrates its bandings a block at a time (memory); every row
    is integrated alone, so the areas equal the one-shot grid bit for bit."""
    from repetend.neardup import lsh as L

    bs, rs = zip(*[(b, r) for b in range(1, 129) for r in range(1, 128 // b + 1)])
    b, r = np.array(bs), np.array(rs)
    assert b.size > 2 * L._AREA_BLOCK
    for t in (0.3, 0.8):
        lo = np.linspace(0.0, t, L._GRID)
        hi = np.linspace(t, 1.0, L._GRID)
        p_lo = 1.0 - (1.0 - lo[None, :] ** r[:, None].astype(float)) ** b[:, None].astype(float)
        p_hi = 1.0 - (1.0 - hi[None, :] ** r[:, None].astype(float)) ** b[:, None].astype(float)
        fp, fn = L._areas(t, b, r)
        assert np.array_equal(fp, np.trapezoid(p_lo, lo, axis=1))
        assert np.array_equal(fn, np.trapezoid(1.0 - p_hi, hi, axis=1))
