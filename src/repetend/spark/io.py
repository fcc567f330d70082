"""Spark input and sessions: documents with stable indices, Arrow helpers.

Every Spark job of :mod:`repetend.spark` starts from :func:`load_documents`,
which turns a DataFrame (or Parquet / JSONL paths) with id / text (/ url)
columns into ``doc_index, doc_id, url, text``.  ``doc_index`` is the rank of
the document in a deterministic total order — by default the order key of
:mod:`repetend.spark.order` (a hash of id and text, ties by id), or the
``order_col`` column when given — obtained by a sort and ``zipWithIndex``,
never by ``monotonically_increasing_id`` (whose values depend on the
partitioning and change when a task is retried on another layout).  The input
need not be sorted: the numbering depends on the data alone.  The local engine
numbers documents in reading order; a local run on the records in the same
order (:func:`repetend.spark.order.local_order`) gives the same indices, which
is what makes Spark and local results identical, including the tie rules that
depend on indices (huge-bucket order, cluster representatives, cluster ids).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import InputError, ParameterError

__all__ = ["load_documents", "local_session", "numpy_column", "binary_of", "refuse_normalization"]


# the columns of the scan's corpus dataset (repetend.spark.corpus)
CORPUS_COLUMNS = ("doc_index", "doc_id", "url", "host", "n_tokens", "n_chars", "order_key",
                  "n_bytes", "blank", "text")


def refuse_normalization(cfg) -> None:
    """Word normalization of the shingles (stop words, stems, lemmas) is not wired
    for Spark: refused, never silently ignored."""
    given = [f"{name}={getattr(cfg, name)!r}" for name in ("stopwords", "stem", "lemmatize")
             if getattr(cfg, name, None)]
    if given:
        raise ParameterError(f"{', '.join(given)}: the Spark engine shingles the words as they "
                             "are (no stop words, stems or lemmas); use the local engine")


def literal_path(path: str) -> str:
    """*path* with its glob characters escaped: Spark reads that one file or directory."""
    return re.sub(r"([\\{}\[\]*?])", r"\\\1", path)


def _read_paths(spark, paths: Sequence[str], fmt: str | None = None):
    """The DataFrame of *paths* (local paths or URIs), and whether it is JSONL;
    the format from *fmt* (``jsonl``/``parquet``) or the names (a directory, or a
    URI ending in ``/``, is a Parquet dataset)."""
    paths = [str(p) for p in paths]
    kinds = set()
    for p in paths:
        name = p.lower().rstrip("/")
        if fmt in ("jsonl", "parquet"):
            kinds.add("json" if fmt == "jsonl" else "parquet")
        elif name.endswith(".parquet") or Path(p).is_dir() or ("://" in p and p.endswith("/")):
            kinds.add("parquet")
        elif name.endswith((".jsonl", ".json", ".jsonl.gz", ".json.gz", ".ndjson")):
            kinds.add("json")
        else:
            raise InputError("the Spark engine reads Parquet (.parquet or a directory) and "
                             "JSONL (.jsonl, .json, .jsonl.gz) paths", path=p)
    if len(kinds) > 1:
        raise InputError("mixing Parquet and JSONL paths in one Spark input", path=paths[0])
    # a local path is a file's name, not a pattern: its glob characters escaped (a URI
    # is given to Spark as it is, patterns included)
    paths = [p if "://" in p else literal_path(p) for p in paths]
    if "parquet" in kinds:
        return spark.read.parquet(*paths), False
    return spark.read.json(paths, mode="PERMISSIVE", columnNameOfCorruptRecord="_corrupt_record"), True


def load_documents(spark, data, *, id_col: str = "id", text_col: str = "text",
                   url_col: str | None = "url", order_col: str | None = None,
                   on_error: str = "skip", fmt: str | None = None, from_json: bool = False):
    """The documents as ``doc_index (long), doc_id (string), url (string), text (string)``.

    Parameters
    ----------
    spark : SparkSession
    data : DataFrame, str, Path or sequence of them
        A Spark DataFrame, or Parquet / JSONL paths read with Spark.  A corpus
        dataset written by :func:`repetend.spark.corpus.write_corpus` (all of
        :data:`CORPUS_COLUMNS`) is numbered already and is taken as it is.
    id_col, text_col, url_col : str
        Column names; ``url_col`` may be absent from the data (urls are then null).
    order_col : str, optional
        Column that orders the documents (ties broken by id).  Default: the
        order key of :mod:`repetend.spark.order` (a hash of id and text, ties
        by id), a function of the data alone: any shuffled copy of the corpus
        gets the same numbering, and :func:`repetend.spark.order.local_order`
        gives it without Spark.
    on_error : {"skip", "fail"}
        JSONL lines Spark cannot parse, or whose text is missing or null, are
        skipped (as the local reader does) or raise :class:`InputError`.
    fmt : {"jsonl", "parquet"}, optional
        The format of paths whose names do not tell it.
    from_json : bool
        *data* is a DataFrame Spark read from JSONL (with a ``_corrupt_record``
        column when a line did not parse): its bad records are handled as for paths.

    Raises
    ------
    InputError
        A named column is missing (the message lists the columns that exist), an
        id is null, or two documents share an id — found by a shuffle of the ids
        alone, before any tokenizing.
    """
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from .order import key_batches

    if on_error not in ("skip", "fail"):
        raise ParameterError(f"on_error must be 'skip' or 'fail', got {on_error!r}")
    if isinstance(data, (str, os.PathLike)):
        data = [data]
    if isinstance(data, DataFrame) and set(CORPUS_COLUMNS) <= set(data.columns):
        # the scan's corpus dataset (repetend.spark.corpus): numbered, ids checked
        return data.select("doc_index", "doc_id", "url", "text")
    if not isinstance(data, DataFrame):
        if not isinstance(data, (list, tuple)) or not data:
            raise ParameterError("data must be a Spark DataFrame or Parquet/JSONL path(s)")
        data, from_json = _read_paths(spark, data, fmt)
    cols = [c for c in data.columns if c != "_corrupt_record"]
    for name, col in (("id", id_col), ("text", text_col)):
        if col not in cols:
            raise InputError(f"the {name} column {col!r} is missing; columns: {', '.join(cols)}")
    if order_col is not None and order_col not in cols:
        raise InputError(f"the order column {order_col!r} is missing; columns: {', '.join(cols)}")
    if from_json:
        # what the local JSONL reader counts as malformed: unparseable lines and
        # records without a (non-null) text
        bad = F.col(text_col).isNull()
        if "_corrupt_record" in data.columns:
            bad = bad | F.col("_corrupt_record").isNotNull()
        data = data.withColumn("_bad", bad)
        if on_error == "fail":
            first = data.filter(F.col("_bad")).limit(1).collect()
            if first:
                raise InputError("a record is malformed (not valid JSON, or no text field "
                                 f"{text_col!r}); the local reader names the line")
        data = data.filter(~F.col("_bad")).drop("_bad")
    url = F.col(url_col).cast("string") if url_col and url_col in cols else F.lit(None).cast("string")
    sel = [F.col(id_col).cast("string").alias("doc_id"), url.alias("url"),
           F.coalesce(F.col(text_col).cast("string"), F.lit("")).alias("text")]
    if order_col is not None:
        sel.append(F.col(order_col).alias("_key"))
    df = data.select(*sel)
    nulls = df.filter(F.col("doc_id").isNull() | (F.col("doc_id") == "")).limit(1).count()
    if nulls:
        raise InputError(f"the id column {id_col!r} has null or empty values (the local reader "
                         "names such records file:record; the Spark engine needs every id)")
    # a repeated id, found on the ids alone (a shuffle of short strings) before any
    # expensive stage; the message names the smallest repeated id
    dup = (df.groupBy("doc_id").count().filter(F.col("count") > 1)
           .orderBy("doc_id").limit(1).collect())
    if dup:
        raise InputError(f"document id {dup[0]['doc_id']!r} occurs {dup[0]['count']} times; "
                         "ids must be unique")
    if order_col is None:
        key_schema = T.StructType(df.schema.fields + [T.StructField("_key", T.LongType(), False)])
        df = df.mapInArrow(key_batches, key_schema)
    ordered = df.orderBy(F.col("_key"), F.col("doc_id"))
    schema = T.StructType([T.StructField("doc_index", T.LongType(), False),
                           T.StructField("doc_id", T.StringType(), False),
                           T.StructField("url", T.StringType(), True),
                           T.StructField("text", T.StringType(), False)])
    rdd = ordered.select("doc_id", "url", "text").rdd.zipWithIndex().map(
        lambda rv: (rv[1], rv[0][0], rv[0][1], rv[0][2]))
    docs = spark.createDataFrame(rdd, schema)
    return docs


def check_unique_ids(docs) -> int:
    """Number of documents (:func:`load_documents` has refused repeated ids already)."""
    return int(docs.count())


_LOG4J2 = """# repetend: Spark's own log lines, at level {level}, on stderr
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
"""


def log4j2_file(level: str) -> Path:
    """A log4j2 properties file setting Spark's root log level (written once per
    level into the temporary directory)."""
    import tempfile

    level = level.lower()
    path = Path(tempfile.gettempdir()) / f"repetend-log4j2-{level}.properties"
    text = _LOG4J2.format(level=level)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return path


def local_session(master: str = "local[2]", app_name: str = "repetend", *,
                  shuffle_partitions: int = 8, conf: dict | None = None,
                  quiet: bool | None = None):
    """A SparkSession for local runs, tests and ``repetend scan``: UI off, this
    Python for the workers, Arrow on, few shuffle partitions, no console progress bar.

    *quiet* True: Spark's log4j output is off from JVM start-up on (a log4j2
    properties file passed with ``-Dlog4j2.configurationFile`` to the driver and
    the executors); False: errors only; None: Spark's own defaults.  Options the
    caller gives in *conf* win (``spark.driver.extraJavaOptions`` included)."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    b = (SparkSession.builder.master(master).appName(app_name)
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
         .config("spark.default.parallelism", str(shuffle_partitions))
         .config("spark.sql.execution.arrow.pyspark.enabled", "true")
         .config("spark.pyspark.python", sys.executable)
         .config("spark.driver.memory", driver_memory())
         # what the driver collects (islands, tables, the kept vocabulary) is bounded by its heap
         .config("spark.driver.maxResultSize", driver_memory()))
    if quiet is not None:
        opt = f"-Dlog4j2.configurationFile=file:{log4j2_file('off' if quiet else 'error')}"
        b = b.config("spark.driver.extraJavaOptions", opt) \
             .config("spark.executor.extraJavaOptions", opt)
    for k, v in (conf or {}).items():
        b = b.config(k, str(v))
    if quiet is not None:
        _own_context(b, quiet)
    spark = b.getOrCreate()
    if quiet is not None:   # a session that existed already: at least its level
        spark.sparkContext.setLogLevel("OFF" if quiet else "ERROR")
    return spark


