"""Language per document, per-language normalization and Russian lemmas (corpus/lang.py, neardup/normalize_lang.py)."""

from __future__ import annotations

import json
import re
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from repetend.cli import main
from repetend.corpus.lang import detect_language, detector_input, language_counts, require_detector
from repetend.corpus.store import TokenStore
from repetend.errors import MissingExtraError
from repetend.neardup import find_near_duplicates
from repetend.neardup.normalize import load_stopwords, stem_words
from repetend.neardup.normalize_lang import (lemmatize_words, normalize_by_language,
                                             normalize_tokens_rows)

pytest.importorskip("py3langid")
pytest.importorskip("Stemmer")
pytest.importorskip("stop_words")
pymorphy3 = pytest.importorskip("pymorphy3")

RU = ("Мальчик бегал по большому зелёному полю весь день, а его собака бежала рядом и громко лаяла "
      "на птиц, которые сидели на старых деревьях у реки.")
RU2 = ("Мальчики бегают по большим зелёным полям все дни, а их собаки бегут рядом и громко лают "
       "на птицу, которая сидит на старом дереве у рек.")
EN = ("The boys were running over the large green fields for the whole day while their dogs "
      "were barking at the birds sitting in the old trees by the river.")
EN2 = ("The boy runs over the large green field for the whole day while his dog barks at the "
       "bird sitting in the old tree by the rivers.")
DE = ("Die Jungen liefen den ganzen Tag über die großen grünen Felder, während ihre Hunde die "
      "Vögel anbellten, die in den alten Bäumen am Fluss saßen.")
DE2 = ("Der Junge lief den ganzen Tag über das große grüne Feld, während sein Hund den Vogel "
       "anbellte, der in dem alten Baum am Flusse saß.")

_WORDS = re.compile(r"[^\W\d_]+")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet="abcXYZжё", min_size=0, max_size=12),
                          st.text(alphabet=" ,.7_\n-", min_size=1, max_size=3)), max_size=400),
       st.integers(1, 300))
def test_detector_input_is_the_letters_prefix(parts, limit):
    text = "".join(w + s for w, s in parts) * 3
    assert detector_input(text, limit) == " ".join(_WORDS.findall(text))[:limit]


def test_detector_input_long_word_across_pieces():
    text = "x" * 5000 + " tail " + "y" * 3000
    assert detector_input(text, 100) == "x" * 100
    assert detector_input(text, 9000) == ("x" * 5000 + " tail " + "y" * 3000)


def test_detect_languages_of_real_sentences():
    assert [detect_language(t) for t in (RU, EN, DE, "ok 1 2 3")] == ["ru", "en", "de", ""]
    # code and digits do not decide: the letters do
    noisy = "x = f(1, 2); // 0x1F " * 40 + EN
    assert detect_language(noisy) == "en"


def test_language_counts():
    assert language_counts(["ru", "", "en", "ru", None]) == [("ru", 2), ("und", 2), ("en", 1)]
    assert language_counts([]) == []


def test_store_language_column_only_when_asked(tmp_path):
    texts = [RU, EN, DE]
    plain = TokenStore.from_texts(texts)
    assert "language" not in plain.docs.column_names and "languages" not in plain.summary
    det = TokenStore.from_texts(texts, lang_detect=True)
    assert det.docs.column("language").to_pylist() == ["ru", "en", "de"]
    assert det.summary["languages"] == {"de": 1, "en": 1, "ru": 1}
    assert det.docs.drop_columns(["language"]).equals(plain.docs)
    det.save(tmp_path / "s")
    assert TokenStore.open(tmp_path / "s").docs.column("language").to_pylist() == ["ru", "en", "de"]


