"""Phrase results: :class:`PhraseResult`, its tables, and reading one back.

:func:`~repetend.phrases.find_phrases` (and the Spark engine,
:func:`repetend.spark.find_phrases`) put the phrases in the canonical order
(Ψ = length·df descending, then longer first, then lexicographic on token
ids, so that both engines give bit-identical tables) and compute the coverage
figures of the BloomSpan paper, §6, into the tables built here.

Output tables (``PhraseResult.write``):

``phrases``      phrase_id, tokens (list<string>), text, df, occurrences, length, psi, example_doc_id
``documents``    doc_index, doc_id, url, host, n_tokens, covered_tokens, boilerplate_share,
                 frequent_tokens, frequent_share
``hosts``        host, documents, tokens, covered_tokens, covered_share, frequent_tokens,
                 frequent_share   (only when urls are known)
``occurrences``  phrase_id, doc_index, doc_id, start, end   (token positions within the document),
                 char_start, char_end   (the same in characters of the text, from a store)
``spans``        doc_index, doc_id, start, end[, char_start, char_end], phrase_id
                 (merged frequent spans, see below)

Two coverage measures. ``covered``/``boilerplate_share`` is the paper's: the
tokens inside an occurrence of a reported (maximal) phrase. ``frequent`` is
the tokens inside *any* phrase of ≥ L tokens with df ≥ σ, maximal or not
(:mod:`repetend.phrases.frequent_spans`): it also counts a shared block
where it stands without the context that made a longer phrase maximal, so
it is the answer to "how much of the corpus is template", the basis of the
drop candidates, and what ``repetend clean`` removes by default.
``summary.json`` parameters, engine, coverage, distribution, index eaters, drop candidates, timings
"""

from __future__ import annotations

import json
import resource
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from .._atomic import write_json, write_jsonl, write_parquet
from ..errors import InputError, ParameterError
from ._raw import RawPhrases
from .config import PhraseConfig
from .coverage import share_distribution

__all__ = ["TABLES", "PhraseResult", "hosts_table", "phrase_summary", "phrase_tables",
           "read_result", "template_layer_cut"]

TABLES = ("phrases", "documents", "hosts", "occurrences", "spans")


@dataclass
class PhraseResult:
    """Maximal frequent phrases with their coverage; see the module docstring
    for the columns.  ``raw`` holds the phrases in canonical order (phrase i
    of ``raw`` is ``phrase_id`` i)."""

    phrases: pa.Table
    documents: pa.Table
    hosts: pa.Table | None
    occurrences: pa.Table
    summary: dict
    config: PhraseConfig
    raw: RawPhrases | None = field(default=None, repr=False)
    n_tokens: int = 0
    spans: pa.Table | None = None
    templates: Any = None   # TemplateResult, when templates were looked for

    @property
    def n_phrases(self) -> int:
        return self.phrases.num_rows

    def table(self, name: str) -> pa.Table | None:
        if name not in TABLES:
            raise ParameterError(f"no table {name!r}; tables: {', '.join(TABLES)}")
        return getattr(self, name)

    def to_pandas(self, table: str = "phrases"):
        """One table as a pandas DataFrame (``phrases`` by default)."""
        t = self.table(table)
        if t is None:
            raise ParameterError(f"table {table!r} is empty: the corpus has no urls")
        return t.to_pandas()

    def coverage_mask(self) -> npt.NDArray[np.bool_]:
        """Boolean mask over all token positions (needs ``raw``)."""
        from .coverage import coverage_mask

        if self.raw is None:
            raise ParameterError("coverage_mask needs the raw phrases (a result read "
                                 "from disk has only the tables)")
        return coverage_mask(self.raw, self.n_tokens)

    def write(self, out: str | Path, format: Literal["parquet", "jsonl"] = "parquet") -> Path:
        """Write every table and ``summary.json`` into directory *out*, each file
        atomically (an interrupted run leaves whole files only), templates
        included, in *format*; the other format's tables are removed."""
        if format not in ("parquet", "jsonl"):
            raise ParameterError(f"format must be parquet or jsonl, got {format!r}")
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise InputError("output path exists and is not a directory", path=str(out))
        out.mkdir(parents=True, exist_ok=True)
        for name in TABLES:
            # a table left by an earlier run — of the other format, or one this
            # result has not (hosts) — would be read back with this one
            t = getattr(self, name)
            for fmt in ("parquet", "jsonl"):
                if t is None or fmt != format:
                    (out / f"{name}.{fmt}").unlink(missing_ok=True)
            if t is None:
                continue
            if format == "parquet":
                write_parquet(out / f"{name}.parquet", t)
            else:
                write_jsonl(out / f"{name}.jsonl", t)
        if self.templates is not None:
            self.templates.write(out, format)
        elif "templates" not in self.summary:
            # no layer this time (not asked, or skipped under the memory limit): a
            # previous run's templates left here would reach the report and `clean`
            # (a result read back has the summary's "templates" and keeps them)
            for name in ("templates.parquet", "template_occurrences.parquet",
                         "templates.jsonl", "template_occurrences.jsonl",
                         "templates_summary.json"):
                (out / name).unlink(missing_ok=True)
        write_json(out / "summary.json", self.summary)
        return out

    def to_parquet(self, out: str | Path) -> Path:
        """Same as ``write(out, "parquet")``."""
        return self.write(out, "parquet")

    @classmethod
    def read(cls, path: str | Path) -> "PhraseResult":
        """Read a result directory written by :meth:`write` (Parquet or JSONL)."""
        return read_result(path)


