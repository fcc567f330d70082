"""``repetend clean``: the corpus written back without the repeated text a scan found."""

from __future__ import annotations

import click

from .options import SHARE

__all__ = ["COMMANDS", "clean"]


@click.command()
@click.argument("inputs", nargs=-1, type=click.Path())
@click.option("--scan", "scan_dir", required=True, type=click.Path(file_okay=False),
              help="The scan directory of this corpus (made by `repetend scan`).")
@click.option("--out", "-o", "out", required=True, type=click.Path(),
              help="Where to write the cleaned corpus (a file, or a directory for text-file corpora).")
@click.option("--keep-boilerplate", is_flag=True, help="Do not remove boilerplate phrase occurrences.")
@click.option("--keep-duplicates", is_flag=True,
              help="Keep every member of a duplicate cluster (default: only its representative).")
@click.option("--min-share", type=SHARE, default=None,
              help="Drop documents whose boilerplate share is at least this.")
@click.option("--spans", type=click.Choice(["frequent", "maximal"]), default="frequent",
              show_default=True,
              help="What boilerplate to cut: all text inside any frequent phrase of >= L tokens, "
                   "or only the occurrences of the reported maximal phrases.")
@click.option("--keep-templates", is_flag=True,
              help="Do not cut template occurrences (templates with variable parts).")
@click.option("--max-cut", type=SHARE, default=0.9, show_default=True,
              help="A kept document whose boilerplate cuts would remove more than this share of its "
                   "characters is not cut (see --mostly-template); 1 = no limit.")
@click.option("--mostly-template", type=click.Choice(["drop", "keep"]), default="drop", show_default=True,
              help="What to do with a document over --max-cut: drop it (logged as mostly_template) "
                   "or keep it whole (logged as kept_whole).")
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
def clean(inputs, scan_dir, out, keep_boilerplate, keep_duplicates, min_share, spans, keep_templates,
          max_cut, mostly_template, quiet):
    """Write INPUTS back without boilerplate spans and/or with one document per
    duplicate cluster, with a removal log OUT.removed.jsonl.

    A kept document is never emptied: one that would lose more than
    --max-cut of its characters is dropped as mostly template or kept whole
    (--mostly-template).

    INPUTS default to the inputs recorded by the scan.

    The output has the input's format (JSONL, Parquet, CSV/TSV, a directory
    of text files); WARC/WET inputs are written as JSONL."""
    from ..jobs import CleanConfig, clean_corpus

    cfg = CleanConfig(remove_boilerplate=not keep_boilerplate, remove_duplicates=not keep_duplicates,
                      min_share=min_share, spans=spans, templates=not keep_templates,
                      max_cut=max_cut, mostly_template=mostly_template)
    res = clean_corpus(list(inputs) or None, scan_dir, out, config=cfg, quiet=quiet)
    for line in res.describe():
        click.echo(line, err=True)


COMMANDS = [clean]
