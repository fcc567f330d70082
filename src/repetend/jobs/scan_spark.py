"""``repetend scan --engine spark``: the Spark side of the scan job.

:func:`repetend.jobs.scan.scan` dispatches here when ``ScanConfig.spark_master``
is set.  What runs where (``docs/spark.md`` has the table):

* **executors** (Spark): reading the input files and counting bad records, the
  document order (a hash of id and text, :mod:`repetend.spark.order`), the
  repeated-id check, tokens, the corpus dataset ``corpus/`` they write (in place
  of a token store, :mod:`repetend.spark.corpus`), near-duplicates (MinHash-LSH or
  exact checksums), the phrase pre-filter, the widened corpus of the templates,
  the character offsets of every occurrence and span, the cleaning plan of
  every document; the template layer on the widened corpus, in one task;
* **driver**: the corpus dataset's small columns (ids, urls, token counts: σ
  from the site sizes, the document tables), the phrase mining on the reduced
  corpus, the result tables, and the report (texts of the documents it shows
  only).

The tables equal those of a local scan over the documents in that same order
(``tests/test_spark_scan.py``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from .._atomic import write_json
from ..errors import ParameterError
from ..scandir import inputs_stamp_file

__all__ = ["SPARK_METHODS", "validate", "corpus", "start", "near_duplicates", "phrases",
           "decisions_columns"]

SPARK_METHODS = ("minhash", "exact")
# ScanConfig.input_options that are read options (the rest are the tokenizer's)
READ_KEYS = ("text_field", "id_field", "url_field", "fmt", "glob", "limit", "on_error", "html",
             "duplicate_ids")


def validate(config) -> None:
    """Options the Spark engine cannot run, refused before anything is read."""
    if config.dups is not None and config.dups.method not in SPARK_METHODS:
        raise ParameterError(f"near-duplicate method {config.dups.method!r} does not run on "
                             f"Spark; the Spark engine runs {' and '.join(SPARK_METHODS)}")
    if config.dups is not None:
        from ..spark.io import refuse_normalization

        refuse_normalization(config.dups)
    unit = config.input_options.get("unit") or "word"
    if unit not in ("word", "char"):
        raise ParameterError(f"--unit {unit} is not available with --engine spark "
                             "(it tokenizes 'word' or 'char')")
    fmt = config.input_options.get("fmt")
    if fmt is not None and fmt not in ("jsonl", "parquet"):
        raise ParameterError(f"--engine spark reads JSONL and Parquet, not --format {fmt}")
    io = config.input_options
    unsupported = [opt for opt, given in (
        ("--limit", io.get("limit") is not None), ("--glob", io.get("glob") is not None),
        ("--html main", io.get("html") == "main"), ("--lang", bool(io.get("lang"))),
        ("--lang-detect", bool(io.get("lang_detect"))),
        ("--duplicate-ids rename", io.get("duplicate_ids") == "rename")) if given]
    if unsupported:
        raise ParameterError(f"{', '.join(unsupported)}: not available with --engine spark (it "
                             "reads JSONL and Parquet as they are; ids must be unique); use the "
                             "local engine, or prepare the input with Spark first")


def corpus(spark, input_list: list[str], out: Path, config, cols: dict, *,
           say: Callable[[str], None]):
    """Stage 1 on the executors: the corpus dataset ``out/corpus`` (read, numbered,
    tokenized, written by the executors: :mod:`repetend.spark.corpus`), reused when
    ``config.reuse`` and it is of these inputs; returns the driver's view of it
    (:class:`repetend.corpus.table_corpus.TableCorpus`) and its DataFrame."""
    from ..corpus.table_corpus import TableCorpus, is_corpus_table
    from ..errors import InputError
    from ..scandir import CORPUS
    from ..spark.corpus import read_corpus_frame, remove_partial, write_corpus
    from ..spark.task import remove_partial as remove_scratch
    from .reuse import inputs_stamp, same_inputs

    io = config.input_options
    cdir = out / CORPUS
    remove_partial(cdir)   # a killed run's, also when the dataset is reused
    remove_scratch(out)    # and the islands or widened corpus a killed run left
    if config.reuse and is_corpus_table(cdir) and same_inputs(cdir, input_list, io):
        try:
            corpus_view = TableCorpus.open(cdir)
            say(f"reusing the corpus dataset in {cdir}")
            return corpus_view, read_corpus_frame(spark, cdir)
        except InputError as exc:   # damaged: written again
            say(f"the corpus dataset in {cdir} cannot be reused ({exc}): writing it again")
    say("spark: reading, numbering and tokenizing the corpus on the executors …")
    write_corpus(spark, input_list, cdir, **cols, unit=io.get("unit") or "word",
                 on_error=io.get("on_error") or "skip", fmt=io.get("fmt"))
    write_json(inputs_stamp_file(cdir), inputs_stamp(input_list, io))
    return TableCorpus.open(cdir), read_corpus_frame(spark, cdir)


def start(config, *, quiet: bool, say: Callable[[str], None]):
    """The SparkSession of the scan and the column options of its inputs."""
    from ..spark import local_session

    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and active.sparkContext.master != config.spark_master:
        raise ParameterError(f"a SparkSession on {active.sparkContext.master} is already running "
                             f"in this process; stop it to scan on {config.spark_master}")
    say(f"starting Spark ({config.spark_master}) …")
    say("spark: on the executors: reading, document order, ids, tokens, the corpus dataset, "
        "near-duplicates, the phrase pre-filter, the mining of its islands (one task), the "
        "widened corpus of the templates and the template layer on it (one task), character "
        "offsets, the cleaning plan; driver: the tables and the report")
    spark = local_session(config.spark_master, "repetend scan", quiet=quiet)
    io = config.input_options
    cols = {"id_col": io.get("id_field") or "id", "text_col": io.get("text_field") or "text",
            "url_col": io.get("url_field") or "url"}
    return spark, cols


def _load_kw(config) -> dict:
    io = config.input_options
    return {"unit": io.get("unit") or "word"}


def near_duplicates(spark, corpus_df, ncfg, config, say: Callable[[str], None]):
    """Near-duplicates on Spark (method ``minhash`` or ``exact``) over the corpus
    dataset (numbered: the driver's view has the same documents in the same order)."""
    from ..spark import find_near_duplicates as spark_dups

    t0 = time.perf_counter()
    say(f"spark: near-duplicates ({ncfg.method}) on the executors …")
    res = spark_dups(spark, corpus_df, ncfg, **_load_kw(config))
    res.summary.setdefault("timings", {})["spark_wall"] = time.perf_counter() - t0
    return res


def phrases(spark, corpus_df, pcfg, config, say: Callable[[str], None], groups=None, *,
            out: Path):
    """Phrases mined on Spark (pre-filter on the executors, mining of the reduced
    corpus in one task on an executor), templates from the widened corpus (in one
    task on an executor); the character offsets of every occurrence and span
    computed on the executors (by :func:`repetend.spark.find_phrases`)."""
    from ..spark import find_phrases as spark_phrases

    say(f"spark: phrase pre-filter on the executors (σ = {pcfg.min_docs}, L = {pcfg.min_len}) …")
    res = spark_phrases(spark, corpus_df, pcfg, **_load_kw(config), work_dir=out,
                        **({} if groups is None else {"groups": groups}))
    sp = res.summary.get("spark") or {}
    say(_one_task_line("the islands were mined in one task", sp.get("island_tokens"),
                       sp.get("kept_share"), sp.get("mining_task_peak_anon_bytes")))
    tpl = sp.get("templates")
    if tpl:
        say(_one_task_line("the template layer ran in one task on the widened corpus",
                           tpl.get("tokens"), tpl.get("kept_share"),
                           tpl.get("task_peak_anon_bytes"))
            + " (it grows with the corpus; --no-templates leaves it out)")
    # (character offsets of every occurrence and span: on the executors, by find_phrases)
    return res


def _one_task_line(what: str, tokens, share, peak) -> str:
    """The progress line of a one-task stage: what it read and the task's memory."""
    return (f"spark: {what}: {tokens or 0:,} tokens, {100 * (share or 0):.1f} % of the corpus"
            + (f", {peak / 2**20:,.0f} MB of the executor's Python memory" if peak else ""))


def decisions_columns(spark, corpus_df, say: Callable[[str], None]):
    """The per-document figures of the cleaning plan, decided on the executors
    (:mod:`repetend.spark.decisions`), for :func:`repetend.clean.write_decisions`."""
    from ..spark.decisions import plan_columns_on_executors

    say("spark: the cleaning plan of each document on the executors …")
    return plan_columns_on_executors(spark, corpus_df)
