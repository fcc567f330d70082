"""The parts-stage kernels (packed L'-grams counted in buckets, the covered
runs) against simple oracles."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_phrases import as_runs, block_corpus, naive_runs

from repetend._arrays import even_bounds
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


def _chunk_bounds(rng, n_items, n_chunks):
    """Random contiguous chunks (some empty) of *n_items* items: the bounds."""
    cuts = np.sort(rng.integers(0, n_items + 1, size=n_chunks - 1))
    return np.r_[0, cuts, n_items].astype(np.int64)


def _bucket_kernels(rng, tokens, offsets, code, sigma, n, bits, bbits, doc_bits, n_chunks):
    """The packed-path kernels with *n_chunks* random chunks of documents and
    of buckets: (per-chunk sizes, bucket starts, vals, mixes, runs)."""
    n_docs = offsets.size - 1
    args = (tokens, offsets, code, np.int64(n), np.int64(bits))
    chunk_docs = _chunk_bounds(rng, n_docs, n_chunks)
    sizes = KP.packed_bucket_sizes(*args, np.int64(bbits), chunk_docs)
    starts, fill = KP.scatter_offsets(sizes)
    vals = np.empty(int(starts[-1]), dtype=np.uint64)
    KP.packed_scatter(*args, np.int64(bbits), np.int64(doc_bits), chunk_docs, fill, vals)
    # every chunk filled its slice of every bucket, no more
    assert fill.tolist() == (starts[:-1] + np.cumsum(sizes, axis=0)).tolist()
    mixes = KP.frequent_mixes(starts, vals, np.int64(sigma), np.int64(n * bits - bbits),
                              np.int64(doc_bits), _chunk_bounds(rng, 2**bbits, n_chunks))
    tab, tb, bloom = KP.mix_table(mixes, np.int64(8))
    runs = KP.frequent_mix_runs(*args, tab, np.int64(tb), bloom, np.int64(8),
                                _chunk_bounds(rng, n_docs, n_chunks))
    return chunk_docs, sizes, starts, vals, mixes, (tab, tb), runs


def _covered_by_frequent_ngrams(tokens, offsets, n, sigma):
    """Oracle: the documents of every n-gram, and per position (one extra)
    whether it lies inside an n-gram in ≥ σ documents."""
    n_docs = offsets.size - 1
    docs = defaultdict(set)
    for d in range(n_docs):
        for i in range(offsets[d], offsets[d + 1] - n + 1):
            docs[tuple(tokens[i:i + n])].add(d)
    cov = np.zeros(tokens.size + 1, dtype=bool)
    for d in range(n_docs):
        for i in range(offsets[d], offsets[d + 1] - n + 1):
            if len(docs[tuple(tokens[i:i + n])]) >= sigma:
                cov[i:i + n] = True
    return docs, cov


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 14), sigma=st.integers(1, 4),
       n=st.integers(1, 4), bits=st.sampled_from([1, 2, 5, 16]), bbits=st.integers(1, 6),
       n_chunks=st.sampled_from([1, 2, 7, 20]))
def test_bucket_kernels_match_naive(seed, n_docs, sigma, n, bits, bbits, n_chunks):
    """Sizes, scatter, the frequent mixes and the runs, with codes up to the
    full 2**bits - 1 (K = n · bits up to 64), buckets of every width, and the
    documents and buckets cut into 1, 2, 7 or 20 random chunks (some empty,
    often more chunks than documents): the same output as the oracle and as
    one chunk."""
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
    chunk_docs, sizes, starts, vals, mixes, (tab, tb), runs = _bucket_kernels(
        rng, tokens, offsets, code, sigma, n, bits, bbits, doc_bits, n_chunks)
    want_sizes = np.zeros((n_chunks, 2**bbits), dtype=np.int64)
    for _, d, _, m in grams:
        want_sizes[np.searchsorted(chunk_docs, d, side="right") - 1, m >> low_bits] += 1
    assert sizes.tolist() == want_sizes.tolist()
    assert starts.tolist() == [0] + np.cumsum(want_sizes.sum(0)).tolist()
    want_vals = sorted(grams, key=lambda g: (g[3] >> low_bits, g[0]))  # stable by position
    assert vals.tolist() == [((m % 2**low_bits) << doc_bits) | d for _, d, _, m in want_vals]
    docs = defaultdict(set)
    for _, d, _, m in grams:
        docs[m].add(d)
    frequent = {m for m, ds in docs.items() if len(ds) >= sigma}
    # in bucket order, each bucket's mixes in the order of their sigma-th document
    def reached(m):
        ds = sorted(docs[m])
        d = ds[sigma - 1]
        return min(p for p, dd, _, mm in grams if mm == m and dd == d)
    assert mixes.tolist() == sorted(frequent, key=lambda m: (m >> low_bits, reached(m)))
    for m in list(docs) + [int(x) for x in rng.integers(1, 2**min(K, 62), size=20)]:
        assert KP._in_table(tab, np.int64(tb), np.uint64(m)) == (m in frequent)
    cov = np.zeros(tokens.size, dtype=bool)
    for p, _, _, m in grams:
        if m in frequent:
            cov[p:p + n] = True
    assert as_runs(*runs) == naive_runs(cov, offsets)
    assert all(a.dtype == np.int64 for a in runs)
    # one chunk: byte-identical arrays
    one = _bucket_kernels(rng, tokens, offsets, code, sigma, n, bits, bbits, doc_bits, 1)
    assert one[1].sum(0).tolist() == sizes.sum(0).tolist()
    assert one[3].tobytes() == vals.tobytes() and one[4].tobytes() == mixes.tobytes()
    assert all(a.tobytes() == b.tobytes() for a, b in zip(one[6], runs))


@pytest.mark.parametrize("n_chunks", [1, 2, 7, 50])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 12), sigma=st.integers(1, 4),
       n=st.integers(1, 5), vocab=st.integers(2, 12))
def test_packed_ngram_runs_chunk_counts(n_chunks, seed, n_docs, sigma, n, vocab):
    """The whole packed path with 1, 2, 7 or 50 chunks (more than documents):
    the oracle's runs, and the same arrays as with one chunk."""
    rng = np.random.default_rng(seed)
    tokens, offsets = block_corpus(rng, n_docs, vocab)
    docs, cov = _covered_by_frequent_ngrams(tokens, offsets, n, sigma)
    got = {}
    for c in (1, n_chunks):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(P, "_BUCKET_BITS", 3)
            mp.setattr(P, "_chunk_count", lambda c=c: c)
            got[c] = P._packed_ngram_runs(tokens, offsets, sigma, n, vocab)
    runs, kept = got[n_chunks]
    assert kept == sum(len(ds) >= sigma for ds in docs.values()) == got[1][1]
    assert as_runs(*runs) == naive_runs(cov, offsets)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(runs, got[1][0]))


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(0, 30), min_size=0, max_size=20),
       n_chunks=st.integers(1, 30))
