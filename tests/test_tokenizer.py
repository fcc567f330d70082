"""The compiled tokenizer against the reference definition (tokenize_ref)."""

from __future__ import annotations

import sys
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repetend.corpus import unicode_table as U
from repetend.corpus.tokenize_ref import is_single_char_token, is_word_char, tokenize_reference
from repetend.corpus.tokenizer import (
    TokenizedBatch,
    hash_strings,
    token_spans,
    tokenize,
    tokenize_batch,
)
from repetend.errors import MissingExtraError, ParameterError
from repetend.neardup.shingles import token_hashes

# characters that exercise every branch: combining marks, CJK and kana (with the
# voiced-sound mark that composes), Cyrillic, Greek sigma in every form, İ / ı,
# digits of other scripts, ZWJ/ZWNJ, all kinds of whitespace, emoji with
# modifiers, Hangul jamo that compose, singletons and exclusions that NFC
# rewrites (Å U+212B, U+0958), Arabic marks out of canonical order, case
# mappings that change the UTF-8 length (K U+212A, Ⱥ U+023A), lone surrogates.
SPECIAL = list(
    "aeiouAZ09_'.-,;:!?()©®"
    "\u0300\u0301\u0308\u0327\u0323\u0483\u05b0\u064b\u064e\u0651\u093c\u094d"
    "東京日本語漢字\u3400\U00020000\U0002a6df\uf900タワーカかが\u3099\u309a\uff76\u31f0"
    "Все права защищены ЁёЙй"
    "ΣσςΑΟΔ İıIi ß ẞ ǅ ǆ Ａａ K Ⱥ ⱥ"
    "éôȓáạộÅư̖̈̄̂"   # precomposed letters before lower-class marks
    "٣߃१۳"
    "\u200d\u200c\u2060\ufeff"
    " \t\n\r\x0b\x0c\u00a0\u1680\u2000\u2028\u2029\u3000\x1c\x85"
    "👍🏽👨\u200d👩\U0001f1f7\U0001f1fa"
    "\u1100\u1161\u11a8가각"
    "\u212b\u0958\u2126\u0344\u0f73"
    "\ud800\udc00\udfff"
)

alphabet = st.one_of(st.sampled_from(SPECIAL), st.characters(exclude_categories=("Cs",)))
texts = st.text(alphabet=alphabet, max_size=40)


def _tok_of_doc(tb: TokenizedBatch, d: int) -> list[str]:
    return tb.strings(np.arange(tb.doc_offsets[d], tb.doc_offsets[d + 1]))


def _surface(text: str) -> str:
    """NFC + lower of a substring; final sigma is context dependent in str.lower
    (the context may lie outside the token), so compare it with σ."""
    return unicodedata.normalize("NFC", text).lower().replace("ς", "σ")


def _char_oracle(text: str) -> list[str]:
    norm = unicodedata.normalize("NFC", text).lower()
    out: list[str] = []
    space = False
    for ch in norm:
        if ch.isspace():
            space = True
            continue
        if space and out:
            out.append(" ")
        space = False
        out.append(ch)
    return out


# -- the definition --------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("Все права защищены.", ["все", "права", "защищены"]),
    ("© 2024 Company_Name", ["2024", "company", "name"]),
    ("nai\u0308ve cafe\u0301", ["naïve", "café"]),
    ("東京タワー", ["東", "京", "タ", "ワ", "ー"]),
])
def test_examples_of_the_contract(text, expected):
    assert tokenize(text) == expected
    assert tokenize_reference(text) == expected


@settings(max_examples=400, deadline=None)
@given(texts)
def test_tokenize_matches_reference(text):
    assert tokenize(text) == tokenize_reference(text)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.just(""), texts), max_size=8))
def test_batch_matches_reference_and_hashes(batch):
    tb = tokenize_batch(batch)
    assert tb.doc_offsets.dtype == np.int64 and tb.hashes.dtype == np.uint64
    assert tb.doc_offsets.shape == (len(batch) + 1,)
    assert tb.doc_offsets[0] == 0 and tb.doc_offsets[-1] == tb.hashes.size
    allstr = tb.strings(np.arange(tb.hashes.size))
    for d, t in enumerate(batch):
        assert _tok_of_doc(tb, d) == tokenize_reference(t)
    # FNV-1a 64 of the normalized UTF-8, as the shingle code hashes vocabulary strings
    assert np.array_equal(tb.hashes, token_hashes(allstr))
    assert np.array_equal(tb.hashes, hash_strings(allstr))


