"""``repetend tokenize`` (corpus → token store) and ``repetend info`` (a store's summary)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..corpus.store import is_store, store_summary
from .options import input_options, load_corpus

__all__ = ["COMMANDS", "info", "tokenize", "format_summary"]


def _n(x) -> str:
    return f"{int(x):,}" if x is not None else "?"


def _count(x, noun: str) -> str:
    return f"{_n(x)} {noun}{'' if x == 1 else 's'}"


def format_summary(summary: dict, where: str | None = None) -> str:
    """A short human summary of a token store's ``summary`` (see ``build_store``)."""
    read = summary.get("read") or {}
    lines = []
    head = (f"{_count(summary.get('documents'), 'document')}, "
            f"{_count(summary.get('tokens'), 'token')}, "
            f"vocabulary {_n(summary.get('vocabulary'))}")
    if summary.get("unit"):
        head += f" ({summary['unit']} tokens)"
    if where:
        head += f" → {where}"
    lines.append(head)
    if read:
        files = read.get("files", 0)
        lines.append(
            f"read {_count(files, 'file')}: "
            f"{_n(read.get('malformed', 0))} malformed skipped "
            f"({_n(read.get('missing_text', 0))} without text), "
            f"{_n(read.get('empty', 0))} empty, "
            f"{_n(read.get('invalid_utf8', 0))} with invalid UTF-8 (replaced)"
            + (f", {_n(read['skipped_non_response'])} WARC records not HTML responses"
               if read.get("skipped_non_response") else "")
            + (f", {_n(read['skipped_binary'])} binary files skipped"
               if read.get("skipped_binary") else ""))
        errors = read.get("errors") or []
        if errors:
            lines.append("first messages:")
            lines.extend(f"  {e}" for e in errors[:5])
            if len(errors) > 5:
                lines.append(f"  … {len(errors) - 5} more in summary.json")
    if summary.get("empty_documents"):
        k = summary["empty_documents"]
        lines.append(f"{_n(k)} document{'s have' if k != 1 else ' has'} no tokens")
    return "\n".join(lines)


@click.command("tokenize")
@click.argument("inputs", nargs=-1, required=True)
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory of the token store to write (replaced atomically if it is one).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@input_options
def tokenize(inputs, out: Path, as_json: bool, quiet: bool, **opts):
    """Read INPUT... (JSONL[.gz|.zst], Parquet, CSV/TSV, a directory of text files,
    WARC, WET, or globs of these) and write a token store to --out.

    The store is tokenized once and mined many times (phrases, dups, report).
    Malformed records are counted and skipped (--on-error fail stops at the first);
    the counts and the first messages are printed and kept in OUT/summary.json.

    \b
    Examples:
      repetend tokenize crawl/CC-MAIN-*.warc.wet.gz -o store/
      repetend tokenize shards/ --text-field content --id-field doc_id -o store/
      repetend tokenize /usr/share/doc --glob '**/README*' -o docs-store/
    """
    from .._atomic import write_json
    from ..errors import ParameterError

    if out.exists() and not is_store(out) and (out.is_file() or any(out.iterdir())):
        raise ParameterError(f"--out {out} exists and is not a token store; "
                             "refusing to replace it (choose a new directory)")
    if len(inputs) == 1 and is_store(inputs[0]):
        raise ParameterError(f"{inputs[0]} is already a token store "
                             "(see it with: repetend info)")
    out_res = out.resolve()
    for i in inputs:
        p = Path(i)
        if p.exists() and p.resolve() == out_res:
            raise ParameterError(f"--out {out} is also an input")
    from ..corpus.readers import expand_inputs

    expand_inputs(inputs, opts.get("fmt"), opts.get("glob"))  # bad paths fail before any work
    store = load_corpus(inputs, out=out, quiet=quiet, check=False, **opts)   # counts below
    summary = dict(store.summary)
    write_json(out / "summary.json", summary)
    if as_json:
        click.echo(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        click.echo(format_summary(summary, str(out)))
    if not summary.get("documents"):
        click.echo("warning: no documents were read; see the counts above", err=True)


@click.command("info")
@click.argument("store", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def info(store: Path, as_json: bool):
    """Print the summary of a token STORE (documents, tokens, vocabulary, read counts)."""
    from ..errors import InputError

    if not store.exists():
        raise InputError("no such file or directory", path=str(store))
    summary = store_summary(store)
    if as_json:
        click.echo(json.dumps(summary, indent=2, ensure_ascii=False))
        return
    click.echo(format_summary(summary, str(store)))
    click.echo(_shape(store))


def _shape(path: Path) -> str:
    """Document lengths and hosts of a store, read from its arrays."""
    import numpy as np

    from ..corpus.store import TokenStore

    st = TokenStore.open(path)
    lines = []
    if st.n_docs:
        q = np.percentile(st.doc_lengths, [50, 90, 99]).astype(np.int64)
        lines.append(f"tokens per document: median {_n(q[0])}, p90 {_n(q[1])}, p99 {_n(q[2])}, "
                     f"max {_n(st.doc_lengths.max())}")
    hosts = st.docs.column("host").drop_null()
    if len(hosts):
        counts = hosts.value_counts().to_pylist()
        counts.sort(key=lambda c: (-c["counts"], c["values"]))
        top = ", ".join(f"{c['values']} {_n(c['counts'])}" for c in counts[:5])
        lines.append(f"{_count(len(counts), 'host')} ({_n(len(hosts))} documents with a url); "
                     f"most documents: {top}")
    return "\n".join(lines)


COMMANDS = [tokenize, info]
