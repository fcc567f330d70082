"""The streamed MinHash path (signed a chunk at a time, candidates verified on rebuilt
sets) against the one that holds every shingle set: the same values, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from repetend.corpus.store import TokenStore
from repetend.neardup import NearDupConfig, find_near_duplicates
from repetend.neardup import streamed as S
from repetend.neardup.lsh import set_fingerprints
from repetend.neardup.minhash import minhash_signatures
from repetend.neardup.pairs import verify_pairs
from repetend.neardup.shingles import shingle_sets


def random_stream(rng, n_docs=40, vocab=30, max_len=60):
    """Token ids, document offsets (with empty and short documents) and token hashes;
    some documents are copies or near-copies of earlier ones."""
    docs = []
    for d in range(n_docs):
        if d >= 5 and rng.random() < 0.4:
            base = docs[int(rng.integers(0, d))].copy()
            if base.size and rng.random() < 0.5:
                base[int(rng.integers(0, base.size))] = int(rng.integers(0, vocab))
            docs.append(base)
        else:
            docs.append(rng.integers(0, vocab, size=int(rng.integers(0, max_len))).astype(np.int32))
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum([d.size for d in docs], out=offsets[1:])
    tokens = np.concatenate(docs).astype(np.int32) if offsets[-1] else np.empty(0, np.int32)
    tok_hash = rng.integers(0, 2**63, size=vocab, dtype=np.uint64)
    return tokens, offsets, tok_hash


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("chunk", [1, 7, 100, 1 << 20])
def test_streamed_signatures_equal_those_of_all_sets(seed, chunk):
    rng = np.random.default_rng(seed)
    tokens, offsets, tok_hash = random_stream(rng)
    k = int(rng.integers(1, 6))
    scheme, bits = [("oph", 64), ("minhash", 16), ("oph", 8)][seed % 3]
    sets = shingle_sets(tokens, offsets, tok_hash, k)
    want = minhash_signatures(sets, 32, seed=seed, hash="splitmix64", bits=bits, scheme=scheme)
    got = S.streamed_signatures(tokens, offsets, tok_hash, k, 32, seed=seed, hash="splitmix64",
                                bits=bits, scheme=scheme, fingerprint_below=4, chunk_windows=chunk)
    assert got.signatures.values.dtype == want.values.dtype
    assert np.array_equal(got.signatures.values, want.values)
    assert np.array_equal(got.signatures.empty, want.empty)
    assert np.array_equal(got.sizes, sets.sizes)
    assert got.shingles == sets.hashes.shape[0]
    fp = set_fingerprints(sets)
    tiny = (sets.sizes >= 1) & (sets.sizes < 4)
    assert np.array_equal(got.fingerprints[tiny], fp[tiny])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("chunk", [1, 5, 1 << 20])
def test_sets_of_and_verify_streamed_equal_the_full_sets(seed, chunk):
    rng = np.random.default_rng(100 + seed)
    tokens, offsets, tok_hash = random_stream(rng)
    k = int(rng.integers(1, 6))
    sets = shingle_sets(tokens, offsets, tok_hash, k)
    n = offsets.shape[0] - 1
    docs = np.unique(rng.integers(0, n, size=15))
    sub = S.sets_of(tokens, offsets, tok_hash, k, docs, chunk_windows=chunk)
    for i, d in enumerate(docs):
        assert np.array_equal(sub.of(i), sets.of(int(d)))
    a = rng.integers(0, n, size=30)
    b = rng.integers(0, n, size=30)
    want = verify_pairs(sets, a, b)
    for batch in (1, 10, 60, 1 << 20):   # one pair per batch .. all in one
        got = S.verify_streamed(tokens, offsets, tok_hash, k, a, b, batch_windows=batch)
        for f in ("a", "b", "jaccard", "containment_ab", "containment_ba"):
            assert np.array_equal(getattr(got, f), getattr(want, f)), (batch, f)
    empty = S.verify_streamed(tokens, offsets, tok_hash, k, a[:0], b[:0])
    assert len(empty) == 0


def _texts(rng, n=60):
    words = [f"w{i}" for i in range(25)]
    base = [" ".join(rng.choice(words, size=int(rng.integers(0, 50)))) for _ in range(n // 2)]
    out = list(base)
    for t in base:
        w = t.split()
        if w and rng.random() < 0.7:
            w[int(rng.integers(0, len(w)))] = "zz"
        out.append(" ".join(w))
    return out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("cfg", [NearDupConfig(threshold=0.5, num_perm=32),
                                 NearDupConfig(threshold=0.8, bbits=8, min_shingles=3),
                                 NearDupConfig(threshold=0.3, scheme="minhash", num_perm=16,
                                               hash="crc32")])
def test_find_near_duplicates_from_a_store_equals_the_held_sets_path(seed, cfg, monkeypatch):
    """A store is streamed; ready ShingleSets of the same store take the held-sets path."""
    rng = np.random.default_rng(seed)
    store = TokenStore.from_texts(_texts(rng))
    monkeypatch.setattr(S, "CHUNK_WINDOWS", 40)   # many chunks
    monkeypatch.setattr(S, "VERIFY_WINDOWS", 50)  # many batches of verified pairs
    got = find_near_duplicates(store, cfg)
    from repetend.neardup.shingles import token_hashes

    sets = shingle_sets(store.tokens, store.doc_offsets, token_hashes(store.vocab), cfg.shingle)
    want = find_near_duplicates(sets, cfg)
    assert len(want.candidates) > 0
    for name in ("pairs", "candidates", "containment"):
        g, w = getattr(got, name), getattr(want, name)
        for f in ("a", "b", "jaccard", "containment_ab", "containment_ba"):
            assert np.array_equal(getattr(g, f), getattr(w, f)), (name, f)
    assert np.array_equal(got.clusters.cluster_id, want.clusters.cluster_id)
    assert np.array_equal(got.signatures.values, want.signatures.values)
    assert np.array_equal(got.candidate_estimate, want.candidate_estimate, equal_nan=True)
    for key in ("shingles", "candidates", "lsh", "verified_pairs", "clusters"):
        assert got.summary[key] == want.summary[key], key


def test_memory_mapped_store_gives_the_same_result(tmp_path, monkeypatch):
    """Read pages of the mapped tokens are dropped while streaming: no value changes."""
    rng = np.random.default_rng(7)
    mem = TokenStore.from_texts(_texts(rng, 80))
    mem.save(tmp_path / "s")
    opened = TokenStore.open(tmp_path / "s")
    monkeypatch.setattr(S, "CHUNK_WINDOWS", 64)
    cfg = NearDupConfig(threshold=0.5, num_perm=32)
    a, b = find_near_duplicates(mem, cfg), find_near_duplicates(opened, cfg)
    assert len(a.candidates) > 0
    for f in ("a", "b", "jaccard"):
        assert np.array_equal(getattr(a.candidates, f), getattr(b.candidates, f))
    assert np.array_equal(a.signatures.values, b.signatures.values)


def test_pair_batches_respect_the_budget_and_cover_every_pair():
    """Kernel vs a plain-Python twin of the greedy rule."""
    from repetend.neardup import _shingle_kernels as SK

    rng = np.random.default_rng(3)
    for _ in range(30):
        n = int(rng.integers(1, 20))
        m = int(rng.integers(0, 40))
        a = rng.integers(0, n, size=m)
        b = rng.integers(0, n, size=m)
        w = rng.integers(0, 9, size=n)
        budget = int(rng.integers(0, 30))
        got = SK.pair_batches(a, b, w, np.int64(budget), np.full(n, -1, np.int64))
        want, docs = [], set()
        for i in range(m):
            new = {int(a[i]), int(b[i])} - docs
            used = sum(w[d] for d in docs)
            if used > 0 and used + sum(w[d] for d in new) > budget:
                want.append(i)
                docs = set()
            docs |= {int(a[i]), int(b[i])}
        want.append(m)
        assert got.tolist() == want
