"""Document order on Spark: a function of the data alone, the same locally.

Spark has no reading order, and the local engine numbers documents in reading
order.  The Spark engine therefore numbers documents by a key computed from
each document alone — :func:`order_key`, a 64-bit BLAKE2b hash of its id and
text — ties (equal keys: a hash collision) broken by the id, so any shuffled
copy of a corpus gets the same numbering.  :func:`local_order` gives that
numbering without Spark: a local run over the documents permuted by it is the
reference the Spark results equal (tests, ``repetend scan --engine spark``).

The key is computed by the same Python function on the executors
(:func:`key_batches`, ``mapInArrow``) and locally, so the two can never differ.
"""

from __future__ import annotations

from ..corpus.order_key import local_order, order_key, order_keys  # noqa: F401

__all__ = ["order_key", "local_order", "key_batches"]


def key_batches(batches, *, id_col: str = "doc_id", text_col: str = "text"):
    """Executor side: every Arrow batch with one more int64 column ``_key``."""
    import pyarrow as pa

    for batch in batches:
        ids = batch.column(id_col).to_pylist()
        texts = batch.column(text_col).to_pylist()
        keys = order_keys(ids, texts)
        yield pa.RecordBatch.from_arrays(list(batch.columns) + [pa.array(keys)],
                                         names=list(batch.schema.names) + ["_key"])
