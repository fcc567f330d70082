"""Exact duplicates on Spark: canonical-form checksums, confirmed by the forms.

The local method ``exact`` (:func:`repetend.neardup.exact.exact_duplicates`)
labels each document with the smallest index of a document whose canonical
form equals its own, then verifies the pairs (label, document) on the shingle
sets.  The same on Spark, in three passes over Arrow batches:

1. **per document** (``mapInArrow``): tokens, shingle set and the checksum of
   the canonical form (:func:`repetend.neardup.exact.checksums`, the local
   function);
2. **groups**: documents whose checksum occurs twice or more get their canonical
   form (computed again on the executors, only for them) and are grouped by
   (checksum, form) — the string comparison that makes the result exact
   whatever the hash; the label is the smallest ``doc_index`` of the group;
3. **verification**: the pairs (label, document) joined with both shingle sets,
   :func:`repetend.neardup.pairs.verify_pairs` per batch.

The driver collects the pairs (one per duplicate document) and forms the
clusters with the local :func:`repetend.neardup.clusters.clusters_from_pairs`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, replace

import numpy as np

from ..errors import ParameterError
from .io import (batch_shingle_sets, binary_of, check_unique_ids, load_documents, numpy_column,
                 refuse_normalization,
                 pack_binary,
                 token_batches)

__all__ = ["find_exact_duplicates"]


def _doc_batches(batches, *, unit, k, hash_name):
    import pyarrow as pa

    from ..neardup.exact import checksums

    for idx, texts, tb in token_batches(batches, unit):
        sets = batch_shingle_sets(tb, k)
        sums, _ = checksums(texts, hash_name)
        yield pa.RecordBatch.from_arrays(
            [pa.array(idx), pa.array(np.diff(tb.doc_offsets).astype(np.int64)),
             pa.array(sets.sizes.astype(np.int64)), pack_binary(sets.hashes, sets.offsets),
             pa.array(sums.view(np.int64))],
            names=["doc_index", "n_tokens", "n_shingles", "shingles", "checksum"])


def _form_batches(batches):
    import pyarrow as pa

    from ..neardup.exact import canonical_form

    for batch in batches:
        if batch.num_rows == 0:
            continue
        forms = [canonical_form(t) for t in batch.column("text").to_pylist()]
        yield pa.RecordBatch.from_arrays([batch.column("doc_index"), batch.column("checksum"),
                                          pa.array(forms, pa.string())],
                                         names=["doc_index", "checksum", "form"])


def _verify_batches(batches, *, k):
    import pyarrow as pa

    from ..neardup import ShingleSets, verify_pairs

    for batch in batches:
        m = batch.num_rows
        if m == 0:
            continue
        a = numpy_column(batch.column("a"), np.int64)
        b = numpy_column(batch.column("b"), np.int64)
        ha, oa = binary_of(batch.column("sh_a"), np.uint64)
        hb, ob = binary_of(batch.column("sh_b"), np.uint64)
        sets = ShingleSets(np.concatenate([ha, hb]), np.concatenate([oa, ob[1:] + oa[-1]]), k)
        left = np.arange(m, dtype=np.int64)
        p = verify_pairs(sets, left, left + m)
        yield pa.RecordBatch.from_arrays(
            [pa.array(a[p.a]), pa.array(b[p.b - m]), pa.array(p.jaccard),
             pa.array(p.containment_ab), pa.array(p.containment_ba)],
            names=["a", "b", "jaccard", "containment_ab", "containment_ba"])


def find_exact_duplicates(spark, data, config=None, *, id_col: str = "id", text_col: str = "text",
                          url_col: str | None = "url", order_col: str | None = None,
                          unit: str = "word", on_error: str = "skip", **overrides):
    """Method ``exact`` on Spark: the :class:`~repetend.neardup.NearDupResult` of
    :func:`repetend.find_near_duplicates` with ``method="exact"`` on a store of the
    same documents in ``doc_index`` order (arguments as
    :func:`repetend.spark.find_near_duplicates`)."""
    import pyarrow as pa
    from pyspark import StorageLevel
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from ..neardup import NearDupConfig, NearDupResult, Pairs, containment_pairs, outcome_summary
    from ..neardup.clusters import clusters_from_pairs
    from ..neardup.exact import checksums

    cfg = replace(config or NearDupConfig(), **overrides).validate()
    if cfg.method != "exact":
        raise ParameterError(f"find_exact_duplicates runs method 'exact', got {cfg.method!r}")
    if unit not in ("word", "char"):
        raise ParameterError(f"the Spark engine tokenizes unit 'word' or 'char', got {unit!r}")
    refuse_normalization(cfg)
    t0 = time.perf_counter()
    k = int(cfg.shingle)
    hash_name = cfg.exact_hash
    docs = load_documents(spark, data, id_col=id_col, text_col=text_col, url_col=url_col,
                          order_col=order_col, on_error=on_error).persist(StorageLevel.MEMORY_AND_DISK)
    persisted = [docs]
    try:
        n_docs = check_unique_ids(docs)
        schema = T.StructType([T.StructField("doc_index", T.LongType()),
                               T.StructField("n_tokens", T.LongType()),
                               T.StructField("n_shingles", T.LongType()),
                               T.StructField("shingles", T.BinaryType()),
                               T.StructField("checksum", T.LongType())])
        per_doc = docs.select("doc_index", "text").mapInArrow(
            lambda it, _u=unit, _k=k, _h=hash_name: _doc_batches(it, unit=_u, k=_k, hash_name=_h),
            schema).persist(StorageLevel.MEMORY_AND_DISK)
        persisted.append(per_doc)
        shared = per_doc.groupBy("checksum").count().filter(F.col("count") >= 2).select("checksum")
        members = per_doc.select("doc_index", "checksum").join(shared, "checksum") \
            .join(docs.select("doc_index", "text"), "doc_index")
        form_schema = T.StructType([T.StructField("doc_index", T.LongType()),
                                    T.StructField("checksum", T.LongType()),
                                    T.StructField("form", T.StringType())])
        forms = members.select("doc_index", "checksum", "text").mapInArrow(_form_batches,
                                                                           form_schema)
        grp = Window.partitionBy("checksum", "form")
        dup_pairs = forms.withColumn("label", F.min("doc_index").over(grp)) \
            .filter(F.col("doc_index") != F.col("label")) \
            .select(F.col("label").alias("a"), F.col("doc_index").alias("b"))
        sides = per_doc.select("doc_index", "shingles")
        joined = dup_pairs.join(sides.select(F.col("doc_index").alias("a"),
                                             F.col("shingles").alias("sh_a")), "a") \
            .join(sides.select(F.col("doc_index").alias("b"), F.col("shingles").alias("sh_b")), "b") \
            .select("a", "b", "sh_a", "sh_b")
        ver_schema = T.StructType([T.StructField(c, T.LongType()) for c in ("a", "b")] +
                                  [T.StructField(c, T.DoubleType()) for c in
                                   ("jaccard", "containment_ab", "containment_ba")])
        cand_t = joined.mapInArrow(lambda it, _k=k: _verify_batches(it, k=_k), ver_schema) \
            .orderBy("a", "b").toArrow()
        docs_t = docs.select("doc_index", "doc_id").join(
            per_doc.select("doc_index", "n_tokens", "n_shingles"), "doc_index") \
            .orderBy("doc_index").toArrow()
    finally:
        for d in persisted:
            d.unpersist()

    def col(name, dt):
        return numpy_column(cand_t.column(name), dt)

    candidates = Pairs(col("a", np.int64), col("b", np.int64), col("jaccard", np.float64),
                       col("containment_ab", np.float64), col("containment_ba", np.float64))
    pairs = candidates.sorted()
    lengths = numpy_column(docs_t.column("n_tokens"), np.int64)
    clusters = clusters_from_pairs(n_docs, pairs.a, pairs.b, lengths)
    t = float(cfg.threshold)
    contain = containment_pairs(candidates, t, float(cfg.containment)).sorted()
    summary = {"method": "exact", "engine": "spark", "parameters": asdict(cfg),
               "documents": n_docs, "shingle_k": k,
               "shingles": int(numpy_column(docs_t.column("n_shingles"), np.int64).sum()),
               "threshold": t, "exact_hash": checksums([], hash_name)[1],
               **outcome_summary(cfg, len(candidates), pairs, clusters, contain,
                                 {"total": time.perf_counter() - t0})}
    summary.setdefault("capped_buckets", 0)
    return NearDupResult(pairs, candidates, np.full(len(candidates), np.nan), clusters, contain,
                         summary, cfg, docs_t.column("doc_id").combine_chunks()
                         if docs_t.num_rows else pa.array([], pa.string()), lengths, None)