def test_even_bounds_are_contiguous_and_balanced(sizes, n_chunks):
    starts = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    b = even_bounds(starts, n_chunks)
    assert b.size == n_chunks + 1 and b[0] == 0 and b[-1] == len(sizes)
    assert np.all(np.diff(b) >= 0)
    # a chunk holds at most the even share plus one item
    share = starts[-1] / n_chunks
    for c in range(n_chunks):
        assert starts[b[c + 1]] - starts[b[c]] <= share + max(sizes, default=0) + 1


def test_mask_tokens_matches_numpy():
    rng = np.random.default_rng(5)
    tokens = rng.integers(0, 50, size=10_001).astype(np.int32)
    is_slot = rng.random(50) < 0.3
    got = KP.mask_tokens(tokens, is_slot, np.int32(50))
    assert got.dtype == np.int32
    assert got.tolist() == np.where(is_slot[tokens], 50, tokens).tolist()


@pytest.mark.parametrize("bucket_bits", [1, 3, 12])
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 12), sigma=st.integers(1, 4),
       n=st.integers(1, 5), vocab=st.integers(2, 12))
def test_packed_ngram_runs_match_naive(bucket_bits, seed, n_docs, sigma, n, vocab):
    """The whole packed path, with few buckets (many keys a bucket) or many."""
    rng = np.random.default_rng(seed)
    tokens, offsets = block_corpus(rng, n_docs, vocab)
    docs, cov = _covered_by_frequent_ngrams(tokens, offsets, n, sigma)
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


def _naive_ngram_cover(tokens, offsets, sigma, n):
    docs = defaultdict(set)
    for d in range(offsets.size - 1):
        for p in range(offsets[d], offsets[d + 1] - n + 1):
            docs[tuple(tokens[p:p + n].tolist())].add(d)
    cov = np.zeros(tokens.size, dtype=bool)
    for d in range(offsets.size - 1):
        for p in range(offsets[d], offsets[d + 1] - n + 1):
            if len(docs[tuple(tokens[p:p + n].tolist())]) >= sigma:
                cov[p:p + n] = True
    return naive_runs(cov, offsets), sum(1 for v in docs.values() if len(v) >= sigma)


@pytest.mark.parametrize("n_words, nd", [(32768, 40), (65535, 40), (65536, 40), (40000, 4097)])
def test_packed_4grams_at_the_64_bit_boundary(n_words, nd):
    """4-grams of 16-bit codes are keys of exactly 64 bits (32,768 … 65,535
    frequent words); one more word and the n-grams do not pack (None).  With
    4,097 documents a bucket entry (mix below the bucket bits, then 13 bits of
    document) fills 64 bits exactly."""
    rng = np.random.default_rng(n_words)
    words = np.arange(n_words, dtype=np.int64)
    block = rng.integers(0, n_words, size=9)
    docs = []
    chunks = np.array_split(rng.permutation(words), nd)
    for i in range(nd):   # every word in exactly two documents: df = 2 = σ
        docs.append(np.concatenate([chunks[i], block[: int(rng.integers(3, 10))],
                                    chunks[(i + 1) % nd]]))
    tokens = np.concatenate(docs).astype(np.int32)
    offsets = np.zeros(nd + 1, dtype=np.int64)
    np.cumsum([d.size for d in docs], out=offsets[1:])
    got = P._packed_ngram_runs(tokens, offsets, 2, 4, n_words)
    if n_words > 65535:
        assert got is None
        return
    (run_offsets, starts, ends), kept = got
    want_runs, want_kept = _naive_ngram_cover(tokens, offsets, 2, 4)
    assert kept == want_kept
    assert [(d, int(starts[i]), int(ends[i])) for d in range(nd)
            for i in range(run_offsets[d], run_offsets[d + 1])] == want_runs
