"""shingle_sets against a plain-Python oracle on many random corpora (the sets are
compacted in place in one buffer: every document's set must still be its own)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from repetend._hashing import splitmix64
from repetend.neardup.shingles import shingle_sets

MASK = (1 << 64) - 1


def _mix(x: int) -> int:
    with np.errstate(over="ignore"):   # uint64 wrap-around is the hash
        return int(splitmix64(np.uint64(x)))


def naive_sets(docs: list[list[int]], tok_hash: list[int], k: int) -> list[list[int]]:
    out = []
    for d in docs:
        n = len(d)
        windows = [d[i:i + k] for i in range(n - k + 1)] if n >= k else ([d] if n else [])
        hs = set()
        for w in windows:
            h = len(w)
            for t in w:
                h = _mix((h ^ tok_hash[t]) & MASK)
            hs.add(h)
        out.append(sorted(hs))
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.integers(0, 6), max_size=30), min_size=1, max_size=12),
       st.integers(1, 6), st.integers(0, 2**32))
def test_shingle_sets_equal_the_python_oracle(docs, k, seed):
    rng = np.random.default_rng(seed)
    tok_hash = rng.integers(0, 2**63, size=7, dtype=np.int64).astype(np.uint64)
    tokens = np.array([t for d in docs for t in d], dtype=np.int32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    got = shingle_sets(tokens, offsets, tok_hash, k)
    want = naive_sets(docs, [int(x) for x in tok_hash], k)
    assert got.hashes.shape[0] == sum(len(w) for w in want)
    assert [got.of(i).tolist() for i in range(len(docs))] == want


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(0, 6), max_size=30), min_size=1, max_size=12),
       st.integers(1, 6), st.integers(1, 40), st.integers(0, 2**32))
def test_shingle_sets_filled_in_small_chunks_equal_the_oracle(docs, k, chunk, seed):
    """Chunks of a few windows (documents larger than a chunk, empty documents between
    chunks): the same sets and offsets as the one-pass oracle."""
    import repetend.neardup.shingles as S

    rng = np.random.default_rng(seed)
    tok_hash = rng.integers(0, 2**63, size=7, dtype=np.int64).astype(np.uint64)
    tokens = np.array([t for d in docs for t in d], dtype=np.int32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    old = S._CHUNK_WINDOWS
    S._CHUNK_WINDOWS = chunk
    try:
        got = shingle_sets(tokens, offsets, tok_hash, k)
    finally:
        S._CHUNK_WINDOWS = old
    want = naive_sets(docs, [int(x) for x in tok_hash], k)
    assert got.hashes.shape[0] == sum(len(w) for w in want)
    assert got.offsets.tolist() == np.cumsum([0] + [len(w) for w in want]).tolist()
    assert [got.of(i).tolist() for i in range(len(docs))] == want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=8), max_size=40), st.integers(0, 5))
def test_token_hashes_of_an_arrow_column_equal_those_of_the_strings(vocab, cut):
    """The UTF-8 buffer of a (sliced, string or large_string) Arrow column hashes
    exactly like the Python strings encoded one by one."""
    import pyarrow as pa

    from repetend.neardup.shingles import token_hashes

    vocab = [s for s in vocab if not any(0xD800 <= ord(c) <= 0xDFFF for c in s)]
    want = token_hashes(vocab)
    for typ in (pa.string(), pa.large_string()):
        arr = pa.array(vocab, type=typ)
        assert token_hashes(arr).tolist() == want.tolist()
        assert token_hashes(pa.chunked_array([arr], type=typ)).tolist() == want.tolist()
        sl = arr.slice(min(cut, len(vocab)))
        assert token_hashes(sl).tolist() == want[min(cut, len(vocab)):].tolist()
