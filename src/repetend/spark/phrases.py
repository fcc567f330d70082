"""Boilerplate phrases on Spark: a distributed exact pre-filter, then the local engine.

The maximal frequent phrases of length >= L are found in four Spark passes and one
exact mining run in one task on an executor (proof of equality with the local result in
``docs/spark.md``):

1. **tokens** (``mapInArrow``): :func:`repetend.corpus.tokenizer.tokenize_batch` per batch;
   each document keeps its 64-bit token hashes.
2. **word df** (per batch, then a shuffle): exact document frequency of every token and the
   first document it occurs in; words with df < σ cannot lie in a frequent phrase.
3. **k-gram sketch** (k = L by default): every document's distinct k-grams made of frequent
   words go into a per-batch count-min sketch (depth × width uint32 counters); the
   sketches are merged by a saturating sum (count-min sketches are mergeable and never
   under-count).
4. **exact k-gram df**: k-grams whose sketch estimate is >= σ are counted exactly by a
   shuffle; those with df >= σ are the frequent k-grams.
5. **islands**: positions covered by an occurrence of a frequent k-gram, kept per document
   with their document-local positions, are written by the executors as a Parquet
   dataset.  One task on an executor (:func:`_mine_islands`, through
   :mod:`repetend.spark.task`) builds a reduced corpus from it — one document per
   original document that has islands, the islands in order, consecutive islands
   separated by a token that occurs nowhere else — and runs
   :func:`repetend.phrases.find_phrases` on it with the same :class:`PhraseConfig`; the
   occurrences are mapped back to original documents and positions there, and the
   driver receives the result's tables only.

Token ids of the reduced corpus follow the order of the local token store's vocabulary
(order of first occurrence in the corpus), so that the canonical phrase order — whose
last tie-break compares token ids — is the local one.  Templates with variable parts
(``PhraseConfig.templates``): the local layer on a widened reduced corpus
(:mod:`repetend.spark.templates`).
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ParameterError
from .io import binary_of, check_unique_ids, destroy, load_documents, numpy_column
from .task import in_one_task, parquet_parts, scratch_dir

__all__ = ["find_phrases"]

from ._prefilter import (SKETCH_DEPTH, SKETCH_WIDTH, _island_batches,  # noqa: F401
                         _saturating_sum, _sketch_batches, _survivor_batches, _token_batches,
                         _word_stat_batches, word_stat_schema)


# -- the island mining (one task) --------------------------------------------------

def _island_rows(tables):
    """The islands' rows from *tables* (doc_index, positions, tokens; any order, read
    one at a time), in document order: document of each row, row offsets, each
    token's document-local position (int32) and hash (uint64), as flat arrays (each
    table's copied out, so that it is freed before the next is read)."""
    docs, lens, pos, hsh = [], [], [], []
    for t in tables:
        if t.num_rows == 0:
            continue
        docs.append(numpy_column(t.column("doc_index"), np.int64))
        p, po = binary_of(t.column("positions"), np.int32)
        h, _ = binary_of(t.column("tokens"), np.uint64)
        lens.append(np.diff(po))
        pos.append(p.copy())
        hsh.append(h.copy())
        del t, p, h
    if not docs:
        return (np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int32),
                np.zeros(0, np.uint64))
    d = np.concatenate(docs)
    n_tok = np.concatenate(lens)
    pos_a = np.concatenate(pos)
    del pos
    h_a = np.concatenate(hsh)
    del hsh
    off = np.zeros(d.size + 1, dtype=np.int64)
    np.cumsum(n_tok, out=off[1:])
    if d.size > 1 and not np.all(d[1:] > d[:-1]):
        # rows in document order: each token's source index, row by row
        order = np.argsort(d, kind="stable")
        d, n_tok = d[order], n_tok[order]
        start = off[:-1][order]
        off = np.zeros(d.size + 1, dtype=np.int64)
        np.cumsum(n_tok, out=off[1:])
        src = np.repeat(start - off[:-1], n_tok) + np.arange(int(off[-1]), dtype=np.int64)
        pos_a, h_a = pos_a[src], h_a[src]
        del src
    return d, off, pos_a, h_a


