"""``repetend index build|add|merge|info``, ``repetend query`` and ``repetend serve``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..limits import SERVE_MAX
from .options import (DOCS, LIST, MAX_DOCS, NUM_PERM, SECONDS, SEED, SHARE, SHINGLE, input_kwargs,
                      input_options, load_corpus, neardup_config)

__all__ = ["COMMANDS", "index", "query", "serve", "format_add_summary"]


def _n(x) -> str:
    return f"{int(x):,}"


def format_add_summary(s: dict, out: Path | None = None) -> str:
    lines = [f"{_n(s['documents_added'])} documents added ({_n(s['documents_before'])} -> "
             f"{_n(s['documents_after'])} in the index)",
             f"{_n(s['pairs'])} near-duplicate pairs with J >= {s['threshold']:g}: "
             f"{_n(s['pairs_old_new'])} with earlier documents, {_n(s['pairs_new_new'])} inside the batch; "
             f"{_n(s['new_documents_with_old_duplicate'])} new documents duplicate an indexed one; "
             f"{_n(s.get('drop_candidates', 0))} drop candidates (a near-duplicate of an earlier document)",
             f"{_n(s['containment_pairs'])} containment pairs (containment >= "
             f"{s['containment_threshold']:g}, J < {s['threshold']:g})"]
    if s["lookup"]["truncated_buckets"]:
        lines.append(f"{_n(s['lookup']['truncated_buckets'])} huge buckets examined only in part")
    lines.append(f"time {s['seconds']:.2f} s" + (f" -> {out}" if out is not None else ""))
    return "\n".join(lines)


def _report(result, report: Path | None, pairs_limit: int = 20) -> None:
    if report is not None:
        result.write(report)
    click.echo(format_add_summary(result.summary, report))
    if report is None and result.pairs.num_rows:
        click.echo("a\tb\tjaccard\tcontainment_ab\tcontainment_ba")
        for r in result.pairs.slice(0, pairs_limit).to_pylist():
            click.echo(f"{r['a']}\t{r['b']}\t{r['jaccard']:.3f}\t{r['containment_ab']:.3f}\t"
                       f"{r['containment_ba']:.3f}")
        if result.pairs.num_rows > pairs_limit:
            click.echo(f"... {_n(result.pairs.num_rows - pairs_limit)} more (use --report DIR)")


@click.group("index")
def index() -> None:
    """A persistent near-duplicate index: build, add batches, merge segments."""


@index.command("build")
@click.argument("inputs", nargs=-1, required=True)
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Index directory to create.")
@click.option("--phrases", "phrases", type=click.Path(exists=True, path_type=Path), default=None,
              help="Known boilerplate phrases: SCAN_DIR/phrases (or a scan directory).")
@click.option("--threshold", "-t", type=SHARE, default=0.8, show_default=True,
              help="Jaccard resemblance threshold, in (0, 1].")
@click.option("--shingle", "-k", type=SHINGLE, default=5, show_default=True, help="Shingle size in tokens.")
@click.option("--num-perm", "-K", type=NUM_PERM, default=128, show_default=True, help="MinHash signature length.")
@click.option("--bands", "-b", type=NUM_PERM, default=None,
              help="LSH bands (default: chosen for the threshold).")
@click.option("--rows", "-r", type=NUM_PERM, default=None, help="LSH rows per band.")
@click.option("--hash", "hash_", type=click.Choice(["splitmix64", "crc32"]), default="splitmix64",
              show_default=True)
@click.option("--scheme", type=click.Choice(["minhash", "oph"]), default="oph", show_default=True)
@click.option("--bbits", type=click.IntRange(1, 64), default=None,
              help="Store only the low b bits of each signature value (b-bit MinHash).")
@click.option("--seed", type=SEED, default=None, help="Seed of the MinHash hash functions.")
@click.option("--max-bucket", type=click.IntRange(0, MAX_DOCS), default=200, show_default=True,
              help="Buckets this large emit a star + chain inside a batch (0: no cap).")
@click.option("--min-shingles", type=DOCS, default=3, show_default=True,
              help="Documents with fewer shingles are matched by exact set identity.")
@click.option("--containment", type=SHARE, default=0.8, show_default=True,
              help="Report pairs with containment >= this and J < threshold apart.")
@click.option("--report", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the pairs found inside the corpus here (pairs/containment.parquet, summary.json).")
@click.option("--postings", is_flag=True,
              help="Also keep shingle -> document postings: queries then find documents that "
                   "share fragments without being near-duplicates (exact containment).")
@click.option("--postings-max-df", type=DOCS, default=1000, show_default=True,
              help="Shingles in more documents of a segment than this are left out of the postings.")
@click.option("--segment-docs", type=DOCS, default=None,
              help="Build in segments of this many documents (bounds memory; same pairs).")
@click.option("--overwrite", is_flag=True, help="Replace an existing index at --out.")
@input_options
def build_cmd(inputs, out, phrases, report, postings, postings_max_df, segment_docs, overwrite,
              quiet, **opts):
    """Build an index from INPUT... (a corpus or a token store) into --out."""
    from ..index import NearDupIndex

    cfg = neardup_config(opts).validate()
    store = load_corpus(inputs, quiet=quiet, **input_kwargs(opts))
    idx = NearDupIndex.build(store, out, cfg, phrases=phrases, postings=postings,
                             postings_max_df=postings_max_df, overwrite=overwrite,
                             segment_docs=segment_docs)
    click.echo(f"index {out}: {_n(idx.n_docs)} documents, LSH {idx.bands} x {idx.rows}"
               + (f", {_n(idx.stats()['phrases'])} known phrases" if phrases else ""))
    _report(idx.last_add, report)


@index.command("add")
@click.argument("index_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("inputs", nargs=-1, required=True)
@click.option("--report", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the pairs involving the new documents here.")
@input_options
def add_cmd(index_dir, inputs, report, quiet, **opts):
    """Append INPUT... to INDEX_DIR as a new segment; report which new documents
    are near-duplicates of earlier ones or of each other."""
    from ..index import NearDupIndex

    idx = NearDupIndex.open(index_dir)
    keys = input_kwargs(opts)
    keys["unit"], keys["lang"] = idx.unit, idx.lang
    store = load_corpus(inputs, quiet=quiet, **keys)
    _report(idx.add(store), report)


@index.command("merge")
@click.argument("index_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--last", type=click.IntRange(2, 100_000), default=None,
              help="Merge only the LAST newest segments (default: all).")
def merge_cmd(index_dir, last):
    """Compact the segments of INDEX_DIR into one."""
    from ..index import NearDupIndex

    s = NearDupIndex.open(index_dir).merge(last)
    click.echo(f"{s['segments_before']} segments -> {s['segments_after']} ({s['seconds']:.2f} s)")


@index.command("phrases")
@click.argument("index_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("phrases_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
                required=False)
@click.option("--remove", is_flag=True, help="Remove the known phrases.")
def phrases_cmd(index_dir, phrases_dir, remove):
    """Replace INDEX_DIR's known boilerplate phrases with those of PHRASES_DIR
    (SCAN_DIR/phrases or a scan directory)."""
    from ..errors import ParameterError
    from ..index import NearDupIndex

    if (phrases_dir is None) == (not remove):
        raise ParameterError("give PHRASES_DIR or --remove")
    n = NearDupIndex.open(index_dir).set_phrases(None if remove else phrases_dir)
    click.echo(f"{_n(n)} known phrases")


@index.command("info")
@click.argument("index_dir", type=click.Path(file_okay=False, path_type=Path))
def info_cmd(index_dir):
    """Print the index's settings and segments as JSON."""
    from ..index import NearDupIndex

    click.echo(json.dumps(NearDupIndex.open(index_dir).stats(), indent=2))