def driver_memory() -> str:
    """The driver JVM's heap: ``SPARK_DRIVER_MEMORY`` when set, else a quarter of this
    machine's memory, between 2 and 16 GB.  (In local mode the executors run in that
    JVM too, and it holds what the driver collects: with a fixed 2 GB the default scan
    of a 50 M-token corpus ran out of heap when the templates' widened corpus was still
    collected through it.)"""
    given = os.environ.get("SPARK_DRIVER_MEMORY")
    if given:
        return given
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):   # pragma: no cover - not POSIX
        return "2g"
    return f"{min(16, max(2, total // 4 >> 30))}g"


_START_NOISE = ("WARNING: Using incubator modules", "Setting default log level",
                "To adjust logging level")


def _forward(stream, target) -> None:
    for line in iter(stream.readline, b""):
        text = line.decode("utf-8", "replace")
        if not text.startswith(_START_NOISE):
            target.write(text)
            target.flush()


def _own_context(builder, quiet: bool) -> None:
    """Start the driver JVM ourselves, unless a SparkContext exists: with *quiet*
    its stderr goes to /dev/null (the JVM's own warnings, e.g. "Using incubator
    modules", and Spark's start-up lines come before any log configuration
    applies); else through a filter that drops those start-up lines only."""
    import subprocess
    import threading

    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._active_spark_context is not None or SparkContext._gateway is not None:
        return
    conf = SparkConf(loadDefaults=False)
    for k, v in getattr(builder, "_options", {}).items():
        conf.set(k, v)
    if quiet:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.DEVNULL})
    else:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
        threading.Thread(target=_forward, args=(gateway.proc.stderr, sys.stderr),
                         daemon=True, name="spark-stderr").start()
    SparkContext(conf=conf, gateway=gateway)


