"""The worker side of the Spark phrase pre-filter (docs/spark.md, "Phrases: the
exact pre-filter"): tokens, word df, the count-min sketch of k-grams, their exact
df and the islands, per Arrow batch in ``mapInArrow``; and the sketches' merge.
Used by :mod:`repetend.spark.phrases` and :mod:`repetend.spark.templates`."""

from __future__ import annotations

import numpy as np

from . import _kernels as SK
from .io import binary_of, numpy_column, pack_binary, sliced, token_batches

SKETCH_DEPTH = 4
SKETCH_WIDTH = 1 << 20


def word_stat_schema():
    """The Spark schema of :func:`_word_stat_batches`' rows."""
    from pyspark.sql import types as T

    return T.StructType([T.StructField("hash", T.LongType()), T.StructField("df", T.LongType()),
                         T.StructField("first_doc", T.LongType()),
                         T.StructField("first_pos", T.LongType())])


# -- worker side ------------------------------------------------------------------

def _token_batches(batches, *, unit):
    import pyarrow as pa

    for idx, texts, tb in token_batches(batches, unit):
        n_chars = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
        yield pa.RecordBatch.from_arrays(
            [pa.array(idx), pa.array(np.diff(tb.doc_offsets).astype(np.int64)), pa.array(n_chars),
             pack_binary(tb.hashes, tb.doc_offsets)],
            names=["doc_index", "n_tokens", "n_chars", "tokens"])


# (the consumers below take slices of at most ``io.SLICE_TOKEN_BYTES`` of packed
# tokens, ``sliced(batches, "tokens")``: each works per document or sums over batches)

def _word_stat_batches(batches):
    """Per batch: each token hash, the number of its documents and its first
    occurrence (document, position)."""
    import pyarrow as pa

    for batch in sliced(batches, "tokens"):
        idx = numpy_column(batch.column("doc_index"), np.int64)
        h, off = binary_of(batch.column("tokens"), np.uint64)
        if h.size == 0:
            continue
        doc = np.repeat(idx, np.diff(off))
        pos = np.arange(h.size, dtype=np.int64) - np.repeat(off[:-1], np.diff(off))
        order = np.lexsort((pos, doc, h))
        hs, ds, ps = h[order], doc[order], pos[order]
        new = np.ones(hs.size, dtype=bool)
        new[1:] = (hs[1:] != hs[:-1]) | (ds[1:] != ds[:-1])
        hp, dp, pp = hs[new], ds[new], ps[new]
        uh, start = np.unique(hp, return_index=True)
        df = np.diff(np.append(start, hp.size))
        yield pa.RecordBatch.from_arrays(
            [pa.array(uh.view(np.int64)), pa.array(df.astype(np.int64)), pa.array(dp[start]),
             pa.array(pp[start])],
            names=["hash", "df", "first_doc", "first_pos"])


def _in_sorted(values, table):
    """Per value: whether it is in the sorted array *table*."""
    if table.size == 0:
        return np.zeros(values.size, dtype=bool)
    pos = np.minimum(np.searchsorted(table, values), table.size - 1)
    return table[pos] == values


def window_hashes(h, off, words, k):
    """The k-gram windows of the token hashes *h* (contiguous uint64, document
    offsets *off*): (window offsets per document, window hashes, valid) — valid
    windows consist of words in the sorted array *words* only."""
    ok = _in_sorted(h, words)
    counts = SK.kgram_counts(off, k)
    woff = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=woff[1:])
    wh = np.empty(int(woff[-1]), dtype=np.uint64)
    valid = np.empty(int(woff[-1]), dtype=np.bool_)
    SK.kgram_hashes(h, off, np.int64(k), ok, woff, wh, valid)
    return woff, wh, valid


def covered(h, off, words, grams, k):
    """The positions of the token hashes *h* (document offsets *off*) covered by a
    valid k-gram (:func:`window_hashes`) whose hash is in the sorted array *grams*:
    the islands."""
    h = np.ascontiguousarray(h)
    woff, wh, valid = window_hashes(h, off, words, k)
    freq = valid & _in_sorted(wh, grams)
    keep = np.zeros(h.size, dtype=np.bool_)
    SK.island_mask(off, np.int64(k), woff, freq, keep)
    return keep


def _windows(batch, words, k):
    """Window hashes of a batch: (doc_index, token hashes, doc offsets, window offsets,
    window hashes, valid), per :func:`window_hashes`."""
    idx = numpy_column(batch.column("doc_index"), np.int64)
    h, off = binary_of(batch.column("tokens"), np.uint64)
    h = np.ascontiguousarray(h)
    return (idx, h, off) + window_hashes(h, off, words, k)


def _distinct(wh, valid, woff):
    out = np.empty(wh.size, dtype=np.uint64)
    counts = np.empty(woff.size - 1, dtype=np.int64)
    SK.distinct_per_doc(wh, valid, woff, out, counts)
    keep = np.arange(out.size) - np.repeat(woff[:-1], np.diff(woff)) < np.repeat(counts, np.diff(woff))
    return out[keep]


def _sketch_batches(batches, *, words_bc, k, depth, width):
    import pyarrow as pa

    words = words_bc.value
    table = np.zeros((depth, width), dtype=np.uint32)
    for batch in sliced(batches, "tokens"):
        _, _, _, woff, wh, valid = _windows(batch, words, k)
        SK.cms_add(_distinct(wh, valid, woff), table)
    yield pa.RecordBatch.from_arrays([pack_binary(table.reshape(-1), np.array([0, table.size]))],
                                     names=["sketch"])


def _survivor_batches(batches, *, words_bc, sketch_bc, k, min_docs):
    import pyarrow as pa

    words = words_bc.value
    table = sketch_bc.value
    for batch in sliced(batches, "tokens"):
        _, _, _, woff, wh, valid = _windows(batch, words, k)
        d = _distinct(wh, valid, woff)
        est = np.empty(d.size, dtype=np.uint32)
        SK.cms_query(d, table, est)
        d = d[est >= min_docs]
        if d.size == 0:
            continue
        u, c = np.unique(d, return_counts=True)
        yield pa.RecordBatch.from_arrays([pa.array(u.view(np.int64)), pa.array(c.astype(np.int64))],
                                         names=["hash", "df"])


def _island_batches(batches, *, words_bc, grams_bc, k):
    import pyarrow as pa

    words = words_bc.value
    grams = grams_bc.value
    for batch in sliced(batches, "tokens"):
        idx = numpy_column(batch.column("doc_index"), np.int64)
        h, off = binary_of(batch.column("tokens"), np.uint64)
        keep = covered(h, off, words, grams, k)
        cs = np.zeros(h.size + 1, dtype=np.int64)
        np.cumsum(keep, out=cs[1:])
        kept = cs[off[1:]] - cs[off[:-1]]
        has = kept > 0
        if not has.any():
            continue
        local = np.arange(h.size, dtype=np.int64) - np.repeat(off[:-1], np.diff(off))
        koff = np.zeros(int(has.sum()) + 1, dtype=np.int64)
        np.cumsum(kept[has], out=koff[1:])
        yield pa.RecordBatch.from_arrays(
            [pa.array(idx[has]), pack_binary(local[keep].astype(np.int32), koff),
             pack_binary(h[keep], koff)],
            names=["doc_index", "positions", "tokens"])


def _saturating_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.minimum(a.astype(np.uint64) + b, np.uint64(0xFFFFFFFF)).astype(np.uint32)
