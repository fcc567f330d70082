"""Generators: determinism, exact known answers (against the naive phrase oracle),
exact ground-truth spans, and planted copies that really are (and non-copies that
really are not) similar by 5-word-shingle Jaccard computed here with Python sets."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from itertools import combinations

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import repetend.synth as synth
from repetend.corpus.tokenize_ref import tokenize_reference
from repetend.errors import InputError, ParameterError
from repetend.synth import (SYNTHETIC1_PHRASES, SynthCorpus, synthetic1, synthetic2,
                            weblike)
from repetend.synth._synth_kernels import EMPTY, insert_new
from repetend.synth.synthetic import _word_text, random_words

from naive_phrases import naive_phrases


# -- helpers ---------------------------------------------------------------------------------
def _answer(store, min_docs: int, min_len: int) -> dict[tuple[str, ...], int]:
    """The naive oracle's maximal frequent phrases of a store as {token strings: df}."""
    raw = naive_phrases(store.tokens, store.doc_offsets, min_docs, min_len)
    return {tuple(store.vocab[t] for t in p): df for p, (df, _) in raw.items()}


def _shingles(text: str, k: int = 5) -> set[tuple[str, ...]]:
    toks = tokenize_reference(text)
    return {tuple(toks[i:i + k]) for i in range(len(toks) - k + 1)}


def _jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b)


def _canonical_spaces(text: str) -> str:
    """Seed 004's canonical form, line breaks counted as whitespace."""
    return " ".join(text.lower().split())


def _canonical_drop_breaks(text: str) -> str:
    """Seed 004's canonical form, line breaks deleted."""
    return " ".join(re.sub(r"[\r\n]", "", text).lower().split())


# -- random words ----------------------------------------------------------------------------------
def test_random_words_unique_and_exclusions():
    rng = np.random.default_rng(5)
    letters = random_words(20000, rng, exclude=("sentence",))
    assert letters.shape == (20000, 8) and letters.dtype == np.uint8
    assert letters.max() <= 25
    words = ["".join(chr(97 + c) for c in row) for row in letters[:2000]]
    assert len(set(map(bytes, letters))) == 20000
    assert all(re.fullmatch(r"[a-z]{8}", w) for w in words)
    # the exclusion really bites: a tiny alphabet would otherwise produce it
    assert b"sentence" not in {bytes(row + 97) for row in letters}


_CODES = st.integers(0, 12) | st.integers(0, 26**8 - 1)


@settings(max_examples=60, deadline=None)
@given(batches=st.lists(st.lists(_CODES, max_size=80), max_size=4),
       banned=st.lists(_CODES, max_size=5), n_out=st.integers(0, 150), bits=st.integers(8, 9))
def test_insert_new_matches_python_first_occurrences(batches, banned, n_out, bits):
    table = np.full(1 << bits, EMPTY, dtype=np.uint64)
    insert_new(np.array(banned, dtype=np.uint64), table, np.empty(len(banned), np.uint64), 0)
    out = np.zeros(n_out, dtype=np.uint64)
    filled = 0
    seen, want = set(banned), []
    for batch in batches:                    # the set persists across calls
        filled = insert_new(np.array(batch, dtype=np.uint64), table, out, filled)
        for v in batch:
            if len(want) < n_out and v not in seen:
                seen.add(v)
                want.append(v)
        assert out[:filled].tolist() == want


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 26**8 - 1), min_size=1, max_size=40))
def test_spelling_kernel_matches_python(codes):
    got = _word_text(np.array(codes, dtype=np.uint64))
    for row, c in zip(got, codes):
        letters = []
        for _ in range(8):
            c, r = divmod(c, 26)
            letters.append(chr(97 + r))
        assert bytes(row).decode() == "".join(reversed(letters)) + " "


# -- Synthetic 1 -----------------------------------------------------------------------------------
def test_synthetic1_deterministic_by_seed():
    a, b, c = synthetic1(6, words_per_doc=40, seed=3), synthetic1(6, words_per_doc=40, seed=3), \
        synthetic1(6, words_per_doc=40, seed=4)
    assert a.texts == b.texts and a.truth == b.truth and a.ids == b.ids
    assert a.texts != c.texts