def _oracle(store, langs, stopwords, stem, lemmatize):
    """Per document, per token, in Python: the normalized strings."""
    morph = pymorphy3.MorphAnalyzer(lang="ru")
    codes = {"ru": "russian", "en": "english", "de": "german", "fr": "french"}
    out = []
    for d in range(store.n_docs):
        lang = langs[d] if langs is not None else ""
        stop = set()
        if stopwords == "auto" and lang:
            stop = load_stopwords(lang)
        elif stopwords not in (None, "auto"):
            stop = load_stopwords(stopwords)
        stemmer = codes.get(lang) if stem == "auto" else stem
        lem = lemmatize == "ru" or (lemmatize == "auto" and lang == "ru")
        forms = []
        for t in store.doc_tokens(d):
            w = store.vocab[int(t)]
            if w in stop:
                continue
            if lem and re.search(r"[\u0400-\u04ff]", w):
                forms.append(morph.parse(w)[0].normal_form)
            elif stemmer:
                forms.append(stem_words([w], stemmer)[0])
            else:
                forms.append(w)
        out.append(forms)
    return out


POOL = (RU + " " + RU2 + " " + EN + " " + EN2 + " " + DE + " " + DE2 + " и the der 42").split()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from(POOL), max_size=25),
                          st.sampled_from(["ru", "en", "de", "", "fr"])), min_size=1, max_size=12),
       st.sampled_from([(None, "auto", None), ("auto", "auto", None), ("auto", None, "auto"),
                        (None, "auto", "auto"), ("en", "auto", "ru"), (None, "russian", "auto"),
                        (None, None, "ru")]))
def test_per_language_normalization_equals_the_per_token_oracle(docs, opts):
    stopwords, stem, lemmatize = opts
    store = TokenStore.from_texts([" ".join(w) for w, _ in docs])
    langs = [lang for _, lang in docs]
    nz = normalize_by_language(store.vocab, store.tokens, store.doc_offsets, langs,
                               stopwords=stopwords, stem=stem, lemmatize=lemmatize,
                               lemma_keys="first")   # the lexeme keys: test_lemma_keys.py
    toks, off = normalize_tokens_rows(store.tokens, store.doc_offsets, nz.doc_row, nz.remap)
    got = [[nz.vocab[int(t)] for t in toks[off[d]:off[d + 1]]] for d in range(store.n_docs)]
    assert got == _oracle(store, langs, stopwords, stem, lemmatize)
    assert nz.vocab == sorted(set(nz.vocab), key=nz.vocab.index)   # distinct strings


def test_one_language_auto_equals_the_fixed_language():
    texts = [RU, RU2, "совсем другой текст о кошках и мышах в доме", RU + " " + RU2]
    store = TokenStore.from_texts(texts, lang_detect=True)
    assert set(store.docs.column("language").to_pylist()) == {"ru"}
    for method in ("allpairs", "minhash"):
        a = find_near_duplicates(store, method=method, threshold=0.3, shingle=2, stem="ru", stopwords="ru")
        b = find_near_duplicates(store, method=method, threshold=0.3, shingle=2, stem="auto",
                                 stopwords="auto")
        assert len(a.pairs) > 0
        for col in ("a", "b", "jaccard"):
            assert np.array_equal(getattr(a.pairs, col), getattr(b.pairs, col))
        assert a.summary["clusters"] == b.summary["clusters"]


def test_lemmas_join_what_stems_leave_apart():
    assert lemmatize_words(["бегал", "бежит", "бегущий"]) == ["бегать", "бежать", "бежать"]
    assert len(set(stem_words(["бежит", "бегущий"], "ru"))) == 2
    nz = normalize_by_language(["бежит", "бегущий", "run"], np.array([0, 1, 2], np.int32),
                               np.array([0, 3], np.int64), None, lemmatize="ru")
    assert nz.remap[0, 0] == nz.remap[0, 1] != nz.remap[0, 2]


