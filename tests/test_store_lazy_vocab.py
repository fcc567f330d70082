"""An opened token store keeps its vocabulary as the Arrow column until the list is
asked for; near-duplicates from it are those of the in-memory store."""

from __future__ import annotations

import numpy as np

from repetend.corpus.store import TokenStore
from repetend.neardup import NearDupConfig, find_near_duplicates


def _texts():
    rng = np.random.default_rng(7)
    words = [f"w{i}é" for i in range(60)]
    base = [" ".join(rng.choice(words, 80)) for _ in range(12)]
    out = []
    for t in base:
        out.append(t)
        w = t.split()
        w[int(rng.integers(0, len(w)))] = "changed"
        out.append(" ".join(w))
    return out


def test_opened_store_vocab_is_lazy_and_equal(tmp_path):
    mem = TokenStore.from_texts(_texts())
    mem.save(tmp_path / "s")
    st = TokenStore.open(tmp_path / "s")
    assert not isinstance(st.vocab_source(), list)
    assert st.vocab == mem.vocab
    assert isinstance(st.vocab_source(), list)      # made a list once, then kept


def test_dups_of_an_opened_store_equal_the_in_memory_store(tmp_path):
    mem = TokenStore.from_texts(_texts())
    mem.save(tmp_path / "s")
    st = TokenStore.open(tmp_path / "s")
    a = find_near_duplicates(mem, NearDupConfig(threshold=0.5))
    b = find_near_duplicates(st, NearDupConfig(threshold=0.5))
    assert len(a.pairs) > 0
    assert a.pairs.a.tolist() == b.pairs.a.tolist() and a.pairs.b.tolist() == b.pairs.b.tolist()
    assert a.pairs.jaccard.tolist() == b.pairs.jaccard.tolist()
    assert not isinstance(st.vocab_source(), list)  # dups never made the Python strings
