"""Planted variable blocks in real pages: does each come out as ONE template?

    PYTHONPATH=src .venv/bin/python benchmarks/bench_template_blocks.py \
        [--data bench-data/debian.jsonl] [--pages 3000] [--sigma 20] [--L 10] \
        [--keep-variants] [--no-ends] [--show 0] [--slotted-spans off,6]

The surrounding text is real (the first ``--pages`` documents of 1.5–20 k
characters of ``--data``); the blocks of ``benchmarks/corpora/planted_blocks``
(a Russian catalogue line, an English signature, a footer, some slot values on
≥ σ of their pages) are planted into hundreds of them.  Per planted block it
prints:

* ``templates``: how many templates cover at least half of the block's tokens
  on at least σ of its pages (goal: 1);
* ``whole``: the share of the block's pages where one template occurrence
  covers the block from its first token to its last;
* ``best df / planted``: the template that covers the block whole on most
  pages, the number of those pages and its table ``df``, against the pages
  planted;
* precision: of the characters inside occurrences of the templates that touch a
  planted block (on any page), the share inside a planted block;

then the CPU seconds of exact mining (``find_phrases``, templates off) and of
the template layer over its result, and their ratio.  ``--keep-variants`` and
``--no-ends`` switch the layer's post-passes off (``TemplateConfig``);
``--slotted-spans off,6`` runs the layer once per ``slotted_min_span`` after
the same mining run (the counts then include the templates shorter than L).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora.planted_blocks import planted_corpus  # noqa: E402


def block_tokens(store, truth) -> list[tuple[str, int, int, int]]:
    """(block, doc, first token, end token) — global token positions — per planted block."""
    out = []
    for d, marks in enumerate(truth["docs"]):
        if not marks:
            continue
        spans = store.token_spans(d)
        mid = (spans[:, 0] + spans[:, 1]) // 2
        a = int(store.doc_offsets[d])
        for name, cs, ce in marks:
            sel = np.flatnonzero((mid >= cs) & (mid < ce))
            out.append((name, d, a + int(sel[0]), a + int(sel[-1]) + 1))
    return out


def evaluate(store, truth, res, sigma: int) -> dict:
    """Per block: templates, whole share, best df; and the character precision."""
    occ = res.occurrences
    tid = occ.column("template_id").to_numpy()
    od = occ.column("doc_index").to_numpy()
    gs = occ.column("start").to_numpy() + store.doc_offsets[od]
    ge = occ.column("end").to_numpy() + store.doc_offsets[od]
    df = res.table.column("df").to_numpy()
    blocks = block_tokens(store, truth)
    order = np.argsort(gs, kind="stable")
    gs_o, ge_o, tid_o = gs[order], ge[order], tid[order]
    max_len = int((ge - gs).max(initial=0))
    per: dict[str, dict] = {}
    touching: set[int] = set()
    for name, d, bs, be in blocks:
        r = per.setdefault(name, {"pages": 0, "whole": 0, "half": {}, "whole_by": {}})
        r["pages"] += 1
        lo = int(np.searchsorted(gs_o, bs - max_len, side="left"))
        hi = int(np.searchsorted(gs_o, be, side="left"))
        whole_here, half_here = set(), set()
        for j in range(lo, hi):
            s, e, t = int(gs_o[j]), int(ge_o[j]), int(tid_o[j])
            ov = min(e, be) - max(s, bs)
            if ov <= 0:
                continue
            touching.add(t)
            if 2 * ov >= be - bs:
                half_here.add(t)
            if s <= bs and e >= be:
                whole_here.add(t)
        r["whole"] += bool(whole_here)
        for t in half_here:
            r["half"][t] = r["half"].get(t, 0) + 1
        for t in whole_here:
            r["whole_by"][t] = r["whole_by"].get(t, 0) + 1
    out = {}
    for name, r in per.items():
        best = max(r["whole_by"].items(), key=lambda kv: (kv[1], -kv[0]), default=(-1, 0))
        out[name] = {"pages": r["pages"],
                     "templates": sum(1 for v in r["half"].values() if v >= sigma),
                     "whole": r["whole"] / r["pages"], "best": best[0], "best_pages": best[1],
                     "best_df": int(df[best[0]]) if best[0] >= 0 else 0,
                     "ids": sorted(t for t, v in r["half"].items() if v >= sigma)}
    # precision in characters over the templates touching a block, all their occurrences
    cs = occ.column("char_start").to_numpy()
    ce = occ.column("char_end").to_numpy()
    sel = np.flatnonzero(np.isin(tid, np.array(sorted(touching), dtype=np.int64)))
    inside = total = 0
    for j in sel.tolist():
        a, b = int(cs[j]), int(ce[j])
        total += b - a
        for _, ms, me in truth["docs"][int(od[j])]:
            inside += max(0, min(b, me) - max(a, ms))
    out["_precision"] = {"chars": total, "inside": inside,
                         "precision": inside / total if total else 1.0,
                         "templates_touching": len(touching)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="bench-data/debian.jsonl")
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--L", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep-variants", action="store_true")
    ap.add_argument("--no-ends", action="store_true")
    ap.add_argument("--show", type=int, default=0, help="print the templates touching blocks")
    ap.add_argument("--slotted-spans", default="default", metavar="default,off,K,…",
                    help="run the layer once per TemplateConfig.slotted_min_span (default: "
                         "the layer's own, auto; off: None) after the same mining run")
    ap.add_argument("--settings", metavar="A,B,…",
                    help="instead of --slotted-spans: the named settings of "
                         "bench_templates.py (e.g. before-evidence,evidence-whole) after the "
                         "same mining run")
    args = ap.parse_args()

    from repetend.phrases import find_phrases
    from repetend.phrases.templates import TemplateConfig, find_templates

    kw = {}
    if args.keep_variants:
        kw["merge_variants"] = False
    if args.no_ends:
        kw["ends"] = False
    if args.settings:
        from bench_templates import SETTINGS

        spans = args.settings.split(",")
        cfgs = [TemplateConfig(**{**kw, **SETTINGS[n]}) for n in spans]
    else:
        spans = args.slotted_spans.split(",")
        cfgs = [TemplateConfig(**kw) if v == "default"
                else TemplateConfig(**kw, slotted_min_span=None if v == "off" else int(v))
                for v in spans]
    t0 = time.perf_counter()
    sc = planted_corpus(args.data, pages=args.pages, seed=args.seed)
    store = sc.to_store()
    print(f"{args.data}: {store.n_docs:,} real pages, {store.n_tokens:,} tokens "
          f"(built in {time.perf_counter() - t0:.1f} s); σ = {args.sigma}, L = {args.L}; "
          f"{cfgs[0]}")
    # warm-up (compilation) on a slice
    small = planted_corpus(args.data, pages=400, seed=1,
                           pages_per_block={"catalogue": 60, "signature": 60, "footer": 60})
    ss = small.to_store()
    for cfg in cfgs:
        find_templates(ss, find_phrases(ss, min_docs=5, min_len=args.L, templates=False).raw,
                       5, args.L, cfg)
    c0 = time.process_time()
    ph = find_phrases(store, min_docs=args.sigma, min_len=args.L, templates=False)
    mining = time.process_time() - c0
    for v, cfg in zip(spans, cfgs):
        c1 = time.process_time()
        res = find_templates(store, ph.raw, args.sigma, args.L, cfg)
        _report(args, store, sc, res, mining, time.process_time() - c1,
                v if args.settings else f"slotted_min_span={v}")


def _report(args, store, sc, res, mining: float, layer: float, label: str) -> None:
    ev = evaluate(store, sc.truth, res, args.sigma)
    print(f"\n[{label}]")
    print(f"{'block':10s} {'pages':>6s} {'templates':>9s} {'whole':>7s} "
          f"{'best: whole pages / df / planted':>33s}")
    for name in ("catalogue", "signature", "footer"):
        r = ev[name]
        print(f"{name:10s} {r['pages']:6d} {r['templates']:9d} {r['whole']:7.1%} "
              f"{r['best_pages']:>15d} / {r['best_df']:4d} / {r['pages']:4d}"
              f"   (template #{r['best']})")
    p = ev["_precision"]
    print(f"precision: {p['inside']:,} of {p['chars']:,} characters inside occurrences of the "
          f"{p['templates_touching']} templates touching a block are planted: "
          f"{p['precision']:.2%}")
    tm = res.summary["cpu_timings"]
    print(f"CPU s: mining {mining:.2f}, template layer {layer:.2f} "
          f"(× mining {layer / mining:.2f}); stages "
          + ", ".join(f"{k} {v:.2f}" for k, v in tm.items() if k != "total"))
    print(f"templates {res.n_templates:,}, of span < L {sum(1 for x in res.table.column('span_tokens').to_pylist() if x < args.L):,}; "
          f"template-covered tokens {res.summary['template_covered_tokens']:,}; "
          + ", ".join(f"{k} {res.summary[k]}" for k in ("variants_merged", "ends_extended")
                      if k in res.summary))
    if args.show:
        rows = res.table.to_pylist()
        for name in ("catalogue", "signature", "footer"):
            print(f"\n{name}: the templates covering half of it on ≥ σ pages")
            for t in ev[name]["ids"][: args.show]:
                r = rows[t]
                slots = "; ".join(f"{s['kind']} {s['distinct']}: "
                                  + ", ".join(f"{v['value']}×{v['count']}"
                                              for v in s["top_values"][:3]) for s in r["slots"])
                print(f"  #{t} df {r['df']} span {r['span_tokens']}: {r['text'][:300]!r}\n"
                      f"      {slots}")


if __name__ == "__main__":
    main()
