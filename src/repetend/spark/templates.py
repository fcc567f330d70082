"""The template layer on Spark: a *widened* reduced corpus, then the local layer.

The exact pre-filter (:mod:`repetend.spark.phrases`) keeps only the islands of
frequent L-grams, which drops what the template layer reads: its parts are the
frequent L'-grams (L' = ``part_len`` ≤ L, numbers masked), the slots between them,
and the heads and tails next to its templates.  This module keeps, per document, every
position within W tokens of a frequent masked k'-gram (k' = min(L', L)), W a bound on
how far the layer reads past its parts (:func:`reach`), and a fresh separator token
where more was dropped; the driver runs :func:`repetend.phrases.run_templates` on that
corpus, with the local store's token ids (order of first occurrence in the whole
corpus) and original document ids, and the template tables come out in original
token positions and characters.  The argument is in ``docs/spark.md`` ("Templates:
the widened corpus").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..corpus.store import TokenStore
from ._prefilter import covered
from .io import binary_of, numpy_column, pack_binary, token_batches

__all__ = ["reach"]

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
    """Per document with kept positions: the positions, their (unmasked) token hashes
    and strings, their character spans, and the text of each kept run."""
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
            out_pos.append(pos.astype(np.int32))
            out_h.append(tb.hashes[a:b][km])
            out_sp.append(sp.reshape(-1))
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
        poff = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum([x.size for x in piece_at], out=poff[1:])
        yield pa.RecordBatch.from_arrays(
            [pa.array(idx[rows]), pack_binary(np.concatenate(out_pos), koff),
             pack_binary(np.concatenate(out_h), koff),
             pack_binary(np.concatenate(out_sp), 2 * koff),
             pa.array(out_str, pa.list_(pa.string())),
             pack_binary(np.concatenate(piece_at), poff),
             pa.array(piece_txt, pa.list_(pa.string()))],
            names=["doc_index", "positions", "tokens", "spans", "strings", "piece_at",
                   "pieces"])


# -- driver side ------------------------------------------------------------------

class _PieceText:
    """The text of a document where only its kept runs are known: slices inside one
    run (all the layer cuts: one occurrence's surface form) give the original text."""

    def __init__(self, at: np.ndarray, pieces) -> None:   # pieces: an Arrow string array
        self._at, self._pieces = at, pieces

    def __getitem__(self, sl: slice) -> str:
        a, b = int(sl.start), int(sl.stop)
        if b <= a:
            return ""
        i = int(np.searchsorted(self._at, a, side="right")) - 1
        s = self._pieces[i].as_py()
        lo = int(self._at[i])
        if i < 0 or b - lo > len(s):
            raise IndexError(f"characters {a}:{b} are not inside one kept run")
        return s[a - lo:b - lo]


class _WideStore(TokenStore):
    """A token store of the widened corpus: the local store's token ids, the original
    document ids, and per document the original character spans of its kept tokens
    (``unit="code"`` makes :func:`repetend.corpus.char_offsets.char_offsets` take
    :meth:`token_spans`, so template character offsets are the original ones)."""

    def text(self, d: int):                       # type: ignore[override]
        return self._texts[d]

    def token_spans(self, d: int):                # type: ignore[override]
        a, b = int(self.doc_offsets[d]), int(self.doc_offsets[d + 1])
        return self._spans[a:b]


def _ranks(spark, toks, hashes: np.ndarray) -> tuple[np.ndarray, int]:
    """Token id in the local store (rank of the word's first occurrence (document,
    position) in the whole corpus) of each of the distinct *hashes*, and the size of
    the corpus's vocabulary; ranked on the cluster, only *hashes* collected."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from ._prefilter import _word_stat_batches

    ws_schema = T.StructType([T.StructField("hash", T.LongType()), T.StructField("df", T.LongType()),
                              T.StructField("first_doc", T.LongType()),
                              T.StructField("first_pos", T.LongType())])
    first = toks.select("doc_index", "tokens").mapInArrow(_word_stat_batches, ws_schema) \
        .groupBy("hash").agg(F.min(F.struct("first_doc", "first_pos")).alias("first")) \
        .select("hash", "first.first_doc", "first.first_pos") \
        .orderBy("first_doc", "first_pos")
    ranked = first.rdd.zipWithIndex().map(lambda r: (r[0][0], r[1]))
    rk = spark.createDataFrame(ranked, "hash long, rank long")
    n_vocab = rk.count()
    want = spark.createDataFrame([(int(x),) for x in hashes.view(np.int64)], "hash long")
    got = rk.join(F.broadcast(want), "hash").toArrow()
    gh = numpy_column(got.column("hash"), np.int64).view(np.uint64)
    gr = numpy_column(got.column("rank"), np.int64)
    o = np.argsort(gh)
    gh, gr = gh[o], gr[o]
    at = np.searchsorted(gh, hashes)
    if hashes.size and (at.max() >= gh.size or not np.array_equal(gh[at], hashes)):
        raise RuntimeError("templates on Spark: a kept token has no rank")  # pragma: no cover
    return gr[at], int(n_vocab)


def find_templates(spark, docs, toks, cfg, raw, *, doc_offsets, doc_ids, n_tokens: int,
                   frequent_tokens: int, unit: str, groups=None, min_docs: int) -> tuple[Any, dict]:
    """The template layer of *cfg* over the documents *docs* (doc_index, text), their
    tokens *toks* and the exact phrases *raw* (global token positions): the local
    layer on the widened corpus, mapped back.  Returns ``(TemplateResult or None,
    plan)`` as :func:`repetend.phrases.run_templates`, plus figures in
    ``summary["spark"]``."""
    import pyarrow as pa
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from ..phrases import RawPhrases, run_templates
    from ..phrases.frequent_spans import frequent_spans
    from ._prefilter import (SKETCH_DEPTH, SKETCH_WIDTH, _saturating_sum, _sketch_batches,
                             _survivor_batches, _word_stat_batches)

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
    try:
        ws_schema = T.StructType([T.StructField("hash", T.LongType()), T.StructField("df", T.LongType()),
                                  T.StructField("first_doc", T.LongType()),
                                  T.StructField("first_pos", T.LongType())])
        words = np.sort(numpy_column(
            masked.mapInArrow(_word_stat_batches, ws_schema).groupBy("hash")
            .agg(F.sum("df").alias("df")).filter(F.col("df") >= min_docs).select("hash")
            .toArrow().column("hash"), np.int64).view(np.uint64))
        words_bc = sc.broadcast(words)
        sk_schema = T.StructType([T.StructField("sketch", T.BinaryType())])
        table = masked.mapInArrow(
            lambda it, _w=words_bc, _k=k: _sketch_batches(it, words_bc=_w, k=_k, depth=SKETCH_DEPTH,
                                                           width=SKETCH_WIDTH), sk_schema) \
            .rdd.map(lambda r: np.frombuffer(r[0], dtype=np.uint32).copy()) \
            .treeReduce(_saturating_sum).reshape(SKETCH_DEPTH, SKETCH_WIDTH)
        sketch_bc = sc.broadcast(table)
        sv_schema = T.StructType([T.StructField("hash", T.LongType()), T.StructField("df", T.LongType())])
        grams = np.sort(numpy_column(masked.mapInArrow(
            lambda it, _w=words_bc, _s=sketch_bc, _k=k, _g=min_docs:
            _survivor_batches(it, words_bc=_w, sketch_bc=_s, k=_k, min_docs=_g), sv_schema)
            .groupBy("hash").agg(F.sum("df").alias("df")).filter(F.col("df") >= min_docs)
            .select("hash").toArrow().column("hash"), np.int64).view(np.uint64))
        grams_bc = sc.broadcast(grams)
    finally:
        masked.unpersist()
    kschema = T.StructType([T.StructField("doc_index", T.LongType()),
                            T.StructField("positions", T.BinaryType()),
                            T.StructField("tokens", T.BinaryType()),
                            T.StructField("spans", T.BinaryType()),
                            T.StructField("strings", T.ArrayType(T.StringType())),
                            T.StructField("piece_at", T.BinaryType()),
                            T.StructField("pieces", T.ArrayType(T.StringType()))])
    kept = docs.select("doc_index", "text").mapInArrow(
        lambda it, _w=words_bc, _g=grams_bc, _k=k, _wd=w, _u=unit:
        _kept_batches(it, words_bc=_w, grams_bc=_g, k=_k, w=_wd, unit=_u), kschema).toArrow()
    # (sorted here, not by an orderBy: a sort on the cluster gathers the kept rows into
    # a few partitions whose Arrow batches outgrew a 2 GB driver JVM in local mode at
    # 50 M tokens)
    figures = {"part_k": k, "reach": w, "masked_frequent_words": int(words.size),
               "masked_frequent_kgrams": int(grams.size), "documents": int(kept.num_rows)}
    kdoc = numpy_column(kept.column("doc_index"), np.int64)
    if kdoc.size and not np.all(kdoc[1:] > kdoc[:-1]):
        kept = kept.take(np.argsort(kdoc, kind="stable"))
        kdoc = numpy_column(kept.column("doc_index"), np.int64)
    if kept.num_rows:
        pos, poff = binary_of(kept.column("positions"), np.int32)
        hashes, _ = binary_of(kept.column("tokens"), np.uint64)
        spans, _ = binary_of(kept.column("spans"), np.int64)
        strings = kept.column("strings").combine_chunks().flatten()
        pat, pao = binary_of(kept.column("piece_at"), np.int64)
        pieces = kept.column("pieces").combine_chunks()
    else:
        pos, poff, hashes = np.zeros(0, np.int32), np.zeros(1, np.int64), np.zeros(0, np.uint64)
        spans, strings = np.zeros(0, np.int64), pa.array([], pa.string())
        pat, pao, pieces = np.zeros(0, np.int64), np.zeros(1, np.int64), None
    del kept            # (the columns above are copies or views of combined chunks)
    pos = pos.astype(np.int64)
    spans = spans.reshape(-1, 2)
    uh, first, inv = np.unique(hashes, return_index=True, return_inverse=True)
    del hashes
    rank, n_vocab = _ranks(spark, toks, uh) if uh.size else (np.zeros(0, np.int64), 0)
    ids = rank[inv.reshape(-1)]
    del inv
    # one string per distinct kept word (not one Python string per kept token)
    vocab: list[str] = [""] * n_vocab
    for i, s in zip(rank.tolist(), strings.take(pa.array(first)).to_pylist()):
        vocab[i] = s
    del strings, first, rank
    # a separator (a token of its own, after the vocabulary) wherever positions were dropped
    n = pos.size
    gap = np.zeros(n, dtype=bool)
    if n:
        gap[1:] = pos[1:] != pos[:-1] + 1
        gap[poff[:-1][poff[:-1] < n]] = False
    gap_at = np.flatnonzero(gap)
    vocab.extend(f"\x00sep{i}" for i in range(gap_at.size))
    per_doc = np.add.reduceat(gap.astype(np.int64), poff[:-1]) if n else np.zeros(0, np.int64)
    # and a separator after every kept document; one pass inserts both (one copy of
    # each array).  The layer compares whole documents' lengths when it picks an
    # example (the shortest document): the store gives it the original lengths
    # (``original_lengths``), so the widened documents need no padding
    at = np.concatenate((gap_at, poff[1:]))
    vals = np.concatenate((n_vocab + np.arange(gap_at.size, dtype=np.int64),
                           len(vocab) + np.arange(kdoc.size, dtype=np.int64)))
    if vals.size and int(vals.max()) >= 2**31 - 2:   # pragma: no cover - 2 G distinct ids
        raise RuntimeError("templates on Spark: more than 2^31 token ids")
    tokens_w = np.insert(ids.astype(np.int32), at, vals.astype(np.int32))
    del ids
    posmap = np.insert(pos, at, -1)
    del pos
    sp_w = np.insert(spans, at, 0, axis=0)
    del spans, at, vals
    offsets_w = np.zeros(kdoc.size + 1, dtype=np.int64)
    np.cumsum(np.diff(poff) + per_doc + 1, out=offsets_w[1:])
    vocab.extend(f"\x00sep{i}" for i in range(gap_at.size, gap_at.size + kdoc.size))
    rdoc = np.repeat(np.arange(kdoc.size), np.diff(offsets_w))
    real = posmap >= 0
    orig_global = np.where(real, doc_offsets[kdoc[rdoc]] + posmap, -1)
    # exact phrases in widened positions (every exact occurrence is kept whole)
    occ = np.asarray(raw.occ_starts, np.int64)
    rg = orig_global[real]
    at = np.flatnonzero(real)[np.minimum(np.searchsorted(rg, occ), max(rg.size - 1, 0))] \
        if rg.size else np.zeros(0, np.int64)
    if occ.size and not np.array_equal(orig_global[at], occ):
        raise RuntimeError("templates on Spark: an exact occurrence outside the widened corpus")
    raw_w = RawPhrases(np.asarray(raw.lengths, np.int64), np.asarray(raw.df, np.int64),
                       np.asarray(raw.occ_offsets, np.int64), at.astype(np.int64), {})
    del rdoc, real, orig_global, rg, at
    texts = []
    for r in range(kdoc.size):
        texts.append(_PieceText(pat[pao[r]:pao[r + 1]], pieces[r].values))   # Arrow, not str
    del pieces
    store = _WideStore(tokens=tokens_w, doc_offsets=offsets_w, vocab=vocab,
                       df=np.zeros(0, np.int32),
                       docs=pa.table({"doc_id": doc_ids.take(pa.array(kdoc))}),
                       text_blob=np.zeros(0, np.uint8), text_offsets=np.zeros(1, np.int64),
                       unit="code")
    store._texts = texts
    store._spans = sp_w
    store.original_lengths = np.diff(doc_offsets)[kdoc]
    fs = frequent_spans(tokens_w, offsets_w, raw_w, L)
    res, plan = run_templates(store, raw_w, cfg, n_tokens, frequent_tokens, spans=fs,
                              **({} if groups is None else {"groups": groups[kdoc]}))
    figures.update(tokens=int(n), separators=int(gap_at.size), kept_share=n / max(n_tokens, 1))
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
    st = posmap[base + numpy_column(o.column("start"), np.int64)]
    en = posmap[base + numpy_column(o.column("end"), np.int64) - 1] + 1
    cols = {"doc_index": pa.array(kdoc[od]), "start": pa.array(st), "end": pa.array(en)}
    for name, arr in cols.items():
        o = o.set_column(o.column_names.index(name), name, arr)
    res.occurrences = o
    return res, plan, figures
