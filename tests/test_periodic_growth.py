"""BloomSpan's growth through periodic runs (``_periodic_kernels.periodic_chain``)
against the naive oracle and the suffix engine, on the hostile corpora of
``benchmarks/bench_adversarial.py`` at small sizes: one word repeated, short
periods, identical documents, one long document next to short ones."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from repetend.phrases import _periodic_kernels as P
from repetend.phrases.bloomspan import mine_bloomspan
from repetend.phrases.outofcore import mine_bloomspan_ooc
from repetend.phrases.suffix import mine_suffix

from naive_phrases import naive_phrases
from test_bloomspan import as_dict, corpus


def hostile_docs(rng, max_run, max_parts=3):
    """Documents of periodic runs (shared or own periods), junk between them,
    sometimes copies of the first document."""
    period = [int(x) for x in rng.integers(0, 4, int(rng.integers(1, 6)))]
    docs = []
    for _ in range(int(rng.integers(1, 7))):
        d = []
        for _ in range(int(rng.integers(1, max_parts + 1))):
            if rng.random() < 0.7:
                per = period if rng.random() < 0.7 else [
                    int(x) for x in rng.integers(0, 4, int(rng.integers(1, 4)))]
                run = int(rng.integers(20, max_run))
                d += (per * (run // len(per) + 1))[:run]
            d += [int(x) for x in rng.integers(0, 6, int(rng.integers(0, 5)))]
        docs.append(d)
    if rng.random() < 0.3:
        docs += [docs[0]] * int(rng.integers(1, 5))
    return docs


def test_long_nodes_take_the_shortcut():
    # the walk needs a node of >= MIN_OCCURRENCES overlapping occurrences
    assert P.MIN_OCCURRENCES <= 64
    tokens, offsets = corpus([[3] * 200, [3] * 150 + [1, 2]])
    exp = naive_phrases(tokens, offsets, 2, 5)
    assert as_dict(mine_bloomspan(tokens, offsets, 2, 5), tokens) == exp
    assert exp == {(3,) * 150: (2, list(range(0, 51)) + [200])}


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_periodic_corpora_match_oracle(seed):
    rng = np.random.default_rng(seed)
    docs = hostile_docs(rng, 110, max_parts=2)
    sigma, L = int(rng.integers(1, 5)), int(rng.integers(1, 12))
    tokens, offsets = corpus(docs)
    if tokens.size == 0:
        return
    exp = naive_phrases(tokens, offsets, sigma, L)
    n = int(rng.integers(1, L + 1))
    assert as_dict(mine_bloomspan(tokens, offsets, sigma, L, seed_len=n), tokens) == exp


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_long_periodic_corpora_match_suffix(seed):
    rng = np.random.default_rng(seed)
    docs = hostile_docs(rng, 2000)
    sigma, L = int(rng.integers(1, 5)), int(rng.integers(1, 12))
    tokens, offsets = corpus(docs)
    if tokens.size == 0:
        return
    exp = as_dict(mine_suffix(tokens, offsets, sigma, L), tokens)
    got = as_dict(mine_bloomspan(tokens, offsets, sigma, L), tokens)
    assert got == exp
    ooc = mine_bloomspan_ooc(tokens, offsets, sigma, L, memory_limit="64G", shard_tokens=1000)
    assert as_dict(ooc, tokens) == exp


@pytest.mark.parametrize("period", [1, 2, 7, 30])
def test_one_long_document_next_to_short_ones(period):
    rng = np.random.default_rng(period)
    base = [int(x) for x in rng.integers(0, 50, period)]
    huge = (base * (20_000 // period + 1))[:20_000]
    small = [[int(x) for x in rng.integers(0, 50, 30)] + base * 3 for _ in range(40)]
    tokens, offsets = corpus([huge] + small)
    for sigma in (1, 2, 20):
        exp = as_dict(mine_suffix(tokens, offsets, sigma, 10), tokens)
        assert as_dict(mine_bloomspan(tokens, offsets, sigma, 10), tokens) == exp


def test_identical_documents():
    rng = np.random.default_rng(1)
    doc = [int(x) for x in rng.integers(0, 5, 300)]
    tokens, offsets = corpus([doc] * 200 + [doc[:150], doc[100:]])
    for sigma in (1, 20, 201):
        exp = as_dict(mine_suffix(tokens, offsets, sigma, 10), tokens)
        assert as_dict(mine_bloomspan(tokens, offsets, sigma, 10), tokens) == exp


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_periodic_corpora_over_groups_match_oracle(seed):
    """The walk counts distinct groups when df is counted over groups (near-duplicate
    clusters, the scan's default): random groupings of hostile corpora."""
    rng = np.random.default_rng(seed)
    docs = hostile_docs(rng, 110, max_parts=2)
    sigma, L = int(rng.integers(1, 4)), int(rng.integers(1, 12))
    tokens, offsets = corpus(docs)
    if tokens.size == 0:
        return
    labels = rng.integers(0, max(1, len(docs) // 2 + 1), len(docs))
    exp = naive_phrases(tokens, offsets, sigma, L, groups=labels)
    n = int(rng.integers(1, L + 1))
    got = mine_bloomspan(tokens, offsets, sigma, L, seed_len=n, groups=labels)
    assert as_dict(got, tokens) == exp
    assert as_dict(mine_suffix(tokens, offsets, sigma, L, groups=labels), tokens) == exp


def test_a_long_periodic_run_over_groups_takes_the_walk():
    tokens, offsets = corpus([[3] * 300, [3] * 200, [3] * 120 + [1, 2], [3] * 90])
    labels = np.array([0, 1, 0, 2])
    exp = naive_phrases(tokens, offsets, 2, 5, groups=labels)
    assert as_dict(mine_bloomspan(tokens, offsets, 2, 5, groups=labels), tokens) == exp
    assert as_dict(mine_suffix(tokens, offsets, 2, 5, groups=labels), tokens) == exp
