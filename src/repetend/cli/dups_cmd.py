"""``repetend dups`` (near-duplicate documents) and ``repetend lsh-params`` (banding chooser)."""

from __future__ import annotations

from pathlib import Path

import click

from .options import (DOCS, MAX_DOCS, NUM_PERM, SEED, SHARE, SHINGLE, UNIT, input_kwargs, input_options,
                      load_corpus, neardup_config)

__all__ = ["COMMANDS", "dups", "lsh_params_cmd", "format_dups_summary", "format_lsh_params"]


def _n(x) -> str:
    return f"{int(x):,}"


def format_dups_summary(s: dict, out: Path | None = None) -> str:
    """A short human summary of a near-duplicate run's ``summary.json``."""
    lines = [f"{_n(s['documents'])} documents, {_n(s['shingles'])} shingles (k={s['shingle_k']}), "
             f"method {s['method']}, threshold {s['threshold']:g}"]
    if s["method"] == "minhash":
        lines.append(f"MinHash K={s['num_perm']} ({s['scheme']}, {s['bits']} bits, {s['hash']}), "
                     f"LSH {s['bands']} bands x {s['rows']} rows: S-curve threshold "
                     f"{s['lsh_threshold']:.3f}, P({s['threshold']:g}) = {s['p_at_threshold']:.4f}")
        lsh = s["lsh"]
        extra = []
        if lsh["empty_documents"]:
            extra.append(f"{_n(lsh['empty_documents'])} empty")
        if lsh["near_empty_documents"]:
            extra.append(f"{_n(lsh['near_empty_documents'])} near-empty matched exactly")
        if s["capped_buckets"]:
            extra.append(f"{_n(s['capped_buckets'])} huge buckets capped at {lsh['max_bucket']} "
                         f"({_n(s['pairs_not_enumerated'])} pairs not enumerated)")
        if extra:
            lines.append("documents: " + ", ".join(extra))
    if s["method"] == "simhash":
        sh = s["simhash"]
        lines.append(f"SimHash 64 bits ({s['simhash_weights']} weights), Hamming <= {sh['hamming']}: "
                     f"{sh['blocks']} blocks, {sh['tables']} tables (keys >= {sh['key_bits_min']} bits), "
                     f"{_n(sh['comparisons'])} comparisons")
        if sh.get("capped_groups"):
            lines.append(f"{_n(sh['capped_groups'])} groups of identical fingerprints capped at "
                         f"{sh['max_group']} ({_n(sh['pairs_not_enumerated'])} pairs not enumerated)")
    nz = s.get("normalization")
    if nz:
        lines.append(f"normalized (stopwords={nz['stopwords']}, stem={nz['stem']}): vocabulary "
                     f"{_n(nz['vocabulary'])} -> {_n(nz['normalized_vocabulary'])}, tokens "
                     f"{_n(nz['tokens_before'])} -> {_n(nz['tokens_after'])}")
        if nz.get("rows"):
            langs = ", ".join(f"{'/'.join(r['languages'][:4])}{'…' if len(r['languages']) > 4 else ''} "
                              f"{_n(r['documents'])} docs (stem={r['stem']}, stop={r['stopwords']}"
                              f"{', lemmas' if r['lemmatize'] else ''})" for r in nz["rows"][:6])
            lines.append(f"per language: {langs}" + (" …" if len(nz["rows"]) > 6 else ""))
    if s["method"] == "exact":
        lines.append(f"{_n(s['verified_pairs'])} pairs of documents with the same canonical checksum")
    else:
        lines.append(f"{_n(s['candidates'])} candidates verified exactly -> {_n(s['verified_pairs'])} "
                     f"pairs with J >= {s['threshold']:g}")
    lines.append(f"{_n(s['clusters'])} clusters holding {_n(s['documents_in_clusters'])} documents "
                 f"(largest {_n(s['largest_cluster'])}; {_n(s['duplicates_to_drop'])} duplicates to drop)")
    lines.append(f"{_n(s['containment_pairs'])} containment pairs (max containment >= "
                 f"{s['containment_threshold']:g}, J < {s['threshold']:g})")
    tm = s["timings_s"]
    lines.append(f"time {tm['total']:.2f} s, peak memory {s['peak_rss_bytes'] / 2**20:.0f} MiB"
                 + (f" -> {out}" if out is not None else ""))
    return "\n".join(lines)


