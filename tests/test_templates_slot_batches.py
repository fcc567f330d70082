"""The slot statistics are counted batch by batch of slot values
(``templates/slots.py``: ``SLOT_BATCH``) and the joins are found batch by batch
of pattern pairs (``templates/patterns.py``: ``JOIN_BATCH``); the tables must
not depend on the batch sizes, down to one slot or one pattern per batch."""

from __future__ import annotations

import pytest

from repetend.phrases import find_phrases
from repetend.phrases.templates import TemplateConfig, find_templates
from repetend.phrases.templates import patterns as PT
from repetend.phrases.templates import slots as S


@pytest.fixture(scope="module")
def weblike_store():
    from repetend.synth.weblike import weblike

    store = weblike(300, seed=5).to_store()
    raw = find_phrases(store, min_docs=6, min_len=8, engine="suffix", templates=None).raw
    return store, raw


def _tables(store, raw):
    res = find_templates(store, raw, 6, 8, TemplateConfig(min_span=6))
    return res.table, res.occurrences


def test_tables_do_not_depend_on_the_slot_batch(weblike_store, monkeypatch):
    store, raw = weblike_store
    table, occurrences = _tables(store, raw)
    assert table.num_rows > 5   # templates with slots to count
    for batch in (1, 7, 1000):
        monkeypatch.setattr(S, "SLOT_BATCH", batch)
        t, o = _tables(store, raw)
        assert t.equals(table), batch
        assert o.equals(occurrences), batch


def test_tables_do_not_depend_on_the_join_batch(weblike_store, monkeypatch):
    store, raw = weblike_store
    res = find_templates(store, raw, 6, 8, TemplateConfig(min_span=6))
    assert res.summary["joined_patterns"] > 0   # joins to find
    for batch in (1, 40):
        monkeypatch.setattr(PT, "JOIN_BATCH", batch)
        t, o = _tables(store, raw)
        assert t.equals(res.table), batch
        assert o.equals(res.occurrences), batch
