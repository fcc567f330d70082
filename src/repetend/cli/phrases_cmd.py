"""``repetend phrases``: boilerplate phrases of a corpus and their coverage."""

from __future__ import annotations

from pathlib import Path

import click

from ..limits import MAX_FILTER_BYTES

from .options import (DOCS, LENGTH, MAX_LIST, SHARE, input_kwargs, input_options, load_corpus,
                      phrase_config, template_options)

__all__ = ["COMMANDS", "phrases"]


def _short(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


@click.command("phrases")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...|STORE")
@click.option("--min-docs", "-s", "min_docs", type=DOCS, default=20, show_default=True,
              help="σ: a phrase is frequent when at least this many documents contain it.")
@click.option("--min-len", "-L", "min_len", type=LENGTH, default=10, show_default=True,
              help="L: report maximal frequent phrases of at least this many tokens.")
@click.option("--engine", type=click.Choice(["auto", "bloomspan", "suffix"]), default="auto",
              show_default=True, help="Mining engine (all give the same phrases).")
@click.option("--near-full", "near_full_share", type=SHARE, default=0.8, show_default=True,
              help="Documents with at least this boilerplate share are drop candidates.")
@click.option("--top", "top_k", type=click.IntRange(0, MAX_LIST), default=10, show_default=True,
              help="Index eaters (phrases by length x df) to print and keep in the summary.")
@click.option("--memory-limit", default=None,
              help="Mine out of core under this much private memory (e.g. 8G): bloomspan in "
                   "shards over the memory-mapped store, seeds spilled to disk ($TMPDIR, "
                   "default /tmp).")
@click.option("--seed-len", type=LENGTH, default=None, help="bloomspan: seed length.")
@click.option("--filter-bytes", type=click.IntRange(1, MAX_FILTER_BYTES), default=None,
              help="bloomspan: counting filter size.")
@click.option("--out", "-o", "out", type=click.Path(file_okay=False, path_type=Path),
              required=True, help="Directory for phrases, documents, hosts, occurrences, summary.")
@click.option("--out-format", "out_format", type=click.Choice(["parquet", "jsonl"]),
              default="parquet", show_default=True, help="Format of the output tables.")
@click.option("--store", "store_out", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Also keep the tokenized corpus as a token store here.")
@click.option("--df-over", "df_over", type=click.Choice(["documents", "clusters"]),
              default="documents", show_default=True,
              help="What df counts: documents, or near-duplicate clusters (each cluster once, "
                   "a document in none alone), read from --clusters.")
@click.option("--clusters", "clusters_dir", type=click.Path(path_type=Path), default=None,
              help="For --df-over clusters: a `repetend dups` output of this corpus, or a scan "
                   "directory (its dups/).")
@template_options
@input_options
def phrases(inputs, near_full_share, top_k, seed_len, filter_bytes, out, out_format, store_out,
            df_over, clusters_dir, quiet, **opts):
    """Find the maximal phrases that repeat across at least --min-docs documents
    (the BloomSpan paper's maximal contiguous frequent phrases) and write them with
    per-document and per-host coverage to --out.

    INPUT is a corpus (JSONL, Parquet, CSV/TSV, WARC/WET, a directory of text
    files) or one token store made by ``repetend tokenize``.
    """
    from ..errors import ParameterError
    from ..phrases import find_phrases

    cfg = phrase_config(opts, near_full_share=near_full_share, top_k=max(top_k, 0),
                        seed_len=seed_len, filter_bytes=filter_bytes, df_over=df_over).validate()
    groups = None
    if df_over == "clusters":
        from ..jobs.clusters import cluster_groups, locate_clusters

        if clusters_dir is None:
            raise ParameterError("--df-over clusters needs --clusters DIR (a `repetend dups` "
                                 "output of this corpus, or a scan directory)")
        locate_clusters(clusters_dir)   # a directory without clusters: refused before reading
        # the store is kept (--store) only once the clusters are known to be of this corpus
        store = load_corpus(inputs, quiet=quiet, **input_kwargs(opts))
        groups = cluster_groups(clusters_dir, store)
        if store_out is not None:
            store.save(store_out)
    elif clusters_dir is not None:
        raise ParameterError("--clusters is read only with --df-over clusters")
    else:
        store = load_corpus(inputs, out=store_out, quiet=quiet, **input_kwargs(opts))
    if not quiet:
        over = (f", df over {len(set(groups.tolist())):,} clusters" if groups is not None
                else "")
        click.echo(f"mining {store.n_tokens:,} tokens in {store.n_docs:,} documents "
                   f"(sigma={cfg.min_docs}, L={cfg.min_len}, engine={cfg.engine}{over})",
                   err=True)
    res = find_phrases(store, cfg, groups=groups)
    res.write(out, format=out_format)
    s = res.summary
    click.echo(f"engine: {s['engine']} ({s['engine_choice'].get('rule', '')}), "
               f"{s['timings']['total']:.2f} s, peak memory {s['peak_memory_bytes'] / 2**20:.0f} MiB")
    click.echo(f"phrases: {s['phrases']:,}   occurrences: {s['occurrences']:,}")
    if groups is not None:
        click.echo(f"df over {s['parameters']['groups']:,} near-duplicate clusters of "
                   f"{s['documents']:,} documents (each cluster counts once)")
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
