"""The template layer on Spark: a *widened* reduced corpus, then the local layer.

The exact pre-filter (:mod:`repetend.spark.phrases`) keeps only the islands of
frequent L-grams, which drops what the template layer reads: its parts are the
frequent L'-grams (L' = ``part_len`` ≤ L, numbers masked), the slots between them,
and the heads and tails next to its templates.  This module keeps, per document, every
position within W tokens of a frequent masked k'-gram (k' = min(L', L)), W a bound on
how far the layer reads past its parts (:func:`reach`), and a fresh separator token
where more was dropped.  The executors write that corpus as a Parquet dataset and
one task on an executor runs :func:`repetend.phrases.run_templates` on it
(:func:`_layer_in_task`, through :mod:`repetend.spark.task`), with the local store's
token ids (order of first occurrence in the whole corpus) and original document ids;
the template tables come out in original token positions and characters, and the
driver holds none of the widened corpus.  The argument is in ``docs/spark.md`` ("Templates:
the widened corpus").
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus.store import TokenStore
from ._kernels import widened_index
from ._prefilter import covered
from .io import binary_of, destroy, numpy_column, pack_binary, sliced, token_batches
from .task import in_one_task, parquet_parts, scratch_dir

__all__ = ["find_templates", "reach"]

#: the widened corpus's dataset, written by the executors under the work directory
#: and removed once the layer's task has read it (a killed run's:
#: :func:`repetend.spark.task.remove_partial`)
KEPT_NAME = "templates-widened"
#: the dataset's row-group size: a row group is what the layer's task decodes at once
KEPT_ROW_GROUP_BYTES = 16 << 20

#: the hash standing for every all-digit token in the masked corpus (64-bit: a
#: collision with a real token's hash can only widen the kept set)
NUM_HASH = np.uint64(0x9E3779B97F4A7C15)
#: rounds of heads and tails per end (``templates.ends.extend_ends``'s default)
END_ROUNDS = 16


def reach(tcfg) -> int:
    """W: how many tokens past its parts (the covered runs) the layer reads.

    Gaps between runs: up to ``max_gap``.  Heads and tails: each of at most 16 rounds
    per end looks at the g + 1 tokens past the template's current end and grows it by
    at most g + 1 (g = max(max_gap, word_slots, 1)); variants realign inside their
    members' occurrences.  So (16 + 1)·(g + 1) + g bounds every read."""
    g = max(int(tcfg.max_gap), int(tcfg.word_slots), 1)
    w = int(tcfg.max_gap)
    if tcfg.ends:
        w = max(w, (END_ROUNDS + 1) * (g + 1) + g)
    return max(w, g)


# -- worker side ------------------------------------------------------------------

def _masked(tb, n_tok_total: int) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    h = np.ascontiguousarray(tb.hashes, np.uint64).copy()
    if n_tok_total:
        strings = tb.strings(np.arange(n_tok_total))
        num = pc.utf8_is_digit(pa.array(strings, pa.string())).to_numpy(
            zero_copy_only=False).astype(bool)
        h[num] = NUM_HASH
    return h


def _masked_batches(batches, *, unit):
    """(doc_index, tokens): token hashes with every all-digit token as NUM_HASH."""
    import pyarrow as pa

    for idx, _, tb in token_batches(batches, unit):
        off = np.asarray(tb.doc_offsets, np.int64)
        yield pa.RecordBatch.from_arrays([pa.array(idx), pack_binary(_masked(tb, int(off[-1])), off)],
                                         names=["doc_index", "tokens"])


def _dilate(keep, off, w):
    """Every position within *w* tokens (same document) of a kept one."""
    n = keep.size
    cs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(keep, out=cs[1:])
    doc = np.repeat(np.arange(off.size - 1), np.diff(off))
    p = np.arange(n, dtype=np.int64)
    lo = np.maximum(p - w, off[:-1][doc])
    hi = np.minimum(p + w + 1, off[1:][doc])
    return (cs[hi] - cs[lo]) > 0


