"""``repetend phrases``: boilerplate phrases of a corpus and their coverage."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import INPUT_KEYS, input_options, load_store

__all__ = ["COMMANDS", "phrases"]


def _short(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


@click.command("phrases")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...|STORE")
@click.option("--min-docs", "-s", "min_docs", type=int, default=20, show_default=True,
              help="σ: a phrase is frequent when at least this many documents contain it.")
@click.option("--min-len", "-L", "min_len", type=int, default=10, show_default=True,
              help="L: report maximal frequent phrases of at least this many tokens.")
@click.option("--engine", type=click.Choice(["auto", "bloomspan", "suffix"]), default="auto",
              show_default=True, help="Mining engine (all give the same phrases).")
@click.option("--near-full", "near_full_share", type=float, default=0.8, show_default=True,
              help="Documents with at least this boilerplate share are drop candidates.")
@click.option("--top", "top_k", type=int, default=10, show_default=True,
              help="Index eaters (phrases by length x df) to print and keep in the summary.")
@click.option("--no-templates", is_flag=True,
              help="Do not look for templates with variable parts (slots).")
@click.option("--max-gap", type=click.IntRange(min=0), default=4, show_default=True,
              help="Templates: the longest variable part between fixed parts, in tokens.")
@click.option("--template-min-span", type=click.IntRange(min=1), default=None,
              help="Templates: the shortest template in tokens, slots included (default: "
                   "--min-len); lower it for short signatures such as 'Posted by ▢ on ▢'.")
@click.option("--template-prune", is_flag=True,
              help="Templates: leave out runs of frequent 4-grams too short to hold a template (common phrases recurring by chance): 13-22% cheaper on natural text, but a few joins are lost (docs/templates.md).")
@click.option("--template-parts/--no-template-parts", default=True, show_default=True,
              help="Templates may also have fixed parts shorter than --min-len (numbers inside a long footer, 'Showing 1-20 of 345 items'). --no-template-parts only chains the exact phrases across short gaps: about 0.35x the mining time instead of 2-4x on natural text (0.25x on web-like text), for less coverage.")
@click.option("--memory-limit", default=None,
              help="Mine out of core under this much private memory (e.g. 8G): bloomspan in "
                   "shards over the memory-mapped store, seeds spilled to disk ($TMPDIR, "
                   "default /tmp).")
@click.option("--seed-len", type=int, default=None, help="bloomspan: seed length.")
@click.option("--filter-bytes", type=int, default=None, help="bloomspan: counting filter size.")
@click.option("--out", "-o", "out", type=click.Path(file_okay=False, path_type=Path),
              required=True, help="Directory for phrases, documents, hosts, occurrences, summary.")
@click.option("--out-format", "out_format", type=click.Choice(["parquet", "jsonl"]),
              default="parquet", show_default=True, help="Format of the output tables.")
@click.option("--store", "store_out", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Also keep the tokenized corpus as a token store here.")
@input_options
def phrases(inputs, min_docs, min_len, engine, near_full_share, top_k, no_templates, max_gap,
            template_min_span, template_prune, template_parts, memory_limit, seed_len, filter_bytes, out, out_format, store_out, quiet, **opts):
    """Find the maximal phrases that repeat across at least --min-docs documents
    (seed 000) and write them with per-document and per-host coverage to --out.

    INPUT is a corpus (JSONL, Parquet, CSV/TSV, WARC/WET, a directory of text
    files) or one token store made by ``repetend tokenize``.
    """
    from ..phrases import PhraseConfig, find_phrases

    cfg = PhraseConfig(min_docs=min_docs, min_len=min_len, engine=engine,
                       near_full_share=near_full_share, top_k=max(top_k, 0), seed_len=seed_len,
                       filter_bytes=filter_bytes, templates=not no_templates,
                       max_gap=max_gap, template_parts=template_parts,
                       template_min_span=template_min_span,
                       template_prune=template_prune,
                       memory_limit=memory_limit).validate()
    store = load_store(inputs, out=store_out, quiet=quiet,
                       **{k: opts[k] for k in INPUT_KEYS if k in opts})
    if not quiet:
        click.echo(f"mining {store.n_tokens:,} tokens in {store.n_docs:,} documents "
                   f"(sigma={cfg.min_docs}, L={cfg.min_len}, engine={cfg.engine})", err=True)
    res = find_phrases(store, cfg)
    res.write(out, format=out_format)
    s = res.summary
    click.echo(f"engine: {s['engine']} ({s['engine_choice'].get('rule', '')}), "
               f"{s['timings']['total']:.2f} s, peak memory {s['peak_memory_bytes'] / 2**20:.0f} MiB")
    click.echo(f"phrases: {s['phrases']:,}   occurrences: {s['occurrences']:,}")
    click.echo(f"covered: {s['covered_tokens']:,} of {s['tokens']:,} tokens "
               f"({100 * s['covered_share']:.2f}% of the corpus) by the phrases' occurrences; "
               f"{100 * s['frequent_share']:.2f}% inside any frequent phrase of >= L tokens")
    if "templates" in s:
        t = s["templates"]
        click.echo(f"templates with slots: {t.get('templates', 0):,}")
        if (t.get("memory_plan") or {}).get("reason"):
            click.echo(f"templates: {t['memory_plan']['reason']}", err=True)
    elif "templates_skipped" in s:
        click.echo(f"templates skipped: {s['templates_skipped']['reason']}", err=True)
    q = s["document_share"]["quantiles"]
    click.echo(f"per-document share: median {100 * q['p50']:.1f}%, p90 {100 * q['p90']:.1f}%, "
               f"drop candidates (>= {100 * cfg.near_full_share:.0f}%): "
               f"{s['drop_candidates']['count']:,}")
    eaters = s["index_eaters"][:top_k]
    if eaters:
        click.echo(f"top {len(eaters)} index eaters (length x df):")
        for e in eaters:
            click.echo(f"  {e['psi']:>9,}  df {e['df']:>7,}  len {e['length']:>4}  "
                       f"{_short(e['text'])}")
    click.echo(f"written to {out}")


COMMANDS = [phrases]
