"""The token store against plain-Python twins: ids, offsets, df, round trips."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from repetend import TokenStore, build_store, tokenize
from repetend.corpus.record import Record
from repetend.errors import InputError

WORDS = ["alpha", "Beta", "гамма", "δέλτα", "東", "x1", "naïve", "ÉCOLE"]


def _naive(texts):
    toks = [tokenize(t) for t in texts]
    return toks, {w: sum(w in set(d) for d in toks) for d in toks for w in d}


def _check(store, texts):
    toks, df = _naive(texts)
    assert store.n_docs == len(texts)
    assert store.n_tokens == sum(map(len, toks))
    for d, want in enumerate(toks):
        assert store.token_strings(store.doc_tokens(d)) == want
        assert store.text(d) == texts[d]
    assert {store.vocab[i]: int(store.df[i]) for i in range(len(store.vocab))} == df
    assert len(set(store.vocab)) == len(store.vocab)


texts_st = st.lists(
    st.lists(st.sampled_from(WORDS + [" ", ", ", ".\n", "—"]), max_size=12).map("".join),
    max_size=12)


@settings(max_examples=60, deadline=None)
@given(texts_st, st.integers(1, 40))
def test_store_matches_naive_tokenization_any_batching(texts, batch_chars):
    store = build_store((Record(str(i), t) for i, t in enumerate(texts)), batch_chars=batch_chars)
    _check(store, texts)


def test_store_on_disk_round_trip_and_memory_map(tmp_path):
    texts = ["Hello, World! hello", "", "Все права защищены.", "東京タワー 2024"]
    urls = ["http://A.com/x", None, "https://b.ru/", "ftp.example.org/y"]
    recs = (Record(f"d{i}", t, urls[i], "mem", i) for i, t in enumerate(texts))
    store = build_store(recs, out=tmp_path / "s", batch_chars=5)
    assert isinstance(store.tokens, np.memmap)
    _check(store, texts)
    again = TokenStore.open(tmp_path / "s")
    _check(again, texts)
    assert again.docs.column("host").to_pylist() == ["a.com", None, "b.ru", "ftp.example.org"]
    assert again.summary["documents"] == 4 and again.summary["empty_documents"] == 1
    assert not list(tmp_path.glob(".s.*")), "no temporary directory left behind"


def test_in_memory_save_then_open(tmp_path):
    store = TokenStore.from_texts(["a b c", "c d"], ids=["x", "y"])
    store.save(tmp_path / "st")
    again = TokenStore.open(tmp_path / "st")
    assert again.doc_ids == ["x", "y"]
    assert np.array_equal(again.tokens, store.tokens)


def test_open_rejects_other_versions_and_non_stores(tmp_path):
    with pytest.raises(InputError, match="not a repetend token store"):
        TokenStore.open(tmp_path)
    store = TokenStore.from_texts(["a"])
    store.save(tmp_path / "st")
    meta = json.loads((tmp_path / "st" / "meta.json").read_text())
    meta["format_version"] = 999
    (tmp_path / "st" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match="format 999"):
        TokenStore.open(tmp_path / "st")


def test_failed_build_leaves_no_output(tmp_path):
    def records():
        yield Record("a", "one two")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        build_store(records(), out=tmp_path / "s", batch_chars=1)
    assert not (tmp_path / "s").exists()
    assert not list(tmp_path.iterdir())


def test_surface_keeps_case_and_punctuation():
    store = TokenStore.from_texts(["Доставка: БЕСПЛАТНО, при заказе от 3000 ₽!"])
    assert store.surface(0, 0, 3) == "Доставка: БЕСПЛАТНО, при"
    assert store.surface(0, 4, 6) == "от 3000"
