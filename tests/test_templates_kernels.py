"""Kernels and helpers of the template layer against simple oracles."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_phrases import as_runs, block_corpus, naive_runs

from repetend.phrases.templates import _kernels_index as KI
from repetend.phrases.templates import _kernels_parts as KP
from repetend.phrases.templates import _kernels_slots as KS
from repetend.phrases.templates.parts import _frequent_ngrams, _packed_ngram_runs, _part_runs


def _naive_ngram_cover(tokens, offsets, sigma, n):
    docs = defaultdict(set)
    for d in range(offsets.size - 1):
        for i in range(offsets[d], offsets[d + 1] - n + 1):
            docs[tuple(tokens[i:i + n])].add(d)
    cov = np.zeros(tokens.size, dtype=bool)
    for d in range(offsets.size - 1):
        for i in range(offsets[d], offsets[d + 1] - n + 1):
            if len(docs[tuple(tokens[i:i + n])]) >= sigma:
                cov[i:i + n] = True
    return cov, {g for g, ds in docs.items() if len(ds) >= sigma}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 12), sigma=st.integers(1, 4),
       n=st.integers(1, 5), vocab=st.integers(2, 12))
def test_frequent_ngrams_and_runs_match_naive(seed, n_docs, sigma, n, vocab):
    rng = np.random.default_rng(seed)
    tokens, offsets = block_corpus(rng, n_docs, vocab)
    cov, grams = _naive_ngram_cover(tokens, offsets, sigma, n)
    pos, s_start, s_end = _frequent_ngrams(tokens, offsets, sigma, n, vocab)
    got = set()
    for s in range(s_start.size):
        occ = pos[s_start[s]:s_end[s]]
        g = {tuple(tokens[p:p + n]) for p in occ}
        assert len(g) == 1                      # one n-gram per group
        got |= g
        # all its occurrences
        want = [i for d in range(n_docs) for i in range(offsets[d], offsets[d + 1] - n + 1)
                if tuple(tokens[i:i + n]) == next(iter(g))]
        assert sorted(occ.tolist()) == want
    assert got == grams
    runs = KP.ngram_runs(offsets, pos, s_start, s_end, np.int64(n))
    assert as_runs(*runs) == naive_runs(cov, offsets)
    # the packed path (n-grams of frequent words as exact 64-bit keys)
    packed = _packed_ngram_runs(tokens, offsets, sigma, n, vocab)
    assert packed is not None
    pruns, kept = packed
    assert kept == len(grams)
    assert as_runs(*pruns) == naive_runs(cov, offsets)
    if sigma >= 2:
        # the suffix engine + frequent-span scan gives the same runs
        fast, _, _ = _part_runs(tokens, offsets, sigma, n, "bloomspan", vocab)
        slow, _, _ = _part_runs(tokens, offsets, sigma, n, "suffix", vocab)
        if fast is None or slow is None:
            assert fast is None and slow is None and not cov.any()
        else:
            assert as_runs(*fast) == as_runs(*slow) == naive_runs(cov, offsets)


def _naive_sa(text):
    s = [int(x) for x in text]
    return sorted(range(len(s)), key=lambda i: s[i:])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300),
       alphabet=st.sampled_from([3, 200, 300, 5000, 70000]), one_byte=st.integers(0, 255))
def test_suffix_array_of_wide_codes_matches_naive(seed, n, alphabet, one_byte):
    from repetend.phrases.templates.gapped_index import _suffix_array

    rng = np.random.default_rng(seed)
    # repeats and separators (0), as in the gapped sequence
    base = rng.integers(1, alphabet, size=max(1, n // 3))
    text = np.concatenate([base if rng.random() < 0.5 else rng.integers(0, alphabet, size=7)
                           for _ in range(4)] + [np.zeros(1, np.int64)])
    dtype = np.uint8 if alphabet < 2**8 else np.uint16 if alphabet < 2**16 else np.int32
    text = text.astype(dtype)
    sa = _suffix_array(text, one_byte)
    assert sa.dtype == np.int32
    assert sa.tolist() == _naive_sa(text)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(2, 12), sigma=st.integers(2, 4),
       vocab=st.sampled_from([4, 12, 400]), sentinels=st.booleans())
def test_indexed_chain_mining_matches_suffix_engine(seed, n_docs, sigma, vocab, sentinels):
    """The chain miner on the template layer's own index gives the phrases and
    occurrences of ``mine_suffix`` (with and without its k-gram filter)."""
    from repetend.phrases.suffix import mine_suffix
    from repetend.phrases.templates.gapped_index import _gapped_index, _mine_indexed

    rng = np.random.default_rng(seed)
    tokens, offsets = block_corpus(rng, n_docs, vocab)
    gap_id = vocab + 1
    if sentinels and tokens.size:                # peeled positions: unique sentinels
        hit = rng.random(tokens.size) < 0.2
        tokens[hit] = gap_id + 1 + np.arange(int(hit.sum()))
    want = mine_suffix(tokens, offsets, sigma, 2)

    def as_set(lengths, occ_off, occ_starts):
        return {(tokens[occ_starts[occ_off[i]]:occ_starts[occ_off[i]] + lengths[i]].tobytes(),
                 tuple(occ_starts[occ_off[i]:occ_off[i + 1]].tolist()))
                for i in range(len(lengths))}

    ref = as_set(want.lengths, want.occ_offsets, want.occ_starts)
    for min_len, filt in ((1, False), (2, True)):
        got = _mine_indexed(_gapped_index(tokens, offsets, gap_id, sigma, min_len, filt),
                            n_docs, sigma, 2)
        assert as_set(*got) == ref


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 6), n_spans=st.integers(0, 12))
def test_union_covered_matches_naive(seed, n_docs, n_spans):
    rng = np.random.default_rng(seed)
    lens = rng.integers(0, 200, size=n_docs)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    n = int(offsets[-1])

    def spans():
        s = rng.integers(0, max(n, 1), size=n_spans)
        e = np.minimum(s + rng.integers(0, 150, size=n_spans), n)
        return s.astype(np.int64), e.astype(np.int64)

    (as_, ae), (bs, be) = spans(), spans()
    got = KS.union_covered(offsets, as_, ae, bs, be)
    ma, mb = np.zeros(n, bool), np.zeros(n, bool)
    for s, e in zip(as_, ae):
        ma[s:e] = True
    for s, e in zip(bs, be):
        mb[s:e] = True
    for d in range(n_docs):
        a, b = offsets[d], offsets[d + 1]
        assert got[d].tolist() == [ma[a:b].sum(), mb[a:b].sum(), (ma | mb)[a:b].sum()]


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_slots=st.integers(0, 6), top=st.integers(0, 6),
       card=st.integers(1, 40))
def test_slot_values_matches_unique(seed, n_slots, top, card):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 60, size=n_slots)
    off = np.zeros(n_slots + 1, dtype=np.int64)
    np.cumsum(sizes, out=off[1:])
    pool = rng.integers(0, 2**64, size=card, dtype=np.uint64)
    h = pool[rng.integers(0, card, size=int(off[-1]))]
    ss = rng.integers(0, 5, size=h.size).astype(np.int64)
    se = ss + rng.integers(0, 2, size=h.size)
    distinct, empty, first, count, top_off = KS.slot_values(h, ss, se, off, np.int64(top))
    for s in range(n_slots):
        hv = h[off[s]:off[s + 1]]
        assert empty[s] == int(np.sum(se[off[s]:off[s + 1]] == ss[off[s]:off[s + 1]]))
        if hv.size == 0:
            assert distinct[s] == 0 and top_off[s + 1] == top_off[s]
            continue
        uniq, idx, cnt = np.unique(hv, return_index=True, return_counts=True)
        assert distinct[s] == uniq.size
        order = np.lexsort((uniq, -cnt))[:top]
        got = list(zip(first[top_off[s]:top_off[s + 1]].tolist(),
                       count[top_off[s]:top_off[s + 1]].tolist()))
        assert got == list(zip(idx[order].tolist(), cnt[order].tolist()))
