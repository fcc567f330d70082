"""The suffix engine against the brute-force oracle (tests/naive_phrases.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_phrases import naive_phrases
from repetend.phrases import _suffix_kernels as K
from repetend.phrases.suffix import mine_suffix

pytest.importorskip("pydivsufsort")
# the filter's hash arithmetic wraps around on purpose: silent under numba,
# a RuntimeWarning when the kernels run as Python (NUMBA_DISABLE_JIT=1)
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


def as_dict(raw, tokens):
    """{phrase tuple: (df, starts)} from a RawPhrases, like the oracle."""
    tokens = np.asarray(tokens)
    out = {}
    for i in range(raw.n_phrases):
        starts = raw.occ_starts[raw.occ_offsets[i]:raw.occ_offsets[i + 1]]
        assert np.all(np.diff(starts) > 0), "occurrence starts must be sorted and distinct"
        p = tuple(int(x) for x in tokens[starts[0]:starts[0] + raw.lengths[i]])
        assert p not in out, "a phrase is reported twice"
        out[p] = (int(raw.df[i]), [int(s) for s in starts])
    return out


@st.composite
def corpora(draw):
    alphabet = draw(st.integers(2, 4))
    n_docs = draw(st.integers(1, 8))
    docs = [draw(st.lists(st.integers(0, alphabet - 1), min_size=0, max_size=30))
            for _ in range(n_docs)]
    tokens = np.array([t for d in docs for t in d], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    return tokens, offsets, draw(st.integers(1, 6)), draw(st.integers(1, 5))


@settings(max_examples=250, deadline=None)
@given(corpora())
def test_matches_naive_oracle(case):
    tokens, offsets, sigma, min_len = case
    raw = mine_suffix(tokens, offsets, sigma, min_len)
    assert as_dict(raw, tokens) == naive_phrases(tokens, offsets, sigma, min_len)


def test_random_larger_corpora_match_oracle():
    rng = np.random.default_rng(7)
    for _ in range(30):
        n_docs = int(rng.integers(5, 15))
        lens = rng.integers(0, 60, n_docs)
        # a planted template plus noise so that long phrases exist
        tpl = rng.integers(0, 3, 12)
        docs = []
        for ln in lens:
            d = rng.integers(0, 6, ln)
            if ln > 20 and rng.random() < 0.6:
                a = int(rng.integers(0, ln - 12))
                d[a:a + 12] = tpl
            docs.append(d)
        tokens = np.concatenate(docs).astype(np.int32)
        offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        sigma, min_len = int(rng.integers(2, 5)), int(rng.integers(2, 8))
        raw = mine_suffix(tokens, offsets, sigma, min_len)
        assert as_dict(raw, tokens) == naive_phrases(tokens, offsets, sigma, min_len)


def test_toy_example_of_the_seed():
    words = ("новый ноутбук acer swift доставка бесплатно при заказе от 3000 рублей "
             "чехол для iphone 15 наушники sony wh 1000").split()
    ids = {w: i for i, w in enumerate(dict.fromkeys(words))}
    docs = ["новый ноутбук acer swift доставка бесплатно при заказе от 3000 рублей",
            "чехол для iphone 15 доставка бесплатно при заказе от 3000 рублей",
            "доставка бесплатно при заказе от 3000 рублей наушники sony",
            "наушники sony wh 1000 доставка бесплатно"]
    toks = [[ids[w] for w in d.split()] for d in docs]
    tokens = np.array([t for d in toks for t in d], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in toks])])
    raw = mine_suffix(tokens, offsets, 3, 1)
    got = as_dict(raw, tokens)
    inv = {i: w for w, i in ids.items()}
    assert {" ".join(inv[t] for t in p) for p in got} == {
        "доставка бесплатно при заказе от 3000 рублей"}
    assert [v[0] for v in got.values()] == [3]
    assert got == naive_phrases(tokens, offsets, 3, 1)


def test_sigma_above_document_count_gives_nothing():
    tokens = np.array([1, 2, 1, 2, 1, 2], dtype=np.int32)
    raw = mine_suffix(tokens, np.array([0, 2, 4, 6]), 4, 1)
    assert raw.n_phrases == 0 and raw.occ_offsets.tolist() == [0]
    raw = mine_suffix(tokens, np.array([0, 2, 4, 6]), 3, 1)
    assert as_dict(raw, tokens) == {(1, 2): (3, [0, 2, 4])}


def test_empty_documents_are_boundaries_only():
    tokens = np.array([5, 6, 5, 6, 5, 6], dtype=np.int32)
    offsets = np.array([0, 0, 2, 2, 2, 4, 6, 6])
    raw = mine_suffix(tokens, offsets, 3, 2)
    assert as_dict(raw, tokens) == naive_phrases(tokens, offsets, 3, 2) == {(5, 6): (3, [0, 2, 4])}
    empty = mine_suffix(np.zeros(0, np.int32), np.array([0, 0, 0]), 1, 1)
    assert empty.n_phrases == 0


def test_repeats_inside_one_document_count_once():
    # "a b" occurs 5 times in doc 0 and once in doc 1: df 2, six occurrences
    tokens = np.array([0, 1] * 5 + [2, 0, 1], dtype=np.int32)
    offsets = np.array([0, 10, 13])
    raw = mine_suffix(tokens, offsets, 2, 2)
    assert as_dict(raw, tokens) == naive_phrases(tokens, offsets, 2, 2)
    assert as_dict(raw, tokens)[(0, 1)][0] == 2


def test_left_extension_frequent_through_one_group_only():
    # P = "x y" has df 4; "a x y" has df 2 (a, not all occurrences share it):
    # with sigma = 2 "x y" is not maximal although its left tokens differ
    tokens = np.array([7, 1, 2, 7, 1, 2, 8, 1, 2, 9, 1, 2], dtype=np.int32)
    offsets = np.array([0, 3, 6, 9, 12])
    raw = mine_suffix(tokens, offsets, 2, 1)
    got = as_dict(raw, tokens)
    assert got == naive_phrases(tokens, offsets, 2, 1)
    assert (1, 2) not in got and (7, 1, 2) in got


def test_lcp_is_clamped_at_separators():
    tokens = np.array([1, 2, 1, 2], dtype=np.int32)
    offsets = np.array([0, 2, 4])
    code = np.array([0, 1, 2], dtype=np.int32)
    text, seg_doc, seg_orig, seg_cstart, seg_len = K.compact_runs(tokens, offsets, code, 1,
                                                                   code[tokens] != 0)
    assert text.tolist() == [1, 2, 0, 1, 2, 0]
    assert seg_doc.tolist() == [0, 1] and seg_orig.tolist() == [0, 2]
    import pydivsufsort

    sa = pydivsufsort.divsufsort(text)
    lcp, _ = K.kasai_clamped(text, sa)
    # the two "1 2" suffixes share exactly two tokens, not the separators after them
    assert sorted(lcp.tolist()) == [0, 0, 0, 0, 1, 2]


def test_compaction_keeps_only_long_runs_of_frequent_tokens():
    # token 9 is rare (df 1): it splits document 0 into runs [0,1,2] and [0,1]
    tokens = np.array([0, 1, 2, 9, 0, 1, 0, 1, 2], dtype=np.int32)
    offsets = np.array([0, 6, 9])
    code = np.array([1, 2, 3, 0, 0, 0, 0, 0, 0, 0], dtype=np.int32)
    text, seg_doc, seg_orig, seg_cstart, seg_len = K.compact_runs(tokens, offsets, code, 3,
                                                                   code[tokens] != 0)
    assert text.tolist() == [1, 2, 3, 0, 1, 2, 3, 0]
    assert seg_doc.tolist() == [0, 1] and seg_orig.tolist() == [0, 6]
    assert seg_cstart.tolist() == [0, 4] and seg_len.tolist() == [3, 3]
    raw = mine_suffix(tokens, offsets, 2, 3)
    assert as_dict(raw, tokens) == naive_phrases(tokens, offsets, 2, 3) == {
        (0, 1, 2): (2, [0, 6])}
    assert raw.stats["kept_tokens"] == 6


def test_kgram_filter_cuts_stretches_and_stays_exact():
    # "0 1 2 3" in three documents; document 3 has "0 1 2 5 3": its 3-gram
    # "1 2 5" occurs once, so with k = 3 only "0 1 2" of it stays covered
    tokens = np.array([0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 5, 3], dtype=np.int32)
    offsets = np.array([0, 4, 8, 12, 17])
    for use in (True, False):
        raw = mine_suffix(tokens, offsets, 2, 3, kgram_filter=use)
        assert as_dict(raw, tokens) == naive_phrases(tokens, offsets, 2, 3)
    code = np.array([1, 2, 3, 4, 0, 5], dtype=np.int32)
    cover = K.kgram_cover(tokens, offsets, code, 3, 12, 2)
    assert cover.tolist() == [True] * 12 + [True, True, True, False, False]
    text, seg_doc, *_ = K.compact_runs(tokens, offsets, code, 3, cover)
    assert seg_doc.tolist() == [0, 1, 2, 3]
    assert text.tolist()[-4:] == [1, 2, 3, 0]
    # a k-gram with a rare token (code 0) never counts
    code[5] = 0
    cover = K.kgram_cover(tokens, offsets, code, 2, 12, 1)
    assert cover.tolist()[12:] == [True, True, True, False, False]


@settings(max_examples=100, deadline=None)
@given(corpora())
def test_kgram_filter_with_collisions_is_exact(case):
    # 2 and 8 buckets: almost every k-gram collides, results must not change
    tokens, offsets, sigma, min_len = case
    if tokens.size == 0:
        return
    expected = naive_phrases(tokens, offsets, sigma, min_len)
    for bits in (1, 3):
        raw = mine_suffix(tokens, offsets, sigma, min_len, filter_bits=bits)
        assert as_dict(raw, tokens) == expected
    raw = mine_suffix(tokens, offsets, sigma, min_len, kgram_filter=False)
    assert as_dict(raw, tokens) == expected


@pytest.mark.parametrize("n_distinct, dtype", [
    (200, "uint8"), (3000, "uint16"),
    pytest.param(70000, "int32", marks=pytest.mark.slow),   # ~20 s, mostly the oracle
])
def test_text_dtype_paths_match_oracle(n_distinct, dtype):
    # short documents over a large alphabet
    rng = np.random.default_rng(n_distinct)
    n_docs = n_distinct // 2 + 50
    lens = rng.integers(1, 5, n_docs)
    tokens = rng.integers(0, 4, int(lens.sum())).astype(np.int32)
    uniq = rng.permutation(tokens.size)[:n_distinct - 4]
    tokens[uniq] = np.arange(4, n_distinct, dtype=np.int32)[:uniq.size]
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    raw = mine_suffix(tokens, offsets, 1, 1)        # sigma = L = 1: every token is kept
    assert raw.stats["text_dtype"] == dtype
    assert as_dict(raw, tokens) == naive_phrases(tokens, offsets, 1, 1)
    raw = mine_suffix(tokens, offsets, 3, 1)
    assert as_dict(raw, tokens) == naive_phrases(tokens, offsets, 3, 1)


def test_interval_output_capacity_is_reported():
    # ask the traversal for room for one interval; it must say how many it found
    tokens = np.array([0, 1, 2, 0, 1, 2, 5, 6, 7, 5, 6, 7], dtype=np.int32)
    offsets = np.array([0, 3, 6, 9, 12])
    code = np.arange(1, 9, dtype=np.int32)
    text, seg_doc, seg_orig, seg_cstart, seg_len = K.compact_runs(
        tokens, offsets, code, 1, code[tokens] != 0)
    import pydivsufsort

    sa = pydivsufsort.divsufsort(text)
    lcp, scratch = K.kasai_clamped(text, sa)
    docsa = K.docs_in_sa_order(sa, seg_doc, seg_cstart, seg_len, scratch)
    full = K.frequent_leaves(sa, lcp, docsa, 4, seg_cstart, seg_len, 2, 3, 100)
    assert full[-1] == 2 and full[0].size == 2          # "0 1 2" and "5 6 7"
    cut = K.frequent_leaves(sa, lcp, docsa, 4, seg_cstart, seg_len, 2, 3, 1)
    assert cut[-1] == 2 and cut[0].size == 1 and cut[0][0] == full[0][0]


def test_codes_are_renumbered_after_compaction():
    # 300 frequent tokens, but only 3 of them in runs of length >= 3
    tokens = np.concatenate([np.arange(300), np.arange(300), [0, 1, 2, 0, 1, 2]]).astype(np.int32)
    offsets = np.concatenate([np.arange(0, 601, 2), [603, 606]])
    raw = mine_suffix(tokens, offsets, 2, 3, kgram_filter=False)
    assert raw.stats["alphabet"] == 3 and raw.stats["text_dtype"] == "uint8"
    assert as_dict(raw, tokens) == naive_phrases(tokens, offsets, 2, 3)
