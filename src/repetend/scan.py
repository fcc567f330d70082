"""The main job: tokenize, mine phrases, find near-duplicates, write the report.

A scan directory holds everything one run produced::

    OUT/summary.json   the command, inputs, parameters, timings, corpus figures
    OUT/store/         the token store (reused by later runs, `clean` and the report)
    OUT/phrases/       phrases.parquet, documents.parquet, hosts.parquet, occurrences.parquet, summary.json
    OUT/dups/          pairs.parquet, clusters.parquet, containment.parquet, candidates.parquet, summary.json
    OUT/report.html    the self-contained report

Every stage can be skipped, and with ``reuse`` a stage whose output exists with
the same parameters is not run again.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ._atomic import write_json
from .corpus.read_base import STDIN
from .corpus.store import TokenStore
from .errors import ParameterError

__all__ = ["ScanConfig", "ScanResult", "choose_min_docs", "scan"]


@dataclass
class ScanConfig:
    """Parameters of :func:`scan`; ``None`` means "choose from the corpus"."""

    min_docs: int | None = None        # σ; None → :func:`choose_min_docs`
    min_len: int = 10                  # L
    engine: str = "auto"
    dups_method: str = "minhash"
    threshold: float = 0.8
    shingle: int = 5
    num_perm: int = 128
    templates: bool = True
    template_parts: bool = True
    max_gap: int = 4                   # templates: longest slot between fixed parts
    template_min_span: int | None = None   # templates: shortest template (None: L)
    template_prune: bool = False       # templates: leave out chains too short to hold one
    phrases: bool = True
    dups: bool = True
    report: bool = True
    reuse: bool = False
    spark_master: str | None = None    # run the phrase and near-duplicate stages on Spark
    memory_limit: str | int | None = None  # phrases and MinHash out of core under this memory
    input_options: dict = field(default_factory=dict)

    def validate(self) -> "ScanConfig":
        """Check every option of every stage (raise :class:`ParameterError`), so a
        bad one stops the scan before anything is read or written."""
        from ._memory import parse_size
        from .corpus.readers import FORMATS
        from .neardup import NearDupConfig
        from .phrases import PhraseConfig

        if self.engine not in ENGINES:
            raise ParameterError(f"engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        if self.engine == "spark" or self.spark_master:
            import importlib.util

            from .errors import MissingExtraError

            if importlib.util.find_spec("pyspark") is None:
                raise MissingExtraError("pyspark", "spark", "--engine spark")
        for name in ("templates", "template_parts", "phrases", "dups", "report", "reuse"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ParameterError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.min_docs is not None:
            _check_int("--min-docs", self.min_docs, 1)
        _check_int("--min-len", self.min_len, 1)
        parse_size(self.memory_limit)
        PhraseConfig(min_docs=1 if self.min_docs is None else self.min_docs, min_len=self.min_len,
                     engine="auto" if self.engine == "spark" else self.engine,
                     templates=self.templates, template_parts=self.template_parts,
                     max_gap=self.max_gap, template_min_span=self.template_min_span,
                     template_prune=self.template_prune).validate()
        _check_int("--shingle", self.shingle, 1)
        _check_int("--num-perm", self.num_perm, 1)
        ncfg = NearDupConfig(method=self.dups_method, threshold=self.threshold,
                             shingle=self.shingle, num_perm=self.num_perm).validate()
        if ncfg.method == "minhash":
            ncfg.banding()
        io = dict(self.input_options)
        unknown = set(io) - set(_INPUT_OPTIONS)
        if unknown:
            raise ParameterError(f"unknown input option(s) {', '.join(sorted(unknown))}; "
                                 f"known: {', '.join(_INPUT_OPTIONS)}")
        for name, allowed in (("fmt", FORMATS), ("unit", ("word", "code", "char")),
                              ("on_error", ("skip", "fail")), ("html", ("all", "main"))):
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
            from .corpus.code_tokens import _lexer_by_name

            _lexer_by_name(io["lang"].lower())
        return self


ENGINES = ("auto", "bloomspan", "suffix", "spark")
# ScanConfig.input_options keys and the CLI options they come from
_INPUT_OPTIONS = {"text_field": "--text-field", "id_field": "--id-field", "url_field": "--url-field",
                  "fmt": "--format", "glob": "--glob", "limit": "--limit", "on_error": "--on-error",
                  "html": "--html", "unit": "--unit", "lang": "--lang"}


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


def choose_min_docs(store: TokenStore) -> tuple[int, str]:
    """σ for a corpus, with the reason (seed 000 part 6: tie σ to the typical
    site size, not to the corpus size).

    * urls known: the typical site size S is the median, over documents, of the
      number of documents of their host (a page's template repeats on about
      that many pages); σ = clamp(⌊S / 4⌋, 3, 200), so that a block is found
      when a quarter of a typical site's pages carry it. (On the demo corpus,
      S/4 instead of S/2 finds 78 % of the planted template characters instead
      of 71 %, at the same 99.4 % precision; with L = 10 a phrase on a quarter
      of a site is rarely a quotation.)
    * no urls: σ = clamp(round(0.002 · N), 5, 200) for N documents — a phrase
      must be in 0.2 % of the corpus (and in at least 5 documents) to count as
      template rather than a quotation or a stock phrase.
    """
    n = store.n_docs
    if store.has_urls:
        hosts = store.docs.column("host").to_pandas()
        known = hosts.dropna()
        if len(known) >= max(1, n // 2):
            per_host = known.map(known.value_counts())
            s = float(np.median(per_host.to_numpy()))
            sigma = int(min(200, max(3, math.floor(s / 4))))
            return sigma, (f"urls known: median site size {s:g} pages → σ = clamp(⌊{s:g}/4⌋, 3, 200)"
                           f" = {sigma}")
    sigma = int(min(200, max(5, round(0.002 * n))))
    return sigma, f"no urls: {n} documents → σ = clamp(round(0.002·{n}), 5, 200) = {sigma}"


def _inputs_stamp(inputs: list[str], config: ScanConfig) -> dict:
    """What the store was made from: input files (size, mtime) and read options."""
    from .corpus.readers import expand_inputs

    try:
        files = expand_inputs(inputs, config.input_options.get("fmt"),
                              config.input_options.get("glob"))
    except Exception:  # noqa: BLE001 - an unreadable input just never matches
        files = []
    stamp = []
    for path, fmt in files:
        if str(path) == STDIN:  # no size or mtime: see _same_inputs
            stamp.append([STDIN, fmt, None, None])
            continue
        st = Path(path).stat()
        stamp.append([str(Path(path).resolve()), fmt, st.st_size, st.st_mtime_ns])
    return {"inputs": inputs, "files": stamp,
            "options": {k: v for k, v in sorted(config.input_options.items())}}


def _same_inputs(store_dir: Path, inputs: list[str], config: ScanConfig) -> bool:
    if STDIN in inputs:  # the standard input can differ from run to run
        return False
    try:
        old = json.loads((store_dir / "inputs.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return old == json.loads(json.dumps(_inputs_stamp(inputs, config)))


def _same_params(path: Path, params: dict) -> bool:
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return old.get("scan_parameters") == params


def _templates_cut(path: Path) -> bool:
    """Whether the memory limit cut the template layer of a stored phrases run
    (skipped, or merge-only where the default was asked): the memory at hand is
    not in the reuse key, so such a run is redone rather than reused."""
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    if "templates_skipped" in old:
        return True
    plan = (old.get("templates") or {}).get("memory_plan") or {}
    return plan.get("mode", plan.get("asked")) != plan.get("asked")


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def scan(inputs: Sequence[str | os.PathLike] | TokenStore, out: str | os.PathLike,
         config: ScanConfig | None = None, *, command: str | None = None, quiet: bool = True,
         log: Callable[[str], None] | None = None) -> ScanResult:
    """Run the whole pipeline on *inputs* (files, or one token store) into *out*."""
    from .cli._common import is_store, load_store

    config = (config or ScanConfig()).validate()
    if config.memory_limit is not None and (
            config.phrases or (config.dups and config.dups_method == "minhash")):
        # the out-of-core stages need room beyond what the process holds already
        # (and it only holds more once the corpus is read): refuse now, not after tokenizing
        from ._memory import format_size, parse_size, rss_now

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
        from .corpus.readers import expand_inputs

        given = [str(p) for p in inputs]
        if not given:
            raise ParameterError("no inputs given")
        if not (len(given) == 1 and is_store(given[0])):
            expand_inputs(given, config.input_options.get("fmt"), config.input_options.get("glob"))
    if config.spark_master or config.engine == "spark":
        if isinstance(inputs, TokenStore) or (len(inputs) == 1 and is_store(inputs[0])):
            raise ParameterError("--engine spark reads the corpus files (JSONL or Parquet), "
                                 "not a token store")
    if out.exists() and not out.is_dir():
        raise ParameterError(f"--out {out} exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}

    # -- 1. the token store --------------------------------------------------------
    t0 = time.perf_counter()
    store_dir = out / "store"
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
        elif config.reuse and is_store(store_dir) and _same_inputs(store_dir, input_list, config):
            say(f"reusing the token store in {store_dir}")
            store = TokenStore.open(store_dir)
            store_path = store_dir
        else:
            say("tokenizing …")
            store = load_store(input_list, out=store_dir, quiet=quiet, **config.input_options)
            write_json(store_dir / "inputs.json", _inputs_stamp(input_list, config))
            store_path = store_dir
    timings["tokenize"] = time.perf_counter() - t0
    if store.n_docs == 0:
        from .errors import InputError

        raise InputError("the corpus has no documents", path=", ".join(input_list) or None)

    min_docs, sigma_reason = ((config.min_docs, "given") if config.min_docs is not None
                              else choose_min_docs(store))
    fingerprint = {"documents": store.n_docs, "tokens": store.n_tokens,
                   "store": str(Path(store_path).resolve()) if store_path else None,
                   "inputs": json.loads(json.dumps(_inputs_stamp(input_list, config)))
                   if input_list and not isinstance(inputs, TokenStore) else None}
    params = {
        "min_docs": min_docs, "min_docs_rule": sigma_reason, "min_len": config.min_len,
        "engine": config.engine, "templates": config.templates,
        "template_parts": config.template_parts, "max_gap": config.max_gap,
        "template_min_span": config.template_min_span,
        "template_prune": config.template_prune, "dups_method": config.dups_method,
        "threshold": config.threshold, "shingle": config.shingle, "num_perm": config.num_perm,
        "unit": store.unit,
    }
    result = ScanResult(out=out, store=store, summary={})
    spark = None
    spark_cols: dict = {}
    if config.spark_master or config.engine == "spark":
        from .spark import local_session

        say(f"starting Spark ({config.spark_master or 'local[2]'}) …")
        spark = local_session(config.spark_master or "local[2]", "repetend scan")
        io = config.input_options
        spark_cols = {"id_col": io.get("id_field") or "id", "text_col": io.get("text_field") or "text",
                      "url_col": io.get("url_field") or "url"}

    # -- 2. boilerplate phrases --------------------------------------------------------
    if config.phrases:
        t0 = time.perf_counter()
        pdir = out / "phrases"
        pparams = {k: params[k] for k in ("min_docs", "min_len", "engine", "templates",
                                          "template_parts", "max_gap", "template_min_span",
                                          "template_prune")}
        pparams["corpus"] = fingerprint
        if (config.reuse and _same_params(pdir / "summary.json", pparams)
                and not (config.templates and _templates_cut(pdir / "summary.json"))):
            say("reusing phrases")
        else:
            from .phrases import PhraseConfig, find_phrases

            say(f"mining phrases (σ = {min_docs}, L = {config.min_len}) …")
            pcfg = PhraseConfig(min_docs=min_docs, min_len=config.min_len,
                                engine="auto" if config.engine == "spark" else config.engine,
                                templates=config.templates,
                                template_parts=config.template_parts,
                                max_gap=config.max_gap,
                                template_min_span=config.template_min_span,
                                template_prune=config.template_prune,
                                memory_limit=config.memory_limit)
            if spark is not None:
                from .spark import find_phrases as spark_phrases

                res = spark_phrases(spark, input_list, pcfg, **spark_cols)
                _same_order(res.documents, store, "phrases")
                if pcfg.templates and min_docs >= 2 and store.n_tokens:
                    # the pre-filter drops the text between frequent parts, so the
                    # template layer runs here, on the local store, over the exact
                    # phrases Spark found (global token positions of this store)
                    from .phrases.api import run_templates

                    say("finding templates with variable parts locally …")
                    frequent = round(res.summary["frequent_share"] * store.n_tokens)
                    res.templates, plan = run_templates(store, res.raw, pcfg, store.n_tokens,
                                                        frequent)
                    if res.templates is not None:
                        res.summary["templates"] = res.templates.summary
                    else:
                        res.summary["templates_skipped"] = plan
            else:
                res = find_phrases(store, pcfg)
            res.write(pdir)
            _stamp(pdir / "summary.json", pparams)
            result.phrases = res
        timings["phrases"] = time.perf_counter() - t0

    # -- 3. near-duplicates --------------------------------------------------------------
    if config.dups:
        t0 = time.perf_counter()
        ddir = out / "dups"
        dparams = {k: params[k] for k in ("dups_method", "threshold", "shingle", "num_perm")}
        dparams["corpus"] = fingerprint
        if config.reuse and _same_params(ddir / "summary.json", dparams):
            say("reusing near-duplicates")
        else:
            from .neardup import NearDupConfig, find_near_duplicates

            say(f"finding near-duplicates ({config.dups_method}, t = {config.threshold}) …")
            ncfg = NearDupConfig(method=config.dups_method, threshold=config.threshold,
                                 shingle=config.shingle, num_perm=config.num_perm,
                                 memory_limit=(config.memory_limit
                                               if config.dups_method == "minhash" else None))
            if spark is not None:
                from .spark import find_near_duplicates as spark_dups

                res = spark_dups(spark, input_list, ncfg, **spark_cols)
            else:
                res = find_near_duplicates(store, ncfg)
            res.write(ddir)
            _stamp(ddir / "summary.json", dparams)
            result.dups = res
        timings["dups"] = time.perf_counter() - t0

    summary = {
        "command": command,
        "inputs": input_list,
        "store": str(Path(store_path).resolve()) if store_path else None,
        "input_format": config.input_options.get("fmt"),
        "input_options": {k: v for k, v in config.input_options.items()},
        "parameters": params,
        "stages": {"phrases": config.phrases, "dups": config.dups, "report": config.report},
        "corpus": dict(store.summary),
        "timings": timings,
        "peak_rss_mb": _peak_rss_mb(),
    }
    write_json(out / "summary.json", summary)

    # -- 4. the report ---------------------------------------------------------------------
    if config.report:
        t0 = time.perf_counter()
        from .report import build_report

        say("writing the report …")
        result.report = build_report(out, out / "report.html")
        timings["report"] = time.perf_counter() - t0
        summary["timings"] = timings
        write_json(out / "summary.json", summary)
    result.summary = summary
    return result


def _same_order(documents, store: TokenStore, stage: str) -> None:
    """Spark numbers documents by id; the report and `clean` use the store's
    read order. Refuse results whose order differs rather than mislabel them."""
    ids = documents.column("doc_id").to_pylist()
    if ids != store.doc_ids:
        raise ParameterError(
            f"Spark numbered the documents in another order than the input ({stage}); "
            "with --engine spark the input must be sorted by id (or use the local engine)")


def _stamp(path: Path, params: dict) -> None:
    """Record the scan parameters a stage ran with, for ``reuse``."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data["scan_parameters"] = params
    write_json(path, data)