def _kept_batches(batches, *, words_bc, grams_bc, k, w, unit):
    """Per document with kept positions: how many (``n_kept``) in how many runs of
    consecutive positions (``n_runs``), the positions, their (unmasked) token hashes
    and strings, their character spans (int32 pairs), and the text of each run."""
    import pyarrow as pa

    from ..corpus.tokenizer import token_spans

    words, grams = words_bc.value, grams_bc.value
    for idx, texts, tb in token_batches(batches, unit):
        off = np.asarray(tb.doc_offsets, np.int64)
        n = int(off[-1])
        if n == 0:
            continue
        keep = _dilate(covered(_masked(tb, n), off, words, grams, k), off, w)
        cs = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(keep, out=cs[1:])
        kept = cs[off[1:]] - cs[off[:-1]]
        rows = np.flatnonzero(kept > 0)
        if rows.size == 0:
            continue
        strings = tb.strings(np.flatnonzero(keep))
        local = np.arange(n, dtype=np.int64) - np.repeat(off[:-1], np.diff(off))
        out_pos, out_h, out_sp, out_str, piece_at, piece_txt = [], [], [], [], [], []
        s0 = 0
        for d in range(len(texts)):
            m = int(kept[d])
            if m == 0:
                continue
            a, b = int(off[d]), int(off[d + 1])
            km = keep[a:b]
            pos = local[a:b][km]
            sp = token_spans(texts[d], unit=unit)[pos]
            if sp.size and int(sp[-1, 1]) >= 2**31:      # pragma: no cover - 2 G characters
                raise ValueError("templates on Spark: a document of more than 2^31 characters")
            out_pos.append(pos.astype(np.int32))
            out_h.append(tb.hashes[a:b][km])
            out_sp.append(sp.reshape(-1).astype(np.int32))
            out_str.append(strings[s0:s0 + m])
            s0 += m
            # the text of each kept run of consecutive positions
            brk = np.flatnonzero(np.diff(pos) != 1) + 1
            starts = np.concatenate(([0], brk))
            ends = np.concatenate((brk, [pos.size]))
            ca = sp[starts, 0]
            cb = sp[ends - 1, 1]
            piece_at.append(ca.astype(np.int64))
            piece_txt.append([texts[d][int(x):int(y)] for x, y in zip(ca, cb)])
        koff = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(kept[rows], out=koff[1:])
        runs = np.array([x.size for x in piece_at], dtype=np.int64)
        poff = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(runs, out=poff[1:])
        yield pa.RecordBatch.from_arrays(
            [pa.array(idx[rows]), pa.array(kept[rows]), pa.array(runs),
             pack_binary(np.concatenate(out_pos), koff),
             pack_binary(np.concatenate(out_h), koff),
             pack_binary(np.concatenate(out_sp), 2 * koff),
             pa.array(out_str, pa.list_(pa.string())),
             pack_binary(np.concatenate(piece_at), poff),
             pa.array(piece_txt, pa.list_(pa.string()))],
            names=["doc_index", "n_kept", "n_runs", "positions", "tokens", "spans", "strings",
                   "piece_at", "pieces"])


def _word_pairs(batches):
    """(hash, word) of each distinct kept token hash of a batch of the kept dataset,
    a slice of the batch at a time (:func:`repetend.spark.io.sliced`; the pairs are
    grouped by hash after)."""
    import pyarrow as pa

    for batch in sliced(batches, "tokens"):
        h, _ = binary_of(batch.column("tokens"), np.uint64)
        if h.size == 0:
            continue
        uh, first = np.unique(h, return_index=True)
        words = batch.column("strings").flatten().take(pa.array(first))
        yield pa.RecordBatch.from_arrays([pa.array(uh.view(np.int64)), words],
                                         names=["hash", "word"])


# -- the layer's side (one task) ----------------------------------------------------

class _PieceText:
    """The text of a document where only its kept runs are known: slices inside one
    run (all the layer cuts: one occurrence's surface form) give the original text."""

    def __init__(self, at: np.ndarray, pieces: list) -> None:   # pieces: the runs' str
        self._at, self._pieces = at, pieces

    def __getitem__(self, sl: slice) -> str:
        a, b = int(sl.start), int(sl.stop)
        if b <= a:
            return ""
        i = int(np.searchsorted(self._at, a, side="right")) - 1
        if i < 0 or b - int(self._at[i]) > len(self._pieces[i]):
            raise IndexError(f"characters {a}:{b} are not inside one kept run")
        lo = int(self._at[i])
        return self._pieces[i][a - lo:b - lo]


