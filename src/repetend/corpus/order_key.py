"""The Spark engine's document order key, without pyspark: a 64-bit BLAKE2b hash of
a document's id and text (:mod:`repetend.spark.order` explains the order; ``clean``
checks a Spark scan's texts with it on machines without the extra)."""

from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

__all__ = ["order_key", "order_keys", "local_order"]


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