@settings(max_examples=300, deadline=None)
@given(texts)
def test_token_spans_map_back(text):
    ref = tokenize_reference(text)
    spans = token_spans(text)
    assert spans.dtype == np.int64 and spans.shape == (len(ref), 2)
    if not len(ref):
        return
    assert np.all(spans[:, 0] < spans[:, 1])
    assert spans[0, 0] >= 0 and spans[-1, 1] <= len(text)
    assert np.all(np.diff(spans[:, 0]) >= 0) and np.all(np.diff(spans[:, 1]) >= 0)
    for (s, e), tok in zip(spans.tolist(), ref):
        got, tok = _surface(text[s:e]), tok.replace("ς", "σ")
        if got != tok:
            # only where NFC recombined characters across the token's edge (see
            # token_spans): the span is widened to the whole normalization segment
            assert not unicodedata.is_normalized("NFC", text)
            assert tok in got


@pytest.mark.parametrize("text", [
    "Hello, World! Это ТЕСТ.",
    "İstanbul'da ΟΔΟΣ ΑΣ'Α",            # lower with context and expansion
    "e\u0301te\u0301 Cafe\u0301, Å",     # NFD input, singleton
    "\u1100\u1161\u11a8 x \u0958\u093c",  # Hangul jamo, composition exclusion
    "a\ud800b \udcff c",                  # lone surrogates separate
])
def test_token_spans_surface_forms(text):
    spans = token_spans(text)
    ref = tokenize_reference(text)
    assert len(spans) == len(ref)
    for (s, e), tok in zip(spans.tolist(), ref):
        assert _surface(text[s:e]) == tok.replace("ς", "σ")


def test_surface_keeps_case_and_punctuation():
    text = "Доставка БЕСПЛАТНО: при заказе от 3000 руб."
    spans = token_spans(text)
    assert text[spans[0, 0]:spans[1, 1]] == "Доставка БЕСПЛАТНО"
    assert text[spans[-2, 0]:spans[-1, 1]] == "3000 руб"


# -- character tokens ------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.lists(texts, max_size=5))
def test_char_unit_matches_oracle(batch):
    tb = tokenize_batch(batch, unit="char")
    for d, t in enumerate(batch):
        toks = _tok_of_doc(tb, d)
        assert toks == _char_oracle(t)
        spans = token_spans(t, unit="char")
        assert spans.shape == (len(toks), 2)
    allstr = tb.strings(np.arange(tb.hashes.size))
    assert np.array_equal(tb.hashes, token_hashes(allstr))


def test_char_unit_example():
    tb = tokenize_batch(["  Ab\t\n c  ", ""], unit="char")
    assert _tok_of_doc(tb, 0) == ["a", "b", " ", "c"]
    assert _tok_of_doc(tb, 1) == []
    assert token_spans("  Ab\t\n c  ", unit="char").tolist() == [[2, 3], [3, 4], [4, 7], [7, 8]]


# -- long documents --------------------------------------------------------------------

