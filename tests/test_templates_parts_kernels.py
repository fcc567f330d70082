"""The parts-stage kernels (packed L'-grams counted in buckets, the covered
runs) against simple oracles."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_phrases import as_runs, block_corpus, naive_runs

from repetend.phrases.templates import _kernels_parts as KP
from repetend.phrases.templates import parts as P

MIX = 0x9E3779B97F4A7C15


def _grams(tokens, offsets, code, n, bits):
    """Every in-document n-gram of coded words: (position, document, key, mix)."""
    K = n * bits
    out = []
    for d in range(offsets.size - 1):
        for p in range(offsets[d], offsets[d + 1] - n + 1):
            cs = [int(code[t]) for t in tokens[p:p + n]]
            if all(cs):
                k = 0
                for c in cs:
                    k = (k << bits) | c
                out.append((p, d, k, (k * MIX) % 2**64 % 2**K))
    return out


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 14), sigma=st.integers(1, 4),
       n=st.integers(1, 4), bits=st.sampled_from([1, 2, 5, 16]), bbits=st.integers(1, 6))
def test_bucket_kernels_match_naive(seed, n_docs, sigma, n, bits, bbits):
    """Sizes, scatter, the frequent mixes and the runs, with codes up to the
    full 2**bits - 1 (K = n · bits up to 64) and buckets of every width."""
    rng = np.random.default_rng(seed)
    vocab = 6
    tokens, offsets = block_corpus(rng, n_docs, vocab)
    code = rng.integers(0, 2**bits, size=vocab).astype(np.int32)
    code[rng.integers(0, vocab)] = 2**bits - 1
    K = n * bits
    bbits = min(bbits, K)
    doc_bits = max(1, (n_docs - 1).bit_length())
    low_bits = K - bbits
    if low_bits + doc_bits > 64:
        return
    grams = _grams(tokens, offsets, code, n, bits)
    args = (tokens, offsets, code, np.int64(n), np.int64(bits))
    sizes = KP.packed_bucket_sizes(*args, np.int64(bbits))
    want_sizes = np.zeros(2**bbits + 1, dtype=np.int64)
    for _, _, _, m in grams:
        want_sizes[(m >> low_bits) + 1] += 1
    assert sizes.tolist() == want_sizes.tolist()
    starts = np.cumsum(sizes)
    vals = np.empty(int(starts[-1]), dtype=np.uint64)
    KP.packed_scatter(*args, np.int64(bbits), np.int64(doc_bits), starts[:-1].copy(), vals)
    want_vals = sorted(grams, key=lambda g: (g[3] >> low_bits, g[0]))  # stable by position
    assert vals.tolist() == [((m % 2**low_bits) << doc_bits) | d for _, d, _, m in want_vals]
    mixes = KP.frequent_mixes(starts, vals, np.int64(sigma), np.int64(low_bits),
                              np.int64(doc_bits))
    docs = defaultdict(set)
    for _, d, _, m in grams:
        docs[m].add(d)
    frequent = {m for m, ds in docs.items() if len(ds) >= sigma}
    assert sorted(mixes.tolist()) == sorted(frequent) and len(set(mixes.tolist())) == mixes.size
    tab, tb, bloom = KP.mix_table(mixes, np.int64(8))
    for m in list(docs) + [int(x) for x in rng.integers(1, 2**min(K, 62), size=20)]:
        assert KP._in_table(tab, np.int64(tb), np.uint64(m)) == (m in frequent)
    runs = KP.frequent_mix_runs(*args, tab, np.int64(tb), bloom, np.int64(8))
    cov = np.zeros(tokens.size, dtype=bool)
    for p, _, _, m in grams:
        if m in frequent:
            cov[p:p + n] = True
    assert as_runs(*runs) == naive_runs(cov, offsets)
    assert all(a.dtype == np.int64 for a in runs)


@pytest.mark.parametrize("bucket_bits", [1, 3, 12])
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 12), sigma=st.integers(1, 4),
       n=st.integers(1, 5), vocab=st.integers(2, 12))
def test_packed_ngram_runs_match_naive(bucket_bits, seed, n_docs, sigma, n, vocab):
    """The whole packed path, with few buckets (many keys a bucket) or many."""
    rng = np.random.default_rng(seed)
    tokens, offsets = block_corpus(rng, n_docs, vocab)
    docs = defaultdict(set)
    for d in range(n_docs):
        for i in range(offsets[d], offsets[d + 1] - n + 1):
            docs[tuple(tokens[i:i + n])].add(d)
    cov = np.zeros(tokens.size + 1, dtype=bool)
    for d in range(n_docs):
        for i in range(offsets[d], offsets[d + 1] - n + 1):
            if len(docs[tuple(tokens[i:i + n])]) >= sigma:
                cov[i:i + n] = True
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(P, "_BUCKET_BITS", bucket_bits)
        packed = P._packed_ngram_runs(tokens, offsets, sigma, n, vocab)
    assert packed is not None
    runs, kept = packed
    assert kept == sum(len(ds) >= sigma for ds in docs.values())
    assert as_runs(*runs) == naive_runs(cov, offsets)


def test_packed_ngram_runs_declines_keys_over_64_bits():
    # 17 frequent words need 5-bit codes: 13 · 5 = 65 bits
    tokens = np.tile(np.arange(17, dtype=np.int32), 4)
    offsets = np.array([0, 17, 34, 51, 68], dtype=np.int64)
    assert P._packed_ngram_runs(tokens, offsets, 2, 13, 17) is None
    assert P._packed_ngram_runs(tokens, offsets, 2, 12, 17) is not None


def _naive_spans(tokens, offsets, raw, L):
    """The frequent-span scan by hand: every window that equals a phrase
    window is covered; a run names the phrase of the first window (in the
    hash-sorted window list) equal to its first window."""
    from repetend.phrases import _frequent_spans_kernels as FK

    keys, pos, phrase = FK.phrase_windows(tokens, np.asarray(raw.occ_offsets, np.int64),
                                          np.asarray(raw.occ_starts, np.int64),
                                          np.asarray(raw.lengths, np.int64), L)
    order = np.argsort(keys, kind="stable")
    first = {}
    for i in order:
        first.setdefault(tuple(tokens[pos[i]:pos[i] + L]), int(phrase[i]))
    covered, runs = [], []
    for d in range(offsets.size - 1):
        a, b = int(offsets[d]), int(offsets[d + 1])
        cov = np.zeros(b - a, dtype=bool)
        head = {}
        for q in range(a, b - L + 1):
            if tuple(tokens[q:q + L]) in first:
                cov[q - a:q - a + L] = True
                head[q] = first[tuple(tokens[q:q + L])]
        covered.append(int(cov.sum()))
        runs.append([(p, q, head[p]) for _, p, q in naive_runs(np.r_[np.zeros(a, bool), cov],
                                                                  np.array([a, b]))])
    return covered, runs


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 10), sigma=st.integers(2, 3),
       L=st.integers(1, 7), vocab=st.integers(3, 40))
def test_frequent_spans_match_naive_scan(seed, n_docs, sigma, L, vocab):
    """The one-pass scan that jumps over windows holding a pair no phrase
    holds: the same covered counts, runs and run phrases as a window-by-window
    scan."""
    from naive_phrases import naive_phrases
    from repetend.phrases._raw import RawPhrases
    from repetend.phrases.frequent_spans import frequent_spans

    rng = np.random.default_rng(seed)
    tokens, offsets = block_corpus(rng, n_docs, vocab, max_len=40)
    answer = naive_phrases(tokens, offsets, sigma, L)
    items = sorted(answer.items())
    offs = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum([len(v[1]) for _, v in items], out=offs[1:])
    raw = RawPhrases(np.array([len(p) for p, _ in items], dtype=np.int64),
                     np.array([v[0] for _, v in items], dtype=np.int64), offs,
                     np.array([s for _, v in items for s in v[1]], dtype=np.int64))
    fs = frequent_spans(tokens, offsets, raw, L)
    covered, runs = _naive_spans(tokens, offsets, raw, L)
    assert fs.covered.tolist() == covered
    assert fs.run_offsets.tolist() == np.cumsum([0] + [len(r) for r in runs]).tolist()
    got = list(zip(fs.starts.tolist(), fs.ends.tolist(), fs.phrase.tolist()))
    assert got == [r for rs in runs for r in rs]
    assert all(a.dtype == np.int64 for a in (fs.covered, fs.run_offsets, fs.starts, fs.ends,
                                             fs.phrase))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 12), vocab=st.integers(1, 30))
def test_word_df_matches_naive(seed, n_docs, vocab):
    rng = np.random.default_rng(seed)
    tokens, offsets = block_corpus(rng, n_docs, vocab)
    want = np.zeros(vocab + 3, dtype=np.int64)
    for d in range(n_docs):
        for t in set(tokens[offsets[d]:offsets[d + 1]].tolist()):
            want[t] += 1
    from repetend.phrases._bloomspan_kernels import word_df

    got = word_df(tokens, offsets, vocab + 3)
    assert got.dtype == np.int32 and got.tolist() == want.tolist()
