"""``repetend synth``: write a generated corpus and its ground truth."""

from __future__ import annotations

import time
from pathlib import Path

import click

from .options import SEED, UNIT, Real

__all__ = ["COMMANDS", "synth"]

_DEFAULT_DOCS = {"synthetic1": 100, "synthetic2": 1000, "weblike": 3000}


@click.command("synth")
@click.argument("generator", type=click.Choice(["synthetic1", "synthetic2", "weblike"]))
@click.option("--docs", "n_docs", type=click.IntRange(1, 100_000_000), default=None,
              help="Documents (default: synthetic1 100, synthetic2 1000, weblike 3000).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Random seed.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Directory to write corpus.jsonl and truth.json into.")
@click.option("--words-per-doc", type=click.IntRange(1, 1_000_000), default=None,
              help="synthetic1/synthetic2: background words per document "
                   "(default 5000 / 1000).")
@click.option("--sites", "n_sites", type=click.IntRange(1, 100_000_000), default=None,
              help="weblike: number of sites (default: pages // 25).")
@click.option("--lang-mix", type=UNIT, default=0.5, show_default=True,
              help="weblike: share of Russian pages.")
@click.option("--dup-rate", type=Real(0.0, 1.0, max_open=True), default=0.12,
              show_default=True, help="weblike: share of pages that are planted copies.")
def synth(generator: str, n_docs: int | None, seed: int, out: Path, words_per_doc: int | None,
          n_sites: int | None, lang_mix: float, dup_rate: float) -> None:
    """Generate a corpus whose right answer is known (GENERATOR: synthetic1, synthetic2
    or weblike) and write OUT/corpus.jsonl (id, url, text) and OUT/truth.json."""
    from ..synth import synthetic1, synthetic2, weblike

    n = _DEFAULT_DOCS[generator] if n_docs is None else n_docs
    t0 = time.perf_counter()
    if generator == "synthetic1":
        corpus = synthetic1(n, seed=seed, **({} if words_per_doc is None
                                             else {"words_per_doc": words_per_doc}))
    elif generator == "synthetic2":
        corpus = synthetic2(n, seed=seed, **({} if words_per_doc is None
                                             else {"words_per_doc": words_per_doc}))
    else:
        corpus = weblike(n, n_sites=n_sites, seed=seed, lang_mix=lang_mix, dup_rate=dup_rate)
    paths = corpus.write(out)
    elapsed = time.perf_counter() - t0
    size = paths["corpus"].stat().st_size
    click.echo(f"{paths['corpus']}: {len(corpus)} documents, {corpus.n_chars:,} characters, "
               f"{size / 1e6:.1f} MB")
    click.echo(f"{paths['truth']}: {_describe(corpus)}")
    click.echo(f"{generator} seed {seed} in {elapsed:.1f} s")


def _describe(corpus) -> str:
    t = corpus.truth
    if corpus.name == "weblike":
        s = t["summary"]
        copies = ", ".join(f"{k} {v}" for k, v in s["copies"].items())
        return (f"{s['sites']} sites, {len(t['blocks'])} template blocks "
                f"({s['template_char_share']:.0%} of the text), {sum(s['copies'].values())} "
                f"planted copies ({copies})")
    phrases = t["phrases"]
    return (f"{len(phrases)} planted phrases, lengths {min(p['length'] for p in phrases)}–"
            f"{max(p['length'] for p in phrases)}, supports "
            f"{sorted({p['support'] for p in phrases})}")


COMMANDS = [synth]
