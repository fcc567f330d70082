"""Templates with variable parts on the web-like generator: cost next to mining,
and what they find against the planted truth.

    .venv/bin/python benchmarks/bench_templates.py [--pages 3000] [--sigma 10] [--L 8]
    .venv/bin/python benchmarks/bench_templates.py --store bench-data/debian.store \
        --sigma 20 --L 10 [--repeat 3] [--merge-only] [--prune on|off|both]

With ``--store PATH`` (any token store, e.g. real text): the cost of the
template layer next to exact mining on that store — for each of ``--repeat``
runs, CPU and wall seconds of ``find_phrases`` (templates off, the exact
phrases only) and of ``find_templates`` over its result, their ratio, and the
layer's CPU seconds per stage; then the median ratio and the counts.  With
``--prune both`` the layer runs twice after each mining run, with and without
leaving the short chains out (``TemplateConfig.prune``), so that the two
ratios come from the same runs.  CPU time
(all threads of the process) is the figure to compare on a shared machine.

Without it, prints, from one run side by side on the web-like generator:

* time and per-token cost of exact mining (``find_phrases``), of the template
  layer (default: parts mined again at L' with numbers masked) and of the
  merge-only mode (``short_parts=False``: the exact phrases chained, no second
  mining run), with the stage breakdown and the peak RSS after each step;
* recall on the planted slotted blocks (footer «© {year} …», listing «Showing
  {first}–{last} of {total} items», signature «Posted by {author} on {date}»)
  whose block is in at least σ documents: the share of their occurrences fully
  covered by the exact phrases alone, and by exact phrases ∪ templates; the
  share lying inside one template occurrence;
* precision: where the tokens inside template occurrences come from in the
  truth (template blocks / page title / body);
* the top templates for inspection by hand.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections import defaultdict

import numpy as np


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _labels(sc, store, min_docs):
    """Per token: truth segment kind, block id, and whether the block is in ≥ σ docs."""
    kind = np.full(store.n_tokens, "", dtype=object)
    block = np.full(store.n_tokens, "", dtype=object)
    seg = np.full(store.n_tokens, -1, dtype=np.int64)
    big = np.zeros(store.n_tokens, dtype=bool)
    blocks = sc.truth["blocks"]
    k = 0
    for d, doc in enumerate(sc.truth["docs"]):
        spans = store.token_spans(d)
        a = int(store.doc_offsets[d])
        mid = (spans[:, 0] + spans[:, 1]) // 2
        for s in doc["spans"]:
            sel = a + np.flatnonzero((mid >= s["start"]) & (mid < s["end"]))
            kind[sel] = s["kind"]
            block[sel] = s["block"] or ""
            seg[sel] = k
            k += 1
            if s["block"] is not None:
                big[sel] = blocks[s["block"]]["docs"] >= min_docs
    return kind, block, seg, big


def _bench_store(args) -> None:
    """Exact mining vs the template layer on a token store, CPU and wall seconds."""
    from repetend.corpus.store import TokenStore
    from repetend.phrases.api import find_phrases
    from repetend.phrases.templates import TemplateConfig, find_templates
    from repetend.synth.weblike import weblike

    store = TokenStore.open(args.store)
    prunes = {"on": [True], "off": [False], "both": [False, True]}[args.prune]
    sigma, L = args.sigma, args.L
    # warm-up on a small corpus so that no figure below includes compilation
    small = weblike(120, seed=1).to_store()
    find_templates(small, find_phrases(small, min_docs=3, min_len=L, templates=False).raw, 3, L)
    print(f"{args.store}: {store.n_docs:,} documents, {store.n_tokens:,} tokens, σ = {sigma}, "
          f"L = {L}" + (", merge-only (short_parts=False)" if args.merge_only else ""))
    print(f"{'run':>3s} {'prune':>5s} {'mining cpu':>10s} {'wall':>6s} {'templates cpu':>13s} "
          f"{'wall':>6s} {'× cpu':>6s} {'× wall':>6s}  layer cpu s per stage")
    ratios, walls, last = defaultdict(list), defaultdict(list), {}
    for r in range(args.repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        ph = find_phrases(store, min_docs=sigma, min_len=L, templates=False)
        c1, w1 = time.process_time(), time.perf_counter()
        for prune in prunes:
            cfg = TemplateConfig(short_parts=not args.merge_only, prune=prune)
            c2, w2 = time.process_time(), time.perf_counter()
            res = find_templates(store, ph.raw, sigma, L, cfg)
            c3, w3 = time.process_time(), time.perf_counter()
            ratios[prune].append((c3 - c2) / (c1 - c0))
            walls[prune].append((w3 - w2) / (w1 - w0))
            last[prune] = res.summary
            stages = ", ".join(f"{k} {v:.2f}" for k, v in res.summary["cpu_timings"].items()
                               if k != "total")
            print(f"{r + 1:3d} {'on' if prune else 'off':>5s} {c1 - c0:10.2f} {w1 - w0:6.2f} "
                  f"{c3 - c2:13.2f} {w3 - w2:6.2f} {ratios[prune][-1]:6.2f} "
                  f"{walls[prune][-1]:6.2f}  {stages}", flush=True)
    for prune in prunes:
        s = last[prune]
        print(f"prune {'on' if prune else 'off'}: median × mining: CPU "
              f"{float(np.median(ratios[prune])):.2f}, wall {float(np.median(walls[prune])):.2f}; "
              f"templates {s['templates']:,}, occurrences {s['template_occurrences']:,}, "
              f"gapped sequence {s['gapped_length']:,} tokens"
              + (f" ({s['short_tokens_dropped']:,} covered tokens in "
                 f"{s['short_chains_dropped']:,} short chains left out)" if prune else ""))
        print(f"  coverage: exact {s['exact_covered_share']:.2%}, templates "
              f"{s['template_covered_share']:.2%}, union {s['union_covered_share']:.2%} "
              f"(+{s['gained_share']:.2%})")
    print(f"peak RSS {_peak_mb():.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument("--sigma", type=int, default=10)
    ap.add_argument("--L", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=15)
    ap.add_argument("--store", help="time the layer on this token store instead (real text)")
    ap.add_argument("--repeat", type=int, default=3, help="runs with --store")
    ap.add_argument("--merge-only", action="store_true",
                    help="with --store: time the merge step alone (short_parts=False)")
    ap.add_argument("--prune", choices=["on", "off", "both"], default="off",
                    help="with --store: the pruned gapped sequence (TemplateConfig.prune), the "
                         "unpruned one (the default), or both after the same mining run")
    args = ap.parse_args()
    if args.store:
        _bench_store(args)
        return

    from repetend.phrases.api import find_phrases
    from repetend.phrases.coverage import coverage_mask
    from repetend.phrases.templates import TemplateConfig, find_templates
    from repetend.synth.weblike import weblike

    sc = weblike(args.pages, seed=args.seed)
    store = sc.to_store()
    n = store.n_tokens
    sigma, L = args.sigma, args.L
    # warm-up on a small corpus so that no figure below includes compilation
    small = weblike(120, seed=1).to_store()
    wp = find_phrases(small, min_docs=3, min_len=L)
    find_templates(small, wp.raw, 3, L)
    find_templates(small, wp.raw, 3, L, TemplateConfig(short_parts=False))

    rows = []
    t0 = time.perf_counter()
    ph = find_phrases(store, min_docs=sigma, min_len=L)
    rows.append(("exact phrases (find_phrases)", time.perf_counter() - t0, _peak_mb(), ""))
    t0 = time.perf_counter()
    res = find_templates(store, ph.raw, sigma, L)
    tm = res.summary["timings"]
    rows.append(("templates (default)", time.perf_counter() - t0, _peak_mb(),
                 ", ".join(f"{k} {v:.3f}" for k, v in tm.items() if k != "total")))
    t0 = time.perf_counter()
    merge = find_templates(store, ph.raw, sigma, L, TemplateConfig(short_parts=False))
    tm2 = merge.summary["timings"]
    rows.append(("templates (merge only)", time.perf_counter() - t0, _peak_mb(),
                 ", ".join(f"{k} {v:.3f}" for k, v in tm2.items() if k != "total")))

    print(f"weblike: {args.pages} pages, {n:,} tokens, σ = {sigma}, L = {L}, "
          f"engine {ph.summary['engine']}")
    base = rows[0][1]
    print(f"{'step':32s} {'time s':>8s} {'µs/token':>9s} {'× mining':>9s} {'peak RSS MB':>12s}  stages")
    for name, t, rss, stages in rows:
        print(f"{name:32s} {t:8.3f} {t / n * 1e6:9.3f} {t / base:9.2f} {rss:12.0f}  {stages}")

    for label, r in (("default", res), ("merge only", merge)):
        s = r.summary
        print(f"\n[{label}] templates {s['templates']}, occurrences {s['template_occurrences']:,}, "
              f"gapped sequence {s.get('gapped_length', 0):,} tokens "
              f"({s.get('gapped_length', 0) / n:.1%} of the corpus), rounds {s.get('rounds', 0)}")
        print(f"  coverage: exact {s['exact_covered_share']:.2%}, templates "
              f"{s['template_covered_share']:.2%}, union {s['union_covered_share']:.2%}, "
              f"gained over exact {s['gained_share']:.2%} ({s['gained_tokens']:,} tokens)")

    # recall and precision against the truth
    kind, block, seg, big = _labels(sc, store, sigma)
    exact = coverage_mask(ph.raw, n)
    for label, r in (("default", res), ("merge only", merge)):
        occ = r.occurrences
        d = occ.column("doc_index").to_numpy()
        gs = occ.column("start").to_numpy() + store.doc_offsets[d]
        ge = occ.column("end").to_numpy() + store.doc_offsets[d]
        inside = np.zeros(n, dtype=bool)
        for a, b in zip(gs, ge):
            inside[a:b] = True
        print(f"\n[{label}] recall on slotted blocks in ≥ σ documents (share of occurrences "
              "fully covered):")
        print(f"  {'block kind':10s} {'occurrences':>11s} {'exact':>8s} {'exact∪tpl':>10s} "
              f"{'in 1 tpl':>9s}")
        # per segment: covered by exact, by union, inside a single template occurrence
        for kd in ("footer", "listing", "signature"):
            sel_segs = np.unique(seg[(kind == kd) & big])
            if sel_segs.size == 0:
                continue
            tot = ex = un = single = 0
            pos_by_seg = {}
            idx = np.flatnonzero(np.isin(seg, sel_segs))
            for sgm in sel_segs:
                pos_by_seg[int(sgm)] = []
            for p in idx:
                pos_by_seg[int(seg[p])].append(p)
            for sgm, ps in pos_by_seg.items():
                ps = np.array(ps)
                tot += 1
                ex += bool(exact[ps].all())
                un += bool((exact | inside)[ps].all())
                lo, hi = ps.min(), ps.max() + 1
                single += bool(np.any((gs <= lo) & (ge >= hi)))
            print(f"  {kd:10s} {tot:11,d} {ex / tot:8.1%} {un / tot:10.1%} {single / tot:9.1%}")
        lab = kind[inside]
        tot = max(lab.size, 1)
        tpl_kinds = ~np.isin(lab, ["", "body", "title"])
        print(f"  precision: tokens inside template occurrences: {lab.size:,}; in template "
              f"blocks {tpl_kinds.sum() / tot:.2%}, in page titles {np.sum(lab == 'title') / tot:.2%}"
              f" (a title between two blocks is a gap slot), in body "
              f"{np.sum(lab == 'body') / tot:.2%}, between segments {np.sum(lab == '') / tot:.2%}")

    print(f"\ntop {args.show} templates (default mode), for inspection by hand:")
    for r in res.table.slice(0, args.show).to_pylist():
        slots = "; ".join(f"▢{s['slot'] + 1} {s['kind']} {s['distinct']} values e.g. "
                          + ", ".join(repr(v['value']) for v in s['top_values'][:3])
                          for s in r["slots"])
        text = r["text"].replace("\n", " ⏎ ")
        if len(text) > 160:
            text = text[:75] + " … " + text[-80:]
        print(f"  #{r['template_id']} df {r['df']} span {r['span_tokens']} Ψ {r['psi']}: {text}")
        print(f"      {slots}")


if __name__ == "__main__":
    main()
