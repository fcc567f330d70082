"""The options the subcommands share, and the one place they become configs and a token store."""

from __future__ import annotations

import math

import click

from ..limits import (MAX_DOCS, MAX_GAP, MAX_LEN, MAX_LIST, MAX_NUM_PERM, MAX_SECONDS, MAX_SEED,
                      MAX_SHINGLE)

__all__ = ["DOCS", "INPUT_KEYS", "LENGTH", "LIST", "MAX_DOCS", "MAX_LIST", "NUM_PERM", "Real",
           "SECONDS", "SEED", "SHARE", "SHINGLE", "UNIT", "input_kwargs", "input_options",
           "load_corpus", "neardup_config", "phrase_config", "scan_config", "template_config",
           "template_options"]


def input_options(fn):
    """The options every command that reads a corpus accepts."""
    opts = [
        click.option("--text-field", default="text", show_default=True,
                     help="Field/column holding the document text (JSONL, Parquet, CSV)."),
        click.option("--id-field", default="id", show_default=True,
                     help="Field/column holding the document id (missing: file + record number)."),
        click.option("--url-field", default="url", show_default=True,
                     help="Field/column holding the document url (optional)."),
        click.option("--format", "fmt", default=None,
                     type=click.Choice(["jsonl", "parquet", "csv", "tsv", "text", "warc", "wet", "arrow"]),
                     help="Input format (default: from the file name)."),
        click.option("--glob", "glob", default=None,
                     help="For a directory of text files: which files to read (e.g. '**/*.md')."),
        click.option("--limit", type=DOCS, default=None,
                     help="Read at most this many documents."),
        click.option("--html", type=click.Choice(["all", "main"]), default="all",
                     show_default=True,
                     help="WARC pages: keep all visible text (like WET) or only the main content."),
        click.option("--on-error", type=click.Choice(["skip", "fail"]), default="skip",
                     show_default=True, help="Malformed records: count and skip, or stop."),
        click.option("--duplicate-ids", type=click.Choice(["fail", "rename"]), default="fail",
                     show_default=True,
                     help="A document id seen before: stop naming it, or rename it id#2, id#3, …"),
        click.option("--unit", type=click.Choice(["word", "code", "char"]), default="word",
                     show_default=True, help="Tokens: words, programming-language tokens, or characters."),
        click.option("--lang", default=None, help="Lexer for --unit code (default: from the file extension)."),
        click.option("--lang-detect", "lang_detect", is_flag=True,
                     help="Detect each document's language (py3langid; extra 'lang') and keep it "
                          "in the store's document table (column language)."),
        click.option("--quiet", "-q", is_flag=True, help="No progress output."),
    ]
    for o in reversed(opts):
        fn = o(fn)
    return fn


class Real(click.FloatRange):
    """A :class:`click.FloatRange` that refuses ``nan`` too (nan compares false
    with every bound, so a plain FloatRange lets it through)."""

    def convert(self, value, param, ctx):
        rv = super().convert(value, param, ctx)
        if math.isnan(rv):
            self.fail(f"{value!r} is not a number.", param, ctx)
        return rv


# The ranges of the numeric options (shown in --help): the library's bounds
# (repetend.limits), so that the API refuses what the command line refuses.
NUM_PERM = click.IntRange(1, MAX_NUM_PERM)
SHARE = Real(0.0, 1.0, min_open=True)           # thresholds and shares in (0, 1]
UNIT = Real(0.0, 1.0)                           # weights and probabilities in [0, 1]
DOCS = click.IntRange(1, MAX_DOCS)
LENGTH = click.IntRange(1, MAX_LEN)
LIST = click.IntRange(1, MAX_LIST)
SHINGLE = click.IntRange(1, MAX_SHINGLE)
SEED = click.IntRange(0, MAX_SEED)
SECONDS = Real(0.0, MAX_SECONDS, min_open=True)  # time budgets of the service


class SlottedSpan(click.ParamType):
    """``--template-slotted-span``: ``auto`` (the layer's default, L' + 2),
    ``off`` or 0 (off), or a span of 1 … MAX_LEN tokens."""

    name = "auto|off|K"

    def convert(self, value, param, ctx):
        if isinstance(value, int) and not isinstance(value, bool):
            text = str(value)
        elif isinstance(value, str):
            text = value.strip().lower()
        else:
            text = repr(value)
        if text == "auto":
            return "auto"
        if text in ("off", "0"):
            return 0
        try:
            v = int(text)
        except ValueError:
            self.fail(f"{value!r} is not auto, off or an integer.", param, ctx)
        if not 1 <= v <= MAX_LEN:
            self.fail(f"{value!r} is not auto, off or in the range 1<=x<={MAX_LEN}.", param, ctx)
        return v