def read_result(path: str | Path) -> PhraseResult:
    """Read a result directory written by :meth:`PhraseResult.write`."""
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    path = Path(path)
    summary_file = path / "summary.json"
    if not summary_file.is_file():
        raise InputError("not a phrases result (no summary.json)", path=str(path))
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    tables: dict[str, pa.Table | None] = {}
    for name in TABLES:
        if (path / f"{name}.parquet").is_file():
            tables[name] = pq.read_table(path / f"{name}.parquet")
        elif (path / f"{name}.jsonl").is_file():
            f = path / f"{name}.jsonl"
            tables[name] = pj.read_json(f) if f.stat().st_size else pa.table({})
        else:
            tables[name] = None
    config = PhraseConfig.from_params(summary.get("parameters", {}))
    return PhraseResult(phrases=tables["phrases"], documents=tables["documents"],
                        hosts=tables["hosts"], occurrences=tables["occurrences"],
                        summary=summary, config=config,
                        n_tokens=int(summary.get("tokens", 0)), spans=tables["spans"])


def template_layer_cut(summary: dict) -> bool:
    """Whether the memory limit cut the template layer of the phrases run whose
    ``summary.json`` is *summary*: skipped (``templates_skipped``), or merge-only
    where the default layer was asked (``templates.memory_plan``)."""
    if "templates_skipped" in summary:
        return True
    plan = (summary.get("templates") or {}).get("memory_plan") or {}
    return plan.get("mode", plan.get("asked")) != plan.get("asked")


def phrase_tables(tokens_col, texts: list, lengths: np.ndarray, df: np.ndarray,
                  counts: np.ndarray, first_doc: np.ndarray, phrase_of: np.ndarray,
                  occ_doc: np.ndarray, occ_local: np.ndarray, doc_ids):
    """The ``phrases`` and ``occurrences`` tables (local and Spark results):
    ``tokens_col`` a list<string> column, ``doc_ids`` an Arrow string array;
    occurrences by phrase, with document-local token starts."""
    import pyarrow as pa

    phrases = pa.table({
        "phrase_id": pa.array(np.arange(lengths.shape[0], dtype=np.int64)),
        "tokens": tokens_col,
        "text": pa.array(texts, pa.string()),
        "df": pa.array(df),
        "occurrences": pa.array(counts),
        "length": pa.array(lengths),
        "psi": pa.array(lengths * df),
        "example_doc_id": doc_ids.take(pa.array(first_doc)),
    })
    occurrences = pa.table({
        "phrase_id": pa.array(phrase_of),
        "doc_index": pa.array(occ_doc),
        "doc_id": doc_ids.take(pa.array(occ_doc)),
        "start": pa.array(occ_local),
        "end": pa.array(occ_local + np.repeat(lengths, counts)),
    })
    return phrases, occurrences