@click.command("dups")
@click.argument("inputs", nargs=-1, required=True)
@click.option("--method", type=click.Choice(["minhash", "allpairs", "broder", "exact", "simhash"]),
              default="minhash", show_default=True,
              help="minhash: MinHash + LSH + exact verification; allpairs: exact join; "
                   "broder: mod-m sampled shingles; exact: identical canonical text; "
                   "simhash: 64-bit SimHash, Hamming pairs by permuted tables + exact verification.")
@click.option("--threshold", "-t", type=SHARE, default=0.8, show_default=True,
              help="Jaccard resemblance threshold, in (0, 1].")
@click.option("--shingle", "-k", type=SHINGLE, default=5, show_default=True,
              help="Shingle size in tokens.")
@click.option("--num-perm", "-K", type=NUM_PERM, default=128, show_default=True,
              help="MinHash signature length.")
@click.option("--bands", "-b", type=NUM_PERM, default=None,
              help="LSH bands (default: chosen for the threshold).")
@click.option("--rows", "-r", type=NUM_PERM, default=None, help="LSH rows per band.")
@click.option("--hash", "hash_", type=click.Choice(["splitmix64", "crc32"]), default="splitmix64",
              show_default=True, help="MinHash hash family (crc32: fold shingles with CRC-32 first).")
@click.option("--memory-limit", default=None,
              help="MinHash out of core under this much private memory (e.g. 8G); give a token "
                   "store (repetend tokenize) for corpora larger than RAM. Spill files (about "
                   "8 bytes per shingle) go to $TMPDIR (default /tmp).")
@click.option("--scheme", type=click.Choice(["minhash", "oph"]), default="oph", show_default=True,
              help="minhash: K hashes per shingle; oph: one hash per shingle and round (3 rounds, see docs/neardup.md).")
@click.option("--bbits", type=click.IntRange(1, 64), default=None,
              help="Keep only the low b bits of each signature value (b-bit MinHash).")
@click.option("--seed", type=SEED, default=None, help="Seed of the MinHash hash functions.")
@click.option("--max-bucket", type=click.IntRange(0, MAX_DOCS), default=200, show_default=True,
              help="Buckets (SimHash: groups of identical fingerprints) this large emit a star + chain "
                   "instead of all pairs (0: no cap).")
@click.option("--min-shingles", type=DOCS, default=3, show_default=True,
              help="Documents with fewer shingles are matched by exact set identity, not LSH.")
@click.option("--containment", type=SHARE, default=0.8, show_default=True,
              help="Report pairs with containment >= this and J < threshold apart.")
@click.option("--stopwords", default=None, metavar="LANG|FILE",
              help="Drop stop words before shingling: a language (ru, en, ...; package stop-words), "
                   "a file with one word per line, or auto (each document's detected language).")
@click.option("--stem", default=None, metavar="LANG|auto",
              help="Snowball-stem tokens before shingling (PyStemmer): russian/ru, english/en, ..., "
                   "or auto (each document's detected language).")
@click.option("--lemmatize", default=None, type=click.Choice(["ru", "auto"]),
              help="Replace Russian words by their most probable normal form (pymorphy3; extra "
                   "'lemma'): ru = in every document, auto = in documents detected as Russian.")
@click.option("--lemma-keys", default="lexeme", show_default=True, type=click.Choice(["lexeme", "first"]),
              help="With --lemmatize: lexeme = a word and its inflected forms share one key even when "
                   "a form is ambiguous (the normal forms of all its dictionary parses joined); first = "
                   "the most probable normal form only.")
@click.option("--hamming", type=click.IntRange(0, 32), default=3, show_default=True,
              help="SimHash: maximal Hamming distance of candidate fingerprints.")
@click.option("--simhash-blocks", type=click.IntRange(1, 64), default=None,
              help="SimHash: number of blocks of the permuted tables (default: chosen for k and n).")
@click.option("--simhash-weights", type=click.Choice(["binary", "count"]), default="binary",
              show_default=True, help="SimHash feature weight: 1 per distinct shingle, or its count.")
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output directory.")
@click.option("--out-format", "--output-format", "out_format", type=click.Choice(["parquet", "jsonl"]),
              default="parquet", show_default=True, help="Format of the result tables.")