SLOTTED_SPAN = SlottedSpan()

INPUT_KEYS = ("text_field", "id_field", "url_field", "fmt", "glob", "limit", "on_error", "html",
              "duplicate_ids", "unit", "lang", "lang_detect")


def load_corpus(inputs, *, out=None, quiet=False, check=True, **opts):
    """The token store of *inputs*, with a tokenizing progress bar on stderr
    unless *quiet* (:func:`repetend.corpus.load.load_corpus`).

    With *check* (the default), records the readers skipped are counted on one
    ``warning:`` line on stderr (quiet or not: nothing is lost silently), and a
    corpus with no document is an error naming the inputs."""
    from ..corpus import load
    from ..corpus.store import is_store
    from ..errors import InputError

    inputs = list(inputs)
    tokenized = not (len(inputs) == 1 and is_store(inputs[0]))
    store = load.load_corpus(inputs, out=out, quiet=quiet, **opts)
    if check:
        issues = read_issues(store.summary.get("read") or {}) if tokenized else None
        if issues and store.n_docs:
            click.echo(f"warning: {issues}", err=True)
        if store.n_docs == 0:
            raise InputError("the corpus has no documents" + (f" ({issues})" if issues else ""),
                             path=", ".join(str(i) for i in inputs) or None)
    return store


def read_issues(read: dict) -> str | None:
    """One line of what the readers skipped or repaired (a store's ``read`` counts),
    with the first message; None when nothing was."""
    parts = [f"{read[k]:,} {label}" for k, label in (
        ("malformed", "malformed records skipped"), ("empty", "empty documents"),
        ("invalid_utf8", "with invalid UTF-8 (replaced)"),
        ("skipped_binary", "binary files skipped"),
        ("skipped_non_response", "WARC records not HTML responses")) if read.get(k)]
    if not parts:
        return None
    errors = read.get("errors") or []
    return ", ".join(parts) + (f"; first: {errors[0]}" if errors else "")


def input_kwargs(kw: dict) -> dict:
    """The read and tokenizer options among a command's keyword arguments
    (``duplicate_ids`` only when not the default, so that the recorded options of
    a run that does not use it stay as they were)."""
    return {k: kw[k] for k in INPUT_KEYS
            if k in kw and not (k == "duplicate_ids" and kw[k] == "fail")
            and not (k == "lang_detect" and not kw[k])}


def template_options(fn):
    """The template-layer options of ``scan`` and ``phrases`` (see :func:`template_config`)."""
    opts = [
        click.option("--no-templates", is_flag=True,
                     help="Skip templates with variable parts (slots) after the exact phrases."),
        click.option("--max-gap", type=click.IntRange(0, MAX_GAP), default=4, show_default=True,
                     help="Templates: the longest variable part between fixed parts, in tokens."),
        click.option("--template-min-span", type=LENGTH, default=None,
                     help="Templates: the shortest template in tokens, slots included "
                          "(default: --min-len); lower it for short signatures such as "
                          "'Posted by ▢ on ▢'."),
        click.option("--template-slotted-span", type=SLOTTED_SPAN, default="auto",
                     show_default=True,
                     help="Templates: the shortest template that has a slot, in tokens. auto: "
                          "the part length + 2 (6 for --min-len 10), so that a short footer "
                          "or listing is found alone ('© ▢ Northlab Company. All rights "
                          "reserved', 'Showing ▢-▢ of ▢ items'); such a short template may "
                          "have number and word slots, not gaps. off (or 0): "
                          "--template-min-span for all, the tables of the layer before this "
                          "default (about 0.8x the layer's CPU on natural text; "
                          "docs/templates.md)."),
        click.option("--template-search-whole/--no-template-search-whole", default=True,
                     show_default=True,
                     help="Templates: search every template found on >= --min-docs documents "
                          "over the whole corpus, its slots open to any word or number, so "
                          "that the instances whose slot values hid its fixed parts (an "
                          "author's name next to 'Posted by') are found too; occurrences "
                          "found before take precedence. --no-template-search-whole: the "
                          "tables before this default, about 10-20% less layer CPU "
                          "(docs/templates.md)."),
        click.option("--template-variant-evidence/--no-template-variant-evidence",
                     default=True, show_default=True,
                     help="Templates: keep a template with one fixed word when it merges "
                          "variants that each have two or more ('Автор: ▢ ▢, ▢ ▢ ▢': the "
                          "author's name fixed in each variant) and at most half of its slots "
                          "are numbers. --no-template-variant-evidence: two fixed tokens for "
                          "all, the tables before this default (docs/templates.md)."),
        click.option("--template-prune", is_flag=True,
                     help="Templates: leave out runs of frequent 4-grams too short to hold a template (common phrases recurring by chance): 13-22% cheaper on natural text, but a few joins are lost (docs/templates.md)."),
        click.option("--template-variants", is_flag=True,
                     help="Templates: keep the variants a frequent slot value splits a template into (a city on many of a footer's pages), instead of one template whose slot lists that value (docs/templates.md)."),
        click.option("--no-template-ends", is_flag=True,
                     help="Templates: do not extend templates by the short fixed parts and slots that recur at their ends ('Posted by ▢' before '▢ on ▢.▢.▢')."),
        click.option("--template-parts/--no-template-parts", default=True, show_default=True,
                     help="Templates may also have fixed parts shorter than --min-len (numbers inside a long footer, 'Showing 1-20 of 345 items'). --no-template-parts only chains the exact phrases across short gaps: about 0.35x the mining time instead of 2-4x on natural text (0.25x on web-like text), for less coverage."),
    ]
    for o in reversed(opts):
        fn = o(fn)
    return fn