def _words(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab = ["доставка", "бесплатно", "Привет", "world", "Hello", "東", "タワー",
             "2024", "naïve", "x", "ΣΟΦΙΑ"[:-1], "café"]
    seps = [" ", "\n", ", ", ". ", "—", "\t"]
    w = rng.integers(0, len(vocab), n)
    s = rng.integers(0, len(seps), n)
    return [vocab[i] + seps[j] for i, j in zip(w.tolist(), s.tolist())]


@pytest.mark.parametrize("tail", ["", " İ", " \u0301e\u0301"])
def test_long_document_is_split_and_exact(tail):
    # > 2 MiB: scanned in ~1 MiB pieces cut at spaces/newlines (and rescanned
    # in Python-normalized form when the tail makes the document non-NFC / İ)
    text = "".join(_words(300_000, 1)) + tail
    assert len(text.encode()) > 2 * (1 << 20)
    tb = tokenize_batch(["short one", text, ""])
    ref = tokenize_reference(text)
    assert _tok_of_doc(tb, 1) == ref
    assert _tok_of_doc(tb, 0) == ["short", "one"]
    assert np.array_equal(tb.hashes[tb.doc_offsets[1]:tb.doc_offsets[2]], token_hashes(ref))
    spans = token_spans(text)
    assert spans.shape[0] == len(ref)
    assert text[spans[-1, 0]:spans[-1, 1]].lower() == ref[-1] or tail


def test_long_token_without_cut_points():
    text = "я" * (3 << 20)
    tb = tokenize_batch([text, "a b"])
    assert tb.doc_offsets.tolist() == [0, 1, 3]
    assert tb.strings([0]) == [text]


# -- tables ------------------------------------------------------------------------

def test_unicode_tables_agree_with_reference():
    T = U.tables()
    cps = np.concatenate([np.arange(0, 0x3400), np.arange(0x3400, 0x110000, 7)])
    for cp in cps.tolist():
        ch = chr(cp)
        f = int(T.flags[cp])
        assert bool(f & U.WORD) == is_word_char(ch), hex(cp)
        assert bool(f & U.SINGLE) == (is_word_char(ch) and is_single_char_token(ch)), hex(cp)
        assert bool(f & U.SPACE) == ch.isspace(), hex(cp)


def test_tables_cache_roundtrip(tmp_path, monkeypatch):
    monkeypatch.setenv("REPETEND_CACHE_DIR", str(tmp_path))
    built = U.build_tables()
    U._save(U._cache_file(), built)
    loaded = U._load(U._cache_file())
    assert loaded is not None
    for name in ("flags", "lflags", "lower", "ccc", "lower_len"):
        assert np.array_equal(getattr(built, name), getattr(loaded, name))
    (tmp_path / U._cache_file().name).write_bytes(b"garbage")
    assert U._load(U._cache_file()) is None


# -- code tokens -------------------------------------------------------------------

GO = '''package main

import "fmt"

// Add returns the sum.
func Add(a, b int) int {
\t/* block
\t   comment */
\treturn a + b // trailing
}
'''


def test_code_tokens_drop_comments_keep_case():
    pytest.importorskip("pygments")
    tb = tokenize_batch([GO, GO.replace("// Add returns the sum.", "// Other words")],
                        unit="code", names=["add.go", "x.go"])
    a, b = _tok_of_doc(tb, 0), _tok_of_doc(tb, 1)
    assert a == b
    assert a[:4] == ["package", "main", "import", '"fmt"']
    assert "Add" in a and "return" in a
    assert not any("comment" in t or "trailing" in t or t.startswith("//") for t in a)
    assert np.array_equal(tb.hashes, token_hashes(tb.strings(np.arange(tb.hashes.size))))
    spans = token_spans(GO, unit="code", name="add.go")
    assert [GO[s:e] for s, e in spans.tolist()] == a
    assert tokenize_batch([GO], unit="code", lang="go").strings(np.arange(len(a))) == a


def test_code_text_fallback_splits_words():
    pytest.importorskip("pygments")
    tb = tokenize_batch(["Just some  Words\nhere"], unit="code", lang="text")
    assert _tok_of_doc(tb, 0) == ["Just", "some", "Words", "here"]


def test_code_unknown_lang():
    pytest.importorskip("pygments")
    with pytest.raises(ParameterError, match="no-such-lang"):
        tokenize_batch(["x"], unit="code", lang="no-such-lang")


def test_code_without_pygments(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygments", None)
    with pytest.raises(MissingExtraError, match="pygments"):
        tokenize_batch(["x = 1"], unit="code", lang="python")


def test_bad_parameters():
    with pytest.raises(ParameterError):
        tokenize_batch(["x"], unit="words")  # type: ignore[arg-type]
    with pytest.raises(ParameterError):
        tokenize_batch(["x", "y"], unit="code", names=["a.py"])
    with pytest.raises(ParameterError):
        token_spans("x", unit="bytes")  # type: ignore[arg-type]


# -- paths of the batch scanner ------------------------------------------------------

def test_python_fallback_changing_token_counts(monkeypatch):
    # か + U+3099 is two single-character tokens before NFC and one (が) after:
    # the fixed document's tokens cannot be written over the first scan's
    from repetend.corpus import _tokenizer_kernels as K

    calls = []
    gather = K.gather_tokens
    monkeypatch.setattr(K, "gather_tokens", lambda *a: calls.append(1) or gather(*a))
    batch = ["a b", "か\u3099 x", "İ y", "", "e\u0301 Σ'α", "c"]
    tb = tokenize_batch(batch)
    assert calls
    for d, t in enumerate(batch):
        assert _tok_of_doc(tb, d) == tokenize_reference(t)
    assert np.array_equal(tb.hashes, token_hashes(tb.strings(np.arange(len(tb)))))


@pytest.mark.parametrize("doc", ["a " * 200_000, "東" * 100_000, "a,b;" * 100_000])
def test_dense_tokens_regrow_output(doc):
    # more tokens than the first capacity guess (bytes / 4)
    batch = [doc, "tail doc"]
    tb = tokenize_batch(batch)
    for d, t in enumerate(batch):
        assert _tok_of_doc(tb, d) == tokenize_reference(t)


def test_many_documents_in_parallel_ranges():
    words = _words(200_000, 3)
    docs = ["".join(words[i:i + 50]) for i in range(0, len(words), 50)]
    docs[7] += " İ"  # one document through the Python path
    tb = tokenize_batch(docs)
    assert tb.doc_offsets.shape == (len(docs) + 1,)
    for d in (0, 7, len(docs) // 2, len(docs) - 1):
        assert _tok_of_doc(tb, d) == tokenize_reference(docs[d])
    ref_counts = [len(tokenize_reference(t)) for t in docs]
    assert np.diff(tb.doc_offsets).tolist() == ref_counts


def _kernel_flag(text: str, enc16: bool) -> int:
    from repetend.corpus import _tokenizer_kernels as K

    T = U.tables()
    data = text.encode("utf-16-le") if enc16 else text.encode("utf-8", "surrogatepass")
    buf = np.frombuffer(data, dtype=np.uint8)
    with np.errstate(over="ignore"):  # FNV wrap-around when numba is off
        _, flag = K.count_segments(buf, np.zeros(1, np.int64), np.array([buf.size], np.int64),
                                   np.ones(1, np.uint8), np.array([enc16]), 0, T.flags,
                                   T.lflags, T.lower, T.ccc, T.compose_keys)
    return int(flag[0])


@settings(max_examples=400, deadline=None)
@given(texts)
def test_kernel_nfc_quick_check_is_safe(text):
    # the in-kernel check may send NFC text to the Python path, never the reverse
    from repetend.corpus import _tokenizer_kernels as K

    flags = [_kernel_flag(text, False)]
    if not any(0xD800 <= ord(c) < 0xE000 for c in text):
        flags.append(_kernel_flag(text, True))
        assert flags[0] == flags[1]
    if not flags[0] & K.FLAG_NFC:
        assert unicodedata.is_normalized("NFC", text)
    if not flags[0] & K.FLAG_LOWER:
        assert "İ" not in text and "Σ" not in text


@pytest.mark.parametrize("text, needs_nfc", [
    ("удаа́рение и ударе́ние", False),   # stress marks on letters without precomposed forms
    ("e\u0301", True), ("и\u0306", True), ("\u1100\u1161", True), ("가\u11a8", True),
    ("a\u0323\u0301", True),          # ạ + acute: not NFC
    ("\u0430\u0323\u0301", True),     # conservative: a Maybe mark after another mark
    ("\u0915\u093c", False), ("\u0958", True),
    (" \u0301\u0323", True), ("x\u0301\u0323", True),  # marks out of canonical order
])
def test_kernel_nfc_check_examples(text, needs_nfc):
    from repetend.corpus import _tokenizer_kernels as K

    for enc16 in (False, True):
        assert bool(_kernel_flag(text, enc16) & K.FLAG_NFC) == needs_nfc
    assert needs_nfc or unicodedata.is_normalized("NFC", text)


@pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning")
def test_thread_pool_survives_fork():
    import multiprocessing as mp

    big = ["слово word " * 60_000] * 2  # > 1 MiB: scanned in the thread pool
    parent = tokenize_batch(big)
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        n = pool.apply(_count_tokens, (big,))
    assert n == len(parent)


def _count_tokens(texts):
    return len(tokenize_batch(texts))


@pytest.mark.parametrize("batch", [
    ["a😀b", "\U00020000東 x", "plain ascii", "ещё"],      # astral: UTF-16 offsets by kernel
    ["only ascii", "", "here too"],                          # ASCII batch
    ["ёлка\udc80ёж", "😀x", "Ab"],                            # lone surrogate: per document
])
def test_batch_encodings(batch):
    tb = tokenize_batch(batch)
    for d, t in enumerate(batch):
        assert _tok_of_doc(tb, d) == tokenize_reference(t)
    tc = tokenize_batch(batch, unit="char")
    for d, t in enumerate(batch):
        assert _tok_of_doc(tc, d) == _char_oracle(t)


def test_dense_tokens_in_parallel_ranges():
    # > 1 MiB, two ranges, each outgrowing its region (private arrays, then joined)
    batch = ["a " * 400_000, "b,c " * 200_000, "Ёж " * 300_000]
    tb = tokenize_batch(batch)
    assert np.diff(tb.doc_offsets).tolist() == [400_000, 400_000, 300_000]
    assert tb.strings([0, 399_999, 400_000, 400_001, 800_000, len(tb) - 1]) == \
        ["a", "a", "b", "c", "ёж", "ёж"]
    assert np.array_equal(tb.hashes[:3], token_hashes(["a", "a", "a"]))


def test_none_is_an_empty_document_and_other_types_are_errors():
    for unit in ("word", "char"):
        tb = tokenize_batch(["a b", None, "c"], unit=unit)
        assert np.diff(tb.doc_offsets).tolist()[1] == 0
    with pytest.raises(ParameterError, match=r"texts\[1\] is a bytes"):
        tokenize_batch(["a", b"b"])


def test_output_arrays_reused_only_when_no_longer_referenced():
    """Batches reuse the previous batch's output arrays (no page faults), but
    never while any hashes / views of an earlier batch are still alive."""
    from repetend.corpus import tokenizer as TK

    a_texts = ["alpha beta gamma " * 50, "Привет мир " * 40]
    b_texts = ["delta epsilon " * 80, "東京 x y z " * 30]
    want_a = TK.tokenize_batch(a_texts).hashes.copy()
    want_b = TK.tokenize_batch(b_texts).hashes.copy()
    kept = TK.tokenize_batch(a_texts).hashes        # a view: the batch itself is gone
    view = kept[5:]
    hb = TK.tokenize_batch(b_texts).hashes           # must not write over ``kept``
    assert np.array_equal(kept, want_a) and np.array_equal(view, want_a[5:])
    assert np.array_equal(hb, want_b)
    del kept, view, hb
    first = TK.tokenize_batch(a_texts).hashes
    first_base = id(first.base)  # the pool holds it: the id stays unique
    del first
    again = TK.tokenize_batch(a_texts).hashes
    assert np.array_equal(again, want_a)
    assert id(again.base) == first_base, "a free output array is taken again"


def test_lower_table_is_identity_where_not_flagged():
    """The scanner's inner loop looks every plain character up in ``lower``
    without testing LF_LOWER first: that needs the identity wherever the flag is off."""
    from repetend.corpus import _tokenizer_kernels as K

    T = U.tables()
    off = (T.lflags & K.LF_LOWER) == 0
    cps = np.arange(T.lower.size)
    assert np.array_equal(T.lower[off], cps[off])
    assert not np.array_equal(T.lower[~off], cps[~off])


@pytest.mark.parametrize("text", ["\xf4\u0323", "x \xe1\u0323 y", "\u1ea1\u0301",
                                  "\u0130\u0323", "e\u0301\u0323 \u0213\u0323"])
def test_precomposed_letter_before_a_lower_class_mark_is_renormalized(text):
    assert tokenize(text) == tokenize_reference(text)
    assert tokenize_batch([text]).strings(range(len(tokenize_reference(text)))) == \
        tokenize_reference(text)
