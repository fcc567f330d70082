"""Lexeme keys (``--lemmatize`` with ``lemma_keys="lexeme"``) against a plain graph oracle."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repetend.errors import ParameterError
from repetend.neardup.normalize_lang import lemmatize_words, lexeme_keys, normalize_by_language


@dataclass
class _Parse:
    normal_form: str
    is_known: bool


class _Morph:
    """A stand-in analyser: word -> its parses, most probable first."""

    def __init__(self, table: dict[str, list[_Parse]]):
        self.table = table

    def parse(self, word):
        return self.table[word]


def _oracle(words, table, cap):
    """Groups built the slow way: unions in the order the function promises (sorted
    words, each word's forms left to right), each group an explicit set of normal
    forms, a union refused when the joined set would exceed *cap*."""
    groups: list[set[str]] = []

    def group_of(f):
        for g in groups:
            if f in g:
                return g
        g = {f}
        groups.append(g)
        return g

    first = {}
    for w in sorted(set(words)):
        ps = table[w]
        if not ps:
            first[w] = w
            group_of(w)
            continue
        first[w] = ps[0].normal_form
        forms = [ps[0].normal_form] + [p.normal_form for p in ps[1:] if p.is_known]
        for f in forms:
            group_of(f)
        for f in forms[1:]:
            a, b = group_of(forms[0]), group_of(f)
            if a is not b and len(a) + len(b) <= cap:
                a |= b
                groups.remove(b)
    return [min(group_of(first[w])) for w in words]


_forms = st.sampled_from([f"n{i}" for i in range(12)])
_parse = st.builds(_Parse, _forms, st.booleans())


@settings(max_examples=300, deadline=None)
@given(table=st.dictionaries(st.sampled_from([f"w{i}" for i in range(15)]),
                             st.lists(_parse, max_size=4), min_size=1),
       cap=st.integers(1, 6), seed=st.integers(0, 1000))
def test_keys_equal_the_graph_oracle_and_keep_the_cap(table, cap, seed):
    words = list(table) * 2
    random.Random(seed).shuffle(words)
    morph = _Morph(table)
    keys = lexeme_keys(words, morph, cap=cap)
    assert keys == _oracle(words, table, cap)
    # the keys depend on the set of words, not on their order
    again = lexeme_keys(list(reversed(words)), morph, cap=cap)
    assert dict(zip(reversed(words), again)) == dict(zip(words, keys))
    # the cap holds: no key is shared by words whose forms span more than cap normal forms
    for k in set(keys):
        span = {p.normal_form for w, kk in zip(words, keys) if kk == k
                for p in table[w][:1]} | {w for w, kk in zip(words, keys) if kk == k and not table[w]}
        assert len(span) <= cap


def test_unbounded_cap_is_connected_components():
    table = {"a": [_Parse("x", True), _Parse("y", True)], "b": [_Parse("y", True), _Parse("z", True)],
             "c": [_Parse("q", True), _Parse("z", False)], "d": []}
    assert lexeme_keys(["a", "b", "c", "d"], _Morph(table), cap=100) == ["x", "x", "q", "d"]
    # cap 2: a joins x and y; b's y-z union would make three forms and is refused
    assert lexeme_keys(["a", "b", "c", "d"], _Morph(table), cap=2) == ["x", "x", "q", "d"]
    assert lexeme_keys(["b"], _Morph(table), cap=2) == ["y"]


pymorphy3 = pytest.importorskip("pymorphy3")


def test_an_ambiguous_inflected_form_gets_the_original_key():
    # стали: стать first, сталь second; сталью: сталь only. The first parse parts them.
    words = ["сталью", "стали", "бегал", "бежит", "бегущий"]
    first = lemmatize_words(words)
    assert first[0] != first[1]
    keys = lexeme_keys(words)
    assert keys[0] == keys[1]
    assert keys[3] == keys[4] and keys[2] != keys[0]


def test_random_forms_of_a_lexeme_share_a_key_mostly():
    morph = pymorphy3.MorphAnalyzer(lang="ru")
    rng = random.Random(7)
    bases = ["дом", "книга", "стоять", "сталь", "новый", "печь", "вино", "мыло", "рука", "говорить"]
    hit = total = 0
    for b in bases:
        lexeme = sorted({f.word for f in morph.parse(b)[0].lexeme})
        words = [b] + rng.sample(lexeme, min(5, len(lexeme)))
        keys = lexeme_keys(words, morph)
        hit += sum(k == keys[0] for k in keys[1:])
        total += len(keys) - 1
        assert len(set(lexeme_keys(words, morph))) <= len(set(lemmatize_words(words, morph)))
    assert hit / total >= 0.9


def test_normalize_by_language_modes():
    vocab = ["сталью", "стали", "run"]
    args = (vocab, np.array([0, 1, 2], np.int32), np.array([0, 3], np.int64), None)
    lex = normalize_by_language(*args, lemmatize="ru")
    first = normalize_by_language(*args, lemmatize="ru", lemma_keys="first")
    assert lex.remap[0, 0] == lex.remap[0, 1] != lex.remap[0, 2]
    assert first.remap[0, 0] != first.remap[0, 1]
    with pytest.raises(ParameterError, match="lemma_keys"):
        normalize_by_language(*args, lemmatize="ru", lemma_keys="best")
