"""Broder's mod-m sampled shingles (seed 004) against an explicit oracle, and its guarantees."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from naive_neardup import (measures, naive_broder, pairs_as_dict, sets_as_python,
                           sets_from_python)
from repetend.errors import ParameterError
from repetend.neardup.broder import broder, broder_pairs, doc_moduli
from repetend.neardup.shingles import shingle_sets, token_hashes


def _random_case(rng):
    """Small sets of small multiples of 5 (so sampling at 10/20/40 keeps something) and
    word counts across the three ranks."""
    n = int(rng.integers(2, 14))
    base = [set((rng.integers(0, 40, rng.integers(0, 30)) * 5).tolist()) for _ in range(3)]
    py = []
    for _ in range(n):
        s = {h for h in base[rng.integers(3)] if rng.random() < 0.85}
        s |= set((rng.integers(0, 40, rng.integers(0, 6)) * 5).tolist())
        py.append(s)
    ntok = rng.choice([0, 5, 99, 100, 500, 999, 1000, 5000], n)
    return py, ntok


@pytest.mark.parametrize("seed", range(40))
def test_sampled_estimates_match_oracle(seed):
    rng = np.random.default_rng(seed)
    py, ntok = _random_case(rng)
    sets = sets_from_python(py)
    ref = naive_broder(py, ntok)
    for t in (0.2, 0.5, 0.8, 1.0):
        got = pairs_as_dict(broder_pairs(sets, ntok, t, verify=False))
        exp = {k: v[1:] for k, v in ref.items() if v[1] >= t}
        assert got.keys() == exp.keys()
        for k in got:
            assert got[k] == pytest.approx(exp[k], abs=1e-12)
    # containment decision on samples
    got = pairs_as_dict(broder_pairs(sets, ntok, 1.0, verify=False, containment=0.9))
    exp = {k for k, v in ref.items() if v[1] >= 1.0 or v[2] >= 0.9 or v[3] >= 0.9}
    assert set(got) == exp


@pytest.mark.parametrize("seed", range(20))
def test_verify_keeps_exactly_the_sampled_pairs_over_t(seed):
    rng = np.random.default_rng(100 + seed)
    py, ntok = _random_case(rng)
    sets = sets_from_python(py)
    ref = naive_broder(py, ntok)
    for t, slack in ((0.5, 0.0), (0.7, 0.2), (0.9, 0.0)):
        res = broder(sets, ntok, t, slack=slack)
        got = pairs_as_dict(res.pairs)
        exp = {k: measures(py[k[0]], py[k[1]]) for k, v in ref.items() if v[1] >= t - slack}
        exp = {k: v for k, v in exp.items() if v[0] >= t}
        assert got == exp                     # exact values, no pair below t
        assert res.verified and res.n_counted_pairs == len(ref)


@pytest.mark.parametrize("seed", range(10))
def test_max_bucket_skips_frequent_samples(seed, caplog):
    rng = np.random.default_rng(200 + seed)
    py, ntok = _random_case(rng)
    common = {0, 40 * 7}                                  # sampled at every modulus
    py = [s | common for s in py] + [set(common)] * 4
    ntok = np.concatenate([ntok, [50, 500, 5000, 5]])
    sets = sets_from_python(py)
    ref = naive_broder(py, ntok, max_bucket=3)
    with caplog.at_level(logging.WARNING, logger="repetend.neardup.broder"):
        res = broder(sets, ntok, 0.01, verify=False, max_bucket=3)
    assert res.n_skipped_hashes >= 2
    assert "not counted" in caplog.text
    got = pairs_as_dict(res.pairs)
    assert got.keys() == ref.keys()


def test_ranks_and_compatibility():
    rank, m = doc_moduli([0, 99, 100, 999, 1000, 10**6])
    assert rank.tolist() == [0, 0, 1, 1, 2, 2]
    assert m.tolist() == [10, 10, 20, 20, 40, 40]
    # same set, different ranks: compared on the coarser sampling (m = 40)
    s = {40, 80, 120, 10, 20, 30}
    res = broder(sets_from_python([s, set(s)]), [50, 5000], 0.99, verify=False)
    assert pairs_as_dict(res.pairs) == {(0, 1): (1.0, 1.0, 1.0)}
    # sharing only hashes divisible by 10 (not by 40): no common sample at M = 40
    res = broder(sets_from_python([{10, 30, 40}, {10, 30, 80}]), [50, 5000], 0.01, verify=False)
    assert len(res.pairs) == 0 and res.n_counted_pairs == 0
    # the same pair at the same rank (m = 10) shares 10 and 30
    res = broder(sets_from_python([{10, 30, 40}, {10, 30, 80}]), [50, 50], 0.01, verify=False)
    assert pairs_as_dict(res.pairs) == {(0, 1): (0.5, 2 / 3, 2 / 3)}


def _text_corpus(rng, n_base, words, vocab_size=5000):
    """Random word documents and edited copies (a few words replaced)."""
    docs = []
    for _ in range(n_base):
        base = rng.integers(0, vocab_size, words)
        docs.append(base)
        for _ in range(3):
            d = base.copy()
            edits = rng.integers(0, max(1, words // 60))
            d[rng.integers(0, words, edits)] = rng.integers(0, vocab_size, edits)
            docs.append(d)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([d.size for d in docs], out=offsets[1:])
    tokens = np.concatenate(docs).astype(np.int32)
    tok_hash = token_hashes([f"w{i}" for i in range(vocab_size)])
    return shingle_sets(tokens, offsets, tok_hash, 10), np.diff(offsets)


def test_guarantees_on_text():
    """w = 10 shingles of 1500-word documents (rank 3, m = 40): near copies are found,
    nothing below t is returned, and the sampled estimate is centred on the exact J."""
    rng = np.random.default_rng(5)
    sets, ntok = _text_corpus(rng, 25, 1500)
    py = sets_as_python(sets)
    res = broder(sets, ntok, 0.8)
    got = pairs_as_dict(res.pairs)
    truth = {(a, b): measures(py[a], py[b])[0] for a in range(len(py))
             for b in range(a + 1, len(py)) if py[a] & py[b]}
    assert all(v[0] >= 0.8 for v in got.values())
    assert all(k in got for k, j in truth.items() if j >= 0.95)
    # recall: each pair with J >= t is found with probability P(Bin(u, J) >= ceil(t u)), u the
    # number of samples in the union; the count found is within 4 sd of the sum of these
    p = []
    for (a, b), j in truth.items():
        if j >= 0.8:
            u = sum(1 for h in py[a] | py[b] if h % 40 == 0)
            need = math.ceil(0.8 * u - 1e-9)
            p.append(sum(math.comb(u, c) * j**c * (1 - j)**(u - c) for c in range(need, u + 1)))
    p = np.array(p)
    assert len(p) > 30
    assert len(got) >= p.sum() - 4 * np.sqrt((p * (1 - p)).sum())
    est = pairs_as_dict(broder_pairs(sets, ntok, 1e-9, verify=False))
    diffs = np.array([est[k][0] - truth[k] for k in est])
    # |V_40(A ∪ B)| is ~40 samples per pair: the mean error over ~75 pairs is well inside
    # a few standard errors of sqrt(J(1-J)/40)/sqrt(75) ~ 0.006
    assert abs(diffs.mean()) < 0.03
    assert res.n_unsampled_docs == 0


def test_empty_and_short_documents_never_pair():
    py = [set(), set(), {7}, {7}]                    # 7 is not a multiple of 10: no samples
    res = broder(sets_from_python(py), [0, 0, 3, 3], 0.5)
    assert len(res.pairs) == 0 and res.n_unsampled_docs == 2


@pytest.mark.parametrize("kw", [dict(threshold=0), dict(threshold=1.2),
                                dict(moduli=(10, 25, 40)), dict(moduli=(10, 20)),
                                dict(rank_bounds=(1000, 100)), dict(slack=0.9),
                                dict(max_bucket=1), dict(containment=0)])
def test_bad_parameters(kw):
    sets = sets_from_python([{10}, {10}])
    args = dict(threshold=0.5) | kw
    with pytest.raises(ParameterError):
        broder_pairs(sets, [1, 1], **args)


def test_bad_doc_n_tokens():
    with pytest.raises(ParameterError, match="doc_n_tokens"):
        broder_pairs(sets_from_python([{10}, {10}]), [1, 1, 1], 0.5)


def test_empty_corpus():
    for py, n in (([], []), ([set()], [0])):
        res = broder(sets_from_python(py), n, 0.5)
        assert len(res.pairs) == 0 and res.n_samples == 0


@pytest.mark.parametrize("seed", range(10))
def test_verified_containment(seed):
    """A short page inside a long one: kept on exact containment although J < t."""
    rng = np.random.default_rng(300 + seed)
    py, ntok = _random_case(rng)
    long = set((np.arange(0, 200) * 5).tolist())
    short = set(list(sorted(long))[:40])
    py += [long, short]
    ntok = np.concatenate([ntok, [5000, 150]])
    sets = sets_from_python(py)
    ref = naive_broder(py, ntok)
    got = pairs_as_dict(broder_pairs(sets, ntok, 0.9, containment=0.8))
    exp = {}
    for k, v in ref.items():
        if v[1] >= 0.9 or v[2] >= 0.8 or v[3] >= 0.8:
            m = measures(py[k[0]], py[k[1]])
            if m[0] >= 0.9 or m[1] >= 0.8 or m[2] >= 0.8:
                exp[k] = m
    assert got == exp
    n = len(py)
    assert (n - 2, n - 1) in got and got[(n - 2, n - 1)][0] < 0.9
