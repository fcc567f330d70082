"""``repetend scan --engine spark``: the Spark side of the scan job.

:func:`repetend.jobs.scan.scan` dispatches here when ``ScanConfig.spark_master``
is set.  What runs where (``docs/spark.md`` has the table):

* **executors** (Spark): reading the input files, the document order (a hash of
  id and text, :mod:`repetend.spark.order`), the repeated-id check, tokens,
  near-duplicates (MinHash-LSH or exact checksums) and the phrase pre-filter;
* **driver**: a token store of the corpus *in the Spark document order*, read
  and tokenized here by the local reader (it gives the bad-input counts and
  messages of a local scan, σ from the site sizes, the template layer, the
  character offsets, the cleaning plan and the report), the phrase mining on
  the reduced corpus, and the template layer.

The tables equal those of a local scan over the documents in that same order
(``tests/test_spark_scan.py``).
"""

from __future__ import annotations

import contextlib
import mmap
import tempfile
import time
from pathlib import Path
from typing import Callable

from .._atomic import write_json
from ..corpus.store import TokenStore
from ..errors import ParameterError
from ..scandir import INPUTS_STAMP

__all__ = ["SPARK_METHODS", "validate", "ordered_store", "start", "near_duplicates", "phrases"]

SPARK_METHODS = ("minhash", "exact")
# ScanConfig.input_options that are read options (the rest are the tokenizer's)
READ_KEYS = ("text_field", "id_field", "url_field", "fmt", "glob", "limit", "on_error", "html",
             "duplicate_ids")


def validate(config) -> None:
    """Options the Spark engine cannot run, refused before anything is read."""
    if config.dups is not None and config.dups.method not in SPARK_METHODS:
        raise ParameterError(f"near-duplicate method {config.dups.method!r} does not run on "
                             f"Spark; the Spark engine runs {' and '.join(SPARK_METHODS)}")
    unit = config.input_options.get("unit") or "word"
    if unit not in ("word", "char"):
        raise ParameterError(f"--unit {unit} is not available with --engine spark "
                             "(it tokenizes 'word' or 'char')")
    fmt = config.input_options.get("fmt")
    if fmt is not None and fmt not in ("jsonl", "parquet"):
        raise ParameterError(f"--engine spark reads JSONL and Parquet, not --format {fmt}")


def _in_spark_order(store: TokenStore) -> bool:
    import numpy as np

    from ..spark.order import local_order

    perm = local_order(store.doc_ids, [store.text(d) for d in range(store.n_docs)])
    return bool(np.array_equal(perm, np.arange(store.n_docs)))


def ordered_store(input_list: list[str], store_dir: Path, config, *, quiet: bool,
                  say: Callable[[str], None]) -> TokenStore:
    """The driver's token store, its documents in the Spark engine's order
    (:func:`repetend.spark.order.local_order`), written to *store_dir*; reused
    when ``config.reuse`` and the store there is of these inputs, in that order."""
    from .._progress import Progress
    from ..corpus.readers import read_corpus
    from ..corpus.record import ReadStats, Record
    from ..corpus.store import build_store, is_store
    from ..spark.order import order_key
    from .reuse import inputs_stamp, same_inputs

    io = config.input_options
    if config.reuse and is_store(store_dir) and same_inputs(store_dir, input_list, io):
        store = TokenStore.open(store_dir)
        if _in_spark_order(store):
            say(f"reusing the token store in {store_dir}")
            return store
        say(f"the token store in {store_dir} is not in the Spark order: rebuilding it")
    say("reading the corpus for the driver's token store (local reader, Spark order) …")
    stats = ReadStats()
    store_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".spark-order-", dir=store_dir.parent) as tmp:
        # one pass: texts spooled to disk, ids and order keys kept (O(documents) small
        # values); then the records in the Spark order from the memory-mapped spool,
        # so the driver never holds the corpus text
        ids, urls, sources, recnos, keys, offs = [], [], [], [], [], [0]
        spool = Path(tmp) / "texts.bin"
        with open(spool, "wb") as f:
            for r in read_corpus(input_list, stats=stats,
                                 **{k: io[k] for k in READ_KEYS if k in io}):
                b = r.text.encode("utf-8", "surrogatepass")
                f.write(b)
                offs.append(offs[-1] + len(b))
                ids.append(r.id)
                urls.append(r.url)
                sources.append(r.source)
                recnos.append(r.record_no)
                keys.append(order_key(r.id, r.text))
        perm = sorted(range(len(ids)), key=lambda i: (keys[i], ids[i]))
        with open(spool, "rb") as f, \
                (mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if offs[-1] else
                 contextlib.nullcontext(b"")) as blob:
            def ordered():
                for i in perm:
                    text = bytes(blob[offs[i]:offs[i + 1]]).decode("utf-8", "surrogatepass")
                    yield Record(id=ids[i], text=text, url=urls[i], source=sources[i],
                                 record_no=recnos[i])

            with Progress("tokenize", unit="B", quiet=quiet) as bar:
                store = build_store(ordered(), out=store_dir, unit=io.get("unit", "word"),
                                    lang=io.get("lang"), read_stats=stats, progress=bar.update)
    write_json(store_dir / INPUTS_STAMP, inputs_stamp(input_list, io))
    return store


