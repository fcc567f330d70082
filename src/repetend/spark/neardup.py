"""Near-duplicate documents on Spark: the local MinHash-LSH pipeline as Spark jobs.

Stages (each maps the local, compiled functions over Arrow batches):

1. **signatures** (``mapInArrow`` over documents): :func:`repetend.corpus.tokenizer.tokenize_batch`,
   :func:`repetend.neardup.shingles.shingle_sets`, :func:`repetend.neardup.minhash.minhash_signatures`
   and the band keys of :func:`repetend.neardup.lsh.band_keys` — per document, independent
   of the rest of the corpus (shingle hashes depend on token strings only), so the values are
   those of a local run.  Near-empty documents get the fingerprint of their whole set
   (:func:`repetend.neardup.lsh.set_fingerprints`) as one extra "band", as in
   :func:`repetend.neardup.lsh.lsh_candidates`.
2. **buckets** (shuffle): band keys exploded and grouped by ``(band, key)``; buckets of two
   or more members emit their pairs with :func:`repetend.neardup.lsh.bucket_pairs` — all pairs
   below ``max_bucket``, the star + chain in (shingle count, document index) order from it on.
3. **verification**: candidate pairs joined with both shingle sets and signatures; exact
   Jaccard and containments by :func:`repetend.neardup.pairs.verify_pairs`, the estimate by
   :meth:`repetend.neardup.minhash.MinHashSignatures.estimate`.
4. **clusters**: :func:`repetend.spark.components.connected_components` (large-star /
   small-star) on the verified pairs; representative = longest document, ties earliest.

Every step is the local rule on the same inputs, so the pairs, candidates, clusters and
containment pairs equal those of ``repetend.find_near_duplicates`` on a store of the same
documents in ``doc_index`` order (see ``docs/spark.md``).
"""

from __future__ import annotations

import time
from dataclasses import asdict, replace

import numpy as np

from ..errors import ParameterError
from .io import (batch_shingle_sets, binary_of, check_unique_ids, load_documents, numpy_column,
                 refuse_normalization,
                 pack_binary, token_batches)

__all__ = ["find_near_duplicates", "near_duplicate_frames"]


def _sig_dtype(bits: int) -> np.dtype:
    from ..neardup import storage_dtype

    return storage_dtype(int(bits))


# -- stage 1: per-document signatures and band keys -------------------------------

def _signature_batches(batches, *, unit, k, num_perm, seed, hash_name, bits, scheme, bands,
                       rows, tiny_limit):
    import pyarrow as pa

    from ..neardup import band_keys, minhash_signatures, set_fingerprints

    for idx, texts, tb in token_batches(batches, unit):
        sets = batch_shingle_sets(tb, k)
        sig = minhash_signatures(sets, num_perm, seed=seed, hash=hash_name, bits=bits,
                                 scheme=scheme)
        sizes = sets.sizes.astype(np.int64)
        n = sizes.size
        banded = np.flatnonzero(sizes >= tiny_limit).astype(np.int64)
        keys = band_keys(sig.values, banded, bands, rows)
        fp = set_fingerprints(sets)
        nkeys = np.zeros(n, dtype=np.int64)
        nkeys[banded] = bands
        tiny = (sizes >= 1) & (sizes < tiny_limit)
        nkeys[tiny] = 1
        koff = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(nkeys, out=koff[1:])
        kvals = np.empty(int(koff[-1]), dtype=np.uint64)
        if banded.size:
            pos = koff[banded][:, None] + np.arange(bands)[None, :]
            kvals[pos.reshape(-1)] = keys.reshape(-1)
        t_idx = np.flatnonzero(tiny)
        kvals[koff[t_idx]] = fp[t_idx]
        key_list = pa.ListArray.from_arrays(pa.array(koff.astype(np.int32)), pa.array(kvals.view(np.int64)))
        sig_vals = np.ascontiguousarray(sig.values).reshape(-1)
        sig_off = np.arange(n + 1, dtype=np.int64) * int(num_perm)
        yield pa.RecordBatch.from_arrays(
            [pa.array(idx), pa.array(np.diff(tb.doc_offsets).astype(np.int64)), pa.array(sizes),
             pack_binary(sets.hashes, sets.offsets), pack_binary(sig_vals, sig_off), key_list],
            names=["doc_index", "n_tokens", "n_shingles", "shingles", "signature", "keys"])


