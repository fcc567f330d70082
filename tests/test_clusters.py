"""Clusters vs a plain-Python union-find over explicit pairs; containment pairs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repetend.errors import ParameterError
from repetend.neardup.clusters import clusters_from_pairs, containment_pairs
from repetend.neardup.pairs import Pairs


def naive_clusters(n, pairs, lengths):
    """Plain union-find; clusters as frozensets with their representative."""
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
    groups: dict[int, list[int]] = {}
    for d in range(n):
        groups.setdefault(find(d), []).append(d)
    out = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        rep = max(members, key=lambda d: (lengths[d], -d))  # longest, ties: earliest
        out[frozenset(members)] = rep
    return out


@settings(max_examples=80, deadline=None)
@given(data=st.data(), n=st.integers(1, 30))
def test_clusters_equal_naive_union_find(data, n):
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=40))
    lengths = np.array(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=np.int64)
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    c = clusters_from_pairs(n, a, b, lengths)
    want = naive_clusters(n, pairs, lengths)
    got = {}
    for cid in range(c.n_clusters):
        members = frozenset(np.flatnonzero(c.cluster_id == cid).tolist())
        assert len(members) == c.sizes[cid]
        got[members] = int(c.representative[cid])
    assert got == want
    # dense ids in the order of each cluster's smallest member
    firsts = [int(np.flatnonzero(c.cluster_id == cid)[0]) for cid in range(c.n_clusters)]
    assert firsts == sorted(firsts)
    keep = c.keep_mask()
    assert keep.sum() == n - c.duplicates
    assert c.documents_in_clusters == sum(len(m) for m in want)


def test_representative_without_lengths_is_the_earliest():
    c = clusters_from_pairs(6, [4, 2], [5, 4])
    assert c.n_clusters == 1 and c.representative.tolist() == [2]
    assert c.members(0).tolist() == [2, 4, 5]
    assert c.cluster_id.tolist() == [-1, -1, 0, -1, 0, 0]


def test_no_pairs_no_clusters():
    c = clusters_from_pairs(4, [], [])
    assert c.n_clusters == 0 and np.all(c.cluster_id == -1) and c.keep_mask().all()


def test_containment_pairs_are_those_inside_but_not_alike():
    rng = np.random.default_rng(0)
    n = 200
    jac = rng.random(n)
    cab = rng.random(n)
    cba = rng.random(n)
    p = Pairs(np.arange(n), np.arange(n) + n, jac, cab, cba)
    got = containment_pairs(p, 0.8, 0.7)
    want = [i for i in range(n) if max(cab[i], cba[i]) >= 0.7 and jac[i] < 0.8]
    assert got.a.tolist() == want


def test_parameter_errors():
    with pytest.raises(ParameterError):
        clusters_from_pairs(3, [0], [3])
    with pytest.raises(ParameterError):
        clusters_from_pairs(3, [0, 1], [2])
    with pytest.raises(ParameterError):
        clusters_from_pairs(3, [0], [1], lengths=[1, 2])
    with pytest.raises(ParameterError):
        containment_pairs(Pairs.empty(), 0.8, 0.0)