def _reduced_corpus(isl, word_hash, word_key):
    """Reduced corpus from the executors' islands (a table, or tables read one at a
    time): tokens, offsets, original document of each reduced document, original
    local position of each reduced token (int32, −1 for separators), and the number
    of real token ids."""
    import pyarrow as pa

    docs, poff, pos, hashes = _island_rows([isl] if isinstance(isl, pa.Table) else isl)
    del isl
    n = hashes.size
    # real token ids: the local store's vocabulary order (word_key, one rank per
    # frequent word) among the words the islands hold
    w = np.searchsorted(word_hash, hashes)
    del hashes
    used = np.flatnonzero(np.bincount(w, minlength=word_hash.size))
    n_real = int(used.size)
    if n_real + n >= 2**31:                          # pragma: no cover - 2 G island tokens
        raise RuntimeError("phrases on Spark: more than 2^31 token ids in the islands")
    rank = np.zeros(word_hash.size, dtype=np.int32)
    rank[used[np.argsort(word_key[used], kind="stable")]] = np.arange(n_real, dtype=np.int32)
    ids = rank[w]
    del w, rank
    # a separator before every token that does not follow its predecessor
    gap = np.zeros(n, dtype=bool)
    if n:
        gap[1:] = pos[1:] != pos[:-1] + 1
        gap[poff[:-1][poff[:-1] < n]] = False      # document starts are not gaps
    gap_at = np.flatnonzero(gap)
    tokens = np.insert(ids, gap_at, (n_real + np.arange(gap_at.size)).astype(np.int32))
    del ids
    posmap = np.insert(pos, gap_at, np.int32(-1))
    del pos
    per_doc_gaps = (np.add.reduceat(gap.view(np.uint8), poff[:-1], dtype=np.int64) if n
                    else np.zeros(0, np.int64))
    lens = np.diff(poff) + per_doc_gaps
    offsets = np.zeros(lens.size + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    return tokens, offsets, docs, posmap, n_real


#: the islands' dataset, written by the executors under the work directory and
#: removed once mined (a killed run's: :func:`repetend.spark.task.remove_partial`)
ISLANDS_NAME = "phrases-islands"


@dataclass
class _Mined:
    """What the island mining hands the driver: the reduced corpus's phrases (``raw``,
    occurrences in reduced positions) with each occurrence's original document and
    position, per island document its covered and frequent tokens, the frequent spans
    in original documents and positions, and figures.  Sizes: the result's, and one
    row per document with islands."""
    raw: Any
    engine: str
    reason: Any
    seconds: float
    occ_doc: np.ndarray
    occ_local: np.ndarray
    island_doc: np.ndarray
    covered: np.ndarray
    frequent: np.ndarray
    span_doc: np.ndarray
    span_start: np.ndarray
    span_end: np.ndarray
    span_phrase: np.ndarray
    separators: int
    kept: int


def _mine_islands(isl_dir: Path, *, word_hash, word_key, cfg, labels) -> _Mined:
    """The exact mining of the islands the executors wrote in *isl_dir* (run in one
    task: :func:`repetend.spark.task.run`): the reduced corpus
    (:func:`_reduced_corpus`), :func:`repetend.phrases.find_phrases` on it with *cfg*
    (``templates`` off; *labels*: one cluster label per original document, or None),
    and the occurrences, coverage and spans mapped back to original documents."""
    import pyarrow.parquet as pq

    from ..phrases import RawPhrases
    from ..phrases import find_phrases as local_find

    tokens_r, offsets_r, island_doc, posmap, _ = _reduced_corpus(
        (pq.read_table(f, columns=["doc_index", "positions", "tokens"])
         for f in parquet_parts(isl_dir)), word_hash, word_key)
    z = np.zeros(0, np.int64)
    if island_doc.size == 0:
        return _Mined(RawPhrases(z, z.copy(), np.zeros(1, np.int64), z.copy(), {}), "none",
                      {"rule": "no islands"}, 0.0, z, z, z, z, z, z, z, z, z, 0, 0)
    t1 = time.perf_counter()
    red = local_find((tokens_r, offsets_r), replace(cfg, templates=False),
                     **({} if labels is None else {"groups": labels[island_doc]}))
    seconds = time.perf_counter() - t1
    raw_r = red.raw
    starts_r = np.asarray(raw_r.occ_starts, np.int64)
    rdoc = (np.searchsorted(offsets_r, starts_r, side="right") - 1).astype(np.int64)
    # per reduced document: the local result's coverage (as the local engine counts it)
    covered = numpy_column(red.documents.column("covered_tokens"), np.int64)
    frequent = numpy_column(red.documents.column("frequent_tokens"), np.int64)
    # frequent spans: reduced (document, start, end) → original document and positions
    sp = red.spans
    if sp is not None and sp.num_rows:
        sr = numpy_column(sp.column("doc_index"), np.int64)
        s_start = offsets_r[sr] + numpy_column(sp.column("start"), np.int64)
        s_end = offsets_r[sr] + numpy_column(sp.column("end"), np.int64)
        spans = (island_doc[sr], posmap[s_start], posmap[s_end - 1] + 1,
                 numpy_column(sp.column("phrase_id"), np.int64))
    else:
        spans = (z, z, z, z)
    n_sep = int(np.count_nonzero(posmap < 0))
    return _Mined(raw_r, red.summary["engine"], red.summary["engine_choice"], seconds,
                  island_doc[rdoc], posmap[starts_r].astype(np.int64), island_doc,
                  covered, frequent,
                  *(np.asarray(a, np.int64) for a in spans),
                  separators=n_sep, kept=int(tokens_r.size) - n_sep)


# -- driver side ------------------------------------------------------------------

def _surface(spark, docs_df, wanted: np.ndarray, unit: str) -> dict[int, tuple[str, Any, list]]:
    """Text, token spans and token strings of the documents *wanted*."""
    from pyspark.sql import functions as F

    from ..corpus.tokenizer import token_spans, tokenize_batch

    if wanted.size == 0:
        return {}
    sel = spark.createDataFrame([(int(d),) for d in wanted], "doc_index long")
    rows = docs_df.join(F.broadcast(sel), "doc_index").select("doc_index", "text").collect()
    out = {}
    for r in rows:
        text = r["text"]
        tb = tokenize_batch([text], unit=unit)
        out[int(r["doc_index"])] = (text, token_spans(text, unit=unit),
                                    tb.strings(np.arange(len(tb))))
    return out


def find_phrases(spark, data, config=None, *, id_col: str = "id", text_col: str = "text",
                 url_col: str | None = "url", order_col: str | None = None, unit: str = "word",
                 on_error: str = "skip",
                 k: int | None = None, sketch_width: int = SKETCH_WIDTH,
                 sketch_depth: int = SKETCH_DEPTH, groups=None, work_dir=None, **overrides: Any):
    """Maximal frequent phrases with Spark: the Spark twin of :func:`repetend.find_phrases`.

    Parameters
    ----------
    spark : SparkSession
    data : DataFrame or Parquet/JSONL path(s)
        Documents with id, text and (optionally) url columns.
    config : PhraseConfig, optional
        The same config as the local call; keyword ``overrides`` replace fields.
    id_col, text_col, url_col, order_col : str
        Column names (:func:`repetend.spark.io.load_documents`).
    unit : {"word", "char"}
        Tokens, as in the local token store.
    k : int, optional
        k-gram length of the pre-filter, 1 <= k <= min_len (default min_len).
    sketch_width, sketch_depth : int
        Count-min sketch size (counters per row, rows); only speed depends on them.
    groups : int array, one label per document (in ``doc_index`` order), optional
        With ``df_over="clusters"``, as the local call: df counts distinct
        labels.  The pre-filters count documents, which is one-sided (a token
        or k-gram in fewer than σ documents is in fewer than σ groups), and the
        reduced corpus is mined with the labels of its documents.
    work_dir : path, optional
        A directory the driver and the executors both see (default: the driver's
        temporary directory, which is enough for ``local[*]`` and a cluster on this
        machine).  The executors write the islands there as Parquet, and the
        templates' widened corpus and its vocabulary; the driver writes the small
        inputs of the two one-task stages (the island mining, the template layer)
        beside them; each task (one, on an executor) reads its dataset and writes
        its result there; the driver reads that and removes the directory
        (:mod:`repetend.spark.task`).

    Returns
    -------
    PhraseResult
        The local result type with the same tables, ``char_start``/``char_end`` of
        every occurrence and span included (computed on the executors,
        :mod:`repetend.spark.char_offsets`; ``templates`` from the widened corpus
        when ``config.templates`` is set, :mod:`repetend.spark.templates`); ``raw``
        holds global token positions of the whole corpus; ``summary["spark"]`` has
        the pre-filter figures (words, k-grams and positions kept, islands) and the
        mining task's peak private memory (``mining_task_peak_anon_bytes``).

    Notes
    -----
    The BloomSpan paper (problem §2, BloomSpan §4, coverage §6; docs/references.md);
    Cormode & Muthukrishnan (2005) for the count-min sketch.  Exactness: ``docs/spark.md``.
    """
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from ..phrases import PhraseConfig

    cfg = replace(config, **overrides) if config is not None else PhraseConfig(**overrides)
    cfg.validate()
    if cfg.min_docs is None:
        raise ParameterError("min_docs must be an integer to mine phrases, got None "
                             "(None means chosen from the corpus: the scan job chooses σ)")
    if unit not in ("word", "char"):
        raise ParameterError(f"the Spark engine tokenizes unit 'word' or 'char', got {unit!r}")
    k = int(cfg.min_len if k is None else k)
    if not 1 <= k <= cfg.min_len:
        raise ParameterError(f"k must be in 1..min_len ({cfg.min_len}), got {k}")
    if sketch_width < 1 or sketch_depth < 1:
        raise ParameterError("sketch_width and sketch_depth must be >= 1")
    if cfg.df_over == "clusters" and groups is None:
        raise ParameterError("df_over='clusters' needs groups: one cluster label per document")
    if cfg.df_over != "clusters" and groups is not None:
        raise ParameterError("groups given, but df_over is 'documents': pass df_over='clusters' "
                             "to count df over them")
    min_docs = int(cfg.min_docs)
    t0 = time.perf_counter()
    sc = spark.sparkContext
    docs = load_documents(spark, data, id_col=id_col, text_col=text_col, url_col=url_col,
                          order_col=order_col, on_error=on_error).persist(StorageLevel.MEMORY_AND_DISK)
    persisted = [docs]
    bcs: list = []      # the pre-filter's broadcasts, destroyed once the islands are in
    isl_dir = scratch_dir(work_dir, ISLANDS_NAME)
    try:
        n_docs = check_unique_ids(docs)
        if groups is not None:
            from ..phrases.groups import doc_groups

            grp = doc_groups(groups, n_docs)
        tok_schema = T.StructType([T.StructField("doc_index", T.LongType()),
                                   T.StructField("n_tokens", T.LongType()),
                                   T.StructField("n_chars", T.LongType()),
                                   T.StructField("tokens", T.BinaryType())])
        toks = docs.select("doc_index", "text").mapInArrow(
            lambda it, _u=unit: _token_batches(it, unit=_u), tok_schema) \
            .persist(StorageLevel.MEMORY_AND_DISK)
        persisted.append(toks)
        meta = docs.select("doc_index", "doc_id", "url").join(
            toks.select("doc_index", "n_tokens", "n_chars"), "doc_index").orderBy("doc_index").toArrow()
        # word df and first document
        words_t = toks.select("doc_index", "tokens").mapInArrow(_word_stat_batches, word_stat_schema()) \
            .groupBy("hash").agg(F.sum("df").alias("df"),
                                 F.min(F.struct("first_doc", "first_pos")).alias("first")) \
            .filter(F.col("df") >= min_docs) \
            .select("hash", "first.first_doc", "first.first_pos").toArrow()
        wh = numpy_column(words_t.column("hash"), np.int64).view(np.uint64)
        order = np.argsort(wh)
        word_hash = np.ascontiguousarray(wh[order])
        wdoc = numpy_column(words_t.column("first_doc"), np.int64)[order]
        wpos = numpy_column(words_t.column("first_pos"), np.int64)[order]
        # local vocabulary order: order of first occurrence (document, position)
        word_rank = np.lexsort((wpos, wdoc)) if word_hash.size else np.zeros(0, np.int64)
        word_key = np.empty(word_hash.size, dtype=np.int64)
        word_key[word_rank] = np.arange(word_hash.size, dtype=np.int64)
        words_bc = sc.broadcast(word_hash)
        bcs.append(words_bc)
        # count-min sketch of the k-grams of frequent words
        sk_schema = T.StructType([T.StructField("sketch", T.BinaryType())])
        src = toks.select("doc_index", "tokens")
        sketches = src.mapInArrow(
            lambda it, _w=words_bc, _k=k, _d=sketch_depth, _wd=sketch_width:
            _sketch_batches(it, words_bc=_w, k=_k, depth=_d, width=_wd), sk_schema)
        table = sketches.rdd.map(lambda r: np.frombuffer(r[0], dtype=np.uint32).copy()) \
            .treeReduce(_saturating_sum).reshape(sketch_depth, sketch_width)
        sketch_bc = sc.broadcast(table)
        bcs.append(sketch_bc)
        # exact df of the k-grams the sketch lets through
        sv_schema = T.StructType([T.StructField("hash", T.LongType()), T.StructField("df", T.LongType())])
        surv = src.mapInArrow(
            lambda it, _w=words_bc, _s=sketch_bc, _k=k, _g=min_docs:
            _survivor_batches(it, words_bc=_w, sketch_bc=_s, k=_k, min_docs=_g), sv_schema) \
            .groupBy("hash").agg(F.sum("df").alias("df")).persist(StorageLevel.MEMORY_AND_DISK)
        persisted.append(surv)
        n_survivors = surv.count()
        grams = np.sort(numpy_column(surv.filter(F.col("df") >= min_docs).select("hash").toArrow()
                                     .column("hash"), np.int64).view(np.uint64))
        grams_bc = sc.broadcast(grams)
        bcs.append(grams_bc)
        is_schema = T.StructType([T.StructField("doc_index", T.LongType()),
                                  T.StructField("positions", T.BinaryType()),
                                  T.StructField("tokens", T.BinaryType())])
        # the islands are written by the executors and mined in one task on an
        # executor (:func:`_mine_islands`), not collected to the driver
        src.mapInArrow(
            lambda it, _w=words_bc, _g=grams_bc, _k=k:
            _island_batches(it, words_bc=_w, grams_bc=_g, k=_k), is_schema) \
            .write.parquet(isl_dir.as_uri())
    except BaseException:
        for d in persisted:
            d.unpersist()
        shutil.rmtree(isl_dir, ignore_errors=True)
        raise
    finally:
        destroy(bcs)
    with_templates = cfg.templates is not None and min_docs >= 2
    for d in persisted:
        if not (d is docs or d is toks):   # those two: for the offsets and the templates
            d.unpersist()
    try:
        return _finish(spark, cfg, docs, toks, meta, isl_dir, words_t, word_hash, word_key, grams,
                       n_survivors, n_docs, groups, grp if groups is not None else None, k,
                       sketch_depth, sketch_width, unit, min_docs, with_templates, t0, work_dir)
    finally:
        docs.unpersist()
        toks.unpersist()
        shutil.rmtree(isl_dir, ignore_errors=True)


def _finish(spark, cfg, docs, toks, meta, isl_dir, words_t, word_hash, word_key, grams, n_survivors,
            n_docs, groups, grp, k, sketch_depth, sketch_width, unit, min_docs, with_templates,
            t0, work_dir):
    """The driver's part of :func:`find_phrases`: the islands mined in one task,
    mapped back, the tables (character offsets from the executors), the templates."""
    import pyarrow as pa

    from ..corpus.record import host_of
    from ..phrases import PhraseResult, RawPhrases, hosts_table, phrase_summary, phrase_tables
    from .char_offsets import add_char_columns

    t_filter = time.perf_counter() - t0

    # -- mine the reduced corpus in one task on an executor ---------------------------
    n_tok = numpy_column(meta.column("n_tokens"), np.int64)
    doc_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(n_tok, out=doc_offsets[1:])
    n_tokens = int(doc_offsets[-1])
    if n_tokens == 0:
        from ..errors import InputError

        raise InputError(f"empty corpus: {n_docs} documents but no tokens")
    m, mine_peak = in_one_task(spark, _mine_islands, isl_dir, {
        "word_hash": word_hash, "word_key": word_key, "cfg": cfg,
        "labels": None if groups is None else grp.label}, "the mining of the phrase islands")
    raw_r, engine, reason, t_mine = m.raw, m.engine, m.reason, m.seconds
    engine_stats = raw_r.stats
    n_sep, n_kept = m.separators, m.kept

    # -- back to the original documents -----------------------------------------------
    P = raw_r.n_phrases
    lengths = np.asarray(raw_r.lengths, np.int64)
    df = np.asarray(raw_r.df, np.int64)
    counts = np.diff(raw_r.occ_offsets).astype(np.int64)
    occ_doc, occ_local = m.occ_doc, m.occ_local
    occ_global = doc_offsets[occ_doc] + occ_local
    raw = RawPhrases(lengths=lengths, df=df, occ_offsets=np.asarray(raw_r.occ_offsets, np.int64),
                     occ_starts=occ_global, stats=engine_stats)
    phrase_of = np.repeat(np.arange(P, dtype=np.int64), counts)
    first = np.asarray(raw.occ_offsets[:-1], np.int64)
    first_doc = occ_doc[first] if P else np.zeros(0, np.int64)
    first_local = occ_local[first] if P else np.zeros(0, np.int64)
    surf = _surface(spark, docs, np.unique(first_doc), unit)
    token_lists, texts = [], []
    for i in range(P):
        text, spans, strings = surf[int(first_doc[i])]
        s, e = int(first_local[i]), int(first_local[i] + lengths[i])
        token_lists.append(strings[s:e])
        texts.append(text[int(spans[s, 0]):int(spans[e - 1, 1])])
    doc_ids = meta.column("doc_id").combine_chunks()
    urls = meta.column("url").to_pylist()
    has_urls = any(u is not None for u in urls)
    phrases, occurrences = phrase_tables(pa.array(token_lists, pa.list_(pa.string())), texts,
                                         lengths, df, counts, first_doc, phrase_of, occ_doc,
                                         occ_local, doc_ids)
    covered = np.zeros(n_docs, dtype=np.int64)
    fcovered = np.zeros(n_docs, dtype=np.int64)
    covered[m.island_doc] = m.covered
    fcovered[m.island_doc] = m.frequent
    share = np.divide(covered, n_tok, out=np.zeros(n_docs, np.float64), where=n_tok > 0)
    fshare = np.divide(fcovered, n_tok, out=np.zeros(n_docs, np.float64), where=n_tok > 0)
    span_doc, span_start, span_end = m.span_doc, m.span_start, m.span_end
    span_phrase = m.span_phrase
    spans = pa.table({
        "doc_index": pa.array(span_doc),
        "doc_id": doc_ids.take(pa.array(span_doc)),
        "start": pa.array(span_start),
        "end": pa.array(span_end),
        "phrase_id": pa.array(span_phrase),
    })
    hosts_l = [host_of(u) for u in urls] if has_urls else None
    documents = pa.table({
        "doc_index": pa.array(np.arange(n_docs, dtype=np.int64)),
        "doc_id": doc_ids,
        "url": pa.array(urls if has_urls else [None] * n_docs, pa.string()),
        "host": pa.array(hosts_l if has_urls else [None] * n_docs, pa.string()),
        "n_tokens": pa.array(n_tok),
        "covered_tokens": pa.array(covered),
        "boilerplate_share": pa.array(share),
        "frequent_tokens": pa.array(fcovered),
        "frequent_share": pa.array(fshare),
    })
    hosts = hosts_table(documents) if has_urls else None
    # character offsets, as the local engines give them: on the executors, next to the texts
    t3 = time.perf_counter()
    occurrences, spans = add_char_columns(spark, docs, [occurrences, spans], unit, n_tok)
    t_char = time.perf_counter() - t3

    templates = template_plan = None
    t_tpl = 0.0
    if with_templates and n_tokens:
        from .templates import find_templates as spark_templates

        t2 = time.perf_counter()
        templates, template_plan, tpl_figures = spark_templates(
            spark, docs, toks, cfg, raw, doc_offsets=doc_offsets, doc_ids=doc_ids,
            n_tokens=n_tokens, frequent_tokens=int(fcovered.sum()), unit=unit,
            groups=None if groups is None else grp.label, min_docs=min_docs, work_dir=work_dir)
        t_tpl = time.perf_counter() - t2

    summary = phrase_summary(
        cfg, engine, reason, n_tok, covered, share, int(fcovered.sum()), fshare,
        n_spans=int(span_doc.shape[0]), n_occurrences=int(occ_global.shape[0]),
        psi=lengths * df, df=df, lengths=lengths, occurrences=counts, texts=texts,
        doc_ids=doc_ids.to_pylist(),
        timings={"prefilter": t_filter, "mine": t_mine, "char_offsets": t_char,
                 **({"templates": t_tpl} if with_templates else {}),
                 "total": time.perf_counter() - t0},
        engine_stats=engine_stats)
    if groups is not None:
        summary["parameters"]["groups"] = grp.n_groups
    summary["spark"] = {"k": k, "frequent_words": int(word_hash.size),
                        "sketch": [int(sketch_depth), int(sketch_width)],
                        "kgrams_past_sketch": int(n_survivors), "frequent_kgrams": int(grams.size),
                        "island_documents": int(m.island_doc.size),
                        "island_tokens": n_kept, "separators": n_sep,
                        "kept_share": n_kept / n_tokens,
                        "mining_task_peak_anon_bytes": int(mine_peak)}
    if hosts is not None:
        summary["hosts"] = hosts.num_rows
    if templates is not None:
        summary["templates"] = templates.summary
        summary["spark"]["templates"] = tpl_figures
    elif template_plan is not None:
        summary["templates_skipped"] = template_plan
    return PhraseResult(phrases=phrases, documents=documents, hosts=hosts,
                        occurrences=occurrences, summary=summary, config=cfg, raw=raw,
                        n_tokens=n_tokens, spans=spans, templates=templates)
