"""Exact duplicates: canonical form + checksum, confirmed by string comparison (seed 004)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from naive_neardup import naive_exact_groups
from repetend.errors import ParameterError
from repetend.neardup import exact
from repetend.neardup.exact import (canonical_form, checksums, exact_duplicate_groups,
                                    exact_duplicates)

WS = [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u2028", "\u3000", "\x0b", "\x0c"]
WORDS = ["Доставка", "бесплатно", "FREE", "shipping", "1.", "x", "!", "Ok,", "ok", "ÉTÉ"]


def _variant(rng, words):
    """The same words with random whitespace around them and random case."""
    parts = [WS[rng.integers(len(WS))] if rng.random() < 0.5 else ""]
    for i, w in enumerate(words):
        w = w.upper() if rng.random() < 0.3 else w
        parts.append(w)
        if i + 1 < len(words):
            parts.append("".join(WS[j] for j in rng.integers(0, len(WS), rng.integers(1, 3))))
    parts.append(WS[rng.integers(len(WS))] if rng.random() < 0.5 else "")
    return "".join(parts)


def _corpus(rng, n):
    bases = [list(rng.choice(WORDS, rng.integers(0, 5))) for _ in range(max(1, n // 3))]
    return [_variant(rng, bases[rng.integers(len(bases))]) for _ in range(n)]


def test_canonical_form_rules():
    assert canonical_form("  Hello,\r\n  World!\t") == "hello, world!"
    assert canonical_form("a\nb") == "a b"                      # a line break separates words
    assert canonical_form("A\u00a0\u2028B\u3000c") == "a b c"   # Unicode spaces and separators
    assert canonical_form("Цена: 3000 руб.") == "цена: 3000 руб."  # punctuation and digits kept
    assert canonical_form("a-b") != canonical_form("a b")
    assert canonical_form(" \n\t ") == ""
    assert canonical_form("a\u200bb") == "a\u200bb"             # zero-width space is not whitespace


@pytest.mark.parametrize("hash", ["xxh64", "crc32", "blake2b"])
@pytest.mark.parametrize("seed", range(8))
def test_groups_match_naive(hash, seed):
    rng = np.random.default_rng(seed)
    texts = _corpus(rng, int(rng.integers(1, 40)))
    got = exact_duplicate_groups(texts, hash=hash)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, naive_exact_groups(texts, canonical_form))


def test_store_source_and_stats(tmp_path):
    from repetend.corpus.store import TokenStore

    texts = ["A  b", "a b\n", "c", "", " ", "a b c", "C"]
    store = TokenStore.from_texts(texts)
    res = exact_duplicates(store)
    np.testing.assert_array_equal(res.labels, [0, 0, 2, 3, 3, 5, 2])
    assert res.n_groups == 3 and res.n_duplicates == 3
    assert res.n_collisions == 0
    res.to_parquet(tmp_path / "exact.parquet")
    import pyarrow.parquet as pq

    back = pq.read_table(tmp_path / "exact.parquet")
    assert back.column("group").to_pylist() == res.labels.tolist()


def test_crc32_is_the_seeds_checksum():
    texts = ["Hello  World", "x\ny"]
    sums, name = checksums(texts, "crc32")
    assert name == "crc32"
    assert [int(s) for s in sums] == [zlib.crc32(b"hello world"), zlib.crc32(b"x y")]


def test_collisions_are_confirmed_by_text(monkeypatch):
    """A checksum that collides all the time must not merge different texts."""
    monkeypatch.setattr(exact, "_hasher", lambda h: ("bad", lambda b: len(b) % 3))
    rng = np.random.default_rng(42)
    texts = _corpus(rng, 60)
    res = exact_duplicates(texts)
    np.testing.assert_array_equal(res.labels, naive_exact_groups(texts, canonical_form))
    assert res.n_collisions > 0


def test_bad_parameters():
    with pytest.raises(ParameterError):
        exact_duplicate_groups(["a"], hash="md5")
    with pytest.raises(ParameterError):
        exact_duplicate_groups("just one string")
    assert exact_duplicate_groups([]).shape == (0,)
