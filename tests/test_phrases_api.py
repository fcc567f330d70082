"""find_phrases: canonical order, coverage, tables, files, errors, engines."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_phrases import naive_coverage, naive_phrases
from repetend import TokenStore
from repetend.errors import InputError, ParameterError
from repetend.phrases import (PhraseConfig, PhraseResult, coverage_mask, covered_per_document,
                              find_phrases, mine_suffix, read_result, share_distribution)
from repetend.phrases.auto import (bloomspan_available, choose_engine, repeat_profile,
                                   self_repeat_share,
                                   repeat_share, survivor_share)

pytest.importorskip("pydivsufsort")
# the filter's hash arithmetic wraps around on purpose: silent under numba,
# a RuntimeWarning when the kernels run as Python (NUMBA_DISABLE_JIT=1)
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

SHOP = [
    "Новый ноутбук Acer Swift. Доставка бесплатно при заказе от 3000 рублей!",
    "Чехол для iPhone 15 — доставка бесплатно, при заказе от 3000 рублей",
    "Доставка бесплатно при заказе от 3000 рублей; наушники Sony",
    "Наушники Sony WH-1000 доставка бесплатно",
]


def random_corpus(rng, n_docs=12, alphabet=4, max_len=40):
    lens = rng.integers(0, max_len, n_docs)
    tokens = rng.integers(0, alphabet, int(lens.sum())).astype(np.int32)
    return tokens, np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)


def naive_canonical(tokens, offsets, sigma, min_len):
    ans = naive_phrases(tokens, offsets, sigma, min_len)
    return sorted(ans.items(), key=lambda kv: (-len(kv[0]) * kv[1][0], -len(kv[0]), kv[0]))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 5), st.integers(1, 4))
def test_tables_match_oracle_in_canonical_order(seed, sigma, min_len):
    rng = np.random.default_rng(seed)
    tokens, offsets = random_corpus(rng, n_docs=int(rng.integers(1, 9)), alphabet=3, max_len=25)
    if tokens.size == 0:
        return
    res = find_phrases((tokens, offsets), min_docs=sigma, min_len=min_len, engine="suffix")
    exp = naive_canonical(tokens, offsets, sigma, min_len)
    ph = res.phrases.to_pydict()
    assert [tuple(int(t) for t in p) for p in ph["tokens"]] == [p for p, _ in exp]
    assert ph["df"] == [v[0] for _, v in exp]
    assert ph["occurrences"] == [len(v[1]) for _, v in exp]
    assert ph["psi"] == [len(p) * v[0] for p, v in exp]
    assert ph["phrase_id"] == list(range(len(exp)))
    # occurrences table: document-local spans of every occurrence
    occ = res.occurrences.to_pydict()
    want = [(i, int(np.searchsorted(offsets, s, side="right") - 1), s, len(p))
            for i, (p, v) in enumerate(exp) for s in v[1]]
    got = [(pid, d, offsets[d] + a, b - a)
           for pid, d, a, b in zip(occ["phrase_id"], occ["doc_index"], occ["start"], occ["end"])]
    assert got == want
    # coverage against the naive mask
    mask = naive_coverage(tokens, offsets, dict(exp))
    cov = res.documents.column("covered_tokens").to_pylist()
    assert cov == [int(mask[offsets[d]:offsets[d + 1]].sum()) for d in range(offsets.size - 1)]
    assert res.summary["covered_tokens"] == int(mask.sum())
    assert np.array_equal(res.coverage_mask(), mask)


def test_coverage_functions_match_naive():
    rng = np.random.default_rng(3)
    for _ in range(20):
        tokens, offsets = random_corpus(rng)
        raw = mine_suffix(tokens, offsets, 2, 2)
        ans = naive_phrases(tokens, offsets, 2, 2)
        mask = naive_coverage(tokens, offsets, ans)
        assert np.array_equal(coverage_mask(raw, tokens.size), mask)
        per_doc = covered_per_document(raw, offsets)
        assert per_doc.tolist() == [int(mask[offsets[d]:offsets[d + 1]].sum())
                                    for d in range(offsets.size - 1)]


def test_share_distribution():
    s = np.array([0.0, 0.1, 0.5, 1.0, 1.0])
    d = share_distribution(s, bins=10)
    assert d["documents"] == 5 and d["fully_covered"] == 2 and d["uncovered"] == 1
    assert sum(d["histogram"]["counts"]) == 5 and d["histogram"]["counts"][-1] == 2
    assert d["quantiles"]["p50"] == pytest.approx(0.5)
    assert d["mean"] == pytest.approx(s.mean())
    assert share_distribution([], bins=4)["documents"] == 0


def test_store_gives_surface_text_hosts_and_drop_candidates():
    urls = ["http://a.ru/1", "http://a.ru/2", "https://b.ru/x", None]
    store = TokenStore.from_texts(SHOP, ids=["d1", "d2", "d3", "d4"], urls=urls)
    res = find_phrases(store, PhraseConfig(min_docs=3, min_len=2, near_full_share=0.7))
    ph = res.phrases.to_pylist()
    assert len(ph) == 1
    assert ph[0]["tokens"] == "доставка бесплатно при заказе от 3000 рублей".split()
    assert ph[0]["df"] == 3 and ph[0]["psi"] == 21
    assert ph[0]["example_doc_id"] == "d1"
    try:
        store.token_spans(0)
    except NotImplementedError:
        assert ph[0]["text"] == "доставка бесплатно при заказе от 3000 рублей"
    else:
        assert ph[0]["text"] == "Доставка бесплатно при заказе от 3000 рублей"
    docs = res.documents.to_pydict()
    assert docs["doc_id"] == ["d1", "d2", "d3", "d4"]
    assert docs["covered_tokens"] == [7, 7, 7, 0]
    assert docs["host"][:3] == ["a.ru", "a.ru", "b.ru"]
    hosts = {r["host"]: r for r in res.hosts.to_pylist()}
    assert hosts["a.ru"]["documents"] == 2 and hosts["a.ru"]["covered_tokens"] == 14
    assert hosts["a.ru"]["tokens"] == sum(docs["n_tokens"][:2])
    dc = res.summary["drop_candidates"]
    assert [d["doc_id"] for d in dc["documents"]] == ["d3"]  # 7 of 9 tokens
    assert res.summary["index_eaters"][0]["psi"] == 21
    assert res.summary["covered_tokens"] == 21


def test_arrays_without_urls_have_no_hosts_table(tmp_path):
    tokens = np.array([1, 2, 3, 9, 1, 2, 3, 8, 7, 1, 2, 3], dtype=np.int32)
    res = find_phrases((tokens, [0, 4, 9, 12], ["a", "b", "c", "d"] + ["x"] * 6),
                       min_docs=3, min_len=2)
    assert res.hosts is None
    assert res.phrases.column("text").to_pylist() == ["b c d"]
    out = res.write(tmp_path / "out")
    assert not (out / "hosts.parquet").exists()
    assert (out / "phrases.parquet").exists()


def test_write_and_read_parquet_and_jsonl(tmp_path):
    store = TokenStore.from_texts(SHOP * 2, urls=[f"http://h{i % 3}.org/" for i in range(8)])
    res = find_phrases(store, min_docs=3, min_len=3)
    assert res.n_phrases >= 1
    out = res.to_parquet(tmp_path / "pq")
    for name in ("phrases", "documents", "hosts", "occurrences"):
        assert pq.read_table(out / f"{name}.parquet").equals(res.table(name))
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["phrases"] == res.n_phrases
    assert summary["engine"] in ("suffix", "bloomspan")
    assert summary["peak_memory_bytes"] > 0
    back = read_result(out)
    assert back.phrases.equals(res.phrases) and back.config == res.config
    res.write(tmp_path / "js", format="jsonl")
    lines = (tmp_path / "js" / "phrases.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["phrase_id"] for x in lines] == list(range(res.n_phrases))
    back = PhraseResult.read(tmp_path / "js")
    assert back.phrases.column("text").to_pylist() == res.phrases.column("text").to_pylist()
    assert not list((tmp_path / "pq").glob(".*tmp"))  # no temporaries left behind
    with pytest.raises(ParameterError):
        res.write(tmp_path / "x", format="csv")
    with pytest.raises(InputError, match="summary.json"):
        read_result(tmp_path)


def test_to_pandas():
    pytest.importorskip("pandas")
    tokens = np.array([1, 2, 1, 2], dtype=np.int32)
    res = find_phrases((tokens, [0, 2, 4]), min_docs=2, min_len=2)
    assert list(res.to_pandas()["df"]) == [2]
    assert len(res.to_pandas("documents")) == 2


@pytest.mark.parametrize("kwargs, match", [
    ({"min_docs": 0}, "min_docs"),
    ({"min_len": 0}, "min_len"),
    ({"min_docs": 2.5}, "min_docs"),
    ({"engine": "magic"}, "engine"),
    ({"near_full_share": 0.0}, "near_full_share"),
    ({"near_full_share": 1.5}, "near_full_share"),
    ({"top_k": -1}, "top_k"),
    ({"seed_len": 0}, "seed_len"),
    ({"min_doc": 3}, "unknown parameter"),
])
def test_parameter_errors(kwargs, match):
    tokens = np.array([1, 2, 1, 2], dtype=np.int32)
    with pytest.raises(ParameterError, match=match):
        find_phrases((tokens, [0, 2, 4]), **kwargs)


def test_input_errors():
    with pytest.raises(InputError, match="empty corpus"):
        find_phrases((np.zeros(0, np.int32), [0, 0, 0]), min_docs=1)
    with pytest.raises(InputError, match="empty corpus"):
        find_phrases((np.zeros(0, np.int32), [0]), min_docs=1)
    with pytest.raises(InputError, match="doc_offsets"):
        find_phrases((np.array([1, 2, 3], np.int32), [0, 2]), min_docs=1)
    with pytest.raises(InputError, match="token ids"):
        find_phrases((np.array([1, -2, 3], np.int32), [0, 3]), min_docs=1)
    with pytest.raises(InputError, match="vocabulary"):
        find_phrases((np.array([1, 5], np.int32), [0, 2], ["a", "b"]), min_docs=1)
    with pytest.raises(InputError, match="TokenStore"):
        find_phrases(42)


def test_sigma_larger_than_corpus_gives_empty_tables(tmp_path):
    tokens = np.array([1, 2, 1, 2], dtype=np.int32)
    res = find_phrases((tokens, [0, 2, 4]), min_docs=3, min_len=1)
    assert res.n_phrases == 0 and res.occurrences.num_rows == 0
    assert res.summary["covered_share"] == 0.0
    res.write(tmp_path / "e")
    assert pq.read_table(tmp_path / "e" / "phrases.parquet").num_rows == 0


def test_auto_rule():
    rng = np.random.default_rng(0)
    tokens, offsets = random_corpus(rng, n_docs=50, alphabet=1000)
    engine, info = choose_engine(tokens, offsets, 5, 5)
    assert engine == "suffix" and info["rule"]
    # survivor share: exact on a whole small corpus
    tokens = np.array([0, 1, 2, 0, 1, 3], np.int32)
    offsets = np.array([0, 3, 6])
    # df: 0->2, 1->2, 2->1, 3->1; bigrams (0,1) ok, (1,2) no, (0,1) ok, (1,3) no
    assert survivor_share(tokens, offsets, 2) == pytest.approx(0.5)
    assert survivor_share(tokens, offsets, 3) == 0.0
    # repeat share: identical documents -> 1, all-unique tokens -> 0, exact when
    # the whole corpus is the sample
    same = np.tile(np.arange(20, dtype=np.int32), 10)
    offs = np.arange(0, 201, 20)
    assert repeat_share(same, offs, 5) == 1.0
    assert repeat_share(np.arange(200, dtype=np.int32), offs, 2) == 0.0
    half = same.copy()
    half[100:] = np.arange(1000, 1100)       # five documents share their 8-grams
    assert repeat_share(half, offs, 5) == pytest.approx(0.5)
    assert repeat_share(half, offs, 6) == 0.0
    # repeat length: a 30-token block shared by all documents inside unique text
    rng = np.random.default_rng(1)
    docs = [np.concatenate([rng.integers(10**6, 2 * 10**6, 20), np.arange(30),
                            rng.integers(10**6, 2 * 10**6, 20)]) for _ in range(6)]
    toks = np.concatenate(docs).astype(np.int32)
    share, length = repeat_profile(toks, np.arange(0, 421, 70), 3)
    assert length == pytest.approx(30.0)
    assert share == pytest.approx(23 / 63)   # 23 of the 63 8-gram starts per document


def _naive_self_repeat_share(docs, k=8):
    """Per document, the k-gram starts whose k-gram occurs at another start of it."""
    hit = total = 0
    for d in docs:
        grams = [tuple(d[i:i + k]) for i in range(len(d) - k + 1)]
        total += len(grams)
        hit += sum(grams.count(g) > 1 for g in grams)
    return hit / total if total else 0.0


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 8), alphabet=st.integers(1, 6),
       period=st.integers(0, 5))
def test_self_repeat_share_matches_naive(seed, n_docs, alphabet, period):
    # the whole corpus is the sample: exact; periodic documents (period > 0) and
    # random ones; a k-gram repeated in another document only does not count
    rng = np.random.default_rng(seed)
    docs = []
    for _ in range(n_docs):
        n = int(rng.integers(0, 60))
        d = rng.integers(0, alphabet, n) if period == 0 else np.resize(
            rng.integers(0, alphabet, period), n)
        docs.append(d.astype(np.int32))
    tokens = np.concatenate(docs) if docs else np.zeros(0, np.int32)
    offsets = np.concatenate(([0], np.cumsum([d.size for d in docs])))
    want = _naive_self_repeat_share([d.tolist() for d in docs])
    assert self_repeat_share(tokens, offsets, sample_tokens=10**9) == pytest.approx(want)


def test_auto_sees_repeats_within_one_sampled_document():
    # two documents of one word: the sample is one document, so no k-gram
    # recurs across sampled documents (repeat share 0) — but within it, all do
    tokens = np.full(2_000_000, 3, np.int32)
    offsets = np.arange(0, 2_000_001, 1_000_000)
    engine, info = choose_engine(tokens, offsets, 2, 10)
    assert info["repeat_share"] == 0.0 and info["self_repeat_share"] == 1.0
    assert engine == "suffix" and "within documents" in info["rule"]


@pytest.mark.skipif(not bloomspan_available(),
                    reason="repetend.phrases.bloomspan.mine_bloomspan is not importable yet")
def test_bloomspan_and_suffix_give_identical_results():
    rng = np.random.default_rng(11)
    for trial in range(25):
        tokens, offsets = random_corpus(rng, n_docs=int(rng.integers(2, 15)),
                                        alphabet=int(rng.integers(2, 6)))
        if tokens.size == 0:
            continue
        sigma, min_len = int(rng.integers(1, 5)), int(rng.integers(1, 6))
        a = find_phrases((tokens, offsets), min_docs=sigma, min_len=min_len, engine="suffix")
        b = find_phrases((tokens, offsets), min_docs=sigma, min_len=min_len, engine="bloomspan")
        assert a.phrases.equals(b.phrases), (trial, sigma, min_len)
        assert a.occurrences.equals(b.occurrences)
        assert a.documents.equals(b.documents)


@pytest.mark.skipif(not bloomspan_available(),
                    reason="repetend.phrases.bloomspan.mine_bloomspan is not importable yet")
def test_engines_agree_on_a_store():
    store = TokenStore.from_texts(SHOP * 3 + ["доставка бесплатно при заказе"],
                                  urls=[f"http://s{i % 4}.ru/" for i in range(13)])
    a = find_phrases(store, min_docs=4, min_len=3, engine="suffix")
    b = find_phrases(store, min_docs=4, min_len=3, engine="bloomspan")
    assert a.n_phrases >= 1
    for name in ("phrases", "documents", "hosts", "occurrences"):
        assert a.table(name).equals(b.table(name)), name
    assert b.summary["engine"] == "bloomspan"


def test_phrases_all_is_sorted_and_exported():
    import repetend.phrases as ph

    assert ph.__all__ == sorted(ph.__all__)
    for name in ph.__all__:
        assert hasattr(ph, name), name


FLAT_PARAMS = ["min_docs", "min_len", "engine", "seed_len", "filter_bytes", "near_full_share",
               "top_k", "max_drop_candidates", "histogram_bins", "templates", "max_gap",
               "template_parts", "template_min_span", "template_prune", "template_merge_variants",
               "template_ends", "template_search_whole", "template_variant_evidence",
               "memory_limit"]


def test_config_params_are_the_flat_summary_parameters():
    from repetend.phrases.templates import TemplateConfig

    cfg = PhraseConfig(min_docs=5, templates=TemplateConfig(max_gap=6, short_parts=False,
                                                            min_span=7, prune=True))
    p = cfg.to_params()
    assert list(p) == FLAT_PARAMS
    assert (p["templates"], p["max_gap"], p["template_parts"], p["template_min_span"],
            p["template_prune"], p["template_merge_variants"], p["template_ends"]) == (
        True, 6, False, 7, True, True, True)
    assert PhraseConfig.from_params({**p, "corpus": {}}) == cfg       # unknown keys ignored
    off = PhraseConfig(templates=False)
    assert off.templates is None and PhraseConfig(templates=True).templates == TemplateConfig()
    p = off.to_params()
    assert p["templates"] is False and p["max_gap"] == TemplateConfig().max_gap
    assert PhraseConfig.from_params(p) == off
    # no template_slotted_span, template_search_whole, template_variant_evidence
    # recorded: the layer ran with them off (every summary written before they
    # became the default); otherwise the default config
    assert PhraseConfig.from_params({}) == PhraseConfig(
        templates=TemplateConfig(slotted_min_span=None, search_whole=False,
                                 variant_evidence=False))
    assert PhraseConfig.from_params(PhraseConfig().to_params()) == PhraseConfig()


def test_config_validates_the_template_layer_and_a_missing_min_docs():
    from repetend.phrases.templates import TemplateConfig

    with pytest.raises(ParameterError, match="max_gap"):
        PhraseConfig(templates=TemplateConfig(max_gap=-1)).validate()
    with pytest.raises(ParameterError, match="templates"):
        PhraseConfig(templates="yes").validate()
    assert PhraseConfig(min_docs=None).validate().min_docs is None
    tokens = np.array([1, 2, 1, 2], dtype=np.int32)
    with pytest.raises(ParameterError, match="integer"):
        find_phrases((tokens, [0, 2, 4]), min_docs=None)
    res = find_phrases((tokens, [0, 2, 4]), PhraseConfig(min_docs=2, min_len=2), templates=False)
    assert res.templates is None and res.summary["parameters"]["templates"] is False


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_phrase_text_is_its_tokens_joined_by_spaces(seed):
    # without a store the text is the tokens joined (Arrow's binary_join): the
    # same as joining the tokens column of each phrase in Python, one by one
    rng = np.random.default_rng(seed)
    vocab = [w * int(rng.integers(1, 4)) for w in ("a", "bb", "цвет", "x", "Ω")] + ["q"] * 3
    docs = [rng.integers(0, 4, size=int(rng.integers(3, 30))) for _ in range(8)]
    tokens = np.concatenate(docs).astype(np.int32)
    offsets = np.concatenate(([0], np.cumsum([d.size for d in docs])))
    res = find_phrases((tokens, offsets, vocab), min_docs=2, min_len=2, templates=None)
    raw = res.raw
    firsts = raw.occ_starts[raw.occ_offsets[:-1]]
    want = [" ".join(vocab[t] for t in tokens[s:s + n]) for s, n in zip(firsts, raw.lengths)]
    assert res.phrases.num_rows == len(want) > 0
    assert res.phrases.column("text").to_pylist() == want
