"""σ without urls: what each support threshold flags on real corpora.

For a JSONL corpus (id, text; no urls), near-duplicates are found first
(MinHash, J ≥ 0.8, the scan's defaults) and phrases are mined on the
representatives only — one document per near-duplicate cluster, which is
df counted over distinct clusters for exact copies (near copies differ a
little).  Then, for each σ of a grid, at L = 10:

* ``share``: tokens of the distinct documents inside frequent spans;
* ``phrases``: maximal frequent phrases;
* ``mostly``: distinct documents with ≥ 90 % of their tokens in frequent spans
  (what clean's default --max-cut would drop as mostly template);
* with ``--truth`` (``repetend synth weblike``'s truth.json): precision and
  recall of the marked characters against the planted template blocks;
* with ``--reference DIR`` (e.g. ``/usr/share/common-licenses``): precision =
  share of the marked tokens that lie in a 10-token window also found in a
  reference text (licence texts for the licence-file corpus), and recall =
  share of the tokens in such windows that are marked.

It also prints the σ of the candidate rules for this corpus: N documents or C
distinct clusters, times 0.2 %, clamped to [5, 200].  Usage::

    PYTHONPATH=src python benchmarks/bench_sigma.py corpus.jsonl [--truth truth.json]
        [--reference /usr/share/common-licenses] [--sigmas 2,3,5,8,13,20,30,50,80,130,200]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def _rule(n: int) -> int:
    return int(min(200, max(5, round(0.002 * n))))


def _marked_chars(store, spans_table, d_map=None):
    """doc_index → bool mask over the document's characters inside frequent spans."""
    out = {}
    if spans_table is None or spans_table.num_rows == 0:
        return out
    doc = spans_table.column("doc_index").to_numpy()
    st = spans_table.column("start").to_numpy()
    en = spans_table.column("end").to_numpy()
    order = np.argsort(doc, kind="stable")
    doc, st, en = doc[order], st[order], en[order]
    cuts = np.flatnonzero(np.diff(doc)) + 1
    for a, b in zip(np.r_[0, cuts], np.r_[cuts, doc.size]):
        d = int(doc[a])
        sp = store.token_spans(d)
        m = np.zeros(len(store.text(d)), bool)
        for s, e in zip(st[a:b], en[a:b]):
            m[sp[s, 0]:sp[e - 1, 1]] = True
        out[d] = m
    return out


def _windows(strings: list[str], w: int = 10) -> set:
    return {tuple(strings[i:i + w]) for i in range(len(strings) - w + 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--truth", type=Path)
    ap.add_argument("--reference", type=Path)
    ap.add_argument("--sigmas", default="2,3,5,8,13,20,30,50,80,130,200")
    ap.add_argument("--min-len", type=int, default=10)
    ap.add_argument("--show", type=int, default=0,
                    help="print this many phrases of each σ, drawn at random (seed 0), to judge by eye")
    a = ap.parse_args(argv)

    from repetend.corpus.load import load_store
    from repetend.corpus.store import TokenStore
    from repetend.neardup import find_near_duplicates
    from repetend.phrases import PhraseConfig, find_phrases

    t0 = time.perf_counter()
    store = load_store([str(a.corpus)], fmt="jsonl")
    nd = find_near_duplicates(store)
    cl = nd.clusters
    keep = [d for d in range(store.n_docs)
            if cl.cluster_id[d] < 0 or cl.representative[cl.cluster_id[d]] == d]
    base = TokenStore.from_texts([store.text(d) for d in keep], ids=[store.doc_ids[d] for d in keep])
    n, c = store.n_docs, len(keep)
    head = {"corpus": str(a.corpus), "documents": n, "tokens": store.n_tokens, "distinct": c,
            "clusters_ge2": cl.n_clusters, "rule_documents": _rule(n), "rule_distinct": _rule(c),
            "prepare_s": round(time.perf_counter() - t0, 1)}
    print(json.dumps(head))
    truth_spans = None
    if a.truth:
        truth = json.loads(a.truth.read_text("utf-8"))
        index = {d: i for i, d in enumerate(base.doc_ids)}
        truth_spans = {index[d["id"]]: [(s["start"], s["end"]) for s in d["spans"] if s["block"] is not None]
                       for d in truth["docs"] if d["id"] in index}
    ref = None
    if a.reference:
        ref = set()
        for p in sorted(a.reference.iterdir()):
            if p.is_file():
                rs = TokenStore.from_texts([p.read_text("utf-8", "replace")])
                ref |= _windows(rs.token_strings(rs.doc_tokens(0)), a.min_len)
        in_ref = []   # per distinct document: tokens inside a window found in the references
        for d in range(base.n_docs):
            s = base.token_strings(base.doc_tokens(d))
            m = np.zeros(len(s), bool)
            for i in range(len(s) - a.min_len + 1):
                if tuple(s[i:i + a.min_len]) in ref:
                    m[i:i + a.min_len] = True
            in_ref.append(m)
    for sigma in (int(x) for x in a.sigmas.split(",")):
        t1 = time.perf_counter()
        r = find_phrases(base, PhraseConfig(min_docs=sigma, min_len=a.min_len, templates=None))
        share = r.documents.column("frequent_share").to_numpy(zero_copy_only=False)
        row = {"sigma": sigma, "share": round(float(r.summary["frequent_share"]), 4),
               "phrases": r.phrases.num_rows, "mostly": int((share >= 0.9).sum())}
        if truth_spans is not None:
            marks = _marked_chars(base, r.spans)
            planted = found = marked = 0
            for d, spans in truth_spans.items():
                m = marks.get(d)
                tm = np.zeros(len(base.text(d)), bool)
                for s, e in spans:
                    tm[s:e] = True
                planted += int(tm.sum())
                if m is not None:
                    found += int((m & tm).sum())
                    marked += int(m.sum())
            row["precision"] = round(found / max(marked, 1), 4)
            row["recall"] = round(found / max(planted, 1), 4)
        if ref is not None:
            tok = np.zeros(base.n_tokens, bool)
            sp = r.spans
            if sp is not None and sp.num_rows:
                off = base.doc_offsets
                for d, s, e in zip(sp.column("doc_index").to_numpy(), sp.column("start").to_numpy(),
                                   sp.column("end").to_numpy()):
                    tok[off[d] + s:off[d] + e] = True
            ref_mask = np.concatenate(in_ref) if in_ref else np.zeros(0, bool)
            row["ref_precision"] = round(float((tok & ref_mask).sum() / max(tok.sum(), 1)), 4)
            row["ref_recall"] = round(float((tok & ref_mask).sum() / max(ref_mask.sum(), 1)), 4)
        row["s"] = round(time.perf_counter() - t1, 1)
        print(json.dumps(row), flush=True)
        if a.show and r.phrases.num_rows:
            rng = np.random.default_rng(0)
            pick = rng.choice(r.phrases.num_rows, size=min(a.show, r.phrases.num_rows), replace=False)
            sub = r.phrases.take(sorted(pick.tolist()))
            for df, text in zip(sub.column("df").to_pylist(), sub.column("text").to_pylist()):
                print(f"    df {df:4d}  {' '.join(text.split())[:150]!r}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