def start(config, *, quiet: bool, say: Callable[[str], None]):
    """The SparkSession of the scan and the column options of its inputs."""
    from ..spark import local_session

    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and active.sparkContext.master != config.spark_master:
        raise ParameterError(f"a SparkSession on {active.sparkContext.master} is already running "
                             f"in this process; stop it to scan on {config.spark_master}")
    say(f"starting Spark ({config.spark_master}) …")
    say("spark: on the executors: reading, document order, ids, tokens, near-duplicates, the "
        "phrase pre-filter, the widened corpus of the templates; driver: mining the reduced "
        "corpus, the template layer on the widened one; character offsets, cleaning plan, "
        "report on its own token store")
    spark = local_session(config.spark_master, "repetend scan", quiet=quiet)
    io = config.input_options
    cols = {"id_col": io.get("id_field") or "id", "text_col": io.get("text_field") or "text",
            "url_col": io.get("url_field") or "url"}
    return spark, cols


def _load_kw(config) -> dict:
    io = config.input_options
    return {"unit": io.get("unit") or "word"}


def near_duplicates(spark, input_list: list[str], ncfg, store: TokenStore, cols: dict,
                    config, say: Callable[[str], None]):
    """Near-duplicates on Spark (method ``minhash`` or ``exact``), checked to be
    numbered like the driver's store."""
    from ..spark import find_near_duplicates as spark_dups

    t0 = time.perf_counter()
    say(f"spark: near-duplicates ({ncfg.method}) on the executors …")
    res = spark_dups(spark, input_list, ncfg, **cols, **_load_kw(config),
                     on_error=config.input_options.get("on_error") or "skip")
    same_order(res.doc_ids.to_pylist(), store, "near-duplicates")
    res.summary.setdefault("timings", {})["spark_wall"] = time.perf_counter() - t0
    return res


def phrases(spark, input_list: list[str], pcfg, store: TokenStore, cols: dict, config,
            say: Callable[[str], None], groups=None):
    """Phrases mined on Spark (pre-filter on the executors, mining of the reduced
    corpus on the driver), templates from the widened reduced corpus; the character
    offsets of the exact occurrences and spans still from the driver's store."""
    from ..phrases.find import add_char_offsets, run_templates
    from ..spark import find_phrases as spark_phrases

    say(f"spark: phrase pre-filter on the executors (σ = {pcfg.min_docs}, L = {pcfg.min_len}) …")
    res = spark_phrases(spark, input_list, pcfg, **cols, **_load_kw(config),
                        on_error=config.input_options.get("on_error") or "skip",
                        **({} if groups is None else {"groups": groups}))
    same_order(res.documents.column("doc_id").to_pylist(), store, "phrases")
    if res.templates is not None or "templates_skipped" in res.summary:
        # the template layer ran on the widened reduced corpus (repetend.spark.templates),
        # its occurrences with character offsets from the executors' token spans
        say("spark: templates with variable parts from the widened corpus (driver: the "
            "local layer on it) …")
    elif pcfg.templates is not None and pcfg.min_docs >= 2 and store.n_tokens:
        # no template result from Spark (an empty corpus): the layer on the local store
        say("driver: templates with variable parts, on the driver's store …")
        frequent = round(res.summary["frequent_share"] * store.n_tokens)
        res.templates, plan = run_templates(store, res.raw, pcfg, store.n_tokens, frequent,
                                            groups=groups)
        if res.templates is not None:
            res.summary["templates"] = res.templates.summary
        else:
            res.summary["templates_skipped"] = plan
    # the character offsets, from the local store's text, as the local engines give them
    res.occurrences, res.spans = add_char_offsets(store, res.occurrences, res.spans, res.templates)
    return res


def same_order(ids: list, store: TokenStore, stage: str) -> None:
    """Spark's documents must be the driver store's, in the same order; else the
    two readers disagree on the input (a record one of them skipped, an id the
    local reader made up): refuse rather than mislabel."""
    if ids == store.doc_ids:
        return
    have = set(store.doc_ids)
    extra = next((i for i in ids if i not in have), None)
    got = set(ids)
    missing = next((i for i in store.doc_ids if i not in got), None)
    detail = (f"Spark has {len(ids)} documents, the local reader {store.n_docs}"
              + (f"; only Spark has id {extra!r}" if extra is not None else "")
              + (f"; only the local reader has id {missing!r}" if missing is not None else ""))
    raise ParameterError(f"Spark and the local reader disagree on the documents ({stage}): "
                         f"{detail}. Give every record an id (--id-field) and a text, or use "
                         "the local engine")
