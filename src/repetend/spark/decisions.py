"""What ``clean`` would do to each document (``documents.parquet``), decided on the
executors.

The plan (:class:`repetend.clean.plan.CleanPlan`: clusters, shares and the cuts in
characters, O(documents + occurrences)) is made on the driver from the scan's
tables as for a local scan, without texts; it is broadcast, and each executor
runs the same :meth:`CleanPlan.decide` on its batches of the corpus dataset,
returning five small figures per document.  The driver assembles the table
with :func:`repetend.clean.plan.decisions_table`, so it is the local one.
"""

from __future__ import annotations

import copy

import numpy as np

from .io import numpy_column

__all__ = ["plan_columns_on_executors"]


def _decide_batches(batches, *, plan_bc):
    import pyarrow as pa

    from ..clean.plan import plan_columns

    plan = plan_bc.value
    for batch in batches:
        if batch.num_rows == 0:
            continue
        idx = numpy_column(batch.column("doc_index"), np.int64)
        plans = [plan.decide(int(i), t) for i, t in zip(idx, batch.column("text").to_pylist())]
        cols = plan_columns(plans)
        yield pa.RecordBatch.from_arrays([pa.array(idx), *(c.combine_chunks() for c in cols.columns)],
                                         names=["doc_index", *cols.column_names])


def plan_columns_on_executors(spark, corpus_df):
    """A function of a :class:`CleanPlan` giving its per-document figures
    (:func:`repetend.clean.plan.plan_columns`' table, in ``doc_index`` order),
    computed by the executors over *corpus_df* (``doc_index, text``)."""
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField("doc_index", T.LongType()),
                           T.StructField("n_chars", T.LongType()),
                           T.StructField("cut_share", T.DoubleType()),
                           T.StructField("chars_cut", T.LongType()),
                           T.StructField("decision", T.StringType()),
                           T.StructField("reason", T.StringType())])

    def columns(plan):
        import pyarrow as pa

        light = copy.copy(plan)
        light.store = None          # the executors have the texts; the plan needs none
        bc = spark.sparkContext.broadcast(light)
        try:
            got = corpus_df.select("doc_index", "text").mapInArrow(
                lambda it, _b=bc: _decide_batches(it, plan_bc=_b), schema).toArrow()
        finally:
            bc.destroy()
        idx = numpy_column(got.column("doc_index"), np.int64)
        got = got.take(pa.array(np.argsort(idx, kind="stable")))
        if got.num_rows != plan.n_docs or not np.array_equal(
                numpy_column(got.column("doc_index"), np.int64), np.arange(plan.n_docs)):
            from ..errors import InputError

            raise InputError(f"decisions for {got.num_rows} documents, the scan has {plan.n_docs}")
        return got.drop_columns(["doc_index"])

    return columns