class _KeptRows:
    """A kept document's character spans and run texts, read from the executors' kept
    dataset when asked (the layer asks for the spans of the documents its occurrences
    are in, in document order, and the text of one example document per template):
    row groups decoded on demand, the last few kept."""

    CACHED_GROUPS = 4

    def __init__(self, files: list, groups: list, where: np.ndarray) -> None:
        self._files, self._groups = files, groups     # groups: (file index, row group)
        self._where = where                           # per kept document: (group, row)
        self._cache: dict[int, Any] = {}

    def _group(self, g: int):
        import pyarrow as pa
        import pyarrow.parquet as pq

        if g in self._cache:
            self._cache[g] = self._cache.pop(g)       # most recently used last
            return self._cache[g]
        fi, rg = self._groups[g]
        tb = pq.ParquetFile(self._files[fi]).read_row_group(rg, columns=["spans", "piece_at", "pieces"])
        if len(self._cache) >= self.CACHED_GROUPS:
            self._cache.pop(next(iter(self._cache)))
            pa.default_memory_pool().release_unused()
        self._cache[g] = tb
        return tb

    def spans(self, r: int) -> np.ndarray:
        g, row = (int(x) for x in self._where[r])
        sp, off = binary_of(self._group(g).column("spans").slice(row, 1), np.int32)
        return sp.reshape(-1, 2)

    def text(self, r: int) -> "_PieceText":
        g, row = (int(x) for x in self._where[r])
        tb = self._group(g)
        at, _ = binary_of(tb.column("piece_at").slice(row, 1), np.int64)
        # (Python strings: a slice of the Arrow column would keep its whole decoded
        # row group alive for as long as the layer keeps this document's text)
        return _PieceText(at.copy(), tb.column("pieces")[row].as_py())


class _WideStore(TokenStore):
    """A token store of the widened corpus: the local store's token ids, the original
    document ids, and per document the original character spans of its kept tokens
    (``unit="code"`` makes :func:`repetend.corpus.char_offsets.char_offsets` take
    :meth:`token_spans`, so template character offsets are the original ones) and the
    text of its kept runs, both read from the kept dataset (:class:`_KeptRows`)."""

    def text(self, d: int):                       # type: ignore[override]
        return self._rows.text(d)

    def token_spans(self, d: int):                # type: ignore[override]
        a, b = int(self.doc_offsets[d]), int(self.doc_offsets[d + 1])
        real = self._posmap[a:b] >= 0
        out = np.zeros((b - a, 2), dtype=np.int64)
        out[real] = self._rows.spans(d)
        return out


@dataclass
class _Widened:
    """The widened corpus in the layer's task: kept documents ``kdoc`` (ascending), token ids
    with separators, each token's position in its original document (-1: a
    separator), document offsets; the kept tokens' character spans and the kept runs'
    text stay in the dataset (``rows``)."""
    kdoc: np.ndarray
    n_kept: int
    n_gaps: int
    tokens: np.ndarray
    posmap: np.ndarray
    offsets: np.ndarray
    rows: _KeptRows


def _layout_array(path: Path, size: int) -> np.ndarray:
    """An int32 array of *size* mapped from a new file at *path* (an ordinary array
    when empty: a file of no bytes cannot be mapped)."""
    if size == 0:
        return np.zeros(0, dtype=np.int32)
    return np.memmap(path, dtype=np.int32, mode="w+", shape=(size,))


