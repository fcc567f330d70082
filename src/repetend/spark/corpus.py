"""The scan's corpus, written by the executors: ``repetend scan --engine spark``'s
stage 1, in place of the local token store.

The executors read the input (any path or URI the session reads), number the
documents in the order of :mod:`repetend.spark.order`, tokenize them and write
one Parquet dataset, ``corpus/`` of the scan directory, sorted by ``doc_index``
across its part files (``part-00000…`` holds the smallest indices)::

    doc_index  int64    0..n-1, the Spark order
    doc_id     string
    url        string   (null without urls)
    host       string   the lower-cased host of the url (repetend.corpus.record.host_of)
    n_tokens   int64    tokens of the unit, as the local store counts them
    n_chars    int64    characters (Python string length) of the text
    order_key  int64    repetend.spark.order.order_key(doc_id, text): a checksum of the text
    n_bytes    int64    UTF-8 bytes of the text
    blank      bool     the text is empty or only whitespace (str.isspace)
    text       string

Every later stage reads this dataset back (``spark.read.parquet``) instead of the
input, so the input is sorted once and every stage sees one numbering.
The driver reads only its small columns (:class:`repetend.corpus.table_corpus.
TableCorpus`) and the text of the few documents the report shows.

The read figures (``summary["corpus"]["read"]``) are counted on the cluster with
the local reader's meaning: records yielded, unparseable lines and records
without a text (``malformed``, ``missing_text``), blank texts (``empty``), files.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np

from ..corpus.table_corpus import CORPUS_SUMMARY  # beside the part files (readers skip "_" files)
from ..errors import InputError

__all__ = ["CORPUS_SUMMARY", "write_corpus", "read_corpus_frame", "read_counts",
           "remove_partial"]

MAX_ERRORS = 20                    # as ReadStats.MAX_ERRORS
ROW_GROUP_BYTES = 4 << 20          # Parquet row groups of the corpus dataset (a random read)


def _corpus_batches(batches, *, unit: str):
    """Executor side: each batch of ``doc_index, doc_id, url, text``, a slice of text
    at a time (:func:`repetend.spark.io.sliced`), with its host, token count,
    character count and order key."""
    from .io import sliced

    for batch in sliced(batches):
        yield _corpus_slice(batch, unit=unit)


def _corpus_slice(batch, *, unit: str):
    import pyarrow as pa

    from ..corpus.record import host_of
    from ..corpus.tokenizer import tokenize_batch
    from .order import order_keys

    texts = [t if t is not None else "" for t in batch.column("text").to_pylist()]
    ids = batch.column("doc_id").to_pylist()
    urls = batch.column("url").to_pylist()
    tb = tokenize_batch(texts, unit=unit)
    return pa.RecordBatch.from_arrays(
        [batch.column("doc_index"), batch.column("doc_id"), batch.column("url"),
         pa.array([host_of(u) for u in urls], pa.string()),
         pa.array(np.diff(tb.doc_offsets).astype(np.int64)),
         pa.array(np.fromiter((len(t) for t in texts), np.int64, len(texts))),
         pa.array(order_keys(ids, texts)),
         pa.array(np.fromiter((len(t.encode("utf-8", "surrogatepass")) for t in texts),
                              np.int64, len(texts))),
         pa.array([not t or t.isspace() for t in texts]),
         pa.array(texts, pa.string())],
        names=["doc_index", "doc_id", "url", "host", "n_tokens", "n_chars", "order_key",
               "n_bytes", "blank", "text"])


def read_counts(spark, raw, from_json: bool, inputs: Sequence[str], *, text_col: str,
                on_error: str) -> dict:
    """What reading *inputs* (read by Spark as *raw*) sees, with the local reader's
    meaning (one pass on the cluster): ``files``, ``malformed`` (JSONL lines that do
    not parse, and records whose text is missing or null), ``missing_text`` (of those,
    the records without a text) and the first messages, each naming its file."""
    from pyspark.sql import functions as F

    data = raw.withColumn("_file", F.input_file_name())
    cols = data.columns
    if text_col not in cols:
        have = [c for c in cols if c not in ("_corrupt_record", "_file")]
        raise InputError(f"no text field {text_col!r}; fields that exist: "
                         f"{', '.join(repr(c) for c in have) or 'none'} (choose one with "
                         "--text-field)", path=str(inputs[0]))
    corrupt = (F.col("_corrupt_record").isNotNull() if "_corrupt_record" in cols
               else F.lit(False))
    missing = ~corrupt & F.col(text_col).isNull()
    agg = data.agg(F.countDistinct("_file").alias("files"),
                   F.sum(corrupt.cast("long")).alias("corrupt"),
                   F.sum(missing.cast("long")).alias("missing")).collect()[0]
    n_corrupt, n_missing = int(agg["corrupt"] or 0), int(agg["missing"] or 0)
    errors: list[str] = []
    if n_corrupt or n_missing:
        files = sorted({r["_file"] for r in data.filter(corrupt | missing).select("_file")
                        .distinct().collect()})
        if from_json:   # the local reader's own messages, with their line numbers
            errors = _line_messages(spark, files, text_col)
        if not errors:
            errors = [f"{_shown(f)}: a record without a text field {text_col!r} (or it is null)"
                      for f in files]
        if on_error == "fail":
            path = _shown(files[0])
            first = errors[0]
            raise InputError(first[len(path) + 2:] if first.startswith(path + ", ") else first,
                             path=path)
    return {"files": int(agg["files"] or 0), "malformed": n_corrupt + n_missing,
            "missing_text": n_missing, "errors": errors}


def _shown(file_uri: str) -> str:
    """A file as the local reader names it: a ``file:`` URI as its path."""
    from urllib.parse import unquote, urlparse

    u = urlparse(file_uri)
    return unquote(u.path) if u.scheme == "file" else unquote(file_uri)


def _bad_lines(rows, path: str, text_col: str):
    """Executor side: the local JSONL reader's message of every bad line among
    *rows* ``(line, 0-based line index)`` of the file *path*."""
    from ..corpus.read_jsonl import JsonlReader
    from ..corpus.record import ReadStats

    reader = JsonlReader(text_field=text_col, on_error="skip", stats=ReadStats())
    for line, i in rows:
        reader.stats.errors.clear()
        try:
            # (the local reader's line ends with its newline, which Spark strips)
            reader._parse_line(path, i + 1, line.encode("utf-8", "surrogatepass") + b"\n", False)
        except InputError:   # pragma: no cover - only for a first line
            continue
        if reader.stats.errors:
            yield reader.stats.errors[0]


def _line_messages(spark, files: list[str], text_col: str) -> list[str]:
    """The first :data:`MAX_ERRORS` messages of the bad lines of *files* (those
    that have bad records), as the local reader words them — file, line number,
    reason — found on the executors (one more pass over those files only)."""
    out: list[str] = []
    for f in files:
        if len(out) >= MAX_ERRORS:
            break
        # the file's lines in order (one file: its splits are its partitions in offset
        # order), numbered
        rows = spark.read.text(_literal(f)).rdd.map(lambda r: r[0]).zipWithIndex()
        out += rows.mapPartitions(lambda it, _p=_shown(f), _t=text_col: _bad_lines(it, _p, _t)) \
            .take(MAX_ERRORS - len(out))
    return out


def _literal(file_uri: str) -> str:
    """``input_file_name()`` (URL-encoded) as a path Spark reads as it is: decoded,
    its glob characters escaped."""
    from urllib.parse import unquote

    from .io import literal_path

    return literal_path(unquote(file_uri))


def write_corpus(spark, inputs: Sequence[str], out_dir: str | os.PathLike, *, id_col: str = "id",
                 text_col: str = "text", url_col: str | None = "url", unit: str = "word",
                 on_error: str = "skip", fmt: str | None = None) -> dict:
    """Read *inputs* on the cluster, number, tokenize and write the corpus dataset
    to *out_dir* (replaced atomically: written beside it, then renamed); returns
    its summary (also written as ``out_dir/_corpus.json``), the local store's
    keys: documents, tokens, bytes, empty_documents, unit, read."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from .io import _read_paths, load_documents

    out_dir = Path(out_dir)
    # read once (JSON: one schema inference), then counted and numbered
    raw, from_json = _read_paths(spark, list(inputs), fmt)
    counts = read_counts(spark, raw, from_json, inputs, text_col=text_col, on_error=on_error)
    docs = load_documents(spark, raw, id_col=id_col, text_col=text_col, url_col=url_col,
                          on_error=on_error, from_json=from_json)
    schema = T.StructType([
        T.StructField("doc_index", T.LongType(), False),
        T.StructField("doc_id", T.StringType(), False),
        T.StructField("url", T.StringType(), True),
        T.StructField("host", T.StringType(), True),
        T.StructField("n_tokens", T.LongType(), False),
        T.StructField("n_chars", T.LongType(), False),
        T.StructField("order_key", T.LongType(), False),
        T.StructField("n_bytes", T.LongType(), False),
        T.StructField("blank", T.BooleanType(), False),
        T.StructField("text", T.StringType(), False)])
    full = docs.mapInArrow(lambda it, _u=unit: _corpus_batches(it, unit=_u), schema)
    remove_partial(out_dir)
    tmp = out_dir.with_name(f".{out_dir.name}.tmp-{os.getpid()}")
    # the partitions of the numbered documents are in doc_index order already
    # (a sorted RDD, zipWithIndex): part-00000 holds the smallest indices
    # small row groups: the driver reads one document's text (the report's examples)
    # by reading its row group's text column only
    full.write.option("parquet.block.size", ROW_GROUP_BYTES).parquet(str(tmp))
    # the figures from the small columns of what was written (the text is not read again)
    fig = spark.read.parquet(str(tmp)).agg(
        F.count(F.lit(1)).alias("documents"), F.sum("n_tokens").alias("tokens"),
        F.sum("n_bytes").alias("bytes"), F.sum(F.col("blank").cast("long")).alias("empty"),
        F.sum((F.col("n_tokens") == 0).cast("long")).alias("empty_documents"),
        F.bit_xor("order_key").alias("digest")).collect()[0]
    n = int(fig["documents"])
    summary = {
        "documents": n, "tokens": int(fig["tokens"] or 0), "bytes": int(fig["bytes"] or 0),
        "empty_documents": int(fig["empty_documents"] or 0), "unit": unit,
        "read": {"files": counts["files"], "records": n, "malformed": counts["malformed"],
                 "empty": int(fig["empty"] or 0), "invalid_utf8": 0,
                 "missing_text": counts["missing_text"], "skipped_non_response": 0,
                 "skipped_binary": 0, "errors": counts["errors"]},
        "engine": "spark",
        # the XOR of the documents' order keys (hashes of id and text): another corpus
        # of the same size has another digest (the reuse key of the stages after it)
        "digest": f"{int(fig['digest'] or 0) & (2**64 - 1):016x}",
    }
    (tmp / CORPUS_SUMMARY).write_text(json.dumps(summary, ensure_ascii=False, indent=1),
                                      encoding="utf-8")
    # the old dataset is moved aside before the new one takes its place, so a kill
    # leaves either the old or the new one whole (and a ".corpus.tmp-*" to remove)
    old = out_dir.with_name(f".{out_dir.name}.tmp-old-{os.getpid()}")
    if out_dir.exists():
        os.replace(out_dir, old)
    os.replace(tmp, out_dir)
    shutil.rmtree(old, ignore_errors=True)
    return summary


def remove_partial(out_dir: str | os.PathLike) -> None:
    """Remove what a killed :func:`write_corpus` left beside *out_dir* (its
    ``.corpus.tmp-*`` directories; the caller holds the directory, so no other run
    is writing one now)."""
    out_dir = Path(out_dir)
    for stale in out_dir.parent.glob(f".{out_dir.name}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)


def read_corpus_frame(spark, corpus_dir: str | os.PathLike):
    """The corpus dataset as a DataFrame (numbered: :func:`repetend.spark.io.load_documents`
    takes it as it is)."""
    return spark.read.parquet(str(corpus_dir))