# -- stage 2: buckets → candidate pairs --------------------------------------------

def _bucket_batches(batches, *, cap):
    import pyarrow as pa

    from ..neardup import bucket_pairs

    for batch in batches:
        if batch.num_rows == 0:
            continue
        col = batch.column("m")
        off = np.asarray(col.offsets.to_numpy(), np.int64)
        flat = col.flatten()
        doc = numpy_column(flat.field("doc_index"), np.int64)
        size = numpy_column(flat.field("n_shingles"), np.int64)
        lens = np.diff(off)
        bid = np.repeat(np.arange(lens.size, dtype=np.int64), lens)
        order = np.lexsort((doc, bid))          # members of a bucket by document index
        doc, size = doc[order], size[order]
        starts = np.zeros(lens.size + 1, dtype=np.int64)
        np.cumsum(lens, out=starts[1:])
        members = np.arange(doc.size, dtype=np.int64)
        out_a, out_b = bucket_pairs(members, starts, size, cap)
        a, b = doc[out_a], doc[out_b]
        yield pa.RecordBatch.from_arrays([pa.array(np.minimum(a, b)), pa.array(np.maximum(a, b))],
                                         names=["a", "b"])


# -- stage 3: exact verification ----------------------------------------------------

def _verify_batches(batches, *, k, num_perm, seed, hash_name, bits, scheme):
    import pyarrow as pa

    from ..neardup import MinHashSignatures, ShingleSets, verify_pairs

    dtype = _sig_dtype(bits)
    for batch in batches:
        m = batch.num_rows
        if m == 0:
            continue
        a = numpy_column(batch.column("a"), np.int64)
        b = numpy_column(batch.column("b"), np.int64)
        ha, oa = binary_of(batch.column("sh_a"), np.uint64)
        hb, ob = binary_of(batch.column("sh_b"), np.uint64)
        hashes = np.concatenate([ha, hb])
        offsets = np.concatenate([oa, ob[1:] + oa[-1]])
        sets = ShingleSets(hashes, offsets, k)
        left = np.arange(m, dtype=np.int64)
        right = left + m
        p = verify_pairs(sets, left, right)      # sorted by left: row order kept
        sa, _ = binary_of(batch.column("sig_a"), dtype)
        sb, _ = binary_of(batch.column("sig_b"), dtype)
        values = np.concatenate([sa, sb]).reshape(2 * m, int(num_perm))
        sig = MinHashSignatures(values, np.diff(offsets) == 0, int(num_perm), int(seed),
                                hash_name, int(bits), scheme)
        est = sig.estimate(p.a, p.b)
        yield pa.RecordBatch.from_arrays(
            [pa.array(a[p.a]), pa.array(b[p.b - m]), pa.array(p.jaccard),
             pa.array(p.containment_ab), pa.array(p.containment_ba), pa.array(est)],
            names=["a", "b", "jaccard", "containment_ab", "containment_ba", "estimate"])


