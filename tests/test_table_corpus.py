"""TableCorpus, the driver's view of a Spark scan's corpus dataset: documents across
several part files and row groups, texts read on demand (a few row groups kept), the
checks that refuse a dataset it cannot read as one numbering.  Written here with
pyarrow alone (no Spark)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from repetend.corpus.order_key import order_key
from repetend.corpus.store import TokenStore
from repetend.corpus.table_corpus import CORPUS_SUMMARY, TableCorpus
from repetend.errors import InputError


def _dataset(path, texts, ids, parts=3, row_group=4, order=None):
    path.mkdir()
    n = len(texts)
    store = TokenStore.from_texts(texts, ids)
    idx = np.arange(n) if order is None else np.asarray(order)
    bounds = np.linspace(0, n, parts + 1).astype(int)
    for p in range(parts):
        rows = idx[bounds[p]:bounds[p + 1]]
        t = pa.table({
            "doc_index": pa.array(rows, pa.int64()),
            "doc_id": pa.array([ids[i] for i in rows], pa.string()),
            "url": pa.array([None] * rows.size, pa.string()),
            "host": pa.array([None] * rows.size, pa.string()),
            "n_tokens": pa.array(np.diff(store.doc_offsets)[rows], pa.int64()),
            "n_chars": pa.array([len(texts[i]) for i in rows], pa.int64()),
            "order_key": pa.array([order_key(ids[i], texts[i]) for i in rows], pa.int64()),
            "text": pa.array([texts[i] for i in rows], pa.string())})
        pq.write_table(t, path / f"part-{p:05d}.parquet", row_group_size=row_group)
    (path / CORPUS_SUMMARY).write_text(json.dumps({"documents": n, "unit": "word"}))
    return store


def test_texts_and_spans_from_many_row_groups_in_any_order(tmp_path):
    rng = np.random.default_rng(3)
    words = ["alpha", "Beta", "gamma,", "δέλτα", "x1", "—", "e"]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(0, 12)))) for _ in range(37)]
    ids = [f"d{i}" for i in range(37)]
    want = _dataset(tmp_path / "c", texts, ids)
    got = TableCorpus.open(tmp_path / "c")
    assert len(got._groups) > 4                      # more groups than the cache holds
    assert got.doc_ids == ids and got.n_tokens == want.n_tokens
    for d in rng.permutation(37).tolist() * 2:       # misses, hits, evictions
        assert got.text(d) == texts[d]
        assert np.array_equal(got.token_spans(d), want.token_spans(d))
        assert got.order_key(d) == order_key(ids[d], texts[d])
    assert len(got._cache) <= 4
    with pytest.raises(IndexError):
        got.text(37)


def test_a_dataset_out_of_order_is_refused(tmp_path):
    texts, ids = ["a b", "c d", "e f", "g h"], ["1", "2", "3", "4"]
    _dataset(tmp_path / "c", texts, ids, parts=2, order=[2, 3, 0, 1])
    with pytest.raises(InputError, match="not sorted by doc_index"):
        TableCorpus.open(tmp_path / "c")
    with pytest.raises(InputError, match="not a corpus dataset"):
        TableCorpus.open(tmp_path)
