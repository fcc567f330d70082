"""``build_report``: one self-contained HTML page from a scan directory.

The page answers the questions of the BloomSpan paper, §6 (how much of the
corpus is repeated text, which phrases eat the index, which documents are almost
all template, which sites are polluted) and of near-duplicate detection (Broder
1997; the MinHash/LSH article: which documents are near-copies, how the LSH
setting behaves on this corpus); sources in ``docs/references.md``.

A report reads results, it computes none: every figure comes from the scan
directory (:mod:`repetend.scandir`), the measured S-curve points included
(computed by the scan job, :mod:`repetend.neardup.recall`).

Safety: every string that comes from the corpus or from the scan files is
passed through :func:`html.escape` (with ``quote=True``) before it reaches the
page, whether in text or in an attribute; the inline script carries no data and
is pinned by a Content-Security-Policy hash, so even a mistake in escaping
could not run a script from the corpus.  The page loads nothing from the
network (``default-src 'none'``).
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._atomic import atomic_path
from ..errors import ParameterError
from ..limits import MAX_LIST
from . import plots
from .assets import CSS, JS, script_hash
from .distinct import Distinct, distinct_view, phrase_cluster_df
from ..neardup.recall import RECALL_FLOOR, RECALL_MAX_TOKENS
from ..scandir import DUPS, PHRASES, ScanDir, open_scan

__all__ = ["ReportCaps", "build_report"]


@dataclass(frozen=True, slots=True)
class ReportCaps:
    """How much the page shows at most, so a scan of millions of documents
    still gives a small, fast page."""

    max_phrases: int = 200         # index eaters listed
    examples_per_phrase: int = 3   # documents shown in context per phrase
    context_chars: int = 160       # characters of context either side of an occurrence
    max_rows: int = 200            # rows of each document / host / pair table
    max_clusters: int = 100        # duplicate clusters listed
    max_members: int = 20          # member ids listed per cluster
    max_chords: int = 5000         # chords in the circle picture (random sample above)
    max_text_chars: int = 1500     # characters of a document shown side by side
    drop_share: float = 0.9        # "almost all template" threshold when the scan gives none

    def __post_init__(self):
        for name in ("max_phrases", "max_rows", "max_clusters", "max_chords", "max_text_chars",
                     "context_chars", "max_members"):
            if not 1 <= getattr(self, name) <= MAX_LIST:
                raise ParameterError(f"{name} must be in 1..{MAX_LIST}, got {getattr(self, name)}")
        if self.examples_per_phrase < 0:
            raise ParameterError("examples_per_phrase must be ≥ 0")
        if not 0.0 < self.drop_share <= 1.0:
            raise ParameterError(f"drop_share must be in (0, 1], got {self.drop_share}")


def e(x) -> str:
    """Escape anything for HTML text or a double/single-quoted attribute."""
    return html.escape("" if x is None else str(x), quote=True)


def _fmt_int(x) -> str:
    try:
        return f"{int(x):,}"
    except (TypeError, ValueError):
        return e(x)


def _fmt_share(x) -> str:
    try:
        return f"{100.0 * float(x):.1f}%"
    except (TypeError, ValueError):
        return "–"


def _num_td(value, text: str | None = None) -> str:
    v = "" if value is None else (f"{float(value):.6g}" if isinstance(value, (float, np.floating)) else str(value))
    return f'<td class="num" data-v="{e(v)}">{e(text) if text is not None else e(v)}</td>'


def _truncate(s: str, n: int) -> str:
    return s if len(s) <= n else s[:n] + f" … [{len(s) - n:,} more characters]"


class _Texts:
    """Document texts and token spans from the store, cached per document."""

    def __init__(self, store):
        self.store = store
        self._spans: dict[int, np.ndarray] = {}
        self.problem: str | None = None

    def text(self, d: int) -> str | None:
        if self.store is None:
            return None
        return self.store.text(int(d))

    def spans(self, d: int):
        if self.store is None:
            return None
        d = int(d)
        if d not in self._spans:
            try:
                self._spans[d] = self.store.token_spans(d)
            except Exception as exc:  # noqa: BLE001 - shown in the page, never fatal
                self.problem = f"token spans unavailable ({type(exc).__name__}: {exc})"
                return None
        return self._spans[d]


# --------------------------------------------------------------------------- sections

def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{e(anchor)}"><h2>{e(title)}</h2>\n{body}\n</section>\n'


def _card(value: str, label: str) -> str:
    return f'<div class="card"><div class="v">{value}</div><div class="k">{e(label)}</div></div>'


def _figure(svg: str | None, caption: str, alt: str) -> str:
    if svg is None:
        return f'<p class="note">{e(caption)} (nothing to draw)</p>'
    return (f'<figure><img alt="{e(alt)}" src="{plots.svg_data_uri(svg)}">'
            f"<figcaption>{e(caption)}</figcaption></figure>")


def _n_docs(scan: ScanDir) -> int | None:
    corpus = scan.summary.get("corpus") or {}
    if scan.store is not None:
        return scan.store.n_docs
    return corpus.get("documents")


def _summary_section(scan: ScanDir, facts: dict) -> str:
    corpus = scan.summary.get("corpus") or {}
    n_docs = _n_docs(scan)
    n_tok = scan.store.n_tokens if scan.store is not None else corpus.get("tokens")
    cards = [_card(_fmt_int(n_docs), "documents"), _card(_fmt_int(n_tok), "tokens")]
    dup = facts.get("duplicate")
    if dup is not None:
        cards.append(_card(_fmt_int(facts["n_distinct"]), "distinct documents (one per near-duplicate "
                           "cluster)"))
        tok = f" ({_fmt_share(dup['tokens_share'])} of tokens)" if "tokens_share" in dup else ""
        cards.append(_card(_fmt_share(dup["documents_share"]) + e(tok),
                           "duplicate share: documents beyond one representative per cluster"))
    if "frequent_share_distinct" in facts:
        cards.append(_card(_fmt_share(facts["frequent_share_distinct"]),
                           "boilerplate share: tokens of distinct documents inside some phrase of ≥ L "
                           f"tokens found in ≥ σ {facts.get('df_unit', 'documents')}"))
    if "boilerplate_share_distinct" in facts:
        cards.append(_card(_fmt_share(facts["boilerplate_share_distinct"]),
                           "of the tokens of distinct documents are inside occurrences of the reported "
                           "maximal phrases"))
        cards.append(_card(_fmt_int(facts.get("n_phrases")), "maximal frequent phrases"))
    if "dup_doc_share" in facts:
        cards.append(_card(_fmt_int(facts.get("n_clusters")), "near-duplicate clusters (≥ 2 documents)"))
    parts = [f'<div class="cards">{"".join(cards)}</div>']
    if dup is not None or "frequent_share_distinct" in facts:
        parts.append(
            '<p class="note">How the two shares are counted. A <b>distinct document</b> is one '
            "near-duplicate cluster (a document in no cluster is its own cluster), stood for by its "
            "representative. The <b>duplicate share</b> is the documents that are not representatives, "
            "and their tokens, over all documents and all tokens: what keeping one document per cluster "
            "removes. The <b>boilerplate share</b> is Σ over representatives of their tokens inside "
            "frequent spans (any phrase of ≥ L tokens in ≥ σ "
            f"{e(facts.get('df_unit', 'documents'))}), over Σ of the representatives' tokens: each "
            "cluster counted once, so copies of a document add nothing to it. The two do not overlap "
            "and do not add up to a total of repeated text.</p>")
    skipped = dict(scan.summary.get("skipped") or {})
    for stage, on in (scan.summary.get("stages") or {}).items():
        if on is False and stage not in skipped:
            skipped[stage] = "skipped by the scan's options"
    if not scan.has_phrases:
        why = skipped.get("phrases") if isinstance(skipped, dict) else None
        parts.append(f'<p class="skip">Boilerplate phrases: not in this scan (no <code>phrases/</code>)'
                     f'{": " + e(why) if why else " — the stage was skipped or not run"}.</p>')
    if not scan.has_dups:
        why = skipped.get("dups") if isinstance(skipped, dict) else None
        parts.append(f'<p class="skip">Near-duplicate documents: not in this scan (no <code>dups/</code>)'
                     f'{": " + e(why) if why else " — the stage was skipped or not run"}.</p>')
    if scan.store is None:
        parts.append(f'<p class="skip">Document texts: {e(scan.store_problem)}; examples and side-by-side '
                     f"samples are left out.</p>")
    read = corpus.get("read") or corpus
    rows = [(k, read.get(k)) for k in ("files", "records", "malformed", "empty", "invalid_utf8",
                                      "missing_text", "skipped_non_response") if read.get(k) is not None]
    if rows:
        parts.append('<h3>Reading the input</h3><table class="kv"><tbody>' + "".join(
            f'<tr><th>{e(k.replace("_", " "))}</th>{_num_td(v, _fmt_int(v))}</tr>' for k, v in rows)
            + "</tbody></table>")
        errs = read.get("errors") or []
        if errs:
            parts.append("<details><summary>first read errors</summary><pre>"
                         + e("\n".join(map(str, errs))) + "</pre></details>")
    langs = corpus.get("languages")   # --lang-detect
    if langs:
        total = sum(langs.values()) or 1
        top = sorted(langs.items(), key=lambda kv: (-kv[1], kv[0]))
        parts.append('<h3>Languages (detected per document)</h3><table class="kv"><tbody>' + "".join(
            f'<tr><th>{e(k or "und")}</th>{_num_td(v, _fmt_int(v) + " (" + _fmt_share(v / total) + ")")}</tr>'
            for k, v in top[:20]) + "</tbody></table>"
            + (f'<p class="note">{len(top) - 20} more languages in <code>documents.parquet</code> '
               "(column language).</p>" if len(top) > 20 else ""))
    inputs = scan.summary.get("inputs")
    if inputs:
        parts.append(f'<p class="note">Inputs: {e(", ".join(map(str, inputs)))}'
                     f'{" (" + e(scan.summary.get("input_format")) + ")" if scan.summary.get("input_format") else ""}</p>')
    return _section("summary", "Corpus summary", "\n".join(parts))


def _context_html(texts: _Texts, d: int, start: int, end: int, caps: ReportCaps) -> str | None:
    text = texts.text(d)
    spans = texts.spans(d)
    if text is None or spans is None or end <= start or end > spans.shape[0]:
        return None
    cs, ce = int(spans[start, 0]), int(spans[end - 1, 1])
    w = caps.context_chars
    a, b = max(0, cs - w), min(len(text), ce + w)
    mid = _truncate(text[cs:ce], 4 * w)
    return (("…" if a > 0 else "") + e(text[a:cs]) + "<mark>" + e(mid) + "</mark>"
            + e(text[ce:b]) + ("…" if b < len(text) else ""))


def _phrase_examples(scan: ScanDir, phrase_ids: np.ndarray, k: int) -> dict[int, list[tuple[int, int, int]]]:
    """Up to *k* occurrences in distinct documents for each wanted phrase,
    taken from the first row groups of occurrences.parquet that hold them."""
    out: dict[int, list[tuple[int, int, int]]] = {int(p): [] for p in phrase_ids}
    pf = scan.parquet_file(f"{PHRASES}/occurrences.parquet")
    if pf is None or k == 0 or not out:
        return out
    wanted = pa.array(np.asarray(phrase_ids, dtype=np.int64))
    missing = len(out)
    for batch in pf.iter_batches(batch_size=1 << 18, columns=["phrase_id", "doc_index", "start", "end"]):
        t = pa.Table.from_batches([batch])
        t = t.filter(pc.is_in(pc.cast(t.column("phrase_id"), pa.int64()), value_set=wanted))
        if t.num_rows == 0:
            continue
        pid = t.column("phrase_id").to_numpy()
        doc = t.column("doc_index").to_numpy()
        st = t.column("start").to_numpy()
        en = t.column("end").to_numpy()
        for i in range(t.num_rows):  # rows of wanted phrases only (small)
            lst = out[int(pid[i])]
            if len(lst) < k and all(x[0] != doc[i] for x in lst):
                lst.append((int(doc[i]), int(st[i]), int(en[i])))
                if len(lst) == k:
                    missing -= 1
        if missing == 0:
            break
    return out


def _phrases_section(scan: ScanDir, texts: _Texts, caps: ReportCaps, facts: dict, distinct: Distinct) -> str:
    t = scan.table(f"{PHRASES}/phrases.parquet")
    n_all = t.num_rows
    facts["n_phrases"] = n_all
    n_tok = scan.store.n_tokens if scan.store is not None else (scan.summary.get("corpus") or {}).get("tokens")
    if n_all == 0:
        return _section("eaters", "Biggest index eaters", '<p class="note">No phrase reached the support '
                        "and length thresholds.</p>")
    length_all = pc.cast(t.column("length"), pa.int64()).to_numpy(zero_copy_only=False)
    df_all = pc.cast(t.column("df"), pa.int64()).to_numpy(zero_copy_only=False)
    if distinct.has_clusters:
        cdf_all = phrase_cluster_df(scan, distinct, pc.cast(t.column("phrase_id"), pa.int64())
                                    .to_numpy(zero_copy_only=False))
    else:
        cdf_all = df_all
    psi_c_all = length_all * cdf_all
    sigma = ((scan.phrases_summary or {}).get("parameters") or {}).get("min_docs") \
        or (scan.summary.get("parameters") or {}).get("min_docs")
    # a phrase frequent only through copies of one document (in fewer than σ distinct
    # clusters) is no index eater once one document per cluster is kept
    through_copies = np.flatnonzero(cdf_all < int(sigma)) if sigma and distinct.has_clusters \
        else np.empty(0, np.int64)
    order = np.lexsort((-length_all, -psi_c_all))
    order = order[cdf_all[order] >= int(sigma)] if through_copies.size else order
    n_all = int(order.size)
    if n_all == 0:
        return _section("eaters", "Biggest index eaters", f'<p class="note">All {t.num_rows:,} phrases '
                        f"are frequent only through near-duplicate copies (in fewer than σ = {int(sigma)} "
                        "distinct clusters).</p>")
    top = order[:caps.max_phrases]
    t = t.take(pa.array(top))
    cols = {c: t.column(c).to_pylist() for c in t.column_names}
    cols["cluster_df"] = cdf_all[top].tolist()
    cols["psi_clusters"] = psi_c_all[top].tolist()
    ex = _phrase_examples(scan, np.asarray(cols["phrase_id"]), caps.examples_per_phrase)
    id_of = scan.store.docs.column("doc_id") if scan.store is not None else None
    rows = []
    for i in range(t.num_rows):
        pid = cols["phrase_id"][i]
        text = cols.get("text", [None] * t.num_rows)[i]
        if not text:
            text = " ".join(cols.get("tokens", [[]] * t.num_rows)[i] or [])
        occ = cols.get("occurrences", [None] * t.num_rows)[i]
        length = cols.get("length", [None] * t.num_rows)[i]
        share = (occ * length / n_tok) if (occ is not None and length and n_tok) else None
        ex_html = []
        for d, s, en in ex.get(int(pid), []):
            ctx = _context_html(texts, d, s, en, caps)
            if ctx is None:
                continue
            who = id_of[d].as_py() if id_of is not None else d
            ex_html.append(f'<div class="ctx"><span class="who">document {e(who)}</span>{ctx}</div>')
        body = f'<span class="phrase">{e(_truncate(text, 400))}</span>'
        if ex_html:
            body = (f'<details><summary><span class="phrase">{e(_truncate(text, 400))}</span></summary>'
                    + "".join(ex_html) + "</details>")
        rows.append("<tr>" + _num_td(i + 1) + f'<td class="text" data-v="{e(text[:200])}">{body}</td>'
                    + _num_td(cols["df"][i], _fmt_int(cols["df"][i]))
                    + _num_td(cols["cluster_df"][i], _fmt_int(cols["cluster_df"][i]))
                    + _num_td(occ, _fmt_int(occ))
                    + _num_td(length, _fmt_int(length))
                    + _num_td(cols["psi_clusters"][i], _fmt_int(cols["psi_clusters"][i]))
                    + _num_td(share, _fmt_share(share) if share is not None else "–") + "</tr>")
    params = (scan.phrases_summary or {}).get("parameters") or {}
    pnote = ", ".join(f"{k} = {v}" for k, v in params.items()
                      if k in ("min_docs", "min_len", "engine") and v is not None)
    head = (f'<p class="note">Maximal contiguous frequent phrases (the BloomSpan paper) ordered by '
            f"Ψ = length × (distinct clusters with the phrase), the tokens each one takes from an index "
            f"that keeps one document per near-duplicate cluster: a phrase is counted once per cluster, "
            f"not once per copy. df is the support the phrase was mined with (over "
            f"{e(facts.get('df_unit', 'documents'))}). Showing {min(n_all, caps.max_phrases):,} of "
            f"{n_all:,}{'; ' + e(pnote) if pnote else ''}. Click a phrase for up to "
            f"{caps.examples_per_phrase} documents with the phrase highlighted in context. "
            f"“share” = occurrences × length / all tokens (an upper bound: occurrences may overlap).</p>")
    if through_copies.size:
        head += (f'<p class="note">Left out: {through_copies.size:,} of the {facts["n_phrases"]:,} phrases reach '
                 f"df ≥ σ = {int(sigma)} only by counting the copies of near-duplicate documents: they are "
                 f"in fewer than σ distinct clusters, so they are not text that many different documents "
                 f"share.</p>")
    if texts.problem:
        head += f'<p class="skip">Examples left out: {e(texts.problem)}</p>'
    table = ('<table class="sortable"><thead><tr><th class="num">#</th><th>phrase (surface form)</th>'
             f'<th class="num">df ({e(facts.get("df_unit", "documents"))})</th>'
             '<th class="num">distinct clusters</th><th class="num">occurrences</th>'
             '<th class="num">length (tokens)</th><th class="num">Ψ = length × clusters</th>'
             '<th class="num">share of tokens</th></tr></thead><tbody>' + "\n".join(rows) + "</tbody></table>")
    return _section("eaters", "Biggest index eaters", head + table)


def _doc_snippet(texts: _Texts, d: int, n: int = 160) -> str:
    t = texts.text(d)
    if t is None:
        return ""
    t = " ".join(t.split())
    return t[:n] + ("…" if len(t) > n else "")


def _coverage_section(scan: ScanDir, texts: _Texts, caps: ReportCaps, facts: dict, distinct: Distinct,
                      decisions: pa.Table | None) -> str:
    t = scan.table(f"{PHRASES}/documents.parquet")
    if t is None:
        return _section("coverage", "Boilerplate share per document",
                        '<p class="note">No phrases/documents.parquet in the scan.</p>')
    n_tokens = pc.cast(t.column("n_tokens"), pa.float64()).to_numpy(zero_copy_only=False)
    covered = pc.cast(t.column("covered_tokens"), pa.float64()).to_numpy(zero_copy_only=False)
    dix = (pc.cast(t.column("doc_index"), pa.int64()).to_numpy(zero_copy_only=False)
           if "doc_index" in t.column_names else np.arange(t.num_rows))
    ok = dix < distinct.n_docs
    rep = np.zeros(t.num_rows, bool)
    rep[ok] = distinct.representative[dix[ok]]
    copies = np.ones(t.num_rows, np.int64)
    copies[ok] = distinct.size[dix[ok]]
    total = float(n_tokens.sum())
    rep_total = float(n_tokens[rep].sum())
    facts["boilerplate_share"] = float(covered.sum() / total) if total else 0.0
    facts["boilerplate_share_distinct"] = float(covered[rep].sum() / rep_total) if rep_total else 0.0
    # the frequent-span share (any frequent phrase, maximal or not) when the scan has it
    share_col = "frequent_share" if "frequent_share" in t.column_names else "boilerplate_share"
    share = pc.cast(t.column(share_col), pa.float64()).to_numpy(zero_copy_only=False)
    if share_col == "frequent_share":
        fcov = pc.cast(t.column("frequent_tokens"), pa.float64()).to_numpy(zero_copy_only=False)
        facts["frequent_share"] = float(fcov.sum() / total) if total else 0.0
        facts["frequent_share_distinct"] = float(fcov[rep].sum() / rep_total) if rep_total else 0.0
    psum = scan.phrases_summary or {}
    pp = psum.get("parameters") or {}
    drop_at = psum.get("drop_share") or pp.get("near_full_share") or pp.get("drop_share") or caps.drop_share
    drop_at = float(drop_at)
    rshare = share[rep]
    svg = plots.share_histogram(rshare, drop_at=drop_at)
    parts = [_figure(svg, "Each bar counts the distinct documents (one representative per near-duplicate "
                          "cluster) whose share of boilerplate tokens falls in the bin. A hump at the right "
                          "end means pages that are almost entirely template.",
                     "histogram of per-document boilerplate share")]
    q = np.quantile(rshare, [0.5, 0.9, 0.99]) if rshare.size else [0, 0, 0]
    parts.append(f'<p class="note">Over the {int(rep.sum()):,} distinct documents: median share '
                 f"{_fmt_share(q[0])}, 90th percentile {_fmt_share(q[1])}, 99th percentile "
                 f"{_fmt_share(q[2])}; boilerplate share (their tokens) "
                 f"{_fmt_share(facts.get('frequent_share_distinct', facts['boilerplate_share_distinct']))}"
                 f" (all {t.num_rows:,} documents, copies included: "
                 f"{_fmt_share(facts.get('frequent_share', facts['boilerplate_share']))}). "
                 + ("Share = tokens inside any phrase of ≥ L tokens in ≥ σ "
                    f"{e(facts.get('df_unit', 'documents'))} (maximal or not)."
                    if share_col == "frequent_share" else "")
                 + "</p>")
    cand = np.flatnonzero(rep & (share >= drop_at))
    cand = cand[np.lexsort((-n_tokens[cand], -share[cand]))]
    parts.append(f"<h3>Drop candidates: {len(cand):,} distinct documents with share ≥ {drop_at:g}</h3>")
    if len(cand):
        doc_id = t.column("doc_id").to_pylist() if "doc_id" in t.column_names else None
        url = t.column("url").to_pylist() if "url" in t.column_names else None
        decision = reason = None
        if decisions is not None:
            decision = decisions.column("decision").to_pylist()
            reason = decisions.column("reason").to_pylist()
        rows = []
        for i in cand[:caps.max_rows]:
            d = int(dix[i])
            what = ""
            if decision is not None and d < len(decision):
                what = decision[d] + (f" ({reason[d]})" if reason[d] else "")
            rows.append("<tr>" + f'<td class="text">{e(doc_id[i] if doc_id else dix[i])}</td>'
                        + f'<td class="text">{e((url[i] if url else None) or "")}</td>'
                        + _num_td(int(copies[i]), _fmt_int(copies[i]))
                        + _num_td(int(n_tokens[i]), _fmt_int(n_tokens[i]))
                        + _num_td(float(share[i]), _fmt_share(share[i]))
                        + f'<td class="text">{e(what)}</td>'
                        + f'<td class="text">{e(_doc_snippet(texts, d))}</td></tr>')
        parts.append(f'<p class="note">One row per near-duplicate cluster (its representative; '
                     f"“copies” = documents in the cluster). Showing {min(len(cand), caps.max_rows):,} "
                     "(largest share first). “clean” = what <code>repetend clean</code> with its defaults "
                     "does to the document (documents.parquet).</p>"
                     '<table class="sortable"><thead><tr><th>document</th><th>url</th>'
                     '<th class="num">copies</th><th class="num">tokens</th>'
                     '<th class="num">boilerplate share</th><th>clean</th><th>beginning of text</th>'
                     "</tr></thead><tbody>" + "\n".join(rows) + "</tbody></table>")
    return _section("coverage", "Boilerplate share per document", "\n".join(parts))


def _hosts_section(scan: ScanDir, caps: ReportCaps) -> str:
    t = scan.table(f"{PHRASES}/hosts.parquet")
    if t is None or t.num_rows == 0:
        return _section("hosts", "Sites", '<p class="note">No per-host table: the documents have no urls '
                        "(give --url-field to scan to get one).</p>")
    tok_col, share_col = (("frequent_tokens", "frequent_share") if "frequent_tokens" in t.column_names
                          else ("covered_tokens", "covered_share"))
    order = np.argsort(-pc.cast(t.column(tok_col), pa.float64()).to_numpy(zero_copy_only=False),
                       kind="stable")[:caps.max_rows]
    t = t.take(pa.array(order))
    c = {k: t.column(k).to_pylist() for k in t.column_names}
    rows = []
    for i in range(t.num_rows):
        rows.append("<tr>" + f'<td class="text">{e(c["host"][i])}</td>'
                    + _num_td(c["documents"][i], _fmt_int(c["documents"][i]))
                    + _num_td(c["tokens"][i], _fmt_int(c["tokens"][i]))
                    + _num_td(c[tok_col][i], _fmt_int(c[tok_col][i]))
                    + _num_td(c[share_col][i], _fmt_share(c[share_col][i])) + "</tr>")
    return _section("hosts", "Sites", f'<p class="note">Per-host pollution, by boilerplate tokens; showing '
                    f"{t.num_rows:,} hosts.</p>"
                    '<table class="sortable"><thead><tr><th>host</th><th class="num">documents</th>'
                    '<th class="num">tokens</th><th class="num">boilerplate tokens</th>'
                    '<th class="num">boilerplate share</th></tr></thead><tbody>' + "\n".join(rows)
                    + "</tbody></table>")


def _doc_box(scan: ScanDir, texts: _Texts, d: int, caps: ReportCaps) -> str:
    docs = scan.store.docs if scan.store is not None else None
    if docs is None:
        return f'<div class="doc"><div class="meta">document index {e(d)}</div></div>'
    did = docs.column("doc_id")[d].as_py()
    url = docs.column("url")[d].as_py()
    ntok = docs.column("n_tokens")[d].as_py()
    body = _truncate(texts.text(d) or "", caps.max_text_chars)
    return (f'<div class="doc"><div class="meta"><b>{e(did)}</b>{" · " + e(url) if url else ""} · '
            f'{_fmt_int(ntok)} tokens</div><div class="body">{e(body)}</div></div>')


def _pair_figures(row: dict | None) -> str:
    if row is None:
        return "not compared directly (joined through other members)"
    return (f"Jaccard {row['jaccard']:.3f}, containment a⊂b {row['containment_ab']:.3f}, "
            f"b⊂a {row['containment_ba']:.3f}")


def _dups_section(scan: ScanDir, texts: _Texts, caps: ReportCaps, facts: dict) -> str:
    dsum = scan.dups_summary or {}
    params = dsum.get("parameters") or {}
    parts = []
    n_docs = _n_docs(scan)
    cl = scan.table(f"{DUPS}/clusters.parquet")
    pairs = scan.table(f"{DUPS}/pairs.parquet")
    if cl is not None and cl.num_rows:
        size = pc.cast(cl.column("cluster_size"), pa.int64()).to_numpy(zero_copy_only=False)
        in_cl = size >= 2
        cid = pc.cast(cl.column("cluster_id"), pa.int64()).to_numpy(zero_copy_only=False)
        dix = pc.cast(cl.column("doc_index"), pa.int64()).to_numpy(zero_copy_only=False)
        rep = cl.column("is_representative").to_numpy(zero_copy_only=False).astype(bool)
        ids = np.unique(cid[in_cl])
        facts["n_clusters"] = int(ids.size)
        facts["dup_doc_share"] = float(in_cl.sum() / n_docs) if n_docs else 0.0
    else:
        cid = dix = rep = size = np.empty(0, np.int64)
        ids = np.empty(0, np.int64)
        facts["n_clusters"] = 0
        facts["dup_doc_share"] = 0.0
    bands = params.get("bands") or dsum.get("bands")
    rows_ = params.get("rows") or dsum.get("rows")
    figs = [("method", params.get("method", dsum.get("method"))),
            ("threshold (Jaccard)", params.get("threshold", dsum.get("threshold"))),
            ("shingle (tokens)", params.get("shingle", dsum.get("shingle_k"))),
            ("num_perm", params.get("num_perm", dsum.get("num_perm"))),
            ("bands × rows", f"{bands} × {rows_}" if bands else None),
            ("LSH threshold (1/b)^(1/r)", f"{dsum['lsh_threshold']:.3f}" if dsum.get("lsh_threshold") else None),
            ("candidates", dsum.get("candidates")),
            ("capped buckets (pairs not enumerated)",
             f"{dsum['capped_buckets']} ({dsum.get('pairs_not_enumerated', 0)})" if dsum.get("capped_buckets") else None),
            ("verified pairs", dsum.get("verified_pairs", dsum.get("pairs"))),
            ("clusters", facts["n_clusters"]), ("documents in clusters", int((size >= 2).sum())),
            ("documents to drop (all but one per cluster)", dsum.get("duplicates_to_drop"))]
    parts.append('<table class="kv"><tbody>' + "".join(
        f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in figs if v is not None) + "</tbody></table>")
    # clusters, largest first
    if ids.size:
        first = {}
        members: dict[int, list[int]] = {}
        sel = np.flatnonzero(size >= 2)
        csize = {}
        for i in sel[np.lexsort((cid[sel], -size[sel]))]:
            c = int(cid[i])
            if c not in members:
                if len(members) >= caps.max_clusters:
                    continue
                members[c] = []
                csize[c] = int(size[i])
            members[c].append(int(dix[i]))
            if rep[i]:
                first[c] = int(dix[i])
        want = np.asarray([d for m in members.values() for d in m], dtype=np.int64)
        prow: dict[tuple[int, int], dict] = {}
        if pairs is not None and want.size:
            ws = pa.array(want)
            sub = pairs.filter(pc.is_in(pc.cast(pairs.column("a_index"), pa.int64()), value_set=ws))
            for r in sub.select(["a_index", "b_index", "jaccard", "containment_ab", "containment_ba"]).to_pylist():
                prow[(r["a_index"], r["b_index"])] = r
        blocks = []
        for c, mem in members.items():
            r0 = first.get(c, mem[0])
            others = [d for d in mem if d != r0]
            pick, row = others[0], None
            for d in others:
                rr = prow.get((r0, d)) or prow.get((d, r0))
                if rr is not None:
                    pick = d
                    row = rr if rr["a_index"] == r0 else {**rr, "containment_ab": rr["containment_ba"],
                                                           "containment_ba": rr["containment_ab"]}
                    break
            id_of = (lambda d: scan.store.docs.column("doc_id")[d].as_py()) if scan.store is not None else str
            shown = ", ".join(e(id_of(d)) for d in mem[:caps.max_members])
            more = f" and {csize[c] - min(len(mem), caps.max_members):,} more" if csize[c] > caps.max_members else ""
            jac = row["jaccard"] if row is not None else None
            blocks.append(
                "<tr>" + _num_td(csize[c], _fmt_int(csize[c]))
                + f'<td class="wide" data-v="{e(id_of(r0))}"><details><summary>cluster {e(c)}: representative '
                f"<b>{e(id_of(r0))}</b> and {e(id_of(pick))}</summary>"
                f'<p class="note">Members: {shown}{e(more)}</p>'
                f'<p class="note">Left: the representative; right: {e(id_of(pick))} — {e(_pair_figures(row))}</p>'
                f'<div class="pair">{_doc_box(scan, texts, r0, caps)}{_doc_box(scan, texts, pick, caps)}</div>'
                "</details></td>"
                + _num_td(jac, f"{jac:.3f}" if jac is not None else "–") + "</tr>")
        parts.append(f"<h3>Clusters, largest first (showing {len(members):,} of {ids.size:,})</h3>"
                     '<p class="note">Click a cluster for its members and two of them side by side.</p>'
                     '<table class="sortable"><thead><tr><th class="num">documents</th>'
                     '<th>cluster: representative and the member shown beside it</th>'
                     '<th class="num">Jaccard of the pair shown</th></tr></thead><tbody>'
                     + "\n".join(blocks) + "</tbody></table>")
    else:
        parts.append('<p class="note">No duplicate clusters.</p>')
    # containment pairs apart
    ct = scan.table(f"{DUPS}/containment.parquet")
    if ct is not None and ct.num_rows:
        cab = pc.cast(ct.column("containment_ab"), pa.float64()).to_numpy(zero_copy_only=False)
        cba = pc.cast(ct.column("containment_ba"), pa.float64()).to_numpy(zero_copy_only=False)
        order = np.argsort(-np.maximum(cab, cba), kind="stable")[:caps.max_rows]
        sub = ct.take(pa.array(order)).to_pylist()
        rows = []
        for k, r in enumerate(sub):
            sbs = ""
            if k < 20 and scan.store is not None:
                sbs = (f'<details><summary>side by side</summary><div class="pair">'
                       f'{_doc_box(scan, texts, int(r["a_index"]), caps)}'
                       f'{_doc_box(scan, texts, int(r["b_index"]), caps)}</div></details>')
            rows.append("<tr>" + f'<td class="text">{e(r["a"])}{sbs}</td><td class="text">{e(r["b"])}</td>'
                        + _num_td(r["jaccard"], f"{r['jaccard']:.3f}")
                        + _num_td(r["containment_ab"], f"{r['containment_ab']:.3f}")
                        + _num_td(r["containment_ba"], f"{r['containment_ba']:.3f}") + "</tr>")
        parts.append(f"<h3>Containment: one document inside another ({ct.num_rows:,} pairs, showing "
                     f"{len(sub):,})</h3><p class=\"note\">Pairs whose resemblance is below the threshold "
                     "but where most of one document's shingles are in the other (a short page inside a "
                     "long one; Broder 1997).</p>"
                     '<table class="sortable"><thead><tr><th>a</th><th>b</th><th class="num">Jaccard</th>'
                     '<th class="num">share of a in b</th><th class="num">share of b in a</th></tr></thead>'
                     "<tbody>" + "\n".join(rows) + "</tbody></table>")
    return _section("dups", "Near-duplicate documents", "\n".join(parts))


def _measured_recall(scan: ScanDir):
    """The S-curve points the scan job measured (``measured_recall`` in the dups
    summary, :mod:`repetend.neardup.recall`): (centres, share, count) or None."""
    m = (scan.dups_summary or {}).get("measured_recall")
    if not m:
        return None
    return (np.asarray(m["centres"], np.float64), np.asarray(m["share"], np.float64),
            np.asarray(m["count"], np.int64))


def _lsh_section(scan: ScanDir, caps: ReportCaps) -> str | None:
    dsum = scan.dups_summary or {}
    params = dsum.get("parameters") or {}
    cand = scan.table(f"{DUPS}/candidates.parquet")
    if cand is None:
        cand = scan.table(f"{DUPS}/pairs.parquet", ["a_index", "b_index", "jaccard"])
        label = "verified pairs (no candidates.parquet in the scan)"
    else:
        label = "LSH candidate pairs"
    figs = []
    jac = (pc.cast(cand.column("jaccard"), pa.float64()).to_numpy(zero_copy_only=False)
           if cand is not None and cand.num_rows else None)
    b, r = params.get("bands") or dsum.get("bands"), params.get("rows") or dsum.get("rows")
    if b and r:
        measured = _measured_recall(scan) if label == "LSH candidate pairs" else None
        floor = ((dsum.get("measured_recall") or {}).get("floor") or RECALL_FLOOR)
        svg = plots.s_curve(int(b), int(r), candidate_j=jac, measured=measured,
                            threshold=params.get("threshold", dsum.get("threshold")))
        extra = (f" Green points: of all pairs of documents with Jaccard ≥ {floor:g} (an exact "
                 "all-pairs join over the same shingles), the share in each bin that LSH made candidates, "
                 "with its binomial standard error — the curve should predict them."
                 if measured is not None else
                 " (The measured share of pairs found per bin is drawn for corpora up to "
                 f"{RECALL_MAX_TOKENS:,} tokens whose candidate list is complete, measured by "
                 "the scan that ran the near-duplicate stage with its report.)")
        figs.append(_figure(svg, "Blue: the probability that a pair of Jaccard similarity s shares at least one "
                            "band (Indyk & Motwani 1998). Orange bars: the real candidate pairs of this corpus by their "
                            "true Jaccard similarity — candidates to the left of the red line were rejected "
                            "by exact verification." + extra, "LSH S-curve with the candidate pairs"))
    else:
        figs.append(f'<p class="note">No S-curve: the near-duplicate method '
                    f"({e(params.get('method') or 'unknown')}) does not use LSH bands.</p>")
    n_docs = _n_docs(scan)
    if jac is not None and n_docs:
        order = (pc.sort_indices(scan.store.docs.column("doc_id")).to_numpy(zero_copy_only=False)
                 if scan.store is not None else None)
        svg, drawn = plots.chord_picture(
            int(n_docs), pc.cast(cand.column("a_index"), pa.int64()).to_numpy(zero_copy_only=False),
            pc.cast(cand.column("b_index"), pa.int64()).to_numpy(zero_copy_only=False), jac,
            order=order, max_chords=caps.max_chords)
        sampled = f" (a random sample of {drawn:,} of {len(jac):,})" if drawn < len(jac) else ""
        figs.append(_figure(svg, f"Each document is a point on the circle, in id order; each chord is one of "
                            f"the {label}{sampled}, coloured by true Jaccard similarity (as in the MinHash/LSH article). Short "
                            "chords near the rim join neighbours in id order (families of files or pages); "
                            "long chords are copies across the corpus.", "chord picture of candidate pairs"))
    return _section("lsh", "How the pairs were found", '<div class="figs">' + "".join(figs) + "</div>")


def _suggested_out(inputs: list[str], fmt: str | None) -> str:
    """Where the report suggests writing the cleaned corpus: beside the (first)
    input, never inside an input directory."""
    first = Path(inputs[0]) if inputs else Path("corpus.jsonl")
    if first.is_dir() or fmt == "text":
        return str(first.parent / (first.name.rstrip("/") + "-clean"))
    name = first.name
    for suf in (".jsonl.gz", ".jsonl.zst", ".jsonl", ".parquet", ".csv.gz", ".csv", ".tsv"):
        if name.endswith(suf):
            return str(first.with_name(name[: -len(suf)] + ".clean" + suf))
    return str(first.with_name(first.stem + ".clean.jsonl"))


def _todo_section(scan: ScanDir, scan_dir: Path, decisions) -> str:
    from ..clean import decision_counts
    from ..scandir import DOCUMENTS

    inputs = [str(x) for x in (scan.summary.get("inputs") or [])]
    out = _suggested_out(inputs, scan.summary.get("input_format"))
    cmd = " ".join(["repetend clean", *(_q(x) for x in inputs), "--scan", _q(str(scan_dir.resolve())),
                    "--out", _q(out)])
    parts = ['<p class="note">To write this corpus back without its duplicates and boilerplate, for a '
             "search index or a training set:</p>", f"<pre>{e(cmd)}</pre>"]
    if decisions is None:
        parts.append('<p class="skip">This scan has no per-document decisions (documents.parquet; a scan '
                     "made by an older repetend): scan again to see here what the command would do.</p>")
        return _section("todo", "What to do", "\n".join(parts))
    table, policy = decisions
    c = decision_counts(table)
    max_cut = policy.get("max_cut", 0.9)
    pct = lambda a, b: f" ({_fmt_share(a / b)})" if b else ""  # noqa: E731
    mostly = sum(1 for r in table.column("reason").to_pylist() if r == "mostly_template")
    rows = [("documents in", _fmt_int(c["documents"])),
            ("kept", _fmt_int(c["kept"]) + pct(c["kept"], c["documents"])),
            ("… with boilerplate cut", _fmt_int(c["kept_cut"])),
            ("… kept whole although mostly template", _fmt_int(c["kept_whole"])),
            ("dropped as duplicates (all but one document per near-duplicate cluster)",
             _fmt_int(c["drop_duplicate"])),
            (f"dropped as mostly template (the cuts would remove more than {_fmt_share(max_cut)} of the "
             "document's characters)", _fmt_int(c["drop_template"])),
            ("characters cut from kept documents", _fmt_int(c["chars_cut_kept"])
             + pct(c["chars_cut_kept"], c["chars"])),
            ("characters removed in all (cuts and dropped documents)", _fmt_int(c["chars_removed"])
             + pct(c["chars_removed"], c["chars"]))]
    parts.append("<h3>What the command would do</h3>"
                 '<table class="kv"><tbody>' + "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>"
                                                       for k, v in rows) + "</tbody></table>")
    alts = [f"<li><code>--mostly-template keep</code>: keep the {mostly:,} mostly-template documents whole "
            "instead of dropping them (nothing cut from them).</li>",
            f"<li><code>--max-cut X</code>: the share of its characters above which a document counts as "
            f"mostly template (now {_fmt_share(max_cut)}); <code>--max-cut 1</code> cuts every document "
            "however much it loses, even to nothing.</li>",
            "<li><code>--keep-duplicates</code>, <code>--keep-boilerplate</code>: leave either kind of "
            "repetition in.</li>"]
    parts.append("<h3>Other choices</h3><ul>" + "".join(alts) + "</ul>")
    parts.append(f'<p class="note">Every document\'s decision (<code>keep</code>, <code>drop_duplicate</code>, '
                 f"<code>drop_template</code>) and its reason are in <code>{e(DOCUMENTS)}</code> of the scan "
                 f"directory, one row per input document, to join back to the corpus by "
                 f"<code>doc_id</code>; the same planning code decides there, here and in "
                 f"<code>repetend clean</code>. The removal log <code>OUT.removed.jsonl</code> holds every "
                 f"removed character, to audit or undo.</p>")
    return _section("todo", "What to do", "\n".join(parts))


def _params_section(scan: ScanDir, scan_dir: Path, out_html: Path, caps: ReportCaps) -> str:
    cmd = scan.summary.get("command")
    parts = []
    if cmd:
        parts.append(f"<h3>Command that produced the scan</h3><pre>{e(cmd)}</pre>")
    parts.append(f"<h3>This report</h3><pre>{e('repetend report ' + _q(str(scan_dir)) + ' --out ' + _q(str(out_html)))}</pre>")
    blob = {k: scan.summary.get(k) for k in ("parameters", "input_options", "timings") if scan.summary.get(k)}
    if scan.phrases_summary:
        blob["phrases"] = {k: v for k, v in scan.phrases_summary.items() if k in ("parameters", "timings")}
    if scan.dups_summary:
        blob["dups"] = {k: v for k, v in scan.dups_summary.items() if k in ("parameters", "timings")}
    if blob:
        parts.append("<h3>Parameters and timings</h3><pre>" + e(json.dumps(blob, indent=2, ensure_ascii=False,
                                                                            default=str)) + "</pre>")
    parts.append(f'<p class="note">Caps of this page: ≤ {caps.max_phrases} phrases with ≤ '
                 f"{caps.examples_per_phrase} example documents each (the first found), ≤ {caps.max_rows} rows "
                 f"per table, ≤ {caps.max_clusters} clusters with ≤ {caps.max_members} member ids each, "
                 f"≤ {caps.max_chords} chords (uniform random sample above), texts cut at "
                 f"{caps.max_text_chars} characters. The Parquet files in the scan directory hold everything.</p>")
    return _section("params", "Parameters and reproduction", "\n".join(parts))


def _q(s: str) -> str:
    import shlex

    return shlex.quote(s)


def build_report(scan_dir: str | os.PathLike, out_html: str | os.PathLike, *,
                 caps: ReportCaps | None = None, max_rows: int | None = None,
                 title: str | None = None) -> Path:
    """Write one self-contained HTML report of a scan directory.

    Parameters
    ----------
    scan_dir
        A directory written by ``repetend scan`` (``summary.json``, ``store/``,
        ``phrases/``, ``dups/``); either stage may be missing.
    out_html
        The HTML file to write (atomically).
    caps
        How much to show at most (:class:`ReportCaps`); ``max_rows`` is a
        shortcut for ``caps.max_rows``.
    title
        Page title (default: the scan directory's name).

    Returns
    -------
    Path
        ``out_html``.

    Notes
    -----
    Sections follow the BloomSpan paper, §6 (corpus share of boilerplate, the "index
    eaters" ordered by Ψ = |P|·df(P), the distribution of per-document
    shares, drop candidates, per-site pollution) and the MinHash/LSH article (the LSH S-curve
    P(s) = 1 − (1 − s^r)^b with the real pairs, and documents on a circle with
    a chord per candidate pair coloured by true Jaccard similarity).  The page
    needs no network: styles, script and SVG figures are inlined.
    """
    caps = caps or ReportCaps()
    if max_rows is not None:
        from dataclasses import replace

        caps = replace(caps, max_rows=max_rows)
    scan_dir = Path(scan_dir)
    out_html = Path(out_html)
    scan = open_scan(scan_dir, verify=True)
    texts = _Texts(scan.store)
    facts: dict = {}
    body = []
    from ..clean import read_decisions

    distinct = distinct_view(scan)
    decisions = read_decisions(scan)
    if distinct.has_clusters:
        facts["duplicate"] = distinct.duplicate_share()
        facts["n_distinct"] = distinct.n_distinct
    pparams = (scan.phrases_summary or {}).get("parameters") or {}
    df_over = pparams.get("df_over") or (scan.summary.get("parameters") or {}).get("df_over")
    facts["df_unit"] = "distinct clusters" if df_over == "clusters" else "documents"
    if scan.has_phrases:
        eaters = _phrases_section(scan, texts, caps, facts, distinct)
        coverage = _coverage_section(scan, texts, caps, facts, distinct,
                                     decisions[0] if decisions is not None else None)
        hosts = _hosts_section(scan, caps)
        from .templates_section import (find_templates_dir, templates_section_html,
                                        templates_skipped)

        has_templates = (find_templates_dir(scan_dir) is not None
                         or templates_skipped(scan_dir) is not None)
        body += [eaters] + ([templates_section_html(scan_dir, max_rows=caps.max_rows)]
                            if has_templates else []) + [coverage, hosts]
    if scan.has_dups:
        body.append(_dups_section(scan, texts, caps, facts))
        body.append(_lsh_section(scan, caps))
    body.insert(0, _summary_section(scan, facts))
    if scan.has_phrases or scan.has_dups:
        body.insert(1, _todo_section(scan, scan_dir, decisions))
    body.append(_params_section(scan, scan_dir, out_html, caps))
    toc = [("summary", "Summary")]
    if scan.has_phrases or scan.has_dups:
        toc.append(("todo", "What to do"))
    if scan.has_phrases:
        toc += [("eaters", "Index eaters")] + ([("templates", "Templates")] if has_templates else [])
        toc += [("coverage", "Share per document"), ("hosts", "Sites")]
    if scan.has_dups:
        toc += [("dups", "Duplicates"), ("lsh", "S-curve & chords")]
    toc.append(("params", "Parameters"))
    title = title or f"repetend report — {scan_dir.resolve().name}"
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    csp = (f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src {script_hash()}; "
           "base-uri 'none'; form-action 'none'")
    page = (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{e(csp)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{CSS}</style></head>\n<body>"
        f'<header class="top"><h1>{e(title)}</h1><div class="sub">scan {e(scan_dir)} · written {e(now)}</div></header>'
        '<nav class="toc">' + "".join(f'<a href="#{a}">{e(t)}</a>' for a, t in toc) + "</nav>\n<main>\n"
        + "".join(body) + f"</main>\n<script>{JS}</script>\n</body></html>\n")
    with atomic_path(out_html) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return out_html