def near_duplicate_frames(spark, data, config=None, *, id_col: str = "id", text_col: str = "text",
                          url_col: str | None = "url", order_col: str | None = None,
                          unit: str = "word", on_error: str = "skip") -> dict:
    """The Spark DataFrames of a MinHash-LSH near-duplicate search, not collected.

    Returns a dict with ``documents`` (doc_index, doc_id, url, n_tokens, n_shingles),
    ``candidates`` (a, b, jaccard, containment_ab, containment_ba, estimate),
    ``pairs`` (the candidates with jaccard >= threshold), ``containment``,
    ``clusters`` (doc_index, cluster_id, cluster_size, is_representative),
    ``stats`` (a dict of LSH counters) and ``config``.  Arguments as for
    :func:`find_near_duplicates`.
    """
    from pyspark import StorageLevel
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from ..neardup import NearDupConfig
    from ..neardup.lsh import safe_min_shingles
    from .components import connected_components

    cfg = replace(config or NearDupConfig()).validate()
    if cfg.method != "minhash":
        if cfg.method == "exact":
            raise ParameterError("near_duplicate_frames runs method 'minhash'; method 'exact' "
                                 "runs with repetend.spark.find_near_duplicates")
        raise ParameterError(f"near-duplicate method {cfg.method!r} does not run on Spark; "
                             "the Spark engine runs minhash and exact")
    if unit not in ("word", "char"):
        raise ParameterError(f"the Spark engine tokenizes unit 'word' or 'char', got {unit!r}")
    refuse_normalization(cfg)
    bands, rows = cfg.banding()
    bits = 64 if cfg.bbits is None else int(cfg.bbits)
    t = float(cfg.threshold)
    tiny_limit = safe_min_shingles(int(cfg.min_shingles), t)
    cap = 0 if cfg.max_bucket is None else int(cfg.max_bucket)
    docs = load_documents(spark, data, id_col=id_col, text_col=text_col, url_col=url_col,
                          order_col=order_col, on_error=on_error)
    docs = docs.persist(StorageLevel.MEMORY_AND_DISK)
    n_docs = check_unique_ids(docs)

    kw = dict(unit=unit, k=int(cfg.shingle), num_perm=int(cfg.num_perm), seed=int(cfg.seed),
              hash_name=cfg.hash, bits=bits, scheme=cfg.scheme)
    sig_schema = T.StructType([
        T.StructField("doc_index", T.LongType()), T.StructField("n_tokens", T.LongType()),
        T.StructField("n_shingles", T.LongType()), T.StructField("shingles", T.BinaryType()),
        T.StructField("signature", T.BinaryType()),
        T.StructField("keys", T.ArrayType(T.LongType()))])

    def sign(it, _kw=kw, _b=bands, _r=rows, _t=tiny_limit):
        return _signature_batches(it, bands=_b, rows=_r, tiny_limit=_t, **_kw)

    per_doc = docs.select("doc_index", "text").mapInArrow(sign, sig_schema) \
        .persist(StorageLevel.MEMORY_AND_DISK)
    per_doc.count()

    exploded = per_doc.select("doc_index", "n_shingles", F.posexplode("keys").alias("pos", "key")) \
        .withColumn("band", F.when(F.col("n_shingles") < tiny_limit, F.lit(bands))
                    .otherwise(F.col("pos")))
    buckets = exploded.groupBy("band", "key").agg(
        F.collect_list(F.struct("doc_index", "n_shingles")).alias("m")) \
        .filter(F.size("m") >= 2).persist(StorageLevel.MEMORY_AND_DISK)
    msize = F.size("m").cast("long")
    capped = (F.lit(cap) > 0) & (msize >= F.lit(cap))
    agg = buckets.agg(
        F.count("*").alias("buckets"), F.max(msize).alias("largest"),
        F.sum(F.when(capped, 1).otherwise(0)).alias("capped"),
        F.sum(F.when(capped, msize * (msize - 1) / 2 - (2 * msize - 3)).otherwise(0)).alias("lost"),
        F.sum(F.when(capped, 2 * msize - 3).otherwise(msize * (msize - 1) / 2)).alias("raw"),
    ).first()
    pair_schema = T.StructType([T.StructField("a", T.LongType()), T.StructField("b", T.LongType())])
    cand = buckets.select("m").mapInArrow(lambda it, _c=cap: _bucket_batches(it, cap=_c),
                                           pair_schema).distinct()
    sides = per_doc.select("doc_index", "shingles", "signature")
    joined = cand.join(sides.select(F.col("doc_index").alias("a"), F.col("shingles").alias("sh_a"),
                                    F.col("signature").alias("sig_a")), "a") \
        .join(sides.select(F.col("doc_index").alias("b"), F.col("shingles").alias("sh_b"),
                           F.col("signature").alias("sig_b")), "b") \
        .select("a", "b", "sh_a", "sh_b", "sig_a", "sig_b")
    ver_schema = T.StructType([T.StructField(c, T.LongType()) for c in ("a", "b")] +
                              [T.StructField(c, T.DoubleType()) for c in
                               ("jaccard", "containment_ab", "containment_ba", "estimate")])
    vkw = {key: kw[key] for key in ("k", "num_perm", "seed", "hash_name", "bits", "scheme")}
    candidates = joined.mapInArrow(lambda it, _kw=vkw: _verify_batches(it, **_kw), ver_schema) \
        .persist(StorageLevel.MEMORY_AND_DISK)
    n_cand = candidates.count()
    pairs = candidates.filter(F.col("jaccard") >= F.lit(t)).persist(StorageLevel.MEMORY_AND_DISK)
    cmax = F.greatest("containment_ab", "containment_ba")
    containment = candidates.filter((cmax >= F.lit(float(cfg.containment))) &
                                    (F.col("jaccard") < F.lit(t)))

    labels, rounds = connected_components(pairs.select("a", "b"))
    lengths = per_doc.select(F.col("doc_index").alias("node"), "n_tokens")
    lab = labels.join(lengths, "node")
    by_label = Window.partitionBy("label")
    ranked = lab.withColumn("cluster_size", F.count("*").over(by_label)) \
        .withColumn("rank", F.row_number().over(by_label.orderBy(F.col("n_tokens").desc(),
                                                                  F.col("node").asc())))
    roots = labels.select("label").distinct()
    dense = spark.createDataFrame(
        roots.orderBy("label").rdd.zipWithIndex().map(lambda rv: (rv[0][0], rv[1])),
        T.StructType([T.StructField("label", T.LongType()), T.StructField("cluster_id", T.LongType())]))
    clusters = ranked.join(dense, "label").select(
        F.col("node").alias("doc_index"), "cluster_id", "cluster_size",
        (F.col("rank") == 1).alias("is_representative"))
    documents = docs.select("doc_index", "doc_id", "url").join(
        per_doc.select("doc_index", "n_tokens", "n_shingles"), "doc_index")
    nsh = F.col("n_shingles")
    counts = per_doc.agg(
        F.sum(F.when(nsh >= tiny_limit, 1).otherwise(0)).alias("banded"),
        F.sum(F.when((nsh >= 1) & (nsh < tiny_limit), 1).otherwise(0)).alias("tiny"),
        F.sum(F.when(nsh == 0, 1).otherwise(0)).alias("empty")).first()
    stats = {"documents": n_docs,
             "banded_documents": int(counts["banded"] or 0),
             "near_empty_documents": int(counts["tiny"] or 0),
             "empty_documents": int(counts["empty"] or 0),
             "bands": int(bands), "rows": int(rows), "max_bucket": cap or None,
             "min_shingles": int(tiny_limit),
             "buckets_with_pairs": int(agg["buckets"] or 0),
             "capped_buckets": int(agg["capped"] or 0),
             "pairs_not_enumerated": int(agg["lost"] or 0),
             "largest_bucket": int(agg["largest"] or 0),
             "raw_pairs": int(agg["raw"] or 0), "candidates": int(n_cand),
             "components_rounds": int(rounds)}
    return {"documents": documents, "candidates": candidates, "pairs": pairs,
            "containment": containment, "clusters": clusters, "stats": stats, "config": cfg,
            "_persisted": [docs, per_doc, buckets, candidates, pairs]}


