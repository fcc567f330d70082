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

import hashlib
from typing import Sequence

import numpy as np

__all__ = ["order_key", "local_order", "key_batches"]


def order_key(doc_id: str, text: str | None) -> int:
    """Signed 64-bit order key of one document (BLAKE2b-64 of the length-prefixed
    UTF-8 id, then the UTF-8 text; a null text counts as ``""``)."""
    b = doc_id.encode("utf-8", "surrogatepass")
    h = hashlib.blake2b(digest_size=8)
    h.update(len(b).to_bytes(8, "little"))
    h.update(b)
    h.update((text or "").encode("utf-8", "surrogatepass"))
    return int.from_bytes(h.digest(), "little", signed=True)


def order_keys(ids: Sequence[str], texts: Sequence[str | None]) -> np.ndarray:
    """:func:`order_key` of every document, as int64."""
    return np.fromiter((order_key(i, t) for i, t in zip(ids, texts)), dtype=np.int64,
                       count=len(ids))


def local_order(ids: Sequence[str], texts: Sequence[str | None]) -> np.ndarray:
    """The Spark engine's document order: ``perm`` such that document ``perm[j]``
    (of the given sequences) gets ``doc_index`` j.  Sorted by (key, id); ids
    compare as their UTF-8 bytes, which is code-point order, as in Spark."""
    keys = order_keys(ids, texts)
    return np.array(sorted(range(len(ids)), key=lambda i: (int(keys[i]), ids[i])), dtype=np.int64)


def key_batches(batches, *, id_col: str = "doc_id", text_col: str = "text"):
    """Executor side: every Arrow batch with one more int64 column ``_key``."""
    import pyarrow as pa

    for batch in batches:
        ids = batch.column(id_col).to_pylist()
        texts = batch.column(text_col).to_pylist()
        keys = order_keys(ids, texts)
        yield pa.RecordBatch.from_arrays(list(batch.columns) + [pa.array(keys)],
                                         names=list(batch.schema.names) + ["_key"])
