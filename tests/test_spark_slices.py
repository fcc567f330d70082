"""An Arrow batch tokenized on an executor a slice of text at a time
(``repetend.spark.io.byte_slices`` / ``token_batches``), and the pre-filter's
statistics over batches of packed tokens cut into slices: the slices are the batch, in
order, each within the limit unless it is one document; tokenized slice by slice,
every document gets the tokens it gets in one piece.  No Spark runs."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from repetend.corpus.tokenizer import tokenize_batch
from repetend.spark import io


def _batch(rng, n):
    words = ["a", "bb", "ccc", "été", "данные", "1999", "x-y", "日本語"]
    texts = []
    for _ in range(n):
        r = rng.random()
        texts.append(None if r < 0.1 else "" if r < 0.15 else
                     " ".join(rng.choice(words, size=int(rng.integers(1, 40))).tolist()))
    return pa.RecordBatch.from_arrays([pa.array(np.arange(n, dtype=np.int64) * 3 + 1),
                                       pa.array(texts, pa.string())], names=["doc_index", "text"])


@pytest.mark.parametrize("seed", range(20))
def test_slices_are_the_batch_within_the_limit(seed):
    rng = np.random.default_rng(seed)
    batch = _batch(rng, int(rng.integers(1, 60)))
    limit = int(rng.integers(1, 400))
    parts = list(io.byte_slices(batch, "text", limit))
    assert pa.Table.from_batches(parts).equals(pa.Table.from_batches([batch]))
    for p in parts:
        size = sum(len((t or "").encode()) for t in p.column("text").to_pylist())
        assert p.num_rows >= 1 and (size <= limit or p.num_rows == 1)
        # greedy: the next document would not have fitted
    for p, q in zip(parts, parts[1:]):
        size = sum(len((t or "").encode()) for t in p.column("text").to_pylist())
        nxt = len((q.column("text")[0].as_py() or "").encode())
        assert size + nxt > limit


@pytest.mark.parametrize("unit", ["word", "char"])
@pytest.mark.parametrize("seed", range(8))
def test_token_batches_slice_by_slice_equal_one_piece(monkeypatch, seed, unit):
    rng = np.random.default_rng(seed)
    batches = [_batch(rng, int(rng.integers(0, 50))) for _ in range(3)]
    monkeypatch.setattr(io, "SLICE_TEXT_BYTES", int(rng.integers(1, 300)))
    got_idx, got_h, got_n = [], [], []
    for idx, texts, tb in io.token_batches(iter(batches), unit):
        got_idx.append(idx)
        got_h.append(np.asarray(tb.hashes))
        got_n.append(np.diff(tb.doc_offsets))
    whole = [b for b in batches if b.num_rows]
    texts = [t or "" for b in whole for t in b.column("text").to_pylist()]
    want = tokenize_batch(texts, unit=unit)
    assert np.concatenate(got_idx).tolist() == [i for b in whole for i in b.column("doc_index").to_pylist()]
    assert np.concatenate(got_n).tolist() == np.diff(want.doc_offsets).tolist()
    assert np.concatenate(got_h).tolist() == np.asarray(want.hashes).tolist()


@pytest.mark.parametrize("seed", range(6))
def test_word_statistics_over_token_slices_sum_to_those_of_whole_batches(monkeypatch, seed):
    """df and first occurrence of every token hash, per slice of packed tokens and
    summed (as Spark's groupBy does), equal those of the whole batches."""
    from repetend.spark import _prefilter as P

    rng = np.random.default_rng(seed)
    batches = []
    for b in range(3):
        n = int(rng.integers(0, 30))
        lens = rng.integers(0, 40, size=n)
        off = np.concatenate(([0], np.cumsum(lens)))
        h = rng.integers(1, 25, size=int(off[-1])).astype(np.uint64)
        batches.append(pa.RecordBatch.from_arrays(
            [pa.array(np.arange(n, dtype=np.int64) + 100 * b), io.pack_binary(h, off)],
            names=["doc_index", "tokens"]))

    def merged(limit):
        monkeypatch.setattr(io, "SLICE_TOKEN_BYTES", limit)
        stats: dict[int, list] = {}
        n_batches = 0
        for out in P._word_stat_batches(iter(batches)):
            n_batches += 1
            for h, df, d, p in zip(*(out.column(c).to_pylist() for c in
                                     ("hash", "df", "first_doc", "first_pos"))):
                cur = stats.setdefault(h, [0, (d, p)])
                cur[0] += df
                cur[1] = min(cur[1], (d, p))
        return stats, n_batches

    whole, n_whole = merged(1 << 40)
    sliced, n_sliced = merged(int(rng.integers(1, 200)))
    assert sliced == whole
    assert n_sliced >= n_whole


@pytest.mark.parametrize("seed", range(5))
def test_kept_vocabulary_pairs_over_token_slices_are_every_distinct_pair(monkeypatch, seed):
    """``templates._word_pairs`` a slice at a time: grouped by hash (as the cluster
    groups them), the distinct (hash, word) pairs of the kept dataset's batches."""
    from repetend.spark.templates import _word_pairs

    rng = np.random.default_rng(seed)
    vocab = [f"w{j}" for j in range(40)]
    batches, want = [], set()
    for _ in range(int(rng.integers(1, 4))):
        docs = [rng.integers(0, 40, size=int(rng.integers(0, 30))) for _ in range(int(rng.integers(1, 12)))]
        flat = np.concatenate(docs).astype(np.int64) if docs else np.zeros(0, np.int64)
        off = np.concatenate(([0], np.cumsum([d.size for d in docs]))).astype(np.int64)
        batches.append(pa.RecordBatch.from_arrays(
            [io.pack_binary((flat * 1009 + 3).astype(np.uint64), off),
             pa.array([[vocab[t] for t in d.tolist()] for d in docs], pa.list_(pa.string()))],
            names=["tokens", "strings"]))
        want |= {(int(t) * 1009 + 3, vocab[int(t)]) for t in flat.tolist()}
    monkeypatch.setattr(io, "SLICE_TOKEN_BYTES", int(rng.integers(1, 200)))
    out = pa.Table.from_batches(list(_word_pairs(iter(batches))),
                                schema=pa.schema([("hash", pa.int64()), ("word", pa.string())]))
    got = set(zip(out.column("hash").to_pylist(), out.column("word").to_pylist()))
    assert got == want
    assert out.num_rows >= len(want)
