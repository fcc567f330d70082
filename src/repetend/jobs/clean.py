"""``clean_corpus``: the corpus written back without what a scan found.

Three removals, each optional:

* **boilerplate** — by default every *frequent span* (``phrases/spans.parquet``:
  the text inside any phrase of ≥ L tokens in ≥ σ documents, maximal or not —
  see :mod:`repetend.phrases.frequent_spans`), or with ``spans="maximal"``
  every occurrence of every reported phrase (``phrases/occurrences.parquet``),
  is cut from its document at its exact
  original character span (token span ``start..end-1`` ↦
  ``[spans[start, 0], spans[end - 1, 1])`` with ``store.token_spans(d)``);
  the cuts are merged per document and tidied by the rule of
  :mod:`repetend.clean.spans` (no glued words, no dangling separators);
* **duplicates** — of each duplicate cluster (``dups/clusters.parquet``) only
  the representative is kept;
* **min_share** — documents whose boilerplate share (the frequent share, or the
  maximal-phrase share with ``spans="maximal"``) is at least this are dropped.

A kept document is never silently emptied: one whose cuts would remove more
than ``max_cut`` (default 0.9) of its characters is dropped as mostly template
(``mostly_template="drop"``, the default) or kept whole (``"keep"``), and the
log and the result count both.  What happens to each document is decided by
:mod:`repetend.clean.plan`, the same code the scan uses for its
``documents.parquet`` and the report for its "What to do" section.

The input is read again with :func:`repetend.corpus.readers.read_corpus` and
the scan's input options; the records are matched to the scan's documents by
order and checked (same id, same text), and written in the input's own format
(:mod:`repetend.clean.writers`).  ``OUT.removed.jsonl`` logs, one line per
document touched, every removed character with its original position, its
replacement and the reason, so that a user can audit and undo the cleaning
(:func:`repetend.clean.spans.undo_cuts`).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence


from .._atomic import atomic_dir, atomic_path
from ..errors import InputError, ParameterError
from ..clean import CleanConfig, apply_cuts, make_writer, open_output, plan_clean
from ..scandir import open_scan, unfinished_scan

__all__ = ["CleanConfig", "CleanResult", "clean_corpus"]

_READ_KEYS = ("text_field", "id_field", "url_field", "fmt", "glob", "limit", "on_error", "html",
              "duplicate_ids")
_WRITABLE = ("jsonl", "parquet", "csv", "tsv", "text", "arrow")


@dataclass
class CleanResult:
    """What a cleaning did."""

    out: Path
    log: Path
    out_format: str
    documents_in: int = 0
    documents_out: int = 0
    documents_cleaned: int = 0          # kept, with boilerplate cut
    dropped_duplicates: int = 0
    dropped_min_share: int = 0
    chars_in: int = 0
    chars_removed: int = 0              # original characters in cuts and dropped documents
    notes: list[str] = field(default_factory=list)
    dropped_template: int = 0           # dropped: the cuts would remove more than max_cut
    kept_whole: int = 0                 # kept uncut: the cuts would remove more than max_cut
    chars_cut: int = 0                  # original characters cut from kept documents

    def as_dict(self) -> dict:
        d = asdict(self)
        d["out"], d["log"] = str(self.out), str(self.log)
        return d

    def describe(self) -> list[str]:
        share = self.chars_removed / self.chars_in if self.chars_in else 0.0
        ms = f", {self.dropped_min_share:,} at --min-share" if self.dropped_min_share else ""
        lines = [f"clean: {self.documents_in:,} documents in, {self.documents_out:,} out: "
                 f"dropped {self.dropped_duplicates:,} as duplicates, {self.dropped_template:,} as "
                 f"mostly template{ms}; kept {self.documents_cleaned:,} with boilerplate cut "
                 f"({self.chars_cut:,} characters cut), {self.kept_whole:,} whole although mostly "
                 f"template; {self.chars_removed:,} of {self.chars_in:,} characters removed "
                 f"({100 * share:.1f}%)",
                 f"clean: wrote {self.out} ({self.out_format}); removal log {self.log}"]
        return lines + [f"clean: note: {n}" for n in self.notes]


def _check_output(out: Path, files, inputs=()) -> None:
    """Refuse an output that would destroy something: an input, a directory that
    holds an input, or a non-empty directory (a text-tree output replaces the
    directory as a whole); and one inside an input directory, which the next read
    of that directory would take for more documents (the cleaned copies and their
    removal log)."""
    target = out.resolve()
    for given in inputs:
        d = Path(given)
        if d.is_dir() and d.resolve() in target.parents:
            raise InputError(f"the output is inside the input directory {given}: the next scan "
                             "of it would read the cleaned copies back as documents; choose an "
                             "--out outside it", path=str(out))
    for path, _ in files:
        p = Path(path).resolve()
        if p == target or target in p.parents:
            raise InputError("the output is (or contains) an input of the scan; choose another --out",
                             path=str(out))
    if out.is_dir() and any(out.iterdir()):
        raise InputError("the output directory exists and is not empty; refusing to replace it "
                         "(choose a new or empty directory)", path=str(out))


def _input_format(files) -> tuple[str, list[str]]:
    fmts = sorted({f for _, f in files})
    notes = []
    if len(fmts) == 1 and fmts[0] in _WRITABLE:
        return fmts[0], notes
    notes.append(f"input format(s) {', '.join(fmts)} cannot be written back as they were; "
                 "the cleaned corpus is written as JSONL (id, url, text)")
    return "records-jsonl", notes


def _match_by_position(store):
    """The scan's document of the *k*-th record read: the *k*-th, with the same id and
    text (a local scan numbers documents in reading order)."""
    n, doc_ids = store.n_docs, store.doc_ids

    def match(k: int, rec) -> int:
        if k >= n:
            raise InputError(f"more documents than the scan's {n:,}; the input changed since "
                             "the scan (or give the scan's --limit)", path=rec.source)
        if rec.id != doc_ids[k]:
            raise InputError(f"document {k} has id {rec.id!r} where the scan has {doc_ids[k]!r}; "
                             "the input changed since the scan", path=rec.source,
                             record=rec.record_no)
        if rec.text != store.text(k):
            raise InputError(f"document {rec.id!r} has another text than in the scan; the input "
                             "changed since the scan", path=rec.source, record=rec.record_no)
        return k

    match.unread = lambda: ""
    return match


def _match_by_id(store):
    """The scan's document of a record, by its id, its text checked by ``order_key``
    (a Spark scan numbers documents by a hash of id and text, not in reading order);
    ``match.unread()`` names a document no record matched."""
    import numpy as np

    from ..corpus.order_key import order_key

    doc_ids = store.doc_ids
    index_of = {d: i for i, d in enumerate(doc_ids)}
    keys = store.docs.column("order_key").to_numpy()
    seen = np.zeros(store.n_docs, bool)

    def match(k: int, rec) -> int:
        i = index_of.get(rec.id, -1)
        if i < 0 or seen[i]:
            raise InputError(f"document {rec.id!r} is {'read twice' if i >= 0 else 'not in the scan'}"
                             "; the input changed since the scan", path=rec.source,
                             record=rec.record_no)
        seen[i] = True
        if order_key(rec.id, rec.text) != int(keys[i]):
            raise InputError(f"document {rec.id!r} has another text than in the scan; the input "
                             "changed since the scan", path=rec.source, record=rec.record_no)
        return i

    match.unread = lambda: f" (the scan's {doc_ids[int(np.argmin(seen))]!r} was not read)"
    return match


def clean_corpus(inputs: Sequence[str | os.PathLike] | None, scan_dir: str | os.PathLike,
                 out: str | os.PathLike, *, config: CleanConfig | None = None, quiet: bool = True,
                 **input_options) -> CleanResult:
    """Write the corpus back without boilerplate spans and/or duplicates.

    Parameters
    ----------
    inputs
        The corpus that was scanned (files, directories, globs); ``None``: the
        inputs recorded in the scan's ``summary.json``.
    scan_dir
        The scan directory (``summary.json``, ``store/``, ``phrases/``, ``dups/``).
    out
        The cleaned corpus: a file (JSONL, Parquet, CSV/TSV; compressed by a
        ``.gz``/``.zst`` suffix for JSONL/CSV) or a directory for a tree of text
        files.  The removal log goes to ``<out>.removed.jsonl``.
    config
        What to remove (:class:`repetend.clean.CleanConfig`); default:
        boilerplate and duplicates, a document that would lose more than 90 %
        of its characters dropped as mostly template.
    quiet
        No progress bar.
    **input_options
        Override the reader options recorded in the scan (``text_field``,
        ``id_field``, ``url_field``, ``fmt``, ``glob``, ``limit``, ``on_error``).

    Returns
    -------
    CleanResult

    Raises
    ------
    InputError
        The input does not match the scan (another document count, id or text
        at some position: the input changed since the scan).

    Notes
    -----
    The boilerplate spans are the frequent spans of the scan (any phrase of
    ≥ L tokens in ≥ σ documents), or with ``spans="maximal"`` the occurrences
    of the maximal frequent phrases (the BloomSpan paper), mapped back to the
    original text; a document's boilerplate share is its frequent share (or
    its coverage by maximal phrases, the BloomSpan paper §6).  Re-scanning the cleaned
    corpus with the same σ finds none of the removed phrases.
    """
    cfg = config or CleanConfig()
    from ..corpus.readers import expand_inputs, read_corpus

    why = unfinished_scan(scan_dir)
    if why:
        raise InputError(why, path=str(scan_dir))
    scan = open_scan(scan_dir, need_store=True, verify=True)
    store = scan.store
    opts = {k: v for k, v in (scan.summary.get("input_options") or {}).items() if k in _READ_KEYS}
    if "fmt" not in opts and scan.summary.get("input_format") in ("jsonl", "parquet", "csv", "tsv", "text",
                                                                   "warc", "wet"):
        opts["fmt"] = scan.summary["input_format"]
    for k, v in input_options.items():
        if k not in _READ_KEYS:
            raise ParameterError(f"unknown input option {k!r}; options: {', '.join(_READ_KEYS)}")
        if v is not None:
            opts[k] = v
    if not inputs:
        inputs = scan.summary.get("inputs")
        if not inputs:
            raise ParameterError("give the input corpus (the scan does not record its inputs)")
    inputs = [str(x) for x in inputs]
    text_field = opts.get("text_field", "text")
    files = expand_inputs(inputs, opts.get("fmt"), opts.get("glob"))
    out_fmt, notes = _input_format(files)
    out = Path(out)
    _check_output(out, files, inputs)
    log_path = out.with_name(out.name + ".removed.jsonl")
    res = CleanResult(out=out, log=log_path, out_format="jsonl" if out_fmt == "records-jsonl" else out_fmt,
                      notes=notes)

    n = store.n_docs
    match = _match_by_id(store) if getattr(store, "numbered_by_key", False) else \
        _match_by_position(store)
    plan = plan_clean(scan, cfg)
    res.notes.extend(plan.notes)

    records = read_corpus(inputs, **opts)
    bar = None
    if not quiet:
        from tqdm import tqdm

        bar = tqdm(total=n, desc="clean", unit="doc", leave=False, dynamic_ncols=True)

    def run(target: Path):
        writer = make_writer(out_fmt, target, text_field, name=out.name)
        try:
            with atomic_path(log_path) as log_tmp, open_output(log_tmp) as log:
                k = -1
                for k, rec in enumerate(records):
                    text = rec.text
                    i = match(k, rec)
                    res.documents_in += 1
                    res.chars_in += len(text)
                    entry = None
                    p = plan.decide(i, text)
                    if p.decision != "keep":
                        new_text, changed = None, True
                        entry = {"reason": p.reason,
                                 "cuts": [{"start": 0, "end": len(text), "text": text, "replacement": "",
                                           "phrase_ids": []}]}
                        res.chars_removed += len(text)
                        if p.reason == "min_share":
                            res.dropped_min_share += 1
                            entry["boilerplate_share"] = p.share
                        elif p.reason == "mostly_template":
                            res.dropped_template += 1
                            entry["cut_share"] = p.cut_share
                        else:
                            res.dropped_duplicates += 1
                    elif p.reason == "kept_whole":
                        new_text, changed = text, False
                        res.kept_whole += 1
                        entry = {"reason": "kept_whole", "cut_share": p.cut_share, "cuts": []}
                    elif p.cuts:
                        new_text, changed = apply_cuts(text, p.cuts), True
                        res.chars_removed += p.chars_cut
                        res.chars_cut += p.chars_cut
                        res.documents_cleaned += 1
                        entry = {"reason": "boilerplate", "removed_chars": p.chars_cut,
                                 "cuts": [c.as_dict(text) for c in p.cuts]}
                    else:
                        new_text, changed = text, False
                    if entry is not None:
                        line = {"doc_index": i, "id": rec.id, "source": rec.source,
                                "record_no": rec.record_no, **entry}
                        log.write(json.dumps(line, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n")
                    writer.emit(rec, new_text, changed)
                    if new_text is not None:
                        res.documents_out += 1
                    if bar is not None:
                        bar.update(1)
                if k + 1 != n:
                    raise InputError(f"{k + 1:,} documents read where the scan has {n:,}"
                                     f"{match.unread() if k + 1 < n else ''}; the input changed since "
                                     "the scan (or give the same --limit)", path=inputs[0])
        finally:
            writer.close()

    try:
        if out_fmt in ("text", "arrow"):   # a directory out
            with atomic_dir(out) as tmp:
                run(tmp)
        else:
            with atomic_path(out) as tmp:
                run(tmp)
    finally:
        if bar is not None:
            bar.close()
    return res
