"""The main job: tokenize, find near-duplicates, mine phrases, write the report.

Phrases come after the near-duplicates so that their df can count each
near-duplicate cluster once (``ScanConfig.df_over``, default ``"clusters"``).

Everything one run produces goes into a scan directory, laid out by
:mod:`repetend.scandir`.  Every stage can be skipped (its config None), and
with ``reuse`` a stage whose output exists with the same parameters is not run
again (:mod:`repetend.jobs.reuse`).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .._atomic import write_json
from ..corpus.store import TokenStore
from ..errors import ParameterError
from ..neardup import NearDupConfig
from ..phrases import DF_OVER, PhraseConfig
from ..phrases.groups import DfOver
from ..scandir import (CORPUS, DUPS, INPUTS_STAMP, PHRASES, REPORT, RUNNING, STORE, SUMMARY, read_json,
                       read_stamp, stage_mismatch, write_stamp, writer_lock)
from .reuse import inputs_stamp, is_uri, same_inputs, same_params, templates_cut

__all__ = ["ScanConfig", "ScanResult", "choose_min_docs", "scan"]


def _default_phrases() -> PhraseConfig:
    return PhraseConfig(min_docs=None)


@dataclass
class ScanConfig:
    """Parameters of :func:`scan`: one config per stage, nested, not copied.

    Attributes
    ----------
    phrases : PhraseConfig or None
        Boilerplate mining (with its template layer, ``phrases.templates``);
        ``min_docs=None`` (the default here) chooses σ from the corpus
        (:func:`choose_min_docs`).  None skips the stage.
    dups : NearDupConfig or None
        Near-duplicate detection; None skips the stage.
    report : bool
        Write ``report.html``; False removes the ``report.html`` of an earlier
        scan into the same directory (with a warning: it would show that scan).
    reuse : bool
        Reuse the store and stage outputs already in the scan directory when
        their inputs and parameters match.
    spark_master : str or None
        Run the phrase and near-duplicate stages on Spark (``"local[2]"`` for
        Spark's local mode).
    memory_limit : int, str or None
        Phrases and MinHash out of core under this much private memory
        (overrides the stages' own ``memory_limit``).
    input_options : dict
        Read and tokenizer options (``text_field``, ``fmt``, ``unit``, …).
    df_over : {"clusters", "documents"}
        What a phrase's df counts (``phrases.df_over`` is set from it):
        ``"clusters"`` (the default) the near-duplicate clusters the dups stage
        found, each once — a document in none is its own cluster — so that
        copies of one text are one witness, not many; ``"documents"`` every
        document.  Without the dups stage phrases count documents (the summary
        says so).
    """

    phrases: PhraseConfig | None = field(default_factory=_default_phrases)
    dups: NearDupConfig | None = field(default_factory=NearDupConfig)
    report: bool = True
    reuse: bool = False
    spark_master: str | None = None
    memory_limit: str | int | None = None
    input_options: dict = field(default_factory=dict)
    df_over: DfOver = "clusters"

    def validate(self) -> "ScanConfig":
        """Check every option of every stage (raise :class:`ParameterError`), so a
        bad one stops the scan before anything is read or written."""
        from .._memory import parse_size
        from ..corpus.readers import FORMATS

        if self.spark_master is not None:
            import importlib.util

            from ..errors import MissingExtraError

            if importlib.util.find_spec("pyspark") is None:
                raise MissingExtraError("pyspark", "spark", "--engine spark")
            from .scan_spark import validate as spark_validate

            spark_validate(self)
        if self.df_over not in DF_OVER:
            raise ParameterError(f"--df-over must be one of {', '.join(DF_OVER)}, "
                                 f"got {self.df_over!r}")
        for name in ("report", "reuse"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ParameterError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.phrases is not None and not isinstance(self.phrases, PhraseConfig):
            raise ParameterError(f"phrases must be a PhraseConfig or None, got {self.phrases!r}")
        if self.dups is not None and not isinstance(self.dups, NearDupConfig):
            raise ParameterError(f"dups must be a NearDupConfig or None, got {self.dups!r}")
        parse_size(self.memory_limit)
        if self.phrases is not None:
            self.phrases.validate()
        if self.dups is not None:
            self.dups.validate()
            if self.dups.method == "minhash":
                self.dups.banding()
        io = dict(self.input_options)
        unknown = set(io) - set(_INPUT_OPTIONS)
        if unknown:
            raise ParameterError(f"unknown input option(s) {', '.join(sorted(unknown))}; "
                                 f"known: {', '.join(_INPUT_OPTIONS)}")
        for name, allowed in (("fmt", FORMATS), ("unit", ("word", "code", "char")),
                              ("on_error", ("skip", "fail")), ("html", ("all", "main")),
                              ("duplicate_ids", ("fail", "rename"))):
            v = io.get(name)
            if v is not None and v not in allowed:
                raise ParameterError(f"{_INPUT_OPTIONS[name]} must be one of {', '.join(allowed)}, "
                                     f"got {v!r}")
        if io.get("limit") is not None:
            _check_int("--limit", io["limit"], 1)
        for name in ("text_field", "id_field", "url_field", "glob", "lang"):
            v = io.get(name)
            if v is not None and (not isinstance(v, str) or not v):
                raise ParameterError(f"{_INPUT_OPTIONS[name]} must be a non-empty string, got {v!r}")
        if io.get("lang") and io.get("unit") == "code":
            from ..corpus.code_tokens import lexer_by_name

            lexer_by_name(io["lang"].lower())
        return self


# ScanConfig.input_options keys and the CLI options they come from
_INPUT_OPTIONS = {"text_field": "--text-field", "id_field": "--id-field", "url_field": "--url-field",
                  "fmt": "--format", "glob": "--glob", "limit": "--limit", "on_error": "--on-error",
                  "html": "--html", "duplicate_ids": "--duplicate-ids", "unit": "--unit",
                  "lang": "--lang", "lang_detect": "--lang-detect"}


def _check_int(name: str, v, lo: int) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ParameterError(f"{name} must be an integer, got {v!r}")
    if v < lo:
        raise ParameterError(f"{name} must be >= {lo}, got {v}")


@dataclass
class ScanResult:
    out: Path
    store: TokenStore
    summary: dict
    phrases: object | None = None
    dups: object | None = None
    report: Path | None = None


def choose_min_docs(store: TokenStore, n_distinct: int | None = None) -> tuple[int, str]:
    """σ for a corpus, with the reason (the BloomSpan paper, §6: tie σ to the typical
    site size, not to the corpus size).

    * urls known: the typical site size S is the median, over documents, of the
      number of documents of their host (a page's template repeats on about
      that many pages); σ = clamp(⌊S / 4⌋, 3, 200), so that a block is found
      when a quarter of a typical site's pages carry it. (On the demo corpus,
      S/4 instead of S/2 finds 78 % of the planted template characters instead
      of 71 %, at the same 99.4 % precision; with L = 10 a phrase on a quarter
      of a site is rarely a quotation.)
    * no urls: σ = clamp(round(0.002 · C), 5, 200) for C *distinct* documents —
      near-duplicate clusters, a document in no cluster counting as its own
      (*n_distinct*; the number of documents when not given).  A phrase must be in
      0.2 % of the distinct documents, and in at least 5 of them, to count as
      template rather than a quotation or a stock phrase.  Counting clusters,
      not documents, keeps σ where it is when copies are added (the support it
      is compared with counts clusters too).  Measured on documentation sets,
      licence files, man pages, source code and the web-like generator
      (docs/sigma.md): below 5 much of what is flagged is quotation or copied
      code (web-like: precision of the marked characters 52 % at σ = 2, 93 % at
      3, 99.2 % at 5).
    """
    n = store.n_docs
    if store.has_urls:
        hosts = store.docs.column("host").to_pandas()
        known = hosts.dropna()
        if len(known) >= max(1, n // 2):
            per_host = known.map(known.value_counts())
            s = float(np.median(per_host.to_numpy()))
            min_docs = int(min(200, max(3, math.floor(s / 4))))
            return min_docs, (f"urls known: median site size {s:g} pages → σ = clamp(⌊{s:g}/4⌋, 3, 200)"
                           f" = {min_docs}")
    c = n if n_distinct is None else int(n_distinct)
    min_docs = int(min(200, max(5, round(0.002 * c))))
    what = (f"{n} documents" if n_distinct is None
            else f"{c} distinct documents (near-duplicate clusters) of {n}")
    return min_docs, f"no urls: {what} → σ = clamp(round(0.002·{c}), 5, 200) = {min_docs}"


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# template parameters that PhraseConfig.to_params records only when on / not
# their default (template_slotted_span: the span used, whenever on, so a directory
# written when it was off by default is not reused by a scan at the new default),
# and the stage stamps then too
_OPTIONAL_TEMPLATE_KEYS = ("template_slotted_span", "template_short_slots",
                           "template_search_whole", "template_variant_evidence")


def _params(config: ScanConfig, min_docs: int, min_docs_rule: str, unit: str) -> dict:
    """The scan's parameters as recorded in ``summary.json`` and the stage stamps
    (flat, as they always were: reuse keys of older scan directories match)."""
    pp = (config.phrases or PhraseConfig()).to_params()
    dc = config.dups or NearDupConfig()
    return {
        "min_docs": min_docs, "min_docs_rule": min_docs_rule, "min_len": pp["min_len"],
        "engine": "spark" if config.spark_master is not None else pp["engine"],
        **{k: pp[k] for k in ("templates", "template_parts", "max_gap", "template_min_span",
                              "template_prune", "template_merge_variants",
                              "template_ends")},
        # only when not its default: the keys of older scan directories still match
        **{k: pp[k] for k in _OPTIONAL_TEMPLATE_KEYS if k in pp},
        "dups_method": dc.method,
        "threshold": dc.threshold, "shingle": dc.shingle, "num_perm": dc.num_perm,
        "unit": unit,
        "df_over": config.df_over if config.dups is not None else "documents",
    }


def scan(inputs: Sequence[str | os.PathLike] | TokenStore, out: str | os.PathLike,
         config: ScanConfig | None = None, *, command: str | None = None, quiet: bool = True,
         log: Callable[[str], None] | None = None, config_file: dict | None = None,
         hard_memory_stop: bool = False) -> ScanResult:
    """Run the whole pipeline on *inputs* (files, or one token store) into *out*
    (*config_file*: the ``--config`` file's path and options, recorded in the summary).

    Every stage runs under a :class:`~repetend._memory.StageWatchdog`: with
    ``config.memory_limit`` a stage whose private memory goes over it stops the
    scan with :class:`~repetend._memory.MemoryLimitExceeded` naming the stage
    (a first scan's *out* is removed); *hard_memory_stop* (the CLI) also ends
    the process when the stage does not return (:mod:`repetend.jobs.scan_memory`)."""
    from ..corpus.store import is_store

    config = (config or ScanConfig()).validate()
    pcfg0, ncfg0 = config.phrases, config.dups
    if config.memory_limit is not None and (
            pcfg0 is not None or (ncfg0 is not None and ncfg0.method == "minhash")):
        # the out-of-core stages need room beyond what the process holds already
        # (and it only holds more once the corpus is read): refuse now, not after tokenizing
        from .._memory import format_size, parse_size, rss_now

        limit, held = parse_size(config.memory_limit), rss_now()["anon"]
        if limit < held + (1 << 22):
            raise ParameterError(
                f"--memory-limit {config.memory_limit} is too small: the process already holds "
                f"{format_size(held)} of private memory before reading the corpus; give well "
                f"above that (at least {format_size(held + (1 << 26))})")
    say = log or (lambda _msg: None)
    out = Path(out)
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    if not isinstance(inputs, TokenStore):
        # the inputs exist and have a known format, before anything is written
        from ..corpus.readers import expand_inputs

        given = [str(p) for p in inputs]
        if not given:
            raise ParameterError("no inputs given")
        local = [g for g in given if not (config.spark_master is not None and is_uri(g))]
        if local and not (len(local) == 1 and is_store(local[0])):
            # (a URI — s3a://, hdfs://, file:// — is read by the Spark session, not here)
            expand_inputs(local, config.input_options.get("fmt"), config.input_options.get("glob"))
    if config.spark_master is not None:
        if isinstance(inputs, TokenStore) or (len(inputs) == 1 and is_store(inputs[0])):
            raise ParameterError("--engine spark reads the corpus files (JSONL or Parquet), "
                                 "not a token store")
    if out.exists() and not out.is_dir():
        raise ParameterError(f"--out {out} exists and is not a directory")
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    from .scan_memory import watchdog

    with writer_lock(out), watchdog(config, out if created else None, hard_memory_stop,
                                    say) as wd:
        # marked until the last stage is written: only a kill leaves the mark
        # (scandir.unfinished_scan; `clean` refuses such a directory)
        (out / RUNNING).touch()
        try:
            with wd.stage("scan"):
                res = _write_scan(inputs, out, config, command=command, quiet=quiet, say=say,
                                  config_file=config_file, wd=wd)
        except BaseException as exc:
            if created:  # a failed first run leaves no directory behind it
                shutil.rmtree(out, ignore_errors=True)
            if config.spark_master is not None and isinstance(exc, Exception):
                from ..spark.failures import translated   # a full disk, a task killed

                told = translated(exc, where=out)
                if told is not None:
                    raise told from exc
            raise
        finally:
            (out / RUNNING).unlink(missing_ok=True)
    return res


def _write_scan(inputs, out: Path, config: ScanConfig, *, command: str | None, quiet: bool,
                config_file: dict | None = None,
                say: Callable[[str], None], wd=None) -> ScanResult:
    """The stages of :func:`scan`, run while it holds the directory's writer lock
    (each under the watchdog *wd*)."""
    from ..corpus.store import is_store
    from .scan_memory import estimate_stages, note_estimates

    pcfg0, ncfg0 = config.phrases, config.dups
    timings: dict[str, float] = {}

    # -- 1. the token store --------------------------------------------------------
    t0 = time.perf_counter()
    spark = corpus_df = None
    spark_cols: dict = {}
    store_dir = out / STORE
    if isinstance(inputs, TokenStore):
        store = inputs
        input_list: list[str] = [str(store.path)] if store.path else []
        store_path = store.path
    else:
        # absolute, so that `clean` and the report find them from any directory
        input_list = [str(Path(p).resolve()) if Path(p).exists() else str(p) for p in inputs]
        if len(input_list) == 1 and is_store(input_list[0]):
            store = TokenStore.open(input_list[0])
            store_path = Path(input_list[0])
        elif (config.reuse and config.spark_master is None and is_store(store_dir)
              and same_inputs(store_dir, input_list, config.input_options)):
            say(f"reusing the token store in {store_dir}")
            store = TokenStore.open(store_dir)
            store_path = store_dir
        elif config.spark_master is not None:
            # no store: the executors write the corpus dataset (Spark order) and the
            # driver reads its small columns (repetend.spark.corpus, TableCorpus)
            from .scan_spark import corpus as spark_corpus
            from .scan_spark import start as spark_start

            spark, spark_cols = spark_start(config, quiet=quiet, say=say)
            with wd.stage("tokenize"):
                store, corpus_df = spark_corpus(spark, input_list, out, config, spark_cols,
                                                say=say)
            store_path = store.path
        else:
            from ..corpus import load as corpus_load

            say("tokenizing …")
            with wd.stage("tokenize"):
                store = corpus_load.load_corpus(input_list, out=store_dir, quiet=quiet,
                                                **config.input_options)
            write_json(store_dir / INPUTS_STAMP, inputs_stamp(input_list, config.input_options))
            store_path = store_dir
    timings["tokenize"] = time.perf_counter() - t0
    # the other engine's copy of the corpus, left by an earlier scan into this
    # directory, is not this scan's: removed, so nothing reads it for this one
    other = out / (STORE if config.spark_master is not None else CORPUS)
    if other.is_dir() and (store_path is None or Path(store_path).resolve() != other.resolve()):
        shutil.rmtree(other)
    if store.n_docs == 0:
        from ..errors import InputError

        raise InputError("the corpus has no documents", path=", ".join(input_list) or None)

    asked = pcfg0.min_docs if pcfg0 is not None else None
    min_docs, min_docs_rule = ((asked, "given") if asked is not None else choose_min_docs(store))
    fingerprint = {"documents": store.n_docs, "tokens": store.n_tokens,
                   # a Spark corpus dataset's digest of ids and texts (a URI input has
                   # no file sizes and times to tell a changed corpus)
                   **({"digest": store.summary["digest"]} if "digest" in store.summary else {}),
                   "store": str(Path(store_path).resolve()) if store_path else None,
                   "inputs": json.loads(json.dumps(inputs_stamp(input_list, config.input_options)))
                   if input_list and not isinstance(inputs, TokenStore) else None}
    params = _params(config, min_docs, min_docs_rule, store.unit)
    note_estimates(wd, estimate_stages(config, store.n_tokens, store.n_docs), say)
    _drop_stale_stages(out, config, store, fingerprint, say)
    result = ScanResult(out=out, store=store, summary={})

    # -- 2. near-duplicates (first: phrase df may count its clusters) -----------------
    if ncfg0 is not None:
        t0 = time.perf_counter()
        ddir = out / DUPS
        dparams = {k: params[k] for k in ("dups_method", "threshold", "shingle", "num_perm")}
        dparams["corpus"] = fingerprint
        if config.reuse and same_params(ddir, dparams):
            say("reusing near-duplicates")
        else:
            from ..neardup import find_near_duplicates

            say(f"finding near-duplicates ({ncfg0.method}, t = {ncfg0.threshold}) …")
            ncfg = ncfg0
            if ncfg.method == "minhash" and config.memory_limit is not None:
                from .scan_memory import dups_fit_in_memory

                fits, why = dups_fit_in_memory(config.memory_limit, store.n_tokens, store.n_docs)
                say(f"near-duplicates {why}")
                if not fits:
                    ncfg = replace(ncfg, memory_limit=config.memory_limit)
            with wd.stage("dups"):
                if spark is not None:
                    from .scan_spark import near_duplicates as spark_dups

                    res = spark_dups(spark, corpus_df, ncfg, config, say)
                else:
                    res = find_near_duplicates(store, ncfg)
            with wd.stage("dups tables"):
                res.write(ddir)
                recall = _measured_recall(store, ddir) if config.report else None
            if recall is not None:
                res.summary["measured_recall"] = recall
            write_stamp(ddir, dparams, **({"measured_recall": recall} if recall is not None else {}))
            result.dups = res
        timings["dups"] = time.perf_counter() - t0
        if asked is None and params["df_over"] == "clusters":
            # σ over the distinct documents the phrases' df counts (choose_min_docs)
            dropped = read_json(ddir / SUMMARY).get("duplicates_to_drop")
            if dropped is not None:
                min_docs, min_docs_rule = choose_min_docs(store, n_distinct=store.n_docs - int(dropped))
                params.update(min_docs=min_docs, min_docs_rule=min_docs_rule)

    # -- 3. boilerplate phrases --------------------------------------------------------
    if pcfg0 is not None:
        t0 = time.perf_counter()
        pdir = out / PHRASES
        pparams = {k: params[k] for k in ("min_docs", "min_len", "engine", "templates",
                                          "template_parts", "max_gap", "template_min_span",
                                          "template_prune", "template_merge_variants",
                                          "template_ends") + _OPTIONAL_TEMPLATE_KEYS
                   if k in params}
        pparams["corpus"] = fingerprint
        groups = None
        if params["df_over"] == "clusters":
            # counted over the clusters just found (or reused): read back from dups/,
            # checked against this store; the clustering is part of the reuse key
            from .clusters import cluster_groups

            groups = cluster_groups(out / DUPS, store)
            pparams.update(df_over="clusters", dups={k: params[k] for k in (
                "dups_method", "threshold", "shingle", "num_perm")},
                groups=int(np.unique(groups).size), groups_sha1=_labels_digest(groups))
        elif config.df_over == "clusters":
            say("no near-duplicate stage (--no-dups): phrase df counts documents, not clusters")
        if (config.reuse and same_params(pdir, pparams)
                and not (pcfg0.templates is not None and templates_cut(pdir))):
            say("reusing phrases")
        else:
            from ..phrases import find_phrases

            say(f"mining phrases (σ = {min_docs}, L = {pcfg0.min_len}) …")
            pcfg = replace(pcfg0, min_docs=min_docs,
                           memory_limit=(config.memory_limit if config.memory_limit is not None
                                         else pcfg0.memory_limit),
                           df_over="clusters" if groups is not None else "documents")
            with wd.stage("phrases"):
                if spark is not None:
                    from .scan_spark import phrases as spark_phrases

                    res = spark_phrases(spark, corpus_df, pcfg, config, say, groups, out=out)
                else:
                    res = find_phrases(store, pcfg, groups=groups)
            if groups is None and config.df_over == "clusters":
                res.summary["df_over_note"] = ("df counts documents: the near-duplicate "
                                               "stage was skipped, so there are no clusters")
            with wd.stage("phrase tables"):
                res.write(pdir)
            write_stamp(pdir, pparams)
            result.phrases = res
        timings["phrases"] = time.perf_counter() - t0

    summary = {
        "command": command,
        **({"config_file": config_file} if config_file is not None else {}),
        "inputs": input_list,
        "store": str(Path(store_path).resolve()) if store_path else None,
        "input_format": config.input_options.get("fmt"),
        "input_options": {k: v for k, v in config.input_options.items()},
        "parameters": params,
        "stages": {"phrases": pcfg0 is not None, "dups": ncfg0 is not None,
                   "report": config.report},
        "corpus": dict(store.summary),
        "timings": timings,
        "peak_rss_mb": _peak_rss_mb(),
        "memory": wd.summary(),
    }
    if pcfg0 is not None and config.df_over == "clusters" and ncfg0 is None:
        summary["df_over_note"] = ("phrase df counts documents: the near-duplicate stage was "
                                   "skipped, so there are no clusters")
    write_json(out / SUMMARY, summary)

    # -- what clean would do to each document (documents.parquet) -------------------------
    if pcfg0 is not None or ncfg0 is not None:
        t0 = time.perf_counter()
        from ..clean import write_decisions
        from ..scandir import open_scan

        say("planning the cleaning of each document …")
        scan_dir = open_scan(out)
        if scan_dir.store is None:   # a store given in memory, saved nowhere
            scan_dir.store = store
        with wd.stage("decisions"):
            if spark is not None:   # decided on the executors, next to the texts
                from .scan_spark import decisions_columns

                write_decisions(scan_dir, columns=decisions_columns(spark, corpus_df, say))
            else:
                write_decisions(scan_dir)
        timings["decisions"] = time.perf_counter() - t0
        summary["memory"] = wd.summary()
        write_json(out / SUMMARY, summary)

    # -- 4. the report ---------------------------------------------------------------------
    if config.report:
        t0 = time.perf_counter()
        from ..report import build_report

        say("writing the report …")
        with wd.stage("report"):
            result.report = build_report(out, out / REPORT)
        timings["report"] = time.perf_counter() - t0
        summary["timings"] = timings
        summary["memory"] = wd.summary()
        write_json(out / SUMMARY, summary)
    result.summary = summary
    return result


class StaleReportWarning(UserWarning):
    """An earlier scan's ``report.html`` was removed (a scan without a report)."""


def _drop_stale_stages(out: Path, config: ScanConfig, store: TokenStore, fingerprint: dict,
                       say: Callable[[str], None]) -> None:
    """A stage not run this time whose directory was made from another corpus (an
    earlier scan into the same directory) no longer belongs to it: removed, so
    that the report and ``clean`` never read it as this corpus's.  Without a
    report this time, an earlier ``report.html`` is removed too (with a warning)."""
    have = {"documents": store.n_docs, "tokens": store.n_tokens}
    for stage, cfg in ((PHRASES, config.phrases), (DUPS, config.dups)):
        stamp = read_stamp(out / stage) if cfg is None else None
        if stamp is not None and stage_mismatch(stamp.get("corpus") or {}, have,
                                                fingerprint.get("inputs")):
            say(f"removing {stage}/: made from another corpus, and not run this time")
            shutil.rmtree(out / stage)
    if not config.report and (out / REPORT).is_file():
        # an earlier run's page: it shows that run's results, not this one's
        warnings.warn(f"removing {out / REPORT}: written by an earlier scan, and not rewritten "
                      "with --no-report", StaleReportWarning, stacklevel=3)
        (out / REPORT).unlink()


def _labels_digest(labels: np.ndarray) -> str:
    """A short fingerprint of a grouping (same partition of the documents, same
    digest: labels are renumbered in order of first appearance first)."""
    import hashlib

    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size, dtype=np.int64)
    return hashlib.sha1(rank[inv.reshape(-1)].tobytes()).hexdigest()[:16]


def _measured_recall(store: TokenStore, ddir: Path) -> dict | None:
    """The LSH S-curve measured on this corpus (for the report), when the written
    candidate list is complete and the corpus small enough for an exact join."""
    import pyarrow.parquet as pq

    from ..neardup.recall import RECALL_MAX_TOKENS, measured_recall

    if store.n_tokens > RECALL_MAX_TOKENS or not isinstance(store, TokenStore):
        return None   # (a Spark scan's corpus dataset has no token ids on the driver)
    dsum = read_json(ddir / SUMMARY)
    params = dsum.get("parameters") or {}
    k = params.get("shingle") or dsum.get("shingle_k")
    cand_file = ddir / "candidates.parquet"
    if (not (params.get("bands") or dsum.get("bands")) or not (params.get("rows") or dsum.get("rows"))
            or not cand_file.is_file() or not k or dsum.get("candidates_sampled")
            or dsum.get("pairs_not_enumerated")):
        return None
    if dsum.get("candidates_written") is not None and dsum.get("candidates") is not None \
            and dsum["candidates_written"] < dsum["candidates"]:
        return None
    try:
        cand = pq.read_table(cand_file, columns=["a_index", "b_index"])
        return measured_recall(store, cand.column("a_index").to_numpy(zero_copy_only=False),
                               cand.column("b_index").to_numpy(zero_copy_only=False), int(k))
    except Exception:  # noqa: BLE001 - a figure for the report is optional, the scan is not
        return None
