"""Frequent-span coverage against brute force: every position inside a frequent L-gram."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from hypothesis import given, settings, strategies as st

from naive_phrases import naive_coverage, naive_phrases
from repetend.phrases._raw import RawPhrases
from repetend.phrases.frequent_spans import frequent_spans


def _raw_from_answer(answer) -> RawPhrases:
    items = sorted(answer.items())
    lengths = np.array([len(p) for p, _ in items], dtype=np.int64)
    df = np.array([v[0] for _, v in items], dtype=np.int64)
    counts = [len(v[1]) for _, v in items]
    offs = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(counts, out=offs[1:])
    starts = np.array([s for _, v in items for s in v[1]], dtype=np.int64)
    return RawPhrases(lengths, df, offs, starts)


def _naive_frequent_cover(tokens, doc_offsets, sigma, L):
    docs_of = defaultdict(set)
    where = defaultdict(list)
    for d in range(len(doc_offsets) - 1):
        for q in range(doc_offsets[d], doc_offsets[d + 1] - L + 1):
            g = tuple(tokens[q:q + L])
            docs_of[g].add(d)
            where[g].append(q)
    mask = np.zeros(len(tokens), dtype=bool)
    for g, ds in docs_of.items():
        if len(ds) >= sigma:
            for q in where[g]:
                mask[q:q + L] = True
    return mask


corpora = st.lists(st.lists(st.integers(0, 2), max_size=25), min_size=1, max_size=7)


@settings(max_examples=150, deadline=None)
@given(corpora, st.integers(1, 4), st.integers(1, 5))
def test_matches_brute_force_and_contains_maximal_coverage(docs, sigma, L):
    tokens = np.array([t for d in docs for t in d], dtype=np.int32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    answer = naive_phrases(tokens, offsets, sigma, L)
    fs = frequent_spans(tokens, offsets, _raw_from_answer(answer), L)
    want = _naive_frequent_cover(tokens.tolist(), offsets.tolist(), sigma, L)
    got = np.zeros(len(tokens), dtype=bool)
    for s, e in zip(fs.starts, fs.ends):
        assert not got[s:e].any(), "runs are disjoint"
        got[s:e] = True
    assert np.array_equal(got, want)
    per_doc = [int(want[offsets[d]:offsets[d + 1]].sum()) for d in range(len(docs))]
    assert fs.covered.tolist() == per_doc
    assert not (naive_coverage(tokens, offsets, answer) & ~got).any()
    # each run names a phrase whose first L-gram window occurs at the run's start
    items = sorted(answer)
    for s, p in zip(fs.starts, fs.phrase):
        assert tuple(tokens[s:s + L]) in {items[p][j:j + L] for j in range(len(items[p]) - L + 1)}
    # runs are merged: two runs of a document never touch
    for d in range(len(docs)):
        a, b = fs.run_offsets[d], fs.run_offsets[d + 1]
        assert all(fs.ends[i] < fs.starts[i + 1] for i in range(a, b - 1))


def test_disclaimer_behind_a_frequent_left_context_is_still_covered():
    # D = 4 tokens, on 6 docs; 3 of them preceded by R (so R·D is maximal, D is not)
    R, D = [7, 8], [1, 2, 3, 4]
    docs = [[9] + R + D, [10] + R + D, [11] + R + D, [12] + D, [13] + D, [14] + D]
    tokens = np.array([t for d in docs for t in d], dtype=np.int32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    answer = naive_phrases(tokens, offsets, 3, 4)
    assert [list(p) for p in answer] == [R + D]
    fs = frequent_spans(tokens, offsets, _raw_from_answer(answer), 4)
    assert fs.covered.tolist() == [6, 6, 6, 4, 4, 4]
    assert int(naive_coverage(tokens, offsets, answer).sum()) == 18


def test_find_phrases_reports_both_coverages_consistently(tmp_path):
    from repetend import TokenStore, find_phrases
    from repetend.phrases import read_result

    shared = "the information on this website is provided for general purposes only"
    texts = ([f"read also alpha beta gamma {shared} doc {i}" for i in range(4)]
             + [f"unrelated start {i} {shared}" for i in range(4)])
    store = TokenStore.from_texts(texts)
    res = find_phrases(store, min_docs=4, min_len=6)
    docs = res.documents.to_pandas()
    assert (docs["frequent_tokens"] >= docs["covered_tokens"]).all()
    assert (docs["frequent_tokens"] == 11).sum() == 4  # the bare disclaimer counts everywhere
    spans = res.spans.to_pandas()
    per_doc = (spans["end"] - spans["start"]).groupby(spans["doc_index"]).sum()
    assert per_doc.reindex(range(8), fill_value=0).tolist() == docs["frequent_tokens"].tolist()
    assert res.summary["frequent_share"] >= res.summary["covered_share"]
    res.write(tmp_path / "p")
    again = read_result(tmp_path / "p")
    assert again.spans.num_rows == res.spans.num_rows
