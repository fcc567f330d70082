"""``repetend scan`` (the main job) and ``repetend demo`` (it, on the bundled corpus)."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import click

from .options import (DOCS, LENGTH, NUM_PERM, SEED, SHARE, SHINGLE, input_options, scan_config,
                      template_options)

__all__ = ["COMMANDS"]


def _print_summary(res, echo=click.echo) -> None:
    s = res.summary
    c = s["corpus"]
    echo(f"corpus: {c.get('documents', 0):,} documents, {c.get('tokens', 0):,} tokens")
    read = c.get("read") or {}
    skipped = {k: read.get(k) for k in ("malformed", "empty", "invalid_utf8") if read.get(k)}
    if skipped:
        echo("  input issues: " + ", ".join(f"{k} {v}" for k, v in skipped.items()))
    p = s["parameters"]
    if res.phrases is not None:
        ps = res.phrases.summary
        over = p.get("df_over", "documents")
        n_groups = (ps.get("parameters") or {}).get("groups")
        echo(f"boilerplate (σ = {p['min_docs']}, L = {p['min_len']}; {p['min_docs_rule']}; "
             + (f"df over {n_groups:,} clusters" if over == "clusters" and n_groups is not None
                else "df over documents") + "):")
        if ps.get("df_over_note"):
            echo(f"  {ps['df_over_note']}")
        echo(f"  {ps.get('frequent_share', 0):.1%} of all tokens lie inside frequent phrases; "
             f"the {ps.get('phrases', 0):,} maximal phrases' occurrences cover "
             f"{ps.get('covered_share', 0):.1%}")
        if "templates" in ps:
            t = ps["templates"]
            echo(f"  {t.get('templates', 0):,} templates with variable parts (slots)")
            if (t.get("memory_plan") or {}).get("reason"):
                echo(f"  templates: {t['memory_plan']['reason']}")
        elif "templates_skipped" in ps:
            echo(f"  templates skipped: {ps['templates_skipped']['reason']}")
        echo("  the biggest index eaters (psi = length × df):")
        for e in (ps.get("index_eaters") or [])[:5]:
            text = " ".join(str(e.get("text", "")).split())
            text = text if len(text) <= 90 else text[:87] + "…"
            echo(f"  psi {e.get('psi'):>8,}  df {e.get('df'):>6,}  {text!r}")
    if res.dups is not None:
        ds = res.dups.summary
        echo(f"near-duplicates ({p['dups_method']}, J ≥ {p['threshold']}):")
        echo(f"  {ds.get('verified_pairs', 0):,} pairs in {ds.get('clusters', 0):,} clusters "
             f"holding {ds.get('documents_in_clusters', 0):,} documents "
             f"({ds.get('candidates', 0):,} candidates checked)")
    t = s["timings"]
    echo("time: " + ", ".join(f"{k} {v:.1f}s" for k, v in t.items()))
    if res.report is not None:
        echo(f"report: {res.report}")


def _load_config(ctx, param, value):
    """``--config FILE.toml``: every option of ``scan`` (and ``inputs``) from a TOML
    file, top level or under ``[scan]``, as the defaults the command line overrides."""
    if value is None:
        return None
    import tomllib

    path = Path(value)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise click.BadParameter(f"{path}: {exc}", ctx, param) from None
    table = data.get("scan", data) if isinstance(data.get("scan"), dict) else data
    by_key = {}
    for p in ctx.command.params:
        if p.name == "config":
            continue
        by_key[p.name] = p
        for o in getattr(p, "opts", []):
            if o.startswith("--"):
                by_key[o[2:].replace("-", "_")] = p
    defaults = {}
    for k, v in table.items():
        p = by_key.get(str(k).replace("-", "_"))
        if p is None:
            known = sorted({q.name for q in ctx.command.params if q.name != "config"})
            raise click.BadParameter(f"{path}: unknown option {k!r}; options: {', '.join(known)}",
                                     ctx, param)
        defaults[p.name] = [str(x) for x in v] if p.name == "inputs" and isinstance(v, list) else v
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    ctx.meta["repetend.scan.config_file"] = {"path": str(path.resolve()), "options": table}
    return value


def _scan_options(fn):
    opts = [
        click.option("--config", type=click.Path(exists=True, dir_okay=False), is_eager=True,
                     expose_value=False, callback=_load_config,
                     help="Options from a TOML file (top level or a [scan] table; keys are the "
                          "option names, e.g. min-docs = 20, inputs = [\"a.jsonl\"]); the command "
                          "line overrides them; recorded in summary.json."),
        click.option("--out", "-o", required=True, type=click.Path(file_okay=False),
                     help="Scan directory to write."),
        click.option("--min-docs", type=DOCS, default=None,
                     help="σ: a phrase must be in at least this many documents "
                          "(default: from the typical site size, or without urls 0.2% of the "
                          "distinct documents, at least 5; docs/sigma.md)."),
        click.option("--min-len", type=LENGTH, default=10, show_default=True,
                     help="L: shortest phrase reported, in tokens."),
        click.option("--engine", type=click.Choice(["auto", "bloomspan", "suffix", "spark"]),
                     default="auto", show_default=True,
                     help="Phrase engine; 'spark' runs phrases and near-duplicates on Apache Spark "
                          "(pip install 'repetend[spark]', Java 17)."),
        click.option("--memory-limit", default=None,
                     help="Keep every stage under this much private memory (e.g. 8G): "
                          "phrases (and MinHash when it does not fit) out of core, spill files "
                          "in $TMPDIR (default /tmp); a stage over it stops the scan with an "
                          "error naming it, writing nothing partial (docs/scale.md)."),
        click.option("--spark-master", default=None,
                     help="Spark master URL for --engine spark (default local[2])."),
        click.option("--method", "dups_method",
                     type=click.Choice(["minhash", "allpairs", "broder", "exact", "simhash"]),
                     default="minhash", show_default=True, help="Near-duplicate method."),
        click.option("--threshold", type=SHARE, default=0.8, show_default=True,
                     help="Jaccard threshold for near-duplicates."),
        click.option("--shingle", type=SHINGLE, default=5, show_default=True,
                     help="Shingle size k (tokens)."),
        click.option("--num-perm", type=NUM_PERM, default=128, show_default=True,
                     help="MinHash signature length K."),
        click.option("--df-over", "df_over", type=click.Choice(["clusters", "documents"]),
                     default="clusters", show_default=True,
                     help="What a phrase's df counts: the near-duplicate clusters found first "
                          "(each cluster once, so copies of one text are one witness), or every "
                          "document. Without the near-duplicate stage: documents."),
        click.option("--no-phrases", is_flag=True, help="Skip boilerplate mining."),
        click.option("--no-dups", is_flag=True, help="Skip near-duplicate detection."),
        click.option("--no-report", is_flag=True, help="Skip the HTML report."),
        click.option("--reuse", is_flag=True,
                     help="Reuse the store and stage outputs already in --out when their "
                          "parameters match."),
    ]
    for o in reversed(opts):
        fn = o(fn)
    return fn


@click.command()
@click.argument("inputs", nargs=-1)
@_scan_options
@template_options
@input_options
def scan(inputs, out, quiet, **kw):
    """Find boilerplate phrases and near-duplicate documents in INPUTS (files,
    directories, globs, or one token store) and write everything to --out."""
    from ..jobs import scan as run

    if not inputs:
        raise click.UsageError("give INPUTS (files, directories, globs or a token store), or "
                               "inputs = [...] in --config")
    command = "repetend " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    log = (lambda m: None) if quiet else (lambda m: click.echo(m, err=True))
    config_file = click.get_current_context().meta.get("repetend.scan.config_file")
    res = run(list(inputs), out, scan_config(kw), command=command, quiet=quiet, log=log,
              config_file=config_file, hard_memory_stop=True)
    _print_summary(res)


@click.command()
@click.option("--out", "-o", default="demo-out", show_default=True,
              type=click.Path(file_okay=False), help="Where to write the corpus and the scan.")
@click.option("--pages", type=click.IntRange(1, 1_000_000), default=3000, show_default=True,
              help="Pages in the generated web-like corpus.")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--quiet", "-q", is_flag=True)
def demo(out, pages, seed, quiet):
    """Generate the bundled web-like corpus, scan it, and compare with its ground truth."""
    from ..jobs import run_demo

    t0 = time.perf_counter()
    log = (lambda m: None) if quiet else (lambda m: click.echo(m, err=True))
    res, truth_lines = run_demo(Path(out), pages=pages, seed=seed, log=log)
    _print_summary(res)
    for line in truth_lines:
        click.echo(line)
    click.echo(f"demo finished in {time.perf_counter() - t0:.1f}s; open {res.report}")


COMMANDS = [scan, demo]
