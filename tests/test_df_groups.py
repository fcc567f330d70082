"""df over groups of documents (near-duplicate clusters): every engine against
the brute-force oracle with group df (tests/naive_phrases.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_phrases import naive_phrases
from repetend.errors import ParameterError
from repetend.phrases.bloomspan import mine_bloomspan
from repetend.phrases.groups import doc_groups
from repetend.phrases.outofcore import mine_bloomspan_ooc

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


def as_dict(raw, tokens):
    """{phrase tuple: (df, starts)} from a RawPhrases, like the oracle."""
    tokens = np.asarray(tokens)
    out = {}
    for i in range(raw.n_phrases):
        starts = raw.occ_starts[raw.occ_offsets[i]:raw.occ_offsets[i + 1]]
        assert np.all(np.diff(starts) > 0)
        p = tuple(int(x) for x in tokens[starts[0]:starts[0] + raw.lengths[i]])
        assert p not in out
        out[p] = (int(raw.df[i]), [int(s) for s in starts])
    return out


@st.composite
def grouped_corpora(draw):
    """Random small corpora over a tiny alphabet, with copies of some documents
    (so that groups matter) and a random grouping (labels in any order, not
    contiguous in document order)."""
    alphabet = draw(st.integers(2, 4))
    n_base = draw(st.integers(1, 7))
    docs = [draw(st.lists(st.integers(0, alphabet - 1), min_size=0, max_size=24))
            for _ in range(n_base)]
    for _ in range(draw(st.integers(0, 5))):
        docs.append(list(docs[draw(st.integers(0, n_base - 1))]))
    order = draw(st.permutations(range(len(docs))))
    docs = [docs[i] for i in order]
    labels = draw(st.lists(st.integers(-3, 4), min_size=len(docs), max_size=len(docs)))
    tokens = np.array([t for d in docs for t in d], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    return (tokens, offsets, np.array(labels, dtype=np.int64),
            draw(st.integers(1, 5)), draw(st.integers(1, 5)))


@settings(max_examples=200, deadline=None)
@given(grouped_corpora(), st.data())
def test_bloomspan_group_df_matches_oracle(case, data):
    tokens, offsets, labels, sigma, L = case
    n = data.draw(st.integers(1, L))
    raw = mine_bloomspan(tokens, offsets, sigma, L, seed_len=n, groups=labels)
    assert as_dict(raw, tokens) == naive_phrases(tokens, offsets, sigma, L, groups=labels)


@settings(max_examples=200, deadline=None)
@given(grouped_corpora())
def test_suffix_group_df_matches_oracle(case):
    pytest.importorskip("pydivsufsort")
    from repetend.phrases.suffix import mine_suffix

    tokens, offsets, labels, sigma, L = case
    raw = mine_suffix(tokens, offsets, sigma, L, groups=labels)
    assert as_dict(raw, tokens) == naive_phrases(tokens, offsets, sigma, L, groups=labels)


@settings(max_examples=60, deadline=None)
@given(case=grouped_corpora())
def test_out_of_core_group_df_matches_oracle(tmp_path_factory, case):
    tokens, offsets, labels, sigma, L = case
    raw = mine_bloomspan_ooc(tokens, offsets, sigma, L, memory_limit="4G", shard_tokens=7,
                             n_parts=4, threads=2, groups=labels,
                             workdir=tmp_path_factory.mktemp("spill"))
    assert as_dict(raw, tokens) == naive_phrases(tokens, offsets, sigma, L, groups=labels)


def test_singleton_groups_give_the_document_answer():
    rng = np.random.default_rng(3)
    from naive_phrases import block_corpus

    tokens, offsets = block_corpus(rng, 60, 5)
    ident = np.arange(offsets.size - 1)
    a = mine_bloomspan(tokens, offsets, 3, 4)
    b = mine_bloomspan(tokens, offsets, 3, 4, groups=ident[::-1].copy())
    assert as_dict(a, tokens) == as_dict(b, tokens)


def test_doc_groups_checks_its_labels():
    with pytest.raises(ParameterError, match="one label per document"):
        doc_groups(np.zeros(3), 4)
    with pytest.raises(ParameterError, match="integer"):
        doc_groups(np.zeros(4), 4)
    g = doc_groups(np.array([7, -1, 7, 3]), 4)
    assert g.n_groups == 3 and g.label.tolist() == [2, 0, 2, 1]


# -- the template layer --------------------------------------------------------------

@st.composite
def template_corpora(draw):
    """Documents made of a few fixed blocks with variable words between them (so
    that templates with slots exist), some documents copied, random labels."""
    n_docs = draw(st.integers(4, 14))
    blocks = [[10, 11, 12, 13], [20, 21, 22], [30, 31, 32, 33, 34]]
    docs = []
    for _ in range(n_docs):
        doc = []
        for b in blocks:
            if draw(st.booleans()):
                doc += b + [draw(st.integers(40, 45))]
        doc += draw(st.lists(st.integers(0, 9), max_size=6))
        docs.append(doc)
    for _ in range(draw(st.integers(0, 4))):
        docs.append(list(docs[draw(st.integers(0, n_docs - 1))]))
    labels = draw(st.lists(st.integers(0, 6), min_size=len(docs), max_size=len(docs)))
    tokens = np.array([t for d in docs for t in d], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    return tokens, offsets, np.array(labels, dtype=np.int64), draw(st.integers(2, 4))


@settings(max_examples=40, deadline=None)
@given(template_corpora(), st.booleans())
def test_template_df_is_the_group_df_of_its_occurrences(case, short_parts):
    pytest.importorskip("pydivsufsort")
    from repetend.phrases.templates import TemplateConfig, find_templates

    tokens, offsets, labels, sigma = case
    if tokens.size == 0:
        return
    raw = mine_bloomspan(tokens, offsets, sigma, 3, groups=labels)
    cfg = TemplateConfig(short_parts=short_parts, min_span=3)
    res = find_templates((tokens, offsets), raw, sigma, 3, cfg, groups=labels)
    occ = res.occurrences
    tid = occ.column("template_id").to_numpy()
    doc = occ.column("doc_index").to_numpy()
    df = res.table.column("df").to_numpy()
    assert [np.unique(labels[doc[tid == i]]).size for i in range(df.size)] == df.tolist()
    assert (df >= sigma).all()
    # one group per document: the layer over documents, table for table
    ident = np.arange(offsets.size - 1)
    raw_d = mine_bloomspan(tokens, offsets, sigma, 3)
    a = find_templates((tokens, offsets), raw_d, sigma, 3, cfg)
    b = find_templates((tokens, offsets), raw_d, sigma, 3, cfg, groups=ident[::-1].copy())
    assert a.table.equals(b.table) and a.occurrences.equals(b.occurrences)
