"""Options and helpers shared by the subcommands."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["input_options", "load_store", "is_store", "Progress"]


def is_store(path: str | Path) -> bool:
    p = Path(path)
    return p.is_dir() and (p / "meta.json").is_file() and (p / "tokens.npy").is_file()


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
                     type=click.Choice(["jsonl", "parquet", "csv", "tsv", "text", "warc", "wet"]),
                     help="Input format (default: from the file name)."),
        click.option("--glob", "glob", default=None,
                     help="For a directory of text files: which files to read (e.g. '**/*.md')."),
        click.option("--limit", type=click.IntRange(min=1), default=None,
                     help="Read at most this many documents."),
        click.option("--html", type=click.Choice(["all", "main"]), default="all",
                     show_default=True,
                     help="WARC pages: keep all visible text (like WET) or only the main content."),
        click.option("--on-error", type=click.Choice(["skip", "fail"]), default="skip",
                     show_default=True, help="Malformed records: count and skip, or stop."),
        click.option("--unit", type=click.Choice(["word", "code", "char"]), default="word",
                     show_default=True, help="Tokens: words, programming-language tokens, or characters."),
        click.option("--lang", default=None, help="Lexer for --unit code (default: from the file extension)."),
        click.option("--quiet", "-q", is_flag=True, help="No progress output."),
    ]
    for o in reversed(opts):
        fn = o(fn)
    return fn


INPUT_KEYS = ("text_field", "id_field", "url_field", "fmt", "glob", "limit", "on_error", "html",
              "unit", "lang")


def load_store(inputs, *, out=None, quiet=False, **opts):
    """Open *inputs* if it is one token store, else read and tokenize it
    (into *out* when given, else in memory)."""
    from ..corpus.readers import read_corpus
    from ..corpus.record import ReadStats
    from ..corpus.store import TokenStore, build_store

    inputs = list(inputs)
    if len(inputs) == 1 and is_store(inputs[0]):
        return TokenStore.open(inputs[0])
    stats = ReadStats()
    read_keys = {k: opts[k] for k in ("text_field", "id_field", "url_field", "fmt", "glob",
                                      "limit", "on_error", "html") if k in opts}
    records = read_corpus(inputs, stats=stats, **read_keys)
    with Progress("tokenize", unit="B", quiet=quiet) as bar:
        store = build_store(records, out=out, unit=opts.get("unit", "word"),
                            lang=opts.get("lang"), read_stats=stats,
                            progress=bar.update)
    return store


class Progress:
    """A tqdm bar on stderr, or nothing with quiet."""

    def __init__(self, desc: str, total=None, unit="it", quiet=False):
        self.bar = None
        if not quiet:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit=unit, unit_scale=True, leave=False,
                            dynamic_ncols=True)

    def update(self, n=1):
        if self.bar is not None:
            self.bar.update(n)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()
        return False