def test_auto_finds_each_language_and_no_cross_pairs():
    store = TokenStore.from_texts([RU, RU2, EN, EN2, DE, DE2], lang_detect=True)
    r = find_near_duplicates(store, method="allpairs", threshold=0.5, shingle=2, stem="auto",
                             stopwords="auto", lemmatize="auto")
    assert sorted(zip(r.pairs.a.tolist(), r.pairs.b.tolist())) == [(0, 1), (2, 3), (4, 5)]
    rows = r.summary["normalization"]["rows"]
    assert {tuple(x["languages"]): (x["stem"], x["lemmatize"]) for x in rows} == {
        ("de",): ("german", False), ("en",): ("english", False), ("ru",): ("russian", True)}
    off = find_near_duplicates(store, method="allpairs", threshold=0.5, shingle=2)
    assert len(off.pairs) < 3


def test_languages_detected_at_dups_time_when_the_store_has_none():
    store = TokenStore.from_texts([RU, RU2, EN, EN2])
    r = find_near_duplicates(store, method="allpairs", threshold=0.5, shingle=2, stem="auto",
                             lemmatize="auto")
    assert {tuple(x["languages"]) for x in r.summary["normalization"]["rows"]} == {("ru",), ("en",)}


def test_missing_extras_name_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "py3langid", None)
    with pytest.raises(MissingExtraError, match=r"repetend\[lang\]"):
        require_detector()
    with pytest.raises(MissingExtraError, match=r"repetend\[lang\]"):
        TokenStore.from_texts([EN], lang_detect=True)
    monkeypatch.setitem(sys.modules, "pymorphy3", None)
    with pytest.raises(MissingExtraError, match=r"repetend\[lemma\]"):
        lemmatize_words(["дом"])


def test_cli_auto_and_lemmatize(tmp_path):
    path = tmp_path / "c.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i, d in enumerate([RU, RU2, EN, EN2, DE, DE2]):
            f.write(json.dumps({"id": f"d{i}", "text": d}, ensure_ascii=False) + "\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["dups", str(path), "--out", str(out), "-q", "--method", "allpairs",
                                    "-t", "0.5", "-k", "2", "--stem", "auto", "--stopwords", "auto",
                                    "--lemmatize", "auto"])
    assert res.exit_code == 0, res.output
    assert "3 pairs with J >= 0.5" in res.output and "per language:" in res.output
    bad = CliRunner().invoke(main, ["dups", str(path), "--out", str(out), "-q", "--lemmatize", "de"])
    assert bad.exit_code != 0 and "Traceback" not in bad.output
    store = tmp_path / "store"
    res = CliRunner().invoke(main, ["tokenize", str(path), "--out", str(store), "-q", "--lang-detect"])
    assert res.exit_code == 0, res.output
    assert TokenStore.open(store).docs.column("language").to_pylist() == ["ru", "ru", "en", "en", "de", "de"]


def test_scan_keeps_the_language_in_documents_parquet_and_the_report(tmp_path):
    import pyarrow.parquet as pq

    from repetend.jobs import scan
    from repetend.jobs.scan import ScanConfig
    from repetend.neardup import NearDupConfig

    path = tmp_path / "c.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i, d in enumerate([RU, RU2, EN, EN2, DE, DE2, RU]):
            f.write(json.dumps({"id": f"d{i}", "text": d + f" {i}"}, ensure_ascii=False) + "\n")
    cfg = dict(phrases=None, dups=NearDupConfig(method="allpairs", threshold=0.5, shingle=2), report=True)
    scan([path], tmp_path / "on", ScanConfig(**cfg, input_options={"lang_detect": True}))
    t = pq.read_table(tmp_path / "on" / "documents.parquet")
    assert t.column("language").to_pylist() == ["ru", "ru", "en", "en", "de", "de", "ru"]
    html = (tmp_path / "on" / "report.html").read_text(encoding="utf-8")
    assert "Languages (detected per document)" in html and "42.9%" in html
    scan([path], tmp_path / "off", ScanConfig(**cfg))
    off = pq.read_table(tmp_path / "off" / "documents.parquet")
    assert off.equals(t.drop_columns(["language"]))
    assert "Languages (detected" not in (tmp_path / "off" / "report.html").read_text(encoding="utf-8")