@click.command("query")
@click.argument("index_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("inputs", nargs=-1)
@click.option("--text", "texts", multiple=True, help="A document given inline (repeatable).")
@click.option("--threshold", "-t", type=SHARE, default=None,
              help="Resemblance threshold (default: the index's).")
@click.option("--containment", type=SHARE, default=None, help="Containment threshold (default: the index's).")
@click.option("--no-fragments", is_flag=True, help="Do not compute shared fragments.")
@click.option("--no-phrases", is_flag=True, help="Do not look for known boilerplate phrases.")
@click.option("--min-shared", type=DOCS, default=3, show_default=True,
              help="With postings: documents sharing this many shingles are reported too.")
@click.option("--max-matches", "max_matches", type=LIST, default=20, show_default=True,
              help="Matches per list and fragments per match.")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON answer here instead of stdout.")
@input_options
def query(index_dir, inputs, texts, threshold, containment, no_fragments, no_phrases, min_shared,
          max_matches, out, quiet, **opts):
    """Check documents (INPUT files or --text) against INDEX_DIR: near-duplicates,
    containing / contained documents, known boilerplate phrases, shared fragments."""
    from .._atomic import atomic_path
    from ..errors import ParameterError
    from ..index import NearDupIndex

    if not inputs and not texts:
        raise ParameterError("give INPUT files or --text")
    idx = NearDupIndex.open(index_dir)
    docs = list(texts)
    ids: list = [f"--text[{i}]" for i in range(len(texts))]
    if inputs:
        from ..corpus.readers import read_corpus

        keys = {k: opts[k] for k in ("text_field", "id_field", "url_field", "fmt", "glob",
                                     "limit", "on_error") if k in opts}
        for r in read_corpus(inputs, **keys):
            docs.append(r.text)
            ids.append(r.id)
    res = idx.query(docs, ids=ids, threshold=threshold, containment=containment,
                    fragments=not no_fragments, phrases=not no_phrases, limit=max_matches,
                    min_shared=min_shared)
    text = json.dumps(res.to_json(), indent=2, ensure_ascii=False)
    if out is not None:
        with atomic_path(out) as tmp:
            tmp.write_text(text + "\n", encoding="utf-8")
        n = sum(len(d["near_duplicates"]) for d in res.documents)
        click.echo(f"{len(docs)} documents queried, {n} near-duplicate matches -> {out}", err=True)
    else:
        sys.stdout.write(text + "\n")


def _warm_up(idx) -> None:
    """One query (a document of the index against it, fragments and phrases on)
    before listening, so that the first client does not wait for the kernels to
    load or compile (seconds to minutes) and the page cache holds the index."""
    import time

    t0 = time.perf_counter()
    text = idx.text(0) if idx.n_docs else "a short text to warm up the index"
    idx.query([text[:20_000]], fragments=True, phrases=True, limit=5)
    seconds = time.perf_counter() - t0
    if seconds > 1:
        click.echo(f"warmed up in {seconds:.1f} s", err=True)


@click.command("serve")
@click.argument("index_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to listen on (loopback by default). Any other address needs "
                   "--token or --read-only.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--token", envvar="REPETEND_TOKEN", show_envvar=True, default=None, metavar="TOKEN",
              help="Require 'Authorization: Bearer TOKEN' on every request except GET /health "
                   "(prefer the environment variable: a command line is visible to other users).")
@click.option("--max-body-bytes", type=click.IntRange(1, SERVE_MAX["max_body_bytes"]),
              default=4 * 1024 * 1024, show_default=True,
              help="Larger request bodies get 413.")
@click.option("--max-docs", type=click.IntRange(1, SERVE_MAX["max_docs"]),
              default=1000, show_default=True,
              help="Most documents per request (more: 413).")
@click.option("--max-tokens", type=click.IntRange(1, SERVE_MAX["max_tokens"]),
              default=500_000, show_default=True,
              help="Most tokens in all texts of one request (more: 413).")
@click.option("--max-matches", type=click.IntRange(1, SERVE_MAX["max_matches"]),
              default=20_000, show_default=True,
              help="Most 'limit' x texts of one query (more: 413, before any work).")
@click.option("--max-answer-bytes", type=click.IntRange(1, SERVE_MAX["max_answer_bytes"]),
              default=16 * 1024 * 1024,
              show_default=True, help="Most bytes of one query's answer (more: 413).")
@click.option("--query-seconds", type=SECONDS, default=10.0,
              show_default=True, help="Time budget of one query (longer: 503).")
@click.option("--add-seconds", type=SECONDS, default=60.0, show_default=True,
              help="Time budget of one POST /add, waiting for an earlier one included "
                   "(longer: 503, and nothing is added).")
@click.option("--workers", type=click.IntRange(1, SERVE_MAX["workers"]), default=1, show_default=True,
              help="Worker processes accepting on the one socket (each maps the index; about "
                   "one per core).")
@click.option("--query-threads", type=click.IntRange(1, SERVE_MAX["query_threads"]), default=None,
              help="Compute at most this many queries at once; the others wait, in their time "
                   "budget (default: one thread each, up to 40).")
@click.option("--read-only", is_flag=True, help="Disable POST /add.")
@click.option("--max-segments", type=click.IntRange(1, SERVE_MAX["max_segments"]),
              default=8, show_default=True,
              help="After an /add leaving more segments, merge the newest ones in the background.")
def serve(index_dir, host, port, token, max_body_bytes, max_docs, max_tokens, max_matches,
          max_answer_bytes, query_seconds, add_seconds, workers, query_threads, read_only,
          max_segments):
    """Serve INDEX_DIR over HTTP: POST /query, POST /add, GET /health, GET /stats."""
    from ..index import NearDupIndex
    from ..serve import check_bind, run

    warning = check_bind(host, port, token=token, read_only=read_only)
    idx = NearDupIndex.open(index_dir)
    if warning is not None:
        click.echo(f"warning: {warning}", err=True)
    _warm_up(idx)
    click.echo(f"serving {index_dir} ({_n(idx.n_docs)} documents) on http://{host}:{port}"
               + (f" with {workers} worker processes" if workers > 1 else ""), err=True)
    run(idx, host=host, port=port, workers=workers, max_body_bytes=max_body_bytes, max_docs=max_docs,
        allow_add=not read_only, max_segments=max_segments, token=token, max_tokens=max_tokens,
        max_matches=max_matches, max_answer_bytes=max_answer_bytes, query_seconds=query_seconds,
        add_seconds=add_seconds, query_threads=query_threads)


COMMANDS = [index, query, serve]


def _standalone() -> None:  # pragma: no cover - used by the crash test's subprocess
    from . import _Group

    @click.group(cls=_Group)
    def cli() -> None:
        pass

    for c in COMMANDS:
        cli.add_command(c)
    cli()


if __name__ == "__main__":  # pragma: no cover
    _standalone()