def _read_widened(kept_dir: Path, vh: np.ndarray, vid: np.ndarray, n_vocab: int) -> _Widened:
    """Lay the executors' kept dataset out as one widened corpus, in document order
    whatever order its files and rows are in: a separator token (id ``n_vocab + g``,
    g counting in document order) before every kept run but a document's first, and
    one (``n_vocab + G + r``) after each kept document r.  Read one row group at a
    time into two int32 arrays mapped from files in *kept_dir* (8 bytes per widened
    token, file-backed as the local store is)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = parquet_parts(kept_dir)
    groups, metas = [], []
    for fi, f in enumerate(files):
        pf = pq.ParquetFile(f)
        for rg in range(pf.metadata.num_row_groups):
            groups.append((fi, rg))
            metas.append(pf.read_row_group(rg, columns=["doc_index", "n_kept", "n_runs"]))
    n_rows = np.array([m.num_rows for m in metas], dtype=np.int64)
    meta = pa.concat_tables(metas) if metas else None
    if meta is None or meta.num_rows == 0:
        z = np.zeros(0, np.int64)
        return _Widened(z, 0, 0, np.zeros(0, np.int32), np.zeros(0, np.int32),
                        np.zeros(1, np.int64), _KeptRows(files, groups, np.zeros((0, 2), np.int64)))
    kd = numpy_column(meta.column("doc_index"), np.int64)
    o = np.argsort(kd, kind="stable")
    kdoc = np.ascontiguousarray(kd[o])
    if kdoc.size > 1 and not np.all(kdoc[1:] > kdoc[:-1]):
        raise RuntimeError("templates on Spark: a document twice in the widened corpus")
    kept = numpy_column(meta.column("n_kept"), np.int64)[o]
    runs = numpy_column(meta.column("n_runs"), np.int64)[o]
    # where each kept document is: (row group, row in it)
    gstart = np.zeros(n_rows.size + 1, dtype=np.int64)
    np.cumsum(n_rows, out=gstart[1:])
    g_of = np.repeat(np.arange(n_rows.size, dtype=np.int64), n_rows)
    where = np.stack([g_of, np.arange(kd.size, dtype=np.int64) - gstart[g_of]], axis=1)[o]
    del meta, metas, kd, o, g_of
    n_docs = kdoc.size
    gbase = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(runs - 1, out=gbase[1:])
    n_gaps = int(gbase[-1])
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(kept + runs, out=offsets[1:])
    if n_vocab + n_gaps + n_docs >= 2**31 - 2:           # pragma: no cover - 2 G ids
        raise RuntimeError("templates on Spark: more than 2^31 token ids")
    size = int(offsets[-1])
    # file-backed, like the local store the layer reads (pages the kernel can write
    # back and drop, not anonymous memory): in the dataset's directory, removed with
    # it; named per reader, so that two attempts of the task never share a file
    tag = uuid.uuid4().hex
    tokens = _layout_array(Path(kept_dir) / f"_layout-{tag}.tokens.i32", size)
    posmap = _layout_array(Path(kept_dir) / f"_layout-{tag}.positions.i32", size)
    posmap[:] = -1
    for gi, (fi, rg) in enumerate(groups):
        if n_rows[gi] == 0:
            continue
        batch = pq.ParquetFile(files[fi]).read_row_group(rg, columns=["doc_index", "positions", "tokens"])
        r = np.searchsorted(kdoc, numpy_column(batch.column("doc_index"), np.int64))
        pos, pk = binary_of(batch.column("positions"), np.int32)
        h, _ = binary_of(batch.column("tokens"), np.uint64)
        del batch
        m = pos.size
        rb = np.repeat(np.arange(r.size), np.diff(pk))
        start = pk[:-1][rb]
        # a break: a kept position not right after the one before it in its document
        brk = np.zeros(m, dtype=bool)
        if m:
            brk[1:] = pos[1:] != pos[:-1] + 1
            brk[start] = False
        q = np.cumsum(brk)
        q -= q[start]                                # kept runs before, in the document
        dest = offsets[r][rb] + (np.arange(m, dtype=np.int64) - start) + q
        at = np.searchsorted(vh, h)
        if m and (int(at.max()) >= vh.size or not np.array_equal(vh[at], h)):
            raise RuntimeError("templates on Spark: a kept token has no id")  # pragma: no cover
        tokens[dest] = vid[at]
        posmap[dest] = pos
        g = np.flatnonzero(brk)
        tokens[dest[g] - 1] = n_vocab + gbase[r[rb[g]]] + q[g] - 1
        del pos, h, rb, start, brk, q, dest, at, g
    tokens[offsets[1:] - 1] = n_vocab + n_gaps + np.arange(n_docs, dtype=np.int64)
    pa.default_memory_pool().release_unused()
    return _Widened(kdoc, int(kept.sum()), n_gaps, tokens, posmap, offsets,
                    _KeptRows(files, groups, where))


def _kept_vocab(spark, toks, kept_words, dest: Path) -> int:
    """The kept words' token ids in the local store (rank of the word's first
    occurrence (document, position) in the whole corpus), ranked and joined with
    *kept_words* (hash, word) on the cluster and written by the executors as a
    Parquet dataset *dest* (hash, rank, word: the kept vocabulary only); returns
    the size of the corpus's vocabulary."""
    from pyspark.sql import functions as F

    from ._prefilter import _word_stat_batches, word_stat_schema

    first = toks.select("doc_index", "tokens").mapInArrow(_word_stat_batches, word_stat_schema()) \
        .groupBy("hash").agg(F.min(F.struct("first_doc", "first_pos")).alias("first")) \
        .select("hash", "first.first_doc", "first.first_pos") \
        .orderBy("first_doc", "first_pos")
    ranked = first.rdd.zipWithIndex().map(lambda r: (r[0][0], r[1]))
    rk = spark.createDataFrame(ranked, "hash long, rank long")
    n_vocab = rk.count()
    want = kept_words.groupBy("hash").agg(F.first("word").alias("word"))
    rk.join(want, "hash").write.parquet(dest.as_uri())
    return int(n_vocab)


