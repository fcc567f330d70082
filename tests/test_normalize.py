"""Normalization before shingling: vocabulary remap, compiled rewrite, end-to-end, CLI, errors."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_neardup import naive_pairs, pairs_as_dict, sets_as_python
from repetend.cli import main
from repetend.corpus.store import TokenStore
from repetend.errors import InputError, MissingExtraError, ParameterError
from repetend.neardup import find_near_duplicates, shingle_sets, token_hashes
from repetend.neardup.normalize import (
    load_stopwords,
    normalize_tokens,
    normalize_vocabulary,
    stem_words,
)

Stemmer = pytest.importorskip("Stemmer")

RU = ("Доставка товаров по всей России осуществляется быстро и надёжно. Наши курьеры "
      "доставляют заказы каждый день, а оплата производится при получении товара. "
      "Мы работаем без выходных и отвечаем на вопросы покупателей в течение часа.")
RU_INFLECTED = ("Доставки товара по всей России осуществляются быстро и надёжно. Наш курьер "
                "доставляет заказ каждый день, а оплаты производятся при получении товаров. "
                "Мы работали без выходных и отвечали на вопрос покупателя в течение часов.")
EN = ("The quick brown fox jumps over the lazy dog in the garden while the children are "
      "playing with their toys and the neighbours are watching the game from the windows.")
EN_INFLECTED = ("The quick brown foxes jumped over the lazy dogs in the gardens while the child is "
                "played with his toy and the neighbour was watching the games from the window.")


def random_store(rng, n_docs=30, vocab=40):
    words = ["".join(rng.choice(list("абвгдеклмнопрстaeioubcdfg"), size=rng.integers(2, 7)))
             for _ in range(vocab)]
    texts = [" ".join(rng.choice(words, size=rng.integers(0, 60))) for _ in range(n_docs)]
    return TokenStore.from_texts(texts)


# -- the compiled rewrite against a Python loop --------------------------------------------

@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_normalize_tokens_matches_python(data):
    v = data.draw(st.integers(1, 12))
    remap = np.array(data.draw(st.lists(st.integers(-1, 6), min_size=v, max_size=v)), dtype=np.int32)
    docs = data.draw(st.lists(st.lists(st.integers(0, v - 1), max_size=15), max_size=8))
    tokens = np.array([t for d in docs for t in d], dtype=np.int32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    out, off = normalize_tokens(tokens, offsets, remap)
    want = [[int(remap[t]) for t in d if remap[t] >= 0] for d in docs]
    assert [out[off[i]:off[i + 1]].tolist() for i in range(len(docs))] == want
    assert off[0] == 0 and off.shape[0] == len(docs) + 1


def test_normalize_tokens_rejects_ids_outside_the_remap():
    with pytest.raises(ParameterError):
        normalize_tokens(np.array([0, 5], np.int32), np.array([0, 2], np.int64), np.zeros(3, np.int32))


# -- the vocabulary remap against per-word Stemmer calls --------------------------------

@pytest.mark.parametrize("lang,text", [("russian", RU + " " + RU_INFLECTED), ("en", EN + " " + EN_INFLECTED)])
def test_vocabulary_remap_matches_per_word_stemming(lang, text):
    store = TokenStore.from_texts([text])
    stops = load_stopwords("ru" if lang == "russian" else "english")
    nz = normalize_vocabulary(store.vocab, stopwords=stops, stem=lang)
    st_ = Stemmer.Stemmer("russian" if lang == "russian" else "english")
    assert nz.remap.shape[0] == len(store.vocab)
    for i, w in enumerate(store.vocab):
        if w in stops:
            assert nz.remap[i] == -1, w
        else:
            assert nz.vocab[nz.remap[i]] == st_.stemWord(w), w
    kept = [i for i, w in enumerate(store.vocab) if w not in stops]
    # same normalized id <=> same stem
    for i in kept:
        for j in kept:
            assert (nz.remap[i] == nz.remap[j]) == (st_.stemWord(store.vocab[i]) == st_.stemWord(store.vocab[j]))
    assert nz.stopword_types == sum(w in stops for w in store.vocab) > 0
    assert nz.types_after < len(kept)          # inflected forms merged


def test_shingles_are_those_of_the_normalized_text():
    """Hashes come from the normalized strings: the normalized stream of a store gives the
    same shingles as a store built from the normalized words themselves."""
    texts = [RU, RU_INFLECTED, EN, EN_INFLECTED, "", "и"]
    store = TokenStore.from_texts(texts)
    stops = load_stopwords("ru") | load_stopwords("en")
    for stem in ("ru", "en"):
        nz = normalize_vocabulary(store.vocab, stopwords=stops, stem=stem)
        toks, off = normalize_tokens(store.tokens, store.doc_offsets, nz.remap)
        got = shingle_sets(toks, off, token_hashes(nz.vocab), 3)
        norm_texts = []
        for d in range(store.n_docs):
            words = [store.vocab[t] for t in store.doc_tokens(d)]
            words = [w for w in words if w not in stops]
            norm_texts.append(" ".join(stem_words(words, stem)))
        ref = TokenStore.from_texts(norm_texts)
        want = shingle_sets(ref.tokens, ref.doc_offsets, token_hashes(ref.vocab), 3)
        assert sets_as_python(got) == sets_as_python(want)


def test_identity_normalization_gives_the_raw_shingles():
    rng = np.random.default_rng(3)
    store = random_store(rng)
    nz = normalize_vocabulary(store.vocab)           # no stop words, no stemming
    toks, off = normalize_tokens(store.tokens, store.doc_offsets, nz.remap)
    a = shingle_sets(toks, off, token_hashes(nz.vocab), 4)
    b = shingle_sets(store.tokens, store.doc_offsets, token_hashes(store.vocab), 4)
    assert np.array_equal(a.hashes, b.hashes) and np.array_equal(a.offsets, b.offsets)


# -- end to end -------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::repetend.neardup.simhash.SimHashRecallWarning")  # k=3, t=0.5
@pytest.mark.parametrize("method", ["minhash", "allpairs", "broder", "simhash"])
def test_normalization_off_gives_the_same_pairs_as_before(method):
    """Off = the raw shingles of the store; the pairs equal the brute-force oracle on them."""
    rng = np.random.default_rng(11)
    store = random_store(rng, n_docs=40, vocab=12)
    raw = shingle_sets(store.tokens, store.doc_offsets, token_hashes(store.vocab), 2)
    r0 = find_near_duplicates(store, method=method, threshold=0.5, shingle=2)
    r1 = find_near_duplicates(store, method=method, threshold=0.5, shingle=2, stopwords=None, stem=None)
    assert pairs_as_dict(r0.pairs) == pairs_as_dict(r1.pairs)
    assert "normalization" not in r0.summary
    truth = naive_pairs(sets_as_python(raw), 0.5)
    assert set(pairs_as_dict(r0.pairs)) <= set(truth)
    if method == "allpairs":
        assert pairs_as_dict(r0.pairs) == truth


@pytest.mark.filterwarnings("ignore::repetend.neardup.simhash.SimHashRecallWarning")  # k=12, t=0.5
@pytest.mark.parametrize("method", ["allpairs", "minhash", "simhash"])
def test_stemming_finds_inflected_copies(method):
    texts = [RU, RU_INFLECTED, EN, EN_INFLECTED, "совсем другой текст о кошках и мышах в доме"]
    store = TokenStore.from_texts(texts)
    plain = find_near_duplicates(store, method="allpairs", threshold=0.5, shingle=3)
    assert not pairs_as_dict(plain.pairs)
    r = find_near_duplicates(store, method=method, threshold=0.5, shingle=3,
                             stopwords="ru", stem="ru", hamming=12)
    assert (0, 1) in pairs_as_dict(r.pairs)
    nz = r.summary["normalization"]
    assert nz["stem"] == "russian" and nz["tokens_after"] < nz["tokens_before"]
    r_en = find_near_duplicates(store, method="allpairs", threshold=0.4, shingle=3,
                                stopwords="en", stem="english")
    assert (2, 3) in pairs_as_dict(r_en.pairs)


def test_normalized_pairs_equal_the_oracle_on_normalized_sets():
    rng = np.random.default_rng(5)
    base = RU.split() + EN.split()
    texts = [" ".join(rng.choice(base, size=rng.integers(5, 40))) for _ in range(25)]
    texts += [t.replace("Доставка", "Доставки").replace("dog", "dogs") for t in texts[:6]]
    store = TokenStore.from_texts(texts)
    r = find_near_duplicates(store, method="allpairs", threshold=0.6, shingle=2, stopwords="en", stem="ru")
    nz = normalize_vocabulary(store.vocab, stopwords="en", stem="ru")
    toks, off = normalize_tokens(store.tokens, store.doc_offsets, nz.remap)
    sets = shingle_sets(toks, off, token_hashes(nz.vocab), 2)
    assert pairs_as_dict(r.pairs) == naive_pairs(sets_as_python(sets), 0.6)


# -- stop-word sources and errors --------------------------------------------------------

def test_stopword_file_with_comments(tmp_path):
    p = tmp_path / "my.stop"
    p.write_text("| Snowball style comment\nи   | and\nВ\n# hash comment\n  the  \n\n", encoding="utf-8")
    assert load_stopwords(str(p)) == frozenset({"и", "в", "the"})
    store = TokenStore.from_texts(["и в the дом", "дом"])
    nz = normalize_vocabulary(store.vocab, stopwords=str(p))
    assert sorted(store.vocab[i] for i in np.flatnonzero(nz.remap < 0)) == sorted(["и", "в", "the"])
    assert nz.stopwords == str(p)


def test_language_lists_are_non_trivial():
    ru, en = load_stopwords("ru"), load_stopwords("english")
    assert {"и", "в", "не"} <= ru and {"the", "and", "of"} <= en
    assert load_stopwords("russian") == ru


def test_errors_name_what_was_wrong(tmp_path):
    with pytest.raises(InputError, match="missing.txt"):
        load_stopwords(str(tmp_path / "missing.txt"))
    with pytest.raises(ParameterError, match="klingon"):
        load_stopwords("klingon")
    with pytest.raises(ParameterError, match="Snowball"):
        normalize_vocabulary(["a"], stem="klingon")
    store = TokenStore.from_texts(["a b c", "a b c"])
    with pytest.raises(ParameterError, match="exact"):
        find_near_duplicates(store, method="exact", stem="en")
    sets = shingle_sets(store.tokens, store.doc_offsets, token_hashes(store.vocab), 2)
    with pytest.raises(ParameterError, match="TokenStore"):
        find_near_duplicates(sets, stopwords="en")
    with pytest.raises(ParameterError):
        find_near_duplicates(store, stem="")


def test_missing_extras_name_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "Stemmer", None)
    with pytest.raises(MissingExtraError, match=r"repetend\[stem\]"):
        normalize_vocabulary(["дом"], stem="ru")
    monkeypatch.setitem(sys.modules, "stop_words", None)
    with pytest.raises(MissingExtraError, match=r"repetend\[stopwords\]"):
        load_stopwords("ru")


# -- CLI ---------------------------------------------------------------------------------

def test_cli_stem_and_stopwords(tmp_path):
    path = tmp_path / "c.jsonl"
    docs = [RU, RU_INFLECTED, EN, "совсем другой текст о кошках и мышах в доме"]
    with open(path, "w", encoding="utf-8") as f:
        for i, d in enumerate(docs):
            f.write(json.dumps({"id": f"d{i}", "text": d}, ensure_ascii=False) + "\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["dups", str(path), "--out", str(out), "-q", "--method", "allpairs",
                                    "-t", "0.5", "-k", "3", "--stem", "ru", "--stopwords", "ru"])
    assert res.exit_code == 0, res.output
    assert "normalized (stopwords=ru, stem=russian)" in res.output
    assert "1 pairs with J >= 0.5" in res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["parameters"]["stem"] == "ru" and summary["normalization"]["stopword_types"] > 0
    bad = CliRunner().invoke(main, ["dups", str(path), "--out", str(out), "-q", "--stopwords", "nope/x.txt"])
    assert bad.exit_code != 0 and "nope/x.txt" in bad.output and "Traceback" not in bad.output
    # checked before the corpus is read: a missing input is not reached
    bad = CliRunner().invoke(main, ["dups", str(tmp_path / "absent.jsonl"), "--out", str(out), "-q",
                                    "--stem", "klingon"])
    assert bad.exit_code != 0 and "Snowball" in bad.output and "absent" not in bad.output


def test_normalization_off_minhash_equals_the_raw_stage_pipeline():
    """Off: exactly the stages on raw shingles (shingles -> signatures -> LSH -> verification)."""
    from repetend.neardup import NearDupConfig, lsh_candidates, minhash_signatures, verify_pairs

    rng = np.random.default_rng(8)
    store = random_store(rng, n_docs=60, vocab=10)
    cfg = NearDupConfig(threshold=0.4, shingle=2)
    r = find_near_duplicates(store, cfg)
    sets = shingle_sets(store.tokens, store.doc_offsets, token_hashes(store.vocab), 2)
    bands, rows = cfg.banding()
    sig = minhash_signatures(sets, cfg.num_perm, seed=cfg.seed, hash=cfg.hash, bits=64, scheme=cfg.scheme)
    cand = lsh_candidates(sig, sets.sizes.astype(np.int64), bands, rows, max_bucket=cfg.max_bucket,
                          min_shingles=cfg.min_shingles, sets=sets, threshold=0.4)
    want = verify_pairs(sets, cand.a, cand.b)
    assert pairs_as_dict(r.candidates) == pairs_as_dict(want)
    assert pairs_as_dict(r.pairs) == {p: v for p, v in pairs_as_dict(want).items() if v[0] >= 0.4}
    assert r.summary["shingles"] == int(sets.hashes.shape[0])


def test_vocabulary_with_lone_surrogates_and_empty_vocabulary():
    vocab = ["бегут", "a\ud800", "бежал", "и", "бегут\ud800"]
    nz = normalize_vocabulary(vocab, stopwords=frozenset({"и"}), stem="ru")
    assert nz.remap[3] == -1 and nz.vocab[nz.remap[1]] == "a\ud800"
    assert nz.vocab[nz.remap[0]] == stem_words(["бегут"], "ru")[0]
    assert len({int(x) for x in nz.remap[nz.remap >= 0]}) == len({nz.vocab[x] for x in nz.remap[nz.remap >= 0]})
    empty = normalize_vocabulary([], stopwords=frozenset({"и"}), stem="en")
    assert empty.remap.shape == (0,) and empty.vocab == []
    toks, off = normalize_tokens(np.empty(0, np.int32), np.zeros(1, np.int64), empty.remap)
    assert toks.size == 0 and off.tolist() == [0]