def test_synthetic1_background_unique_and_phrase_supports():
    n, w = 40, 300
    corpus = synthetic1(n, words_per_doc=w, seed=11)
    phrase_words = {t for p, _ in SYNTHETIC1_PHRASES for t in p.lower().split()}
    counts: Counter[str] = Counter()
    for text in corpus.texts:
        counts.update(t for t in text.split() if re.fullmatch(r"[a-z]{8}", t))
    background = [t for t in counts if t not in phrase_words]
    assert len(background) == n * w                   # exactly N × words_per_doc of them
    assert max(counts[t] for t in background) == 1    # each occurs once in the corpus
    assert "sentence" not in background
    for (text, support), truth in zip(SYNTHETIC1_PHRASES, corpus.truth["phrases"]):
        docs = [i for i, t in enumerate(corpus.texts) if text in t]
        assert len(docs) == support == truth["support"]
        assert sorted(o["doc_index"] for o in truth["occurrences"]) == docs
        for o in truth["occurrences"]:
            doc = corpus.texts[o["doc_index"]]
            assert doc[o["start"]:o["end"]] == text
            toks = doc.split()
            assert toks[o["token_start"]:o["token_start"] + len(text.split())] == text.split()
            assert doc.count(text) == 1


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(5, 8), words=st.integers(2, 12))
def test_synthetic1_answer_is_exactly_the_three_phrases(seed, n_docs, words):
    corpus = synthetic1(n_docs, words_per_doc=words, seed=seed)
    store = corpus.to_store()
    got = _answer(store, 3, 3)
    want = {tuple(p.lower().split()): s for p, s in SYNTHETIC1_PHRASES}
    assert got == want
    expected = corpus.truth["expected"]
    for k, phrases in expected["by_min_docs"].items():
        for min_len in expected["min_len"]:
            got = _answer(store, int(k), min_len)
            assert set(got) == {tuple(p) for p in phrases}


def test_synthetic1_rejects_bad_parameters():
    with pytest.raises(ParameterError):
        synthetic1(4)
    with pytest.raises(ParameterError):
        synthetic1(10, words_per_doc=1)


# -- Synthetic 2 -----------------------------------------------------------------------------------
def test_synthetic2_family_shape():
    corpus = synthetic2(200, seed=1, words_per_doc=40)   # the default family: 300 phrases
    phrases = corpus.truth["phrases"]
    assert len(phrases) == 300
    lengths = [p["length"] for p in phrases]
    assert lengths[0] == 400 and lengths[-1] == 101
    assert all(a >= b for a, b in zip(lengths, lengths[1:]))
    texts = [p["text"] for p in phrases]
    for i in range(len(texts) - 1):                     # heavy overlap, no nesting
        a, b = phrases[i]["tokens"], phrases[i + 1]["tokens"]
        assert a[2:] == b[:len(a) - 2]
        assert texts[i + 1] not in texts[i] and texts[i] not in texts[i + 1]
    for p in phrases[::37]:
        assert p["support"] == 5 == len({o["doc_index"] for o in p["occurrences"]})
        for o in p["occurrences"]:
            assert corpus.texts[o["doc_index"]][o["start"]:o["end"]] == p["text"]


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_phrases=st.integers(1, 9), shift=st.integers(2, 3),
       support=st.integers(2, 4), extra=st.integers(0, 4))
def test_synthetic2_answer_is_exactly_the_family(seed, n_phrases, shift, support, extra):
    min_len = 3
    max_len = min_len + (shift - 1) * (n_phrases - 1)
    corpus = synthetic2(support + 3, seed=seed, n_phrases=n_phrases, max_len=max_len,
                        min_len=min_len, shift=shift, support=support,
                        words_per_doc=n_phrases + extra)   # enough gaps in any document
    want = {tuple(p["tokens"]): support for p in corpus.truth["phrases"]}
    assert len(want) == n_phrases
    lo, hi = corpus.truth["expected"]["min_len"]
    store = corpus.to_store()
    for k in corpus.truth["expected"]["by_min_docs"]:
        for min_len_q in (lo, hi):
            assert _answer(store, int(k), min_len_q) == want


def test_synthetic2_rejects_nesting_family():
    with pytest.raises(ParameterError):      # lengths fall by 2 per phrase with shift 2
        synthetic2(10, n_phrases=10, max_len=40, min_len=10, shift=2)
    with pytest.raises(ParameterError):
        synthetic2(3, support=5)


# -- web-like ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def web() -> SynthCorpus:
    return weblike(400, seed=7)


def test_weblike_deterministic_by_seed(web):
    again = weblike(400, seed=7)
    assert again.texts == web.texts and again.urls == web.urls and again.truth == web.truth
    assert weblike(400, seed=8).texts != web.texts