def _read_vocab(path: Path) -> tuple[np.ndarray, np.ndarray, list]:
    """``(hashes, ids, words)`` of the kept vocabulary dataset at *path*, by hash."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    got = pq.read_table(path, columns=["hash", "rank", "word"])
    gh = numpy_column(got.column("hash"), np.int64).view(np.uint64)
    o = np.argsort(gh)
    gr = numpy_column(got.column("rank"), np.int64)[o]
    words = got.column("word").take(pa.array(o)).to_pylist()
    return np.ascontiguousarray(gh[o]), gr, words


# -- the layer: one task on an executor ---------------------------------------------

#: the kept vocabulary (written by the executors) in the widened dataset's directory
VOCAB_DIR = "_vocab"


def _layer_in_task(kept_dir: Path, *, n_vocab: int, **inputs):
    """The template layer in its task (:func:`repetend.spark.task.run`): the widened
    dataset and the kept vocabulary read from *kept_dir*, then :func:`_layer`;
    returns ``(result, plan, figures)``."""
    vh, vid, words = _read_vocab(kept_dir / VOCAB_DIR)
    wide = _read_widened(kept_dir, vh, vid, n_vocab)
    del vh
    return _layer(wide, vid, words, n_vocab, **inputs)


def find_templates(spark, docs, toks, cfg, raw, *, doc_offsets, doc_ids, n_tokens: int,
                   frequent_tokens: int, unit: str, groups=None, min_docs: int,
                   work_dir=None) -> tuple[Any, dict]:
    """The template layer of *cfg* over the documents *docs* (doc_index, text), their
    tokens *toks* and the exact phrases *raw* (global token positions): the local
    layer on the widened corpus, mapped back.  Returns ``(TemplateResult or None,
    plan)`` as :func:`repetend.phrases.run_templates`, plus figures in
    ``summary["spark"]``."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from ._prefilter import (SKETCH_DEPTH, SKETCH_WIDTH, _saturating_sum, _sketch_batches,
                             _survivor_batches, _word_stat_batches, word_stat_schema)

    tcfg = cfg.templates
    L = int(cfg.min_len)
    part_len = int(tcfg.part_len) if tcfg.part_len is not None else min(L, 4)
    k = max(1, min(part_len, L))
    w = reach(tcfg)
    sc = spark.sparkContext
    mschema = T.StructType([T.StructField("doc_index", T.LongType()),
                            T.StructField("tokens", T.BinaryType())])
    masked = docs.select("doc_index", "text").mapInArrow(
        lambda it, _u=unit: _masked_batches(it, unit=_u), mschema).persist(StorageLevel.MEMORY_AND_DISK)
    bcs: list = []      # destroyed once the widened corpus is written
    try:
        words = np.sort(numpy_column(
            masked.mapInArrow(_word_stat_batches, word_stat_schema()).groupBy("hash")
            .agg(F.sum("df").alias("df")).filter(F.col("df") >= min_docs).select("hash")
            .toArrow().column("hash"), np.int64).view(np.uint64))
        words_bc = sc.broadcast(words)
        bcs.append(words_bc)
        sk_schema = T.StructType([T.StructField("sketch", T.BinaryType())])
        table = masked.mapInArrow(
            lambda it, _w=words_bc, _k=k: _sketch_batches(it, words_bc=_w, k=_k, depth=SKETCH_DEPTH,
                                                           width=SKETCH_WIDTH), sk_schema) \
            .rdd.map(lambda r: np.frombuffer(r[0], dtype=np.uint32).copy()) \
            .treeReduce(_saturating_sum).reshape(SKETCH_DEPTH, SKETCH_WIDTH)
        sketch_bc = sc.broadcast(table)
        bcs.append(sketch_bc)
        sv_schema = T.StructType([T.StructField("hash", T.LongType()), T.StructField("df", T.LongType())])
        grams = np.sort(numpy_column(masked.mapInArrow(
            lambda it, _w=words_bc, _s=sketch_bc, _k=k, _g=min_docs:
            _survivor_batches(it, words_bc=_w, sketch_bc=_s, k=_k, min_docs=_g), sv_schema)
            .groupBy("hash").agg(F.sum("df").alias("df")).filter(F.col("df") >= min_docs)
            .select("hash").toArrow().column("hash"), np.int64).view(np.uint64))
        grams_bc = sc.broadcast(grams)
        bcs.append(grams_bc)
    except BaseException:
        destroy(bcs)
        raise
    finally:
        masked.unpersist()
    kschema = T.StructType([T.StructField("doc_index", T.LongType()),
                            T.StructField("n_kept", T.LongType()),
                            T.StructField("n_runs", T.LongType()),
                            T.StructField("positions", T.BinaryType()),
                            T.StructField("tokens", T.BinaryType()),
                            T.StructField("spans", T.BinaryType()),
                            T.StructField("strings", T.ArrayType(T.StringType())),
                            T.StructField("piece_at", T.BinaryType()),
                            T.StructField("pieces", T.ArrayType(T.StringType()))])
    # the widened corpus is written by the executors (not collected through the
    # driver's JVM) and read back by the layer's task, row group by row group
    kept_dir = scratch_dir(work_dir, KEPT_NAME)
    try:
        docs.select("doc_index", "text").mapInArrow(
            lambda it, _w=words_bc, _g=grams_bc, _k=k, _wd=w, _u=unit:
            _kept_batches(it, words_bc=_w, grams_bc=_g, k=_k, w=_wd, unit=_u), kschema) \
            .write.option("parquet.block.size", KEPT_ROW_GROUP_BYTES).parquet(kept_dir.as_uri())
        destroy(bcs)
        vschema = T.StructType([T.StructField("hash", T.LongType()), T.StructField("word", T.StringType())])
        n_vocab = _kept_vocab(
            spark, toks, spark.read.parquet(kept_dir.as_uri()).select("tokens", "strings")
            .mapInArrow(_word_pairs, vschema), kept_dir / VOCAB_DIR)
        # the layer runs in one task on an executor (the driver holds none of the
        # widened corpus): its inputs and its result pass through files here
        (res, plan, figures), peak = in_one_task(spark, _layer_in_task, kept_dir, {
            "n_vocab": n_vocab, "cfg": cfg, "raw": raw, "doc_offsets": doc_offsets,
            "doc_ids": doc_ids, "n_tokens": n_tokens, "frequent_tokens": frequent_tokens,
            "groups": groups, "figures": {"part_k": k, "reach": w,
                                          "masked_frequent_words": int(words.size),
                                          "masked_frequent_kgrams": int(grams.size),
                                          "layer": "executor task"}}, "the template layer")
        figures["task_peak_anon_bytes"] = peak
        return res, plan, figures
    finally:
        destroy(bcs)
        shutil.rmtree(kept_dir, ignore_errors=True)