def hosts_table(documents: pa.Table) -> pa.Table:
    """Per-host figures from the documents table (documents, tokens, covered and
    frequent tokens and shares), most covered first."""
    g = documents.group_by("host").aggregate([
        ("doc_index", "count"), ("n_tokens", "sum"), ("covered_tokens", "sum"),
        ("frequent_tokens", "sum")])
    tok = g.column("n_tokens_sum").to_numpy()
    cov = g.column("covered_tokens_sum").to_numpy()
    fcov = g.column("frequent_tokens_sum").to_numpy()

    def share(x):
        return pa.array(np.divide(x, tok, out=np.zeros(tok.size, np.float64), where=tok > 0))

    return pa.table({
        "host": g.column("host"),
        "documents": g.column("doc_index_count").cast(pa.int64()),
        "tokens": pa.array(tok.astype(np.int64)),
        "covered_tokens": pa.array(cov.astype(np.int64)),
        "covered_share": share(cov),
        "frequent_tokens": pa.array(fcov.astype(np.int64)),
        "frequent_share": share(fcov),
    }).sort_by([("covered_tokens", "descending"), ("host", "ascending")])


def _peak_memory_bytes() -> int:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)


def phrase_summary(cfg: PhraseConfig, engine: str, reason: dict, n_tok: np.ndarray,
                   covered: np.ndarray, share: np.ndarray, frequent_total: int,
                   fshare: np.ndarray, *, n_spans: int, n_occurrences: int, psi: np.ndarray,
                   df: np.ndarray, lengths: np.ndarray, occurrences: np.ndarray, texts: list,
                   doc_ids, timings: dict, engine_stats: dict) -> dict:
    """``summary.json`` of a phrase run (local or Spark): coverage, the index eaters
    (the first ``top_k`` phrases, already in Ψ order), drop candidates by the
    frequent-span share.  Per-document arrays are indexed by document; ``doc_ids[d]``
    is a string."""
    n_docs = int(n_tok.shape[0])
    n_tokens = int(n_tok.sum())
    nonempty = n_tok > 0
    cov_total = int(covered.sum())
    drop = np.flatnonzero(nonempty & (fshare >= cfg.near_full_share))
    drop = drop[np.argsort(-fshare[drop], kind="stable")]
    k = min(cfg.top_k, int(psi.shape[0]))
    return {
        "parameters": cfg.to_params(),
        "engine": engine,
        "engine_choice": reason,
        "documents": n_docs,
        "empty_documents": int(np.count_nonzero(~nonempty)),
        "tokens": n_tokens,
        "covered_tokens": cov_total,
        "covered_share": cov_total / n_tokens if n_tokens else 0.0,
        "frequent_tokens": int(frequent_total),
        "frequent_share": int(frequent_total) / n_tokens if n_tokens else 0.0,
        "frequent_spans": int(n_spans),
        "phrases": int(psi.shape[0]),
        "occurrences": int(n_occurrences),
        "document_share": share_distribution(share[nonempty], bins=cfg.histogram_bins),
        "index_eaters": [
            {"phrase_id": i, "psi": int(psi[i]), "df": int(df[i]), "length": int(lengths[i]),
             "occurrences": int(occurrences[i]), "text": texts[i]} for i in range(k)],
        "drop_candidates": {
            "threshold": cfg.near_full_share,
            "count": int(drop.size),
            "measure": "frequent_share",
            "documents": [{"doc_index": int(d), "doc_id": doc_ids[d],
                           "share": float(fshare[d]), "boilerplate_share": float(share[d]),
                           "n_tokens": int(n_tok[d])}
                          for d in drop[:cfg.max_drop_candidates]],
        },
        "timings": timings,
        "peak_memory_bytes": _peak_memory_bytes(),
        "engine_stats": engine_stats,
    }