def _check_spans(web: SynthCorpus) -> set[str]:
    """Every span exact; returns the block kinds used."""
    blocks = web.truth["blocks"]
    assert len(web.truth["docs"]) == len(web.records)
    used_kinds = set()
    for rec, doc in zip(web.records, web.truth["docs"]):
        assert doc["id"] == rec.id and doc["url"] == rec.url
        assert rec.url.startswith(f"https://site-{doc['site']}.example/")
        spans = doc["spans"]
        pos = 0
        for i, s in enumerate(spans):
            gap = rec.text[pos:s["start"]]
            assert gap in (("",) if i == 0 else ("\n", "\r\n", "\n\n"))
            piece = rec.text[s["start"]:s["end"]]
            assert piece and piece == piece.strip()
            pos = s["end"]
            if s["block"] is None:
                assert s["kind"] in ("title", "body")
                continue
            b = blocks[s["block"]]
            used_kinds.add(b["kind"])
            assert b["kind"] == s["kind"] and b["lang"] == doc["lang"]
            assert b["shared"] == (b["site"] is None)
            assert b["shared"] or b["site"] == doc["site"]
            if "text" in b:
                assert piece == b["text"] and "values" not in s
            else:
                assert piece == b["template"].format(**s["values"])
                assert set(s["values"]) == set(b["slots"])
        assert pos == len(rec.text)
    return used_kinds


def test_weblike_spans_are_exact(web):
    assert len(web) == 400 == len(set(web.urls))
    assert _check_spans(web) == {"menu", "cookie", "disclaimer", "read_also", "subscribe",
                          "signature", "listing", "footer"}


def test_weblike_templates_shared_and_variable(web):
    blocks, docs = web.truth["blocks"], web.truth["docs"]
    sites_of = defaultdict(set)
    values_of = defaultdict(set)
    for doc in docs:
        for s in doc["spans"]:
            if s["block"]:
                sites_of[s["block"]].add(doc["site"])
                if "values" in s:
                    values_of[s["block"]].add(json.dumps(s["values"], sort_keys=True))
    docs_of = Counter(s["block"] for d in docs for s in d["spans"] if s["block"])
    assert all(b["docs"] == docs_of[k] and b["n_sites"] == len(sites_of[k])
               for k, b in blocks.items())
    for rec, doc in zip(web.records, docs):
        n = sum(s["end"] - s["start"] for s in doc["spans"] if s["block"])
        assert doc["template_share"] == pytest.approx(n / len(rec.text), abs=1e-4)
    shared = [b for b, v in blocks.items() if v["shared"]]
    assert any(len(sites_of[b]) >= 2 for b in shared)       # a CMS block on several sites
    assert all(len(sites_of[b]) == 1 for b, v in blocks.items() if not v["shared"] and sites_of[b])
    assert len(values_of["shared/en/listing"] | values_of["shared/ru/listing"]) > 5
    footers = [b for b in blocks if b.endswith("/footer")]
    assert any(len(values_of[b]) > 1 for b in footers)      # © years differ within a site
    texts = " ".join(web.texts)
    assert "All rights reserved" in texts and "Все права защищены" in texts
    assert re.search(r"Showing \d+–\d+ of \d+ items", texts)
    assert re.search(r"Показано \d+–\d+ из \d+ товаров", texts)
    assert "Читайте также" in texts and "Read also" in texts
    langs = Counter(d["lang"] for d in docs)
    assert langs["en"] > 50 and langs["ru"] > 50