def _layer(wide: _Widened, vid, vwords, n_vocab: int, cfg, raw, *, doc_offsets, doc_ids,
           n_tokens: int, frequent_tokens: int, groups, figures: dict):
    """The local layer on the widened corpus *wide*, its tables mapped back to the
    original documents and positions."""
    import pyarrow as pa

    from ..phrases import RawPhrases, run_templates
    from ..phrases.frequent_spans import frequent_spans

    L = int(cfg.min_len)
    kdoc, n, n_gaps = wide.kdoc, wide.n_kept, wide.n_gaps
    figures["documents"] = int(kdoc.size)
    # one string per distinct kept word; the separators' names after the vocabulary
    vocab: list[str] = [""] * n_vocab
    for i, word in zip(vid.tolist(), vwords):
        vocab[i] = word
    del vwords
    vocab.extend(f"\x00sep{i}" for i in range(n_gaps + kdoc.size))
    tokens_w, posmap, offsets_w = wide.tokens, wide.posmap, wide.offsets
    # exact phrases in widened positions (every exact occurrence is kept whole)
    occ = np.asarray(raw.occ_starts, np.int64)
    odoc = np.searchsorted(doc_offsets, occ, side="right") - 1
    orow = np.searchsorted(kdoc, odoc)
    if occ.size and (orow.max() >= kdoc.size or not np.array_equal(kdoc[orow], odoc)):
        raise RuntimeError("templates on Spark: an exact occurrence outside the widened corpus")
    at = widened_index(posmap, offsets_w, orow.astype(np.int64), (occ - doc_offsets[odoc]).astype(np.int64))
    if occ.size and int(at.min()) < 0:
        raise RuntimeError("templates on Spark: an exact occurrence outside the widened corpus")
    raw_w = RawPhrases(np.asarray(raw.lengths, np.int64), np.asarray(raw.df, np.int64),
                       np.asarray(raw.occ_offsets, np.int64), at, {})
    del odoc, orow, at
    store = _WideStore(tokens=tokens_w, doc_offsets=offsets_w, vocab=vocab,
                       df=np.zeros(0, np.int32),
                       docs=pa.table({"doc_id": doc_ids.take(pa.array(kdoc))}),
                       text_blob=np.zeros(0, np.uint8), text_offsets=np.zeros(1, np.int64),
                       unit="code")
    store._rows = wide.rows
    store._posmap = posmap
    store.original_lengths = np.diff(doc_offsets)[kdoc]
    fs = frequent_spans(tokens_w, offsets_w, raw_w, L)
    res, plan = run_templates(store, raw_w, cfg, n_tokens, frequent_tokens, spans=fs,
                              **({} if groups is None else {"groups": groups[kdoc]}))
    figures.update(tokens=int(n), separators=int(n_gaps), kept_share=n / max(n_tokens, 1))
    if res is None:
        return None, plan, figures
    # the summary's corpus figures are of the whole corpus, as locally
    sm = res.summary
    sm["documents"], sm["tokens"] = int(doc_offsets.size - 1), int(n_tokens)
    for key in ("template", "exact", "union", "gained"):
        if f"{key}_covered_share" in sm or key == "gained":
            cnt = sm.get(f"{key}_covered_tokens" if key != "gained" else "gained_tokens")
            if cnt is not None:
                sm[f"{key}_covered_share" if key != "gained" else "gained_share"] = \
                    cnt / max(int(n_tokens), 1)
    sm["spark"] = figures
    o = res.occurrences
    od = numpy_column(o.column("doc_index"), np.int64)
    base = offsets_w[od]
    st = posmap[base + numpy_column(o.column("start"), np.int64)].astype(np.int64)
    en = posmap[base + numpy_column(o.column("end"), np.int64) - 1].astype(np.int64) + 1
    cols = {"doc_index": pa.array(kdoc[od]), "start": pa.array(st), "end": pa.array(en)}
    for name, arr in cols.items():
        o = o.set_column(o.column_names.index(name), name, arr)
    res.occurrences = o
    return res, plan, figures