def template_config(kw: dict):
    """The :class:`~repetend.phrases.templates.TemplateConfig` of the template
    options (None with ``--no-templates``)."""
    from ..phrases.templates import TemplateConfig

    if kw["no_templates"]:
        return None
    return TemplateConfig(max_gap=kw["max_gap"], min_span=kw["template_min_span"],
                          slotted_min_span=kw.get("template_slotted_span", "auto"),
                          prune=kw["template_prune"], short_parts=kw["template_parts"],
                          merge_variants=not kw.get("template_variants", False),
                          ends=not kw.get("no_template_ends", False),
                          search_whole=kw.get("template_search_whole", True),
                          variant_evidence=kw.get("template_variant_evidence", True))


def phrase_config(kw: dict, **extra):
    """The :class:`~repetend.phrases.PhraseConfig` of ``--min-docs``, ``--min-len``,
    the engine, the memory limit and the template options (*extra*: more fields)."""
    from ..phrases import PhraseConfig

    return PhraseConfig(min_docs=kw["min_docs"], min_len=kw["min_len"],
                        engine="auto" if kw["engine"] == "spark" else kw["engine"],
                        templates=template_config(kw), memory_limit=kw["memory_limit"], **extra)


# NearDupConfig fields that a command's options carry under the same name
_NEARDUP_KEYS = ("method", "threshold", "shingle", "num_perm", "bands", "rows", "scheme", "bbits",
                 "min_shingles", "containment", "stopwords", "stem", "lemmatize", "lemma_keys", "hamming", "simhash_blocks",
                 "simhash_weights", "memory_limit")


def neardup_config(kw: dict):
    """The :class:`~repetend.neardup.NearDupConfig` of the near-duplicate options
    among *kw* (``dups``, ``index build``): ``--hash`` is ``hash``, no ``--seed``
    the default seed, ``--max-bucket 0`` no cap; options a command lacks keep
    their defaults."""
    from ..neardup import NearDupConfig
    from ..neardup.minhash import DEFAULT_SEED

    args = {k: kw[k] for k in _NEARDUP_KEYS if k in kw}
    if "hash_" in kw:
        args["hash"] = kw["hash_"]
    if "seed" in kw:
        args["seed"] = DEFAULT_SEED if kw["seed"] is None else kw["seed"]
    if "max_bucket" in kw:
        args["max_bucket"] = kw["max_bucket"] or None
    return NearDupConfig(**args)


def scan_config(kw: dict):
    """The :class:`~repetend.jobs.ScanConfig` of ``repetend scan``'s options."""
    from ..jobs import ScanConfig

    spark = kw["spark_master"] or ("local[2]" if kw["engine"] == "spark" else None)
    pcfg = phrase_config({**kw, "memory_limit": None})
    ncfg = neardup_config({"method": kw["dups_method"], "threshold": kw["threshold"],
                           "shingle": kw["shingle"], "num_perm": kw["num_perm"]})
    if kw["no_phrases"]:   # a skipped stage's options are still checked, as the others
        pcfg.validate()
    if kw["no_dups"]:
        ncfg.validate()
        if ncfg.method == "minhash":
            ncfg.banding()
    return ScanConfig(
        phrases=None if kw["no_phrases"] else pcfg, dups=None if kw["no_dups"] else ncfg,
        report=not kw["no_report"], reuse=kw["reuse"], spark_master=spark,
        memory_limit=kw["memory_limit"], input_options=input_kwargs(kw),
        df_over=kw.get("df_over", "clusters"))