def destroy(broadcasts: list) -> None:
    """Destroy the broadcasts of a stage once it no longer needs them (their copies on
    the executors and the driver) and forget them; safe to call twice."""
    while broadcasts:
        broadcasts.pop().destroy()


def numpy_column(col, dtype) -> np.ndarray:
    """A primitive Arrow column (or chunked) as a numpy array of *dtype* (no nulls)."""
    import pyarrow as pa

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    return np.asarray(col.to_numpy(zero_copy_only=False)).astype(dtype, copy=False)


def binary_of(col, dtype) -> tuple[np.ndarray, np.ndarray]:
    """A binary Arrow column holding packed *dtype* arrays: (flat values, element offsets)."""
    import pyarrow as pa

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if col.type != pa.large_binary():
        col = col.cast(pa.large_binary())
    itemsize = np.dtype(dtype).itemsize
    bufs = col.buffers()
    n = len(col)
    off = np.frombuffer(bufs[1], dtype=np.int64, count=n + 1, offset=col.offset * 8)
    data = bufs[2]
    start, end = int(off[0]), int(off[-1])
    raw = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start) if end > start \
        else np.empty(0, np.uint8)
    values = raw.view(dtype)
    return values, ((off - start) // itemsize).astype(np.int64)


def pack_binary(values: np.ndarray, offsets: np.ndarray):
    """Inverse of :func:`binary_of`: a binary Arrow array (Spark's BinaryType), row i
    holding ``values[offsets[i]:offsets[i+1]]``."""
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    item = values.dtype.itemsize
    off = np.asarray(offsets, np.int64) * item
    if off.size and off[-1] >= 2**31:
        raise ValueError("an Arrow batch holds more than 2 GiB of binary values")
    off = off.astype(np.int32)
    n = off.size - 1
    return pa.Array.from_buffers(pa.binary(), n,
                                 [None, pa.py_buffer(off.tobytes()), pa.py_buffer(values.tobytes())])


#: text bytes per tokenized slice of an Arrow batch: an executor's Python worker holds
#: some 10-30 times a slice's text while it works on it (token hashes, strings,
#: spans), and an Arrow batch is ``spark.sql.execution.arrow.maxRecordsPerBatch``
#: documents (10,000 by default) of any length
SLICE_TEXT_BYTES = 4 << 20
#: packed token bytes per slice of a batch of tokenized documents (2 M uint64 hashes):
#: the pre-filters' k-gram windows and sorts take some 5-10 times that
SLICE_TOKEN_BYTES = 16 << 20


def byte_slices(batch, column: str = "text", limit: int | None = None):
    """*batch* cut into consecutive slices of at most *limit* bytes of *column* each
    (a string or binary column; a longer row is a slice of its own).  The default
    limit is :data:`SLICE_TEXT_BYTES` for ``text``, :data:`SLICE_TOKEN_BYTES` else."""
    import pyarrow.compute as pc

    if limit is None:
        limit = SLICE_TEXT_BYTES if column == "text" else SLICE_TOKEN_BYTES
    limit = int(limit)
    n = batch.num_rows
    lens = pc.fill_null(pc.binary_length(batch.column(column)), 0).to_numpy(zero_copy_only=False)
    ends = np.cumsum(lens, dtype=np.int64)
    start = 0
    while start < n:
        base = int(ends[start - 1]) if start else 0
        stop = max(int(np.searchsorted(ends, base + limit, side="right")), start + 1)
        yield batch.slice(start, stop - start)
        start = stop


def sliced(batches, column: str = "text", limit: int | None = None):
    """The slices (:func:`byte_slices`) of every non-empty batch of *batches*, in order."""
    for batch in batches:
        if batch.num_rows:
            yield from byte_slices(batch, column, limit)


def token_batches(batches, unit: str):
    """The non-empty Arrow batches of ``(doc_index, text)`` tokenized on an executor,
    a slice of at most :data:`SLICE_TEXT_BYTES` of text at a time
    (:func:`sliced`): yields ``(doc_index array, texts, TokenizedBatch)``; a
    null text is an empty document (``""``).  Every consumer works per document or
    sums over batches, so the slices change no result, only the memory of a task."""
    from ..corpus.tokenizer import tokenize_batch

    for part in sliced(batches):
        texts = [t if t is not None else "" for t in part.column("text").to_pylist()]
        yield (numpy_column(part.column("doc_index"), np.int64), texts,
               tokenize_batch(texts, unit=unit))


def batch_shingle_sets(tb, k: int):
    """The shingle sets of one tokenized batch, from the token *strings'* hashes
    (so every batch gives the sets the local store gives)."""
    from ..neardup import shingle_sets

    uniq, inv = np.unique(tb.hashes, return_inverse=True)
    return shingle_sets(inv.reshape(-1).astype(np.int32), tb.doc_offsets,
                        uniq.astype(np.uint64), k)
