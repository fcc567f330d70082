"""Character offsets of token ranges, computed on the executors.

The local engines give every occurrence and span ``char_start``/``char_end``
(:mod:`repetend.corpus.char_offsets`, re-scanning each document that has rows).
On Spark the rows (few: a phrase's occurrences, the frequent spans) go to the
executors grouped by document, are joined with the corpus dataset's text there,
and each batch of documents is re-scanned by the same
:func:`repetend.corpus.char_offsets.char_offsets` the local engines call, over a
store-like view of the batch (:class:`_BatchTexts`); only the two offsets per
row come back.  The driver reads no text for them.
"""

from __future__ import annotations

import numpy as np

from .io import binary_of, numpy_column, pack_binary, sliced

__all__ = ["add_char_columns"]


class _BatchTexts:
    """The texts of one batch of documents, as :func:`char_offsets` reads a store."""

    path = None

    def __init__(self, texts: list[str], n_tokens: np.ndarray, unit: str) -> None:
        self.unit, self._texts = unit, texts
        self.doc_offsets = np.zeros(len(texts) + 1, np.int64)
        np.cumsum(n_tokens, out=self.doc_offsets[1:])
        raw = [t.encode("utf-8", "surrogatepass") for t in texts]
        self.text_offsets = np.zeros(len(texts) + 1, np.int64)
        np.cumsum([len(b) for b in raw], out=self.text_offsets[1:])
        self.text_blob = np.frombuffer(b"".join(raw), np.uint8)

    def token_spans(self, d: int) -> np.ndarray:
        from ..corpus.tokenizer import token_spans

        return token_spans(self._texts[d], unit=self.unit)


def _offset_batches(batches, *, unit: str):
    """Executor side: rows ``doc_index, n_tokens, text, starts, ends`` (packed int64
    token positions) → ``doc_index, char_starts, char_ends`` (packed int64)."""
    import pyarrow as pa

    from ..corpus.char_offsets import char_offsets

    for batch in sliced(batches):     # a slice of text at a time
        texts = batch.column("text").to_pylist()
        view = _BatchTexts(texts, numpy_column(batch.column("n_tokens"), np.int64), unit)
        s, off = binary_of(batch.column("starts"), np.int64)
        e, _ = binary_of(batch.column("ends"), np.int64)
        doc = np.repeat(np.arange(batch.num_rows, dtype=np.int64), np.diff(off))
        cs, ce = char_offsets(view, doc, s, e)
        yield pa.RecordBatch.from_arrays(
            [batch.column("doc_index"), pack_binary(cs, off), pack_binary(ce, off)],
            names=["doc_index", "char_starts", "char_ends"])


def char_offsets_on_executors(spark, docs_df, doc: np.ndarray, start: np.ndarray,
                              end: np.ndarray, unit: str, n_tokens: np.ndarray
                              ) -> tuple[np.ndarray, np.ndarray]:
    """``(char_start, char_end)`` of the token ranges ``[start, end)`` of documents
    *doc*, computed on the executors from *docs_df* (``doc_index, text``);
    *n_tokens*: every document's token count (the request, with the documents' counts,
    is broadcast and joined with the texts where they are: no shuffle of the corpus)."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    doc = np.asarray(doc, np.int64)
    cs = np.zeros(doc.size, np.int64)
    ce = np.zeros(doc.size, np.int64)
    if doc.size == 0:
        return cs, ce
    order = np.argsort(doc, kind="stable")
    docs, first = np.unique(doc[order], return_index=True)
    off = np.append(first, order.size).astype(np.int64)
    req = pa.table({"doc_index": pa.array(docs),
                    "n_tokens": pa.array(np.asarray(n_tokens, np.int64)[docs]),
                    "starts": pack_binary(np.asarray(start, np.int64)[order], off),
                    "ends": pack_binary(np.asarray(end, np.int64)[order], off)})
    schema = T.StructType([T.StructField("doc_index", T.LongType()),
                           T.StructField("char_starts", T.BinaryType()),
                           T.StructField("char_ends", T.BinaryType())])
    got = (docs_df.select("doc_index", "text")
           .join(F.broadcast(spark.createDataFrame(req)), "doc_index")
           .mapInArrow(lambda it, _u=unit: _offset_batches(it, unit=_u), schema).toArrow())
    if got.num_rows != docs.size:
        from ..errors import InputError

        raise InputError(f"{docs.size - got.num_rows} documents with occurrences are not in "
                         "the corpus dataset")
    back = np.argsort(numpy_column(got.column("doc_index"), np.int64), kind="stable")
    got = got.take(pa.array(back))
    a, _ = binary_of(got.column("char_starts"), np.int64)
    b, _ = binary_of(got.column("char_ends"), np.int64)
    cs[order], ce[order] = a, b
    return cs, ce


def add_char_columns(spark, docs_df, tables: list, unit: str, n_tokens: np.ndarray) -> list:
    """Each table of *tables* (``doc_index, start, end`` columns, or None) with
    ``char_start``/``char_end`` after ``end``, as
    :func:`repetend.corpus.char_offsets.with_char_columns` gives them locally; one
    Spark job for all of them.  Tables that have the columns already are kept."""
    need = [t is not None and "char_start" not in t.column_names and t.num_rows > 0
            for t in tables]
    col = lambda t, c: numpy_column(t.column(c), np.int64)  # noqa: E731
    parts = [(col(t, "doc_index"), col(t, "start"), col(t, "end"))
             for t, n in zip(tables, need) if n]
    if parts:
        cs, ce = char_offsets_on_executors(
            spark, docs_df, np.concatenate([p[0] for p in parts]),
            np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts]), unit,
            n_tokens)
    import pyarrow as pa

    out, at = [], 0
    for t, n in zip(tables, need):
        if t is None or "char_start" in t.column_names:
            out.append(t)
            continue
        k = t.num_rows if n else 0
        a = cs[at:at + k] if n else np.zeros(0, np.int64)
        b = ce[at:at + k] if n else np.zeros(0, np.int64)
        at += k
        i = t.column_names.index("end") + 1
        t = t.add_column(i, "char_start", pa.array(a, pa.int64()))
        out.append(t.add_column(i + 1, "char_end", pa.array(b, pa.int64())))
    return out
