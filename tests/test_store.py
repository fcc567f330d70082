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


# -- the compiled hash map (ids) against a Python dict twin ------------------------------

from repetend.corpus import _store_kernels as SK  # noqa: E402
from repetend.corpus.store import _encode_texts, _Vocabulary  # noqa: E402


class _FakeBatch:
    """What ``_Vocabulary.ids_for`` needs of a TokenizedBatch: hashes and strings."""

    def __init__(self, hashes):
        self.hashes = np.asarray(hashes, dtype=np.uint64)
        self.asked = []

    def strings(self, idx):
        idx = np.asarray(idx).tolist()
        self.asked.extend(idx)
        return [f"h{int(self.hashes[i])}" for i in idx]


# small pools make repeats likely; the top bits vary too (the slot uses them)
hash_st = st.one_of(st.integers(0, 40), st.integers(0, 2**64 - 1),
                    st.integers(0, 7).map(lambda k: k << 61))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(hash_st, max_size=300), max_size=6), st.integers(1, 4))
def test_hash_map_matches_dict_twin(batches, bits):
    voc = _Vocabulary()
    voc.bits = bits  # a tiny table, so that growing by doubling is exercised
    voc.keys = np.zeros(1 << bits, dtype=np.uint64)
    voc.vals = np.full(1 << bits, -1, dtype=np.int32)
    twin: dict[int, int] = {}
    for hs in batches:
        fb = _FakeBatch(hs)
        before = set(twin)
        ids = voc.ids_for(fb)
        want = [twin.setdefault(h, len(twin)) for h in hs]
        assert ids.dtype == np.int32 and ids.tolist() == want
        # strings were fetched for the first occurrence of each new hash only
        assert fb.asked == [p for p, h in enumerate(hs) if h not in before and hs.index(h) == p]
    assert voc.strings == [f"h{h}" for h in twin]
    assert 2 * len(twin) <= (1 << voc.bits)  # load factor kept at most 1/2
    probe = list(twin) + [h ^ 1 for h in twin if (h ^ 1) not in twin][:20]
    got = voc.lookup(np.array(probe, dtype=np.uint64)).tolist()
    assert got == [twin.get(h, -1) for h in probe]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab é東\U0001F600\ud800\udfff"), max_size=8),
                max_size=8))
def test_encode_texts_byte_lengths(texts):
    blob, lens = _encode_texts(texts)
    enc = [t.encode("utf-8", "surrogatepass") for t in texts]
    assert blob == b"".join(enc)
    assert lens.tolist() == [len(e) for e in enc]


def test_store_text_with_lone_surrogates_round_trips():
    texts = ["a\udcff b", "x\U0001F600y", "\ud83d\ude00", ""]
    store = TokenStore.from_texts(texts)
    assert [store.text(d) for d in range(4)] == texts


def test_utf8_offsets_kernel_counts_code_points():
    text = ["Ж", "ab", "", "東\U0001F600"]
    buf = np.frombuffer("".join(text).encode(), dtype=np.uint8)
    off = SK.utf8_offsets(buf, np.array([len(t) for t in text], dtype=np.int64))
    assert off.tolist() == [0, 2, 4, 4, 11]


@settings(max_examples=25, deadline=None)
@given(texts_st, st.integers(1, 40))
def test_vocab_counts_on_disk_match_bincount(tmp_path_factory, texts, batch_chars):
    out = tmp_path_factory.mktemp("s") / "store"
    store = build_store((Record(str(i), t) for i, t in enumerate(texts)), out=out,
                        batch_chars=batch_chars)
    _check(store, texts)
    import pyarrow.parquet as pq

    counts = pq.read_table(out / "vocab.parquet").column("count").to_numpy()
    assert counts.tolist() == np.bincount(np.asarray(store.tokens),
                                          minlength=len(store.vocab)).tolist()


def test_open_recovers_a_replacement_killed_between_its_renames(tmp_path):
    import os

    store = TokenStore.from_texts(["a b", "c"])
    store.save(tmp_path / "st")
    os.replace(tmp_path / "st", tmp_path / ".st.old")  # the state a kill leaves
    again = TokenStore.open(tmp_path / "st")
    assert again.n_docs == 2 and not (tmp_path / ".st.old").exists()