@input_options
def dups(inputs, stopwords, stem, lemmatize, lemma_keys, out, out_format, quiet, **opts):
    """Find near-duplicate documents in INPUT... (a corpus or a token store).

    Writes OUT/pairs, clusters, containment, candidates (.parquet or .jsonl;
    at most 200,000 candidate rows, sampled) and summary.json, each atomically.
    """
    from ..neardup import find_near_duplicates

    cfg = neardup_config({**opts, "stopwords": stopwords, "stem": stem,
                          "lemmatize": lemmatize, "lemma_keys": lemma_keys}).validate()
    if stem or stopwords or lemmatize:  # a wrong language, file or missing extra fails before the corpus is read
        from ..neardup.normalize_lang import check_normalization_options, needs_languages

        check_normalization_options(stopwords, stem, lemmatize)
        if needs_languages(stopwords, stem, lemmatize):
            opts["lang_detect"] = True   # auto: the languages are detected as the store is built
    store = load_corpus(inputs, quiet=quiet, **input_kwargs(opts))
    say = (lambda msg: None) if quiet else (lambda msg: click.echo(msg + " …", err=True))
    result = find_near_duplicates(store, cfg, progress=say)
    result.write(out, format=out_format)
    click.echo(format_dups_summary(result.summary, out))


def format_lsh_params(p, other=None, num_perm: int | None = None,
                      other_label: str = "datasketch's rule (min weighted areas only)") -> str:
    """The chosen banding, its S-curve as a text table, and (optionally) another banding."""
    from ..neardup.lsh import s_curve

    lines = [f"bands b = {p.bands}, rows r = {p.rows}"
             + (f" ({p.bands * p.rows} of {num_perm} signature values)" if num_perm else ""),
             f"S-curve threshold (1/b)^(1/r) = {p.lsh_threshold:.4f}",
             f"P({p.threshold:g}) = {p.p_at_threshold:.4f}  (recall of pairs exactly at the threshold)",
             f"false-positive area {p.fp_area:.4f}, false-negative area {p.fn_area:.5f}"]
    if other is not None and (other.bands, other.rows) != (p.bands, p.rows):
        lines.append(f"{other_label} would pick b = {other.bands}, "
                     f"r = {other.rows}: P({p.threshold:g}) = {other.p_at_threshold:.4f}, "
                     f"false-positive area {other.fp_area:.4f}")
    lines.append("")
    header = "    s    P(s)" + ("   other" if other is not None else "")
    lines.append(header)
    for i in range(1, 11):
        s = i / 10
        row = f"  {s:.1f}  {s_curve(s, p.bands, p.rows):.4f}"
        if other is not None:
            row += f"  {s_curve(s, other.bands, other.rows):.4f}"
        lines.append(row)
    return "\n".join(lines)


@click.command("lsh-params")
@click.option("--threshold", "-t", type=SHARE, default=0.8, show_default=True,
              help="Target Jaccard resemblance.")
@click.option("--num-perm", "-K", type=NUM_PERM, default=128, show_default=True, help="Signature length.")
@click.option("--bands", "-b", type=NUM_PERM, default=None, help="Show this banding instead of choosing.")
@click.option("--rows", "-r", type=NUM_PERM, default=None, help="Rows per band (with --bands).")
@click.option("--fp-weight", type=UNIT, default=0.5, show_default=True)
@click.option("--fn-weight", type=UNIT, default=0.5, show_default=True)
@click.option("--min-recall", type=UNIT, default=0.98, show_default=True,
              help="Only bandings with P(threshold) >= this are chosen.")
def lsh_params_cmd(threshold, num_perm, bands, rows, fp_weight, fn_weight, min_recall):
    """Choose LSH bands x rows for a threshold and print the S-curve
    P(s) = 1 - (1 - s^r)^b at s = 0.1 .. 1.0."""
    from ..neardup.lsh import banding_params, check_banding, check_jaccard_threshold, lsh_params

    check_jaccard_threshold(threshold)
    bands, rows = check_banding(num_perm, bands, rows)
    if bands is not None:
        p = banding_params(threshold, bands, rows)
        other = lsh_params(threshold, num_perm, fp_weight, fn_weight, min_recall=min_recall)
        label = f"the chooser (P(t) >= {min_recall:g}, then min weighted areas)"
    else:
        p = lsh_params(threshold, num_perm, fp_weight, fn_weight, min_recall=min_recall)
        other = lsh_params(threshold, num_perm, fp_weight, fn_weight, min_recall=None)
        label = "datasketch's rule (min weighted areas only)"
    click.echo(format_lsh_params(p, other, num_perm, label))


COMMANDS = [dups, lsh_params_cmd]
