"""``repetend report``: from a scan directory to a page a person reads."""

from __future__ import annotations

import click

from .options import LIST

__all__ = ["COMMANDS", "report"]


@click.command()
@click.argument("scan_dir", type=click.Path(file_okay=False))
@click.option("--out", "-o", "out", required=True, type=click.Path(dir_okay=False),
              help="The HTML file to write (one self-contained page).")
@click.option("--max-phrases", type=LIST, default=200, show_default=True,
              help="Index eaters listed.")
@click.option("--max-rows", type=LIST, default=200, show_default=True,
              help="Rows of each document / host / pair table.")
@click.option("--max-clusters", type=LIST, default=100, show_default=True,
              help="Duplicate clusters listed.")
@click.option("--max-chords", type=LIST, default=5000, show_default=True,
              help="Chords in the circle picture (a random sample above).")
@click.option("--title", default=None, help="Page title.")
def report(scan_dir, out, max_phrases, max_rows, max_clusters, max_chords, title):
    """Write one self-contained HTML report of SCAN_DIR (made by `repetend scan`)."""
    from ..errors import InputError
    from ..report import ReportCaps, build_report
    from ..scandir import unfinished_scan

    why = unfinished_scan(scan_dir)   # a killed scan's stages would read as a whole scan's
    if why:
        raise InputError(why, path=str(scan_dir))

    caps = ReportCaps(max_phrases=max_phrases, max_rows=max_rows, max_clusters=max_clusters,
                      max_chords=max_chords)
    path = build_report(scan_dir, out, caps=caps, title=title)
    click.echo(f"report: {path}", err=True)


COMMANDS = [report]
