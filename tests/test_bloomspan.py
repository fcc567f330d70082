"""The bloomspan engine against the brute-force oracle, plus its parts."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from repetend import TokenStore
from repetend.errors import ParameterError
from repetend.phrases import _bloomspan_kernels as K
from repetend.phrases import bloomspan as B
from repetend.phrases.bloomspan import build_filter, mine_bloomspan

from naive_phrases import naive_phrases

SHOP = [
    "новый ноутбук acer swift доставка бесплатно при заказе от 3000 рублей",
    "чехол для iphone 15 доставка бесплатно при заказе от 3000 рублей",
    "доставка бесплатно при заказе от 3000 рублей наушники sony",
    "наушники sony wh 1000 доставка бесплатно",
]


def as_dict(raw, tokens):
    """RawPhrases -> {phrase tuple: (df, starts)}, failing on a duplicate phrase."""
    tokens = np.asarray(tokens)
    out = {}
    assert raw.occ_offsets.shape[0] == raw.n_phrases + 1
    for i in range(raw.n_phrases):
        s = raw.occ_starts[raw.occ_offsets[i]:raw.occ_offsets[i + 1]]
        assert s.shape[0] > 0
        p = tuple(int(x) for x in tokens[s[0]:s[0] + raw.lengths[i]])
        assert p not in out, f"phrase {p} reported twice"
        out[p] = (int(raw.df[i]), [int(x) for x in s])
    return out


def corpus(docs):
    lens = [len(d) for d in docs]
    tokens = np.array([t for d in docs for t in d], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    return tokens, offsets


docs_strategy = st.lists(
    st.lists(st.integers(0, 3), min_size=0, max_size=30), min_size=1, max_size=8)


@st.composite
def problems(draw):
    alpha = draw(st.integers(2, 4))
    docs = draw(st.lists(st.lists(st.integers(0, alpha - 1), min_size=0, max_size=30),
                         min_size=1, max_size=8))
    sigma = draw(st.integers(1, 6))
    L = draw(st.integers(1, 5))
    n = draw(st.integers(1, L))
    fbytes = draw(st.sampled_from([1, 2, 8, 64, 1 << 16]))
    return docs, sigma, L, n, fbytes


# ----------------------------------------------------------------------------------
# the whole engine against the oracle


def test_toy_example():
    store = TokenStore.from_texts(SHOP)
    raw = mine_bloomspan(store.tokens, store.doc_offsets, 3, 2, seed_len=2)
    got = as_dict(raw, store.tokens)
    assert got == naive_phrases(store.tokens, store.doc_offsets, 3, 2)
    assert len(got) == 1
    (phrase, (df, starts)), = got.items()
    assert " ".join(store.token_strings(phrase)) == "доставка бесплатно при заказе от 3000 рублей"
    assert df == 3 and len(starts) == 3


@settings(max_examples=300, deadline=None)
@given(problems())
def test_matches_oracle(problem):
    docs, sigma, L, n, fbytes = problem
    tokens, offsets = corpus(docs)
    got = as_dict(mine_bloomspan(tokens, offsets, sigma, L, seed_len=n, filter_bytes=fbytes), tokens)
    assert got == naive_phrases(tokens, offsets, sigma, L)


@settings(max_examples=100, deadline=None)
@given(problems(), st.sampled_from([64, 128, 192]))
def test_matches_oracle_many_blocks(problem, block):
    # tiny parallel blocks of the second pass: block boundaries inside documents
    docs, sigma, L, n, fbytes = problem
    tokens, offsets = corpus([d * 5 for d in docs])  # longer documents
    old = B._BLOCK
    B._BLOCK = block
    try:
        raw = mine_bloomspan(tokens, offsets, sigma, L, seed_len=n, filter_bytes=fbytes)
    finally:
        B._BLOCK = old
    assert as_dict(raw, tokens) == naive_phrases(tokens, offsets, sigma, L)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(1, 6))
def test_matches_oracle_nested_repeats(seed, sigma, L):
    # documents built from a few planted phrases and their pieces: deep nesting
    rng = np.random.default_rng(seed)
    base = [list(rng.integers(0, 3, rng.integers(3, 12))) for _ in range(3)]
    docs = []
    for _ in range(rng.integers(2, 9)):
        d = []
        for _ in range(rng.integers(1, 4)):
            p = base[rng.integers(0, 3)]
            a = rng.integers(0, len(p))
            b = rng.integers(a, len(p) + 1)
            d += p[a:b] + [int(rng.integers(3, 6))]
        docs.append(d)
    tokens, offsets = corpus(docs)
    n = int(rng.integers(1, L + 1))
    got = as_dict(mine_bloomspan(tokens, offsets, sigma, L, seed_len=n), tokens)
    assert got == naive_phrases(tokens, offsets, sigma, L)


def test_default_seed_len_is_exact():
    store = TokenStore.from_texts(SHOP * 2 + ["доставка бесплатно при заказе"])
    for L in range(1, 9):
        got = as_dict(mine_bloomspan(store.tokens, store.doc_offsets, 2, L), store.tokens)
        assert got == naive_phrases(store.tokens, store.doc_offsets, 2, L)


# ----------------------------------------------------------------------------------
# edge cases


def check(docs, sigma, L, **kw):
    tokens, offsets = corpus(docs)
    raw = mine_bloomspan(tokens, offsets, sigma, L, **kw)
    exp = naive_phrases(tokens, offsets, sigma, L)
    assert as_dict(raw, tokens) == exp
    return exp, raw


def test_sigma_above_number_of_documents():
    exp, raw = check([[1, 2, 3], [1, 2, 3]], 3, 1)
    assert exp == {} and raw.n_phrases == 0


def test_sigma_one_documents_not_inside_others():
    docs = [[1, 2, 3], [2, 3], [4, 1, 2], [1, 2, 3], []]
    exp, _ = check(docs, 1, 1)
    assert set(exp) == {(1, 2, 3), (4, 1, 2)}
    assert exp[(1, 2, 3)] == (2, [0, 8])


def test_self_overlapping_phrase():
    exp, _ = check([[7, 7, 7, 7], [7, 7, 7], [5, 7, 7, 7, 5]], 3, 1)
    assert exp == {(7, 7, 7): (3, [0, 1, 4, 8])}


def test_repeats_inside_one_document_count_once():
    exp, _ = check([[1, 2, 1, 2, 1, 2], [1, 2], [3]], 2, 1)
    assert exp == {(1, 2): (2, [0, 2, 4, 6])}
    exp, _ = check([[1, 2, 1, 2, 1, 2], [3]], 2, 1)
    assert exp == {}


def test_empty_and_one_token_documents():
    check([[], [5], [], [5], [5, 6], []], 2, 1)
    check([[], [5], [], [5], [5, 6], []], 3, 1)
    check([[], [], []], 1, 1)
    exp, raw = check([[5], [5]], 2, 2)
    assert exp == {} and raw.n_phrases == 0


def test_left_neighbour_at_document_start():
    # "b c" has left token "a" in one document and starts the other: not pruned
    check([[1, 2, 3], [2, 3], [9, 2, 3, 4]], 2, 2, seed_len=2)
    check([[1, 2, 3], [1, 2, 3], [2, 3]], 3, 2, seed_len=2)


def test_saturating_counters_sigma_300():
    rng = np.random.default_rng(5)
    phrase = [1, 2, 3, 4, 5]
    docs = []
    for d in range(320):
        body = list(rng.integers(10, 40, 6))
        if d < 300:
            body[3:3] = phrase
        docs.append(body)
    tokens, offsets = corpus(docs)
    exp = naive_phrases(tokens, offsets, 300, 3)
    assert set(exp) == {tuple(phrase)}
    for fbytes in (4, 1 << 16):
        raw = mine_bloomspan(tokens, offsets, 300, 3, seed_len=2, filter_bytes=fbytes)
        assert as_dict(raw, tokens) == exp
    # σ > 255 while the phrase is in 300 documents only: must not pass at σ = 301
    raw = mine_bloomspan(tokens, offsets, 301, 3, seed_len=2)
    assert raw.n_phrases == 0 == len(naive_phrases(tokens, offsets, 301, 3))


def test_coverage_skip_is_a_documented_approximation():
    # x a / z a are frequent and found first; "a b" is then covered by "x a b"
    # and "z a b", yet "a b c" (documents 0 and 1) is maximal.
    x, z, a, b, c = 1, 2, 3, 4, 5
    docs = [[x, a, b, c], [z, a, b, c], [x, a, b], [z, a, b]] + [[x, a]] * 5 + [[z, a]] * 5
    tokens, offsets = corpus(docs)
    exp = naive_phrases(tokens, offsets, 2, 2)
    assert (a, b, c) in exp
    exact = mine_bloomspan(tokens, offsets, 2, 2, seed_len=2)
    assert as_dict(exact, tokens) == exp
    assert exact.stats["seeds_covered"] >= 1 and exact.stats["seeds_skipped"] == 0
    approx = mine_bloomspan(tokens, offsets, 2, 2, seed_len=2, coverage_skip=True)
    assert approx.stats["seeds_skipped"] >= 1
    got = as_dict(approx, tokens)
    assert (a, b, c) not in got
    # every reported record is still exact (df and all occurrences)
    for p, (df, starts) in got.items():
        occ = [i for i in range(len(tokens) - len(p) + 1)
               if tuple(tokens[i:i + len(p)]) == p
               and np.searchsorted(offsets, i, "right") == np.searchsorted(offsets, i + len(p) - 1, "right")]
        assert starts == occ
        assert df == len({int(np.searchsorted(offsets, i, "right")) for i in occ})


def test_token_df_given():
    store = TokenStore.from_texts(SHOP * 2)
    df = K.word_df(store.tokens, store.doc_offsets, len(store.vocab))
    exp = naive_phrases(store.tokens, store.doc_offsets, 3, 3)
    raw = mine_bloomspan(store.tokens, store.doc_offsets, 3, 3, token_df=df)
    assert as_dict(raw, store.tokens) == exp
    with pytest.raises(ParameterError):
        mine_bloomspan(store.tokens, store.doc_offsets, 3, 3, token_df=df[:2])


def test_stats_counters():
    store = TokenStore.from_texts(SHOP)
    raw = mine_bloomspan(store.tokens, store.doc_offsets, 3, 2, seed_len=2)
    s = raw.stats
    df = Counter()
    for d in range(store.n_docs):
        for t in set(store.tokens[store.doc_offsets[d]:store.doc_offsets[d + 1]].tolist()):
            df[t] += 1
    assert s["word_df_survivors"] == sum(1 for v in df.values() if v >= 3)
    assert s["tokens"] == store.n_tokens and s["docs"] == 4
    assert s["ngram_survivors"] >= s["seed_occurrences"]
    assert s["seeds"] == 6  # the six bigrams of the phrase, as in the seed's table
    assert s["candidates"] - s["absorbed"] == s["phrases"] == 1
    assert s["covered_tokens"] == 21
    assert all(v >= 0 for k, v in s.items() if k.startswith("seconds_"))


@pytest.mark.parametrize("kw", [
    dict(min_docs=0), dict(min_len=0), dict(seed_len=3, min_len=2), dict(filter_bytes=0),
    dict(min_docs=2.5), dict(vocab_size=2),
])
def test_parameter_errors(kw):
    tokens, offsets = corpus([[1, 2, 3], [1, 2, 3]])
    args = dict(min_docs=2, min_len=2)
    args.update(kw)
    with pytest.raises(ParameterError):
        mine_bloomspan(tokens, offsets, args.pop("min_docs"), args.pop("min_len"), **args)


def test_input_errors():
    with pytest.raises(ParameterError):
        mine_bloomspan(np.array([1, 2], np.int32), np.array([0, 3]), 1, 1)
    with pytest.raises(ParameterError):
        mine_bloomspan(np.array([1, -2], np.int64), np.array([0, 2]), 1, 1)
    with pytest.raises(ParameterError):
        mine_bloomspan(np.array([1, 2], np.int32), np.array([0, 2, 1, 2]), 1, 1)
    # other integer dtypes are accepted
    raw = mine_bloomspan(np.array([1, 2, 1, 2], np.int64), np.array([0, 2, 4], np.int32), 2, 2)
    assert raw.n_phrases == 1


# ----------------------------------------------------------------------------------
# the parts


@settings(max_examples=80, deadline=None)
@given(docs_strategy, st.integers(1, 4), st.sampled_from([2, 4, 16, 1024]), st.booleans(),
       st.lists(st.booleans(), min_size=4, max_size=4))
def test_count_filter_never_undercounts(docs, n, fbytes, many, gate):
    if many:  # push some counters past 255
        docs = docs + [[0, 1, 0, 1]] * 140
    tokens, offsets = corpus(docs)
    word_ok = np.array(gate, dtype=np.uint8)
    for ok in (None, word_ok):
        filt, shift = build_filter(tokens, offsets, n, fbytes, ok)
        true = Counter()
        for d in range(len(offsets) - 1):
            for p in range(offsets[d], offsets[d + 1] - n + 1):
                g = tuple(tokens[p:p + n])
                if ok is None or all(ok[t] for t in g):
                    true[g] += 1
        for p_ in range(len(tokens) - n + 1):
            g = tuple(tokens[p_:p_ + n])
            if g in true:
                assert K.filter_value(filt, shift, tokens, p_, n) >= min(true[g], 255)
        assert int(filt.astype(np.int64).sum()) <= sum(true.values())


def test_fnv1a_matches_definition():
    tokens = np.array([0, 1, 70000, 2**31 - 1], dtype=np.int32)
    h = 0xCBF29CE484222325
    for t in tokens.tolist():
        h ^= t
        h = (h * 0x100000001B3) % 2**64
    assert int(K.fnv1a_ngram(tokens, 0, 4)) == h


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 300), st.integers(0, 80)), max_size=6),
       st.integers(0, 300), st.integers(0, 80))
def test_bit_ranges(ranges, qlo, qlen):
    bits = np.zeros(8, dtype=np.uint64)
    ref = np.zeros(512, dtype=bool)
    for lo, ln in ranges:
        K.set_range(bits, lo, lo + ln)
        ref[lo:lo + ln] = True
    unpacked = np.unpackbits(bits.view(np.uint8), bitorder="little").astype(bool)
    assert np.array_equal(unpacked, ref)
    assert K.all_set(bits, qlo, qlo + qlen) == bool(ref[qlo:qlo + qlen].all())
    assert K.popcount_words(bits) == int(ref.sum())


def test_group_seeds_splits_hash_collisions():
    # same key for different trigrams: the run is split by n-gram, stably
    tokens = np.array([1, 2, 3, 9, 4, 5, 6, 9, 1, 2, 3, 9, 4, 5, 6, 9, 1, 2, 3], np.int32)
    pos = np.array([0, 4, 8, 12, 16], np.int64)
    doc = np.array([0, 1, 2, 3, 4], np.int32)
    key = np.zeros(5, np.uint64)
    s, e, df = K.group_seeds(tokens, pos, doc, key, 3, 2)
    groups = sorted(tuple(pos[s[i]:e[i]].tolist()) for i in range(len(s)))
    assert groups == [(0, 8, 16), (4, 12)]
    assert sorted(df.tolist()) == [2, 3]
    s, e, df = K.group_seeds(tokens, pos, doc, key, 3, 3)
    assert [tuple(pos[s[i]:e[i]].tolist()) for i in range(len(s))] == [(0, 8, 16)]


def test_defaults():
    assert B.default_filter_bytes(10, 20) == 1 << 16
    assert B.default_filter_bytes(10**12, 20) == 512 << 20
    for n_tok, sigma in [(3_000_000, 2), (3_000_000, 3), (3_000_000, 20), (10**8, 300)]:
        f = B.default_filter_bytes(n_tok, sigma)
        want = n_tok / min(max(sigma / 8, 0.25), 8)
        assert f & (f - 1) == 0 and f <= 4 * n_tok
        assert want / 2**0.5 <= f <= want * 2**0.5 or f * 2 > 4 * n_tok
    assert all(1 <= B.default_seed_len(L) <= L for L in range(1, 40))


def _zipf_corpus(n_tokens, seed):
    """Zipfian documents with planted (partly nested) phrases."""
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(np.arange(1, 5001, dtype=float) ** -1.1)
    cdf /= cdf[-1]
    draw = lambda k: np.searchsorted(cdf, rng.random(k)).astype(np.int32)  # noqa: E731
    phrases = [draw(int(rng.integers(4, 25))) for _ in range(12)]
    phrases += [np.concatenate([p, draw(3)]) for p in phrases[:4]]
    docs, total = [], 0
    while total < n_tokens:
        parts = [draw(int(rng.integers(5, 300)))]
        for _ in range(int(rng.integers(0, 3))):
            parts += [phrases[rng.integers(0, len(phrases))], draw(int(rng.integers(0, 50)))]
        d = np.concatenate(parts)
        docs.append(d)
        total += d.shape[0]
    offsets = np.concatenate([[0], np.cumsum([d.shape[0] for d in docs])]).astype(np.int64)
    return np.concatenate(docs).astype(np.int32), offsets


@pytest.mark.parametrize("sigma,L", [(20, 10), (4, 3), (2, 8)])
def test_medium_corpus_matches_suffix_engine(sigma, L):
    # real parallel block size (64 Ki positions): several blocks, long documents
    suffix = pytest.importorskip("repetend.phrases.suffix")
    pytest.importorskip("pydivsufsort")
    tokens, offsets = _zipf_corpus(200_000, sigma)
    exp = as_dict(suffix.mine_suffix(tokens, offsets, sigma, L), tokens)
    assert exp
    for n in sorted({1, 2, L}):
        got = as_dict(mine_bloomspan(tokens, offsets, sigma, L, seed_len=n), tokens)
        assert got == exp


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=300), st.sampled_from([16, 32, 64]),
       st.integers(0, 3))
def test_radix_sort_is_a_stable_sort(vals, nbits, few):
    keys = np.array(vals, dtype=np.uint64) >> np.uint64(64 - nbits)
    if few:  # many equal keys
        keys = keys % np.uint64(few + 1)
    order = np.argsort(keys, kind="stable")
    pos = np.arange(keys.shape[0], dtype=np.int64) * 3
    doc = (np.arange(keys.shape[0]) % 7).astype(np.int32)
    k2, p2, d2 = K.radix_sort_occurrences(keys.copy(), pos.copy(), doc.copy(), nbits)
    assert np.array_equal(k2, keys[order]) and np.array_equal(p2, pos[order])
    assert np.array_equal(d2, doc[order])