def test_weblike_site_sizes_are_skewed(web):
    pages = Counter(d["site"] for d in web.truth["docs"])
    assert {s["site"]: s["pages"] for s in web.truth["sites"]} == \
        {k: pages.get(k, 0) for k in range(len(web.truth["sites"]))}
    sizes = sorted(pages.values(), reverse=True)
    assert sizes[0] >= 5 * sizes[len(sizes) // 2]


def _related(copies):
    parent: dict[str, str] = {}

    def find(x):
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for c in copies:
        parent[find(c["doc"])] = find(c["source"])
    return find


def test_weblike_planted_copies_are_similar(web):
    text = dict(zip(web.ids, web.texts))
    sh = {i: _shingles(t) for i, t in text.items()}
    kinds = Counter()
    for c in web.truth["copies"]:
        kinds[c["kind"]] += 1
        a, b = sh[c["doc"]], sh[c["source"]]
        j = _jaccard(a, b)
        assert c["resemblance_w5"] == pytest.approx(j, abs=2e-3)
        assert text[c["doc"]] != text[c["source"]] or c["kind"] == "exact"
        if c["kind"] == "exact":
            assert _canonical_spaces(text[c["doc"]]) == _canonical_spaces(text[c["source"]])
            assert _canonical_drop_breaks(text[c["doc"]]) == \
                _canonical_drop_breaks(text[c["source"]])
            assert (text[c["doc"]] == text[c["source"]]) == (c["variant"] == "verbatim")
        elif c["kind"] == "edit":
            # k ≤ 10 % of n ≥ 200 body words changed, each breaking ≤ 5 shingles on each
            # side: J ≥ (n − 4 − 5k) / (n − 4 + 5k) ≈ 0.32, more with the shared template
            assert 0.02 - 2.5e-3 <= c["edit_rate"] <= 0.10 + 2.5e-3   # whole words of ≥ 200
            assert 0.3 <= j < 1
        elif c["kind"] == "truncate":
            assert a < b                                  # a proper prefix: contained exactly
        elif c["kind"] == "contained":
            assert len(a & b) / len(b) >= 0.7 and len(a) > len(b)
        elif c["kind"] == "repost":
            assert c["site"] != c["source_site"]
            # n ≥ 200 shared body words, ≤ 3 % edited, ≤ ~130 template words on each side:
            # J ≥ (n − 4 − 5k) / (n + 260 + 5k) ≈ 0.34
            assert 0.3 <= j and c["edit_rate"] <= 0.03 + 2.5e-3
    assert set(kinds) == set(synth.COPY_KINDS)


def test_weblike_contained_and_truncated_carry_the_source_text(web):
    by_id = {d["id"]: (r.text, d) for r, d in zip(web.records, web.truth["docs"])}
    for c in web.truth["copies"]:
        if c["kind"] not in ("contained", "truncate"):
            continue
        src_text, src_doc = by_id[c["source"]]
        doc_text, doc = by_id[c["doc"]]
        body = [src_text[s["start"]:s["end"]] for s in src_doc["spans"] if s["kind"] == "body"][0]
        if c["kind"] == "contained":
            assert body in doc_text
        else:                                            # the page ends inside its body
            last = doc["spans"][-1]
            assert last["kind"] == "body" and last["end"] == len(doc_text)
            prefix = doc_text[last["start"]:]
            assert body.startswith(prefix) and len(prefix) < len(body)
            n_src, n_doc = len(body.split()), len(prefix.split())    # generator words
            assert n_doc / n_src == pytest.approx(c["kept"], abs=1e-4)
            assert doc["spans"][:-1] == src_doc["spans"][:len(doc["spans"]) - 1]


def test_weblike_unrelated_pages_are_not_similar(web):
    find = _related(web.truth["copies"])
    sh = {i: _shingles(t) for i, t in zip(web.ids, web.texts)}
    by_site = defaultdict(list)
    for d in web.truth["docs"]:
        if not d["thin"]:                    # thin pages are all template: alike by design
            by_site[d["site"]].append(d["id"])
    worst, n_pairs = 0.0, 0
    for ids in by_site.values():                 # same site: most shared template
        for a, b in combinations(ids, 2):
            if find(a) != find(b):
                worst = max(worst, _jaccard(sh[a], sh[b]))
                n_pairs += 1
    assert n_pairs > 1000
    assert worst < 0.3


@settings(max_examples=20, deadline=None)
@given(n_pages=st.integers(1, 40), seed=st.integers(0, 2**32 - 1),
       lang_mix=st.floats(0.0, 1.0), dup_rate=st.floats(0.0, 0.9),
       body_words=st.integers(20, 400), thin_rate=st.sampled_from([0.0, 0.3, 1.0]))
def test_weblike_small_random_settings(n_pages, seed, lang_mix, dup_rate, body_words, thin_rate):
    c = weblike(n_pages, seed=seed, lang_mix=lang_mix, dup_rate=dup_rate, body_words=body_words,
                thin_rate=thin_rate)
    assert len(c) == n_pages == len(set(c.ids)) == len(set(c.urls))
    _check_spans(c)
    ids = set(c.ids)
    originals = {d["id"] for d in c.truth["docs"] if d["original"]}
    assert len(c.truth["copies"]) == n_pages - len(originals)
    text = dict(zip(c.ids, c.texts))
    for k in c.truth["copies"]:
        assert k["doc"] in ids - originals and k["source"] in originals
        if k["kind"] == "exact":
            assert _canonical_spaces(text[k["doc"]]) == _canonical_spaces(text[k["source"]])
        else:
            assert text[k["doc"]] != text[k["source"]]


def test_weblike_thin_pages_are_mostly_template():
    c = weblike(300, seed=4, thin_rate=0.2)
    docs = c.truth["docs"]
    thin = [d for d in docs if d["thin"]]
    assert c.truth["summary"]["thin_pages"] == len(thin)
    originals = sum(d["original"] for d in docs)
    assert 0.1 * originals < len(thin) < 0.3 * originals
    for d in thin:
        assert d["original"] and [s["kind"] for s in d["spans"]].count("body") == 0
        assert d["template_share"] >= 0.6
    thin_ids = {d["id"] for d in thin}
    assert not any(k["source"] in thin_ids or k["doc"] in thin_ids for k in c.truth["copies"])
    full = [d for d in docs if d["original"] and not d["thin"]]
    assert max(d["template_share"] for d in full) < 0.5


def test_weblike_rejects_bad_parameters():
    for kw in ({"n_pages": 0}, {"dup_rate": 1.0}, {"lang_mix": 1.5},
               {"lang_mix": {"fr": 1.0}}, {"copy_kinds": {"mirror": 1.0}},
               {"n_pages": 10, "n_sites": 50}, {"thin_rate": -0.1}):
        with pytest.raises(ParameterError):
            weblike(**{"n_pages": 50, **kw})


def test_weblike_one_language_and_no_copies():
    c = weblike(60, n_sites=3, seed=2, lang_mix=0.0, dup_rate=0.0)
    assert {d["lang"] for d in c.truth["docs"]} == {"en"} and c.truth["copies"] == []
    assert not re.search("[а-яА-Я]", " ".join(c.texts))


# -- files, store, CLI ---------------------------------------------------------------------------------
def test_write_and_store_round_trip(tmp_path):
    corpus = weblike(80, seed=1)
    paths = corpus.write(tmp_path / "out")
    lines = paths["corpus"].read_text(encoding="utf-8").splitlines()
    rows = [json.loads(x) for x in lines]
    assert [r["id"] for r in rows] == corpus.ids
    assert [r["text"] for r in rows] == corpus.texts
    assert [r["url"] for r in rows] == corpus.urls
    truth = json.loads(paths["truth"].read_text(encoding="utf-8"))
    assert truth["name"] == "weblike" and truth["params"]["n_pages"] == 80
    assert truth["docs"] == corpus.truth["docs"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["corpus.jsonl", "truth.json"]
    back = SynthCorpus.load(tmp_path / "out")
    assert back.texts == corpus.texts and back.urls == corpus.urls and back.ids == corpus.ids
    assert back.truth == json.loads(json.dumps(corpus.truth)) and back.name == "weblike"
    assert back.params == json.loads(json.dumps(corpus.params))
    (tmp_path / "out" / "truth.json").unlink()
    with pytest.raises(InputError, match="truth.json"):
        SynthCorpus.load(tmp_path / "out")
    store = corpus.to_store()
    assert store.n_docs == 80 and store.doc_ids == corpus.ids
    assert store.n_tokens == sum(len(tokenize_reference(t)) for t in corpus.texts)


def test_written_corpus_reads_back_through_the_readers(tmp_path):
    from repetend.corpus.readers import read_corpus

    corpus = weblike(60, seed=9)                 # \r\n, doubled spaces, Cyrillic, «», ©
    path = corpus.write(tmp_path)["corpus"]
    got = list(read_corpus([path]))
    assert [(r.id, r.url, r.text) for r in got] == \
        [(r.id, r.url, r.text) for r in corpus.records]


def test_cli_synth(tmp_path):
    from repetend.cli import main

    runner = CliRunner()
    res = runner.invoke(main, ["synth", "weblike", "--docs", "120", "--seed", "3",
                               "--out", str(tmp_path / "w")])
    assert res.exit_code == 0, res.output
    assert "corpus.jsonl" in res.output and "truth.json" in res.output
    assert len((tmp_path / "w" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()) == 120
    res = runner.invoke(main, ["synth", "synthetic1", "--docs", "6", "--words-per-doc", "50",
                               "--out", str(tmp_path / "s")])
    assert res.exit_code == 0, res.output
    truth = json.loads((tmp_path / "s" / "truth.json").read_text(encoding="utf-8"))
    assert [p["support"] for p in truth["phrases"]] == [3, 5, 4]
    res = runner.invoke(main, ["synth", "synthetic1", "--docs", "3", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "error:" in res.output and "n_docs" in res.output
    assert not (tmp_path / "x" / "corpus.jsonl").exists()


def test_demo_corpus_size():
    c = synth.demo_corpus(seed=0)
    assert len(c) == synth.DEMO_PAGES
    assert c.truth["summary"]["pages"] == synth.DEMO_PAGES


def test_public_api():
    assert synth.__all__ == sorted(synth.__all__)
    assert set(synth.GENERATORS) == {"synthetic1", "synthetic2", "weblike"}