def _collect_arrow(df):
    """A DataFrame as a pyarrow Table (Arrow transfer, no per-row Python objects)."""
    return df.toArrow()


def find_near_duplicates(spark, data, config=None, *, id_col: str = "id", text_col: str = "text",
                         url_col: str | None = "url", order_col: str | None = None,
                         unit: str = "word", on_error: str = "skip", **overrides):
    """Near-duplicate documents with Spark: the Spark twin of
    :func:`repetend.find_near_duplicates` (methods ``minhash`` and ``exact``,
    :mod:`repetend.spark.exact`).

    Parameters
    ----------
    spark : SparkSession
    data : DataFrame or Parquet/JSONL path(s)
        Documents with id, text and (optionally) url columns.
    config : NearDupConfig, optional
        The same config as the local call; keyword ``overrides`` replace fields.
    id_col, text_col, url_col, order_col : str
        Column names; documents are numbered by ``order_col`` (else by id), see
        :func:`repetend.spark.io.load_documents`.
    unit : {"word", "char"}
        Tokens, as in the token store the local run would use.

    Returns
    -------
    NearDupResult
        Collected on the driver: pairs, candidates with estimates, clusters (computed
        with large-star/small-star on Spark), containment pairs and the summary;
        ``signatures`` is None (they stay on the executors).

    Notes
    -----
    The driver holds O(documents) integers (ids, lengths, cluster ids) plus the pairs;
    shingles, signatures and band keys never leave the executors.  Broder (1997)
    and the MinHash/LSH article (docs/references.md) for the stages;
    Kiveris et al. (2014) for the components; ``docs/spark.md`` for the equality proof.
    """
    from ..neardup import (Clusters, NearDupConfig, NearDupResult, Pairs, containment_pairs,
                           minhash_summary, outcome_summary)

    cfg = replace(config or NearDupConfig(), **overrides).validate()
    if cfg.method == "exact":
        from .exact import find_exact_duplicates

        return find_exact_duplicates(spark, data, cfg, id_col=id_col, text_col=text_col,
                                     url_col=url_col, order_col=order_col, unit=unit,
                                     on_error=on_error)
    t0 = time.perf_counter()
    fr = near_duplicate_frames(spark, data, cfg, id_col=id_col, text_col=text_col, url_col=url_col,
                               order_col=order_col, unit=unit, on_error=on_error)
    try:
        docs_t = _collect_arrow(fr["documents"].select("doc_index", "doc_id", "n_tokens",
                                                       "n_shingles").orderBy("doc_index"))
        cand_t = _collect_arrow(fr["candidates"].orderBy("a", "b"))
        clus_t = _collect_arrow(fr["clusters"])
    finally:
        for d in fr["_persisted"]:
            d.unpersist()
    n = docs_t.num_rows
    lengths = numpy_column(docs_t.column("n_tokens"), np.int64)

    def col(name, dt):
        return numpy_column(cand_t.column(name), dt)

    candidates = Pairs(col("a", np.int64), col("b", np.int64), col("jaccard", np.float64),
                       col("containment_ab", np.float64), col("containment_ba", np.float64))
    estimate = col("estimate", np.float64)
    t = float(cfg.threshold)
    pairs = candidates.select(candidates.jaccard >= t).sorted()
    cluster_id = np.full(n, -1, dtype=np.int64)
    c_doc = numpy_column(clus_t.column("doc_index"), np.int64)
    c_id = numpy_column(clus_t.column("cluster_id"), np.int64)
    c_size = numpy_column(clus_t.column("cluster_size"), np.int64)
    c_rep = numpy_column(clus_t.column("is_representative"), bool)
    cluster_id[c_doc] = c_id
    n_clusters = int(c_id.max()) + 1 if c_id.size else 0
    sizes = np.zeros(n_clusters, dtype=np.int64)
    sizes[c_id] = c_size
    representative = np.zeros(n_clusters, dtype=np.int64)
    representative[c_id[c_rep]] = c_doc[c_rep]
    clusters = Clusters(cluster_id, sizes, representative)
    contain = containment_pairs(candidates, t, float(cfg.containment)).sorted()
    bands, rows = cfg.banding()
    bits = 64 if cfg.bbits is None else int(cfg.bbits)
    stats = fr["stats"]
    summary = {"method": cfg.method, "engine": "spark", "parameters": asdict(cfg),
               "documents": n, "shingle_k": int(cfg.shingle),
               "shingles": int(numpy_column(docs_t.column("n_shingles"), np.int64).sum()),
               "threshold": t,
               **minhash_summary(cfg, t, bands, rows,
                                 {k: v for k, v in stats.items() if k != "components_rounds"}),
               "signature_bytes": n * int(cfg.num_perm) * _sig_dtype(bits).itemsize,
               "components_rounds": stats["components_rounds"],
               **outcome_summary(cfg, len(candidates), pairs, clusters, contain,
                                 {"total": time.perf_counter() - t0})}
    return NearDupResult(pairs, candidates, estimate, clusters, contain, summary, cfg,
                         docs_t.column("doc_id").combine_chunks(), lengths, None)
