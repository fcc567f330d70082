"""The fast shingling and verification kernels against simple oracles: sort_hashes
vs np.sort, window_hashes vs one window at a time, intersection sizes vs Python sets."""

import numpy as np
import pytest

from repetend.neardup import _shingle_kernels as SK
from repetend.neardup.shingles import shingle_sets


def _check(x):
    x = np.ascontiguousarray(x, dtype=np.uint64)
    before = x.copy()
    out = np.empty_like(x)
    SK.sort_hashes(x, out)
    assert np.array_equal(out, np.sort(before))
    assert np.array_equal(x, before)          # the source is left as it was


SIZES = [0, 1, 2, 3, 23, 24, 25, 63, 64, 65, 100, 257, 1000, 4096, 5000, 70_000, 1_100_000]


@pytest.mark.parametrize("m", SIZES)
def test_uniform(m):
    rng = np.random.default_rng(m)
    _check(rng.integers(0, 2**64, size=m, dtype=np.uint64))


@pytest.mark.parametrize("m", SIZES)
def test_repeated_values(m):
    rng = np.random.default_rng(m + 1)
    pool = rng.integers(0, 2**64, size=max(1, m // 50), dtype=np.uint64)
    _check(rng.choice(pool, size=m))


@pytest.mark.parametrize("m", SIZES)
def test_clustered_in_one_bucket(m):
    rng = np.random.default_rng(m + 2)
    _check(rng.integers(0, 1 << 20, size=m, dtype=np.uint64))   # every value in bucket 0
    _check(np.uint64(2**64 - 1) - rng.integers(0, 1 << 20, size=m, dtype=np.uint64))


@pytest.mark.parametrize("m", [30, 500, 10_000])
def test_extremes_sorted_reversed_constant(m):
    rng = np.random.default_rng(m + 3)
    x = rng.integers(0, 2**64, size=m, dtype=np.uint64)
    x[:3] = [0, 2**64 - 1, 2**63]
    _check(np.sort(x))
    _check(np.sort(x)[::-1])
    _check(np.full(m, 7, dtype=np.uint64))
    _check(np.tile(np.array([2**64 - 1, 0], dtype=np.uint64), m // 2))


def test_shingle_sets_sorted_distinct_random():
    rng = np.random.default_rng(5)
    for _ in range(30):
        n_docs = int(rng.integers(1, 20))
        lens = rng.integers(0, 400, size=n_docs)
        vocab = int(rng.integers(1, 30))
        tokens = rng.integers(0, vocab, size=int(lens.sum())).astype(np.int32)
        offsets = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        tok_hash = rng.integers(0, 2**64, size=vocab, dtype=np.uint64)
        k = int(rng.integers(1, 6))
        sets = shingle_sets(tokens, offsets, tok_hash, k)
        for d in range(n_docs):
            a, b = offsets[d], offsets[d + 1]
            n = b - a
            if n == 0:
                want = []
            elif n < k:
                want = [SK._shingle_hash(tok_hash, tokens, a, n)]
            else:
                want = [SK._shingle_hash(tok_hash, tokens, a + i, k) for i in range(n - k + 1)]
            assert np.array_equal(sets.of(d), np.unique(np.array(want, dtype=np.uint64)))


@pytest.mark.parametrize("k", [1, 2, 5, 9])
def test_window_hashes_vs_one_window_at_a_time(k):
    rng = np.random.default_rng(k)
    tok_hash = rng.integers(0, 2**64, size=50, dtype=np.uint64)
    for n in [k, k + 1, k + 62, k + 63, k + 64, k + 200, 1000]:
        tokens = rng.integers(0, 50, size=n + 7).astype(np.int32)
        a = 3
        m = n - k + 1
        out = np.zeros(m, dtype=np.uint64)
        h = np.empty(n, dtype=np.uint64)
        SK.window_hashes(tokens, a, n, tok_hash, k, h, out)
        want = [SK._shingle_hash(tok_hash, tokens, a + i, k) for i in range(m)]
        assert np.array_equal(out, np.array(want, dtype=np.uint64))


def test_intersection_sizes_vs_python_sets():
    from repetend.neardup.pairs import intersection_sizes
    from repetend.neardup.shingles import ShingleSets

    rng = np.random.default_rng(11)
    sets = []
    # sizes from empty to far apart (the search path: one set > 32x the other)
    for size in [0, 1, 2, 5, 31, 33, 64, 100, 1000, 3000, 5000]:
        for _ in range(3):
            sets.append(rng.integers(0, 4 * size + 8, size=size, dtype=np.uint64))
    sets = [np.unique(s) for s in sets]
    sets.append(np.array([0, 2**64 - 1], dtype=np.uint64))
    sets.append(np.arange(0, 6000, 2, dtype=np.uint64))
    sets.append(np.array([2**64 - 1], dtype=np.uint64))
    offsets = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in sets], out=offsets[1:])
    ss = ShingleSets(np.concatenate(sets).astype(np.uint64), offsets, 5)
    n = len(sets)
    a, b = np.meshgrid(np.arange(n), np.arange(n))
    a, b = a.ravel(), b.ravel()
    got = intersection_sizes(ss, a, b)
    want = [len(set(sets[i].tolist()) & set(sets[j].tolist())) for i, j in zip(a, b)]
    assert got.tolist() == want
    assert max(want) > 100 and min(want) == 0
