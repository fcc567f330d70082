"""Out-of-core phrase mining and near-duplicates equal the in-memory results."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from repetend import TokenStore
from repetend._memory import MemoryBudget, format_size, parse_size, rss_now
from repetend.errors import ParameterError
from repetend.neardup import outofcore as NO
from repetend.neardup import NearDupConfig, find_near_duplicates
from repetend.neardup.outofcore import near_duplicates_store
from repetend.phrases import outofcore as PO
from repetend.phrases.bloomspan import mine_bloomspan
from repetend.phrases.outofcore import mine_bloomspan_ooc, mine_bloomspan_store, plan_shards

FIELDS = ("lengths", "df", "occ_offsets", "occ_starts")


def corpus(docs):
    lens = [len(d) for d in docs]
    tokens = np.array([t for d in docs for t in d], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    return tokens, offsets


def assert_same(a, b):
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)


def leftovers(d):
    return sorted(os.listdir(d))


# -- memory helper ---------------------------------------------------------------

def test_parse_size():
    assert parse_size("8G") == 8 << 30
    assert parse_size("512M") == 512 << 20
    assert parse_size("1.5GiB") == 3 << 29
    assert parse_size(" 100 kb ") == 100 << 10
    assert parse_size(12345) == 12345
    assert parse_size(None) is None
    for bad in ("", "8X", "-1G", "G", 0, -5, True):
        with pytest.raises(ParameterError):
            parse_size(bad)
    assert format_size(1536) == "1.5K"


def test_budget_sees_an_allocation():
    with MemoryBudget("64G") as b:
        x = np.ones(64 << 20, dtype=np.uint8)  # 64 MB, touched
        b.sample()
        del x
    rep = b.report()
    assert rep["peak_anon"] - rep["base_anon"] >= 60 << 20
    assert rep["within_limit"] is True
    assert rss_now()["hwm"] >= rep["peak_anon"]


# -- phrases ----------------------------------------------------------------------

def test_plan_shards_oracle():
    rng = np.random.default_rng(3)
    for _ in range(50):
        lens = rng.integers(0, 30, rng.integers(1, 40))
        off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        cap = int(rng.integers(1, 60))
        cuts = plan_shards(off, cap)
        assert cuts[0] == 0 and cuts[-1] == lens.size
        assert np.all(np.diff(cuts) >= 1)
        for i in range(cuts.size - 1):
            size = off[cuts[i + 1]] - off[cuts[i]]
            assert size <= cap or cuts[i + 1] - cuts[i] == 1
            if cuts[i + 1] < lens.size:  # greedy: the next document would not fit
                assert off[cuts[i + 1] + 1] - off[cuts[i]] > cap


@st.composite
def problems(draw):
    alpha = draw(st.integers(2, 5))
    docs = draw(st.lists(st.lists(st.integers(0, alpha - 1), min_size=0, max_size=30),
                         min_size=1, max_size=12))
    sigma = draw(st.integers(1, 5))
    L = draw(st.integers(1, 5))
    n = draw(st.integers(1, L))
    shard = draw(st.integers(1, 60))
    parts = draw(st.sampled_from([1, 2, 4, 16]))
    threads = draw(st.sampled_from([1, 2]))
    return docs, sigma, L, n, shard, parts, threads


@settings(max_examples=80, deadline=None)
@given(problems())
def test_bloomspan_ooc_equals_in_memory(tmp_path_factory, prob):
    docs, sigma, L, n, shard, parts, threads = prob
    tokens, offsets = corpus(docs)
    work = tmp_path_factory.mktemp("spill")
    want = mine_bloomspan(tokens, offsets, sigma, L, seed_len=n, filter_bytes=64)
    got = mine_bloomspan_ooc(tokens, offsets, sigma, L, seed_len=n, filter_bytes=64,
                             memory_limit="64G", shard_tokens=shard, n_parts=parts,
                             threads=threads, workdir=work)
    assert_same(want, got)
    assert got.stats.get("phrases", 0) == want.stats.get("phrases", 0)
    assert got.stats.get("covered_tokens", 0) == want.stats.get("covered_tokens", 0)
    assert leftovers(work) == []


def _web_like(n_docs, rng, vocab=3000):
    """Zipfian documents with a few planted boilerplate lines."""
    templates = [rng.integers(0, vocab, rng.integers(6, 20)) for _ in range(12)]
    docs = []
    for _ in range(n_docs):
        body = list((rng.zipf(1.3, rng.integers(20, 300)) - 1) % vocab)
        for t in rng.choice(len(templates), rng.integers(0, 3), replace=False):
            at = int(rng.integers(0, len(body) + 1))
            body[at:at] = list(templates[t])
        docs.append(body)
    return corpus(docs)


def test_bloomspan_ooc_plans_shards_and_stays_under_budget(tmp_path):
    rng = np.random.default_rng(7)
    tokens, offsets = _web_like(2000, rng)
    path = tmp_path / "tokens.npy"
    np.save(path, tokens)
    mm = np.load(path, mmap_mode="r")
    want = mine_bloomspan(tokens, offsets, 5, 4)
    mine_bloomspan_ooc(mm, offsets, 5, 4, memory_limit="64G")  # warm the kernels
    limit = rss_now()["anon"] + (6 << 20)
    got = mine_bloomspan_ooc(mm, offsets, 5, 4, memory_limit=limit, workdir=tmp_path / "w")
    assert got.stats["shards"] > 1 and got.stats["partitions"] > 1
    assert_same(want, got)
    assert want.n_phrases > 10
    assert got.stats["peak_anon"] <= limit
    assert leftovers(tmp_path / "w") == []


def test_bloomspan_store_and_errors(tmp_path):
    texts = ["a b c d e f", "x a b c d y", "a b c d z", "q r s"]
    st_ = TokenStore.from_texts(texts)
    st_.save(tmp_path / "s")
    got = mine_bloomspan_store(tmp_path / "s", 2, 3, memory_limit="64G", shard_tokens=5,
                               n_parts=4, workdir=tmp_path / "w")
    want = mine_bloomspan(st_.tokens, st_.doc_offsets, 2, 3)
    assert_same(want, got)
    assert got.n_phrases == 1
    with pytest.raises(ParameterError):
        mine_bloomspan_ooc(st_.tokens, st_.doc_offsets, 2, 3, memory_limit=None)
    with pytest.raises(ParameterError, match="too small"):
        mine_bloomspan_ooc(st_.tokens, st_.doc_offsets, 2, 3, memory_limit="1M")
    with pytest.raises(ParameterError):
        mine_bloomspan_ooc(st_.tokens, st_.doc_offsets, 2, 3, seed_len=4, memory_limit="64G")


def test_bloomspan_interrupted_run_leaves_nothing_and_restarts(tmp_path, monkeypatch):
    rng = np.random.default_rng(11)
    tokens, offsets = _web_like(200, rng)
    real = PO._seed_partition
    calls = {"n": 0}

    def flaky(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(PO, "_seed_partition", flaky)
    with pytest.raises(KeyboardInterrupt):
        mine_bloomspan_ooc(tokens, offsets, 3, 4, memory_limit="64G", shard_tokens=3000,
                           n_parts=8, threads=1, workdir=tmp_path)
    assert leftovers(tmp_path) == []
    monkeypatch.setattr(PO, "_seed_partition", real)
    got = mine_bloomspan_ooc(tokens, offsets, 3, 4, memory_limit="64G", shard_tokens=3000,
                             n_parts=8, workdir=tmp_path)
    assert_same(mine_bloomspan(tokens, offsets, 3, 4), got)


# -- near-duplicates ----------------------------------------------------------------

def _dups_corpus(rng, n_docs, n_base, vocab=40):
    words = [f"w{i}" for i in range(vocab)]
    base = [list(rng.choice(words, rng.integers(0, 30))) for _ in range(n_base)]
    texts = []
    for _ in range(n_docs):
        b = list(base[rng.integers(0, n_base)])
        if b and rng.random() < 0.7:
            b[rng.integers(0, len(b))] = str(rng.choice(words))
        if rng.random() < 0.3:
            b.append(str(rng.choice(words)))
        texts.append(" ".join(b))
    return TokenStore.from_texts(texts)


def assert_same_pairs(want, got):
    np.testing.assert_array_equal(want.a, got.a)
    np.testing.assert_array_equal(want.b, got.b)
    np.testing.assert_allclose(want.jaccard, got.jaccard)
    np.testing.assert_allclose(want.containment_ab, got.containment_ab)
    np.testing.assert_allclose(want.containment_ba, got.containment_ba)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), thr=st.sampled_from([0.5, 0.7, 0.9, 1.0]),
       k=st.integers(1, 4), mb=st.sampled_from([None, 3, 200]),
       scheme=st.sampled_from(["minhash", "oph"]), shard=st.integers(1, 50),
       parts=st.sampled_from([1, 4, 32]), batch=st.sampled_from([None, 1, 7, 400]))
def test_neardup_ooc_equals_in_memory(tmp_path_factory, seed, thr, k, mb, scheme, shard, parts,
                                      batch):
    rng = np.random.default_rng(seed)
    store = _dups_corpus(rng, int(rng.integers(2, 150)), int(rng.integers(1, 30)))
    cfg = NearDupConfig(threshold=thr, shingle=k, max_bucket=mb, scheme=scheme, num_perm=64)
    want = find_near_duplicates(store, cfg)
    work = tmp_path_factory.mktemp("nd")
    got = near_duplicates_store(store, cfg, memory_limit="64G", shard_docs=shard,
                                n_parts=parts, workdir=work, pair_batch=batch)
    assert_same_pairs(want.pairs, got.pairs)
    assert got.candidates == len(want.candidates)
    assert got.stats["capped_buckets"] == want.summary["lsh"]["capped_buckets"]
    assert got.stats["near_empty_documents"] == want.summary["lsh"]["near_empty_documents"]
    assert leftovers(work) == []


def test_neardup_ooc_plans_under_budget_and_writes_atomically(tmp_path):
    rng = np.random.default_rng(5)
    store = _dups_corpus(rng, 8000, 800, vocab=400)
    store.save(tmp_path / "s")
    cfg = NearDupConfig(threshold=0.7, shingle=3)
    want = find_near_duplicates(store, cfg)
    near_duplicates_store(tmp_path / "s", cfg, memory_limit="64G")  # warm the kernels
    # a few MB over what the process holds: room for several shards, not for the corpus
    limit = rss_now()["anon"] + (10 << 20)
    got = near_duplicates_store(tmp_path / "s", cfg, memory_limit=limit, workdir=tmp_path / "w")
    assert got.stats["shards"] > 1
    assert len(got) > 100
    assert_same_pairs(want.pairs, got.pairs)
    assert got.stats["peak_anon"] <= limit
    assert leftovers(tmp_path / "w") == []
    out = got.to_parquet(tmp_path / "pairs.parquet")
    df = got.to_pandas()
    assert len(df) == len(got)
    import pyarrow.parquet as pq
    assert pq.read_table(out).num_rows == len(got)


def test_neardup_interrupted_run_leaves_nothing(tmp_path, monkeypatch):
    rng = np.random.default_rng(9)
    store = _dups_corpus(rng, 200, 20)
    cfg = NearDupConfig(threshold=0.7, shingle=2)

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(NO, "verify_pairs", boom)
    with pytest.raises(KeyboardInterrupt):
        near_duplicates_store(store, cfg, memory_limit="64G", shard_docs=30, n_parts=4,
                              workdir=tmp_path)
    assert leftovers(tmp_path) == []
    monkeypatch.undo()
    real, made = NO.tempfile.mkdtemp, []

    def second_fails(*a, **k):     # interrupted between the spill and the result dir
        made.append(1)
        if len(made) == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(NO.tempfile, "mkdtemp", second_fails)
    with pytest.raises(KeyboardInterrupt):
        near_duplicates_store(store, cfg, memory_limit="64G", workdir=tmp_path)
    monkeypatch.undo()
    assert leftovers(tmp_path) == []
    with pytest.raises(ParameterError):
        near_duplicates_store(store, NearDupConfig(method="simhash"), memory_limit="64G")
    with pytest.raises(ParameterError, match="too small"):
        near_duplicates_store(store, cfg, memory_limit="1M")


def test_store_token_hashes_equal_token_hashes(tmp_path):
    from repetend.neardup.outofcore import store_token_hashes
    from repetend.neardup.shingles import token_hashes
    st_ = TokenStore.from_texts(["привет мир", "hello wörld 123", "ü ñ 日本"])
    st_.save(tmp_path / "s")
    np.testing.assert_array_equal(store_token_hashes(tmp_path / "s"), token_hashes(st_.vocab))


def test_neardup_ooc_batches_dense_pairs(tmp_path, monkeypatch):
    """Candidate pairs are emitted, sorted and verified a batch at a time: 300 copies
    of one short document are 44,850 pairs from one bucket per band; with a batch
    of 1,000 no verification call sees more, and the pair files are split by range
    of the first document (the stream stays sorted)."""
    calls = []
    real = NO.verify_pairs

    def spy(sets, a, b):
        calls.append(int(a.shape[0]))
        return real(sets, a, b)

    monkeypatch.setattr(NO, "verify_pairs", spy)
    docs = [[1, 2, 3, 4, 5, 6, 7, 8]] * 300 + [[9, 10, 11, 12, 13]] * 3
    tokens, offsets = corpus(docs)
    from repetend.neardup.shingles import token_hashes
    tok_hash = token_hashes([f"w{i}" for i in range(14)])
    got = NO.near_duplicates_ooc(tokens, offsets, tok_hash, memory_limit="64G", shingle=2,
                                 max_bucket=None, workdir=tmp_path, pair_batch=1000, n_parts=2)
    assert len(got) == 300 * 299 // 2 + 3
    assert sum(calls) == got.candidates == len(got)
    assert max(calls) <= 1000
    key = np.asarray(got.pairs.a) * 303 + np.asarray(got.pairs.b)
    assert np.all(np.diff(key) > 0)          # globally sorted, distinct
    assert np.all(np.asarray(got.pairs.jaccard) == 1.0)
    assert leftovers(tmp_path) == []


def test_split_pair_file_keeps_every_key_in_range_order(tmp_path):
    rng = np.random.default_rng(3)
    nn, q_div, j = np.int64(1000), 100, 2
    a = rng.integers(j * q_div, (j + 1) * q_div, 5000)
    keys = a * nn + rng.integers(0, 1000, 5000)
    keys.tofile(tmp_path / f"p{j}.key")
    paths = NO._split_pair_file(tmp_path, j, keys.size, nn, q_div, 700)
    assert len(paths) > 1 and not (tmp_path / f"p{j}.key").exists()
    parts = [np.fromfile(p, dtype=np.int64) for p in paths]
    assert sorted(np.concatenate(parts).tolist()) == sorted(keys.tolist())
    for x, y in zip(parts, parts[1:]):    # ranges of keys (a, b) in file order
        assert x.max() < y.min()


def test_bucket_rows_emits_every_pair_of_a_bucket_in_bounded_batches():
    import itertools
    rng = np.random.default_rng(4)
    for _ in range(200):
        m = int(rng.integers(2, 40))
        cap = int(rng.integers(1, 100))
        mem = rng.choice(1000, m, replace=False)
        out = list(NO._bucket_rows(mem, cap))
        a = np.concatenate([x for x, _ in out])
        b = np.concatenate([y for _, y in out])
        assert np.all(a < b)
        want = sorted((min(x, y), max(x, y)) for x, y in itertools.combinations(mem.tolist(), 2))
        assert sorted(zip(a.tolist(), b.tolist())) == want
        assert all(x.size <= max(cap, m - 1) for x, _ in out)   # a row alone when longer


def test_split_pair_file_cuts_at_the_counts_not_equal_widths(tmp_path):
    """The pairs of a group of copies crowd into the first documents of a file's
    range: equal-width sub-ranges left one file 3.5x over the batch (3,000 copies),
    and one document can hold more than a batch (100,000 copies, capped: 13 MB
    loaded at once against an 8 MB budget)."""
    rng = np.random.default_rng(8)
    nn, q_div, j, max_keys = np.int64(5000), 5000, 0, 900
    a = np.concatenate([np.repeat(np.arange(60), np.arange(60, 0, -1) * 17),
                        rng.integers(60, q_div, 300)])
    rng.shuffle(a)
    keys = a * nn + rng.integers(0, 5000, a.size)
    # and the centre of a capped bucket's star: document 0 paired with 2,000 others
    # in each of 17 bands, more than the batch in one first document
    keys = np.concatenate([keys, np.repeat(np.arange(1, 2001), 17)])
    rng.shuffle(keys)
    keys.tofile(tmp_path / f"p{j}.key")
    paths = NO._split_pair_file(tmp_path, j, keys.size, nn, q_div, max_keys)
    parts = [np.fromfile(p, dtype=np.int64) for p in paths]
    assert sorted(np.concatenate(parts).tolist()) == sorted(keys.tolist())
    for x in parts:
        assert x.size <= max_keys or np.unique(x).size == 1
    for x, y in zip(parts, parts[1:]):
        assert x.max() < y.min()


def test_neardup_ooc_pair_dense_bucket_stays_under_budget(tmp_path):
    """2,000 copies of a short document, no bucket cap: one bucket per band of 2 M
    pairs, emitted a few rows at a time (it was emitted whole: 190 MB over an 8 MB
    budget) and its pair files split at the counts of pairs per first document."""
    from repetend.neardup.shingles import token_hashes
    rng = np.random.default_rng(2)
    docs = [list(range(8))] * 2000 + [list(rng.integers(0, 3000, 40)) for _ in range(1000)]
    tokens, offsets = corpus(docs)
    tok_hash = token_hashes([f"w{i}" for i in range(3000)])
    import tracemalloc
    kw = dict(shingle=3, max_bucket=None, num_perm=32, bands=8, rows=4)
    NO.near_duplicates_ooc(tokens[:offsets[40]], offsets[:41], tok_hash, memory_limit="64G",
                           workdir=tmp_path, **kw)   # warm the kernels
    limit = rss_now()["anon"] + (8 << 20)
    got = NO.near_duplicates_ooc(tokens, offsets, tok_hash, memory_limit=limit,
                                 workdir=tmp_path, **kw)
    assert len(got) == got.candidates == 2000 * 1999 // 2
    assert got.stats["largest_bucket"] == 2000
    assert got.stats["peak_anon"] <= limit
    del got
    # numpy's allocations, exact where the 20 ms RSS sampler may miss a peak (a run
    # of its own: tracemalloc's tables are private memory too)
    tracemalloc.start()
    try:
        NO.near_duplicates_ooc(tokens, offsets, tok_hash, memory_limit=limit,
                               workdir=tmp_path, **kw)
        traced = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert traced <= 8 << 20
    assert leftovers(tmp_path) == []


def test_neardup_ooc_near_empty_documents_stay_under_budget(tmp_path):
    """Near-empty documents (fewer shingles than min_shingles) are grouped by set
    fingerprint through the partition files, not all at once in memory: 300,000 of
    them took some 70 bytes each beyond the fixed 40 per document.  Measured with
    tracemalloc (numpy's allocations), exact where the 20 ms RSS sampler misses a
    short peak."""
    import tracemalloc

    from repetend.neardup.shingles import token_hashes
    n, length, vocab = 300_000, 6, 50_000
    rng = np.random.default_rng(6)
    tokens = rng.integers(0, vocab, n * length).astype(np.int32)
    tokens[length:2 * length] = tokens[:length]          # one pair of near-empty copies
    offsets = np.arange(0, n * length + 1, length, dtype=np.int64)
    tok_hash = token_hashes([f"w{i}" for i in range(vocab)])
    # bands given: the banding chooser's grid (a fixed ~25 MB) is not part of the run
    kw = dict(shingle=5, num_perm=32, bands=8, rows=4, workdir=tmp_path)
    NO.near_duplicates_ooc(tokens[:60], offsets[:11], tok_hash, memory_limit="64G", **kw)
    base = rss_now()["anon"]
    work = 40 * (n + 1) + 8 * vocab + (6 << 20)
    tracemalloc.start()
    try:
        got = NO.near_duplicates_ooc(tokens, offsets, tok_hash, memory_limit=base + work, **kw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got.stats["near_empty_documents"] == n
    assert len(got) == 1 and (got.pairs.a[0], got.pairs.b[0]) == (0, 1)
    assert peak <= work
    assert leftovers(tmp_path) == []


def test_bucket_star_chain_equals_the_kernel_in_bounded_slices():
    """A capped bucket dearer than the batch emits the kernel's star + chain a slice
    at a time (100,000 copies, cap 200: 200,000 pairs per band at once before)."""
    from repetend.neardup import _lsh_kernels as LK
    rng = np.random.default_rng(10)
    for _ in range(200):
        m = int(rng.integers(3, 60))
        cap = int(rng.integers(1, 50))
        mem = np.sort(rng.choice(500, m, replace=False)).astype(np.int64)
        sizes = rng.integers(0, 5, 500).astype(np.int64)
        a = np.empty(2 * m - 3, np.int64)
        b = np.empty(2 * m - 3, np.int64)
        LK.bucket_pairs(mem, np.array([0, m]), sizes, np.int64(3), np.array([0, 2 * m - 3]), a, b)
        out = list(NO._bucket_star_chain(mem, sizes, cap))
        got = zip(np.concatenate([x for x, _ in out]).tolist(),
                  np.concatenate([y for _, y in out]).tolist())
        assert sorted(got) == sorted(zip(a.tolist(), b.tolist()))
        assert all(x.size <= cap for x, _ in out)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=12))
def test_strictly_sorted_equals_the_definition(pairs):
    from repetend.neardup.pairs import _strictly_sorted
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    assert _strictly_sorted(a, b) == all(pairs[i] < pairs[i + 1] for i in range(len(pairs) - 1))


def test_strictly_sorted_checks_across_its_blocks():
    from repetend.neardup.pairs import _strictly_sorted
    n = (1 << 20) + 5
    a, b = np.arange(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    assert _strictly_sorted(a, b)
    a[1 << 20] = a[(1 << 20) - 1]          # a repeat straddling the block boundary
    assert not _strictly_sorted(a, b)
