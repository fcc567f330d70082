"""Templates with variable parts on the web-like generator: cost next to mining,
and what they find against the planted truth.

    .venv/bin/python benchmarks/bench_templates.py [--pages 3000] [--sigma 10] [--L 8]
    .venv/bin/python benchmarks/bench_templates.py --store bench-data/debian.store \
        --sigma 20 --L 10 [--repeat 3] [--merge-only] [--prune on|off|both]
    .venv/bin/python benchmarks/bench_templates.py [--store …] --settings all

With ``--store PATH`` (any token store, e.g. real text): the cost of the
template layer next to exact mining on that store — for each of ``--repeat``
runs, CPU and wall seconds of ``find_phrases`` (templates off, the exact
phrases only) and of ``find_templates`` over its result, their ratio, and the
layer's CPU seconds per stage; then the median ratio and the counts.  With
``--prune both`` the layer runs twice after each mining run, with and without
leaving the short chains out (``TemplateConfig.prune``), so that the two
ratios come from the same runs.  CPU time
(all threads of the process) is the figure to compare on a shared machine.

``--settings A,B,…`` (or ``all``) runs the layer once per named setting of
``SETTINGS`` after the same mining run — the default, the pruned gapped
sequence, one peeling round, longer parts (L' = 6), the three together, and
merge-only — so that cost and what is found can be traded on one table:
with ``--store`` the ratios and the coverage of each, on the web-like
generator also the recall on the planted blocks.  With ``--store``,
``--short N`` counts per setting the templates shorter than L (those only
``slotted_min_span`` or a lower ``min_span`` give) and prints N of them,
evenly over their Ψ order, to judge by eye.  ``--merge-only`` is short
for ``--settings merge-only``, ``--prune on|off|both`` for ``prune``,
``default`` or ``default,prune``.

Without it, prints, from one run side by side on the web-like generator:

* time and per-token cost of exact mining (``find_phrases``), of the template
  layer (default: parts mined again at L' with numbers masked) and of the
  merge-only mode (``short_parts=False``: the exact phrases chained, no second
  mining run) — or of the ``--settings`` asked for — with the stage breakdown
  and the peak RSS after each step;
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


# named settings of the layer (TemplateConfig fields), from the default to the cheapest
SETTINGS = {
    "default": {},
    "core": {"merge_variants": False, "ends": False},
    "span-6": {"min_span": 6},
    "span-6-core": {"min_span": 6, "merge_variants": False, "ends": False},
    "slotted-4": {"slotted_min_span": 4},
    "slotted-5": {"slotted_min_span": 5},
    "slotted-6": {"slotted_min_span": 6},
    "slotted-6-whole": {"slotted_min_span": 6, "search_whole": True},
    "slotted-8": {"slotted_min_span": 8},
    "slotted-4-any": {"slotted_min_span": 4, "short_slots": "any"},
    "slotted-6-any": {"slotted_min_span": 6, "short_slots": "any"},
    "slotted-6-number": {"slotted_min_span": 6, "short_slots": "number"},
    "slotted-6-fixed-1": {"slotted_min_span": 6, "min_fixed": 1},
    "slotted-6-fixed-1-whole": {"slotted_min_span": 6, "min_fixed": 1, "search_whole": True},
    "whole": {"search_whole": True},
    # issue 22, the signatures: the default before variant evidence, and the two
    # steps, each named whatever the defaults are
    "before-evidence": {"variant_evidence": False, "search_whole": False},
    "evidence": {"variant_evidence": True, "search_whole": False},
    "evidence-whole": {"variant_evidence": True, "search_whole": True},
    # the heads-and-tails share: 0.8 (before session 16) and 0.9
    "ends-0.8": {"ends_share": 0.8},
    "ends-0.9": {"ends_share": 0.9},
    "prune": {"prune": True},
    "rounds-1": {"rounds": 1},
    "part-6": {"part_len": 6},
    "part-6-prune-rounds-2": {"part_len": 6, "prune": True, "rounds": 2},
    "merge-only": {"short_parts": False},
}


def _settings(args, default: list[str]) -> list[str]:
    """The setting names to run, from ``--settings`` or its shorthands."""
    if args.settings:
        names = list(SETTINGS) if args.settings == "all" else args.settings.split(",")
        unknown = [n for n in names if n not in SETTINGS]
        if unknown:
            raise SystemExit(f"--settings: unknown {', '.join(unknown)} "
                             f"(known: {', '.join(SETTINGS)}, all)")
        return names
    if args.merge_only:
        return ["merge-only"]
    if args.prune is not None:
        return {"on": ["prune"], "off": ["default"], "both": ["default", "prune"]}[args.prune]
    return default


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


def _print_missed(n_show, kd, pos_by_seg, gs, ge, occ, table, store, sc) -> None:
    """Up to *n_show* instances of block kind *kd* not inside one template occurrence,
    each with its text and the templates whose occurrences overlap it (pattern, df,
    where the occurrence lies relative to the instance in tokens)."""
    tid = occ.column("template_id").to_numpy()
    info = {int(t): (df, span, text) for t, df, span, text in zip(
        table.column("template_id").to_pylist(), table.column("df").to_pylist(),
        table.column("span_tokens").to_pylist(), table.column("text").to_pylist())}
    offs = np.asarray(store.doc_offsets)
    shown = 0
    for sgm, ps in pos_by_seg.items():
        ps = np.array(ps)
        lo, hi = int(ps.min()), int(ps.max()) + 1
        if np.any((gs <= lo) & (ge >= hi)):
            continue
        d = int(np.searchsorted(offs, lo, side="right") - 1)
        spans = store.token_spans(d)
        a = int(offs[d])
        text = sc.texts[d][int(spans[lo - a, 0]):int(spans[hi - 1 - a, 1])].replace("\n", " ⏎ ")
        print(f"    missed {kd} doc {d} tokens [{lo - a}, {hi - a}) ({hi - lo} tokens): {text!r}")
        touch = np.flatnonzero((gs < hi) & (ge > lo))
        if touch.size == 0:
            print("      no template touches it")
        for j in touch:
            df, span, ttext = info[int(tid[j])]
            ttext = ttext.replace("\n", " ⏎ ")
            if len(ttext) > 140:
                ttext = ttext[:65] + " … " + ttext[-70:]
            print(f"      #{int(tid[j])} df {df} span {span} occ [{int(gs[j]) - lo:+d}, "
                  f"{int(ge[j]) - hi:+d}] vs instance: {ttext}")
        shown += 1
        if shown >= n_show:
            break


def _bench_store(args) -> None:
    """Exact mining vs the template layer on a token store, CPU and wall seconds."""
    from repetend.corpus.store import TokenStore
    from repetend.phrases import find_phrases
    from repetend.phrases.templates import TemplateConfig, find_templates
    from repetend.synth.weblike import weblike

    store = TokenStore.open(args.store)
    names = _settings(args, ["default"])
    sigma, L = args.sigma, args.L
    # warm-up on a small corpus so that no figure below includes compilation
    small = weblike(120, seed=1).to_store()
    find_templates(small, find_phrases(small, min_docs=3, min_len=L, templates=False).raw, 3, L)
    print(f"{args.store}: {store.n_docs:,} documents, {store.n_tokens:,} tokens, σ = {sigma}, "
          f"L = {L}; settings: " + ", ".join(f"{n} {SETTINGS[n] or '(TemplateConfig())'}"
                                             for n in names))
    width = max(len(n) for n in names)
    print(f"{'run':>3s} {'setting':>{width}s} {'mining cpu':>10s} {'wall':>6s} "
          f"{'templates cpu':>13s} {'wall':>6s} {'× cpu':>6s} {'× wall':>6s}  layer cpu s per stage")
    ratios, walls, last, tables = defaultdict(list), defaultdict(list), {}, {}
    for r in range(args.repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        ph = find_phrases(store, min_docs=sigma, min_len=L, templates=False)
        c1, w1 = time.process_time(), time.perf_counter()
        for name in names:
            c2, w2 = time.process_time(), time.perf_counter()
            res = find_templates(store, ph.raw, sigma, L, TemplateConfig(**SETTINGS[name]))
            c3, w3 = time.process_time(), time.perf_counter()
            ratios[name].append((c3 - c2) / (c1 - c0))
            walls[name].append((w3 - w2) / (w1 - w0))
            last[name], tables[name] = res.summary, res.table
            stages = ", ".join(f"{k} {v:.2f}" for k, v in res.summary["cpu_timings"].items()
                               if k != "total")
            print(f"{r + 1:3d} {name:>{width}s} {c1 - c0:10.2f} {w1 - w0:6.2f} "
                  f"{c3 - c2:13.2f} {w3 - w2:6.2f} {ratios[name][-1]:6.2f} "
                  f"{walls[name][-1]:6.2f}  {stages}", flush=True)
    for name in names:
        s = last[name]
        print(f"{name}: median × mining: CPU {float(np.median(ratios[name])):.2f}, wall "
              f"{float(np.median(walls[name])):.2f}; templates {s['templates']:,}, occurrences "
              f"{s['template_occurrences']:,}, gapped sequence {s['gapped_length']:,} tokens"
              + (f" ({s['short_tokens_dropped']:,} covered tokens in "
                 f"{s['short_chains_dropped']:,} short chains left out)"
                 if "short_tokens_dropped" in s else ""))
        print(f"  coverage: exact {s['exact_covered_share']:.2%}, templates "
              f"{s['template_covered_share']:.2%}, union {s['union_covered_share']:.2%} "
              f"(+{s['gained_share']:.2%}, {s['gained_tokens']:,} tokens)")
    if args.short:
        _print_short(args.short, names, tables, L)
    print(f"peak RSS {_peak_mb():.0f} MB")


def _print_short(n_show: int, names, tables, L: int) -> None:
    """Per setting, the templates of span < L (those only a lowered ``min_span`` or
    ``slotted_min_span`` can give): how many, and *n_show* of them evenly spread
    over their Ψ order, for a look by eye (boilerplate or body text?)."""
    for name in names:
        t = tables[name].to_pylist()
        short = [r for r in t if r["span_tokens"] < L]
        print(f"\n[{name}] {len(short):,} of {len(t):,} templates span < L = {L} "
              f"(their occurrences {sum(r['occurrences'] for r in short):,})")
        if not short:
            continue
        pick = sorted(set(np.linspace(0, len(short) - 1, min(n_show, len(short))).astype(int)))
        for i in pick:
            r = short[i]
            text = r["text"].replace("\n", " ⏎ ")
            print(f"  #{r['template_id']} (rank {i + 1}) df {r['df']} occ {r['occurrences']} "
                  f"span {r['span_tokens']}: {text[:150]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument("--sigma", type=int, default=10)
    ap.add_argument("--L", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=15)
    ap.add_argument("--missed", type=int, default=0, metavar="N",
                    help="print, per block kind, N planted instances (block on ≥ σ pages) not "
                         "found inside one template occurrence, with the templates touching them")
    ap.add_argument("--store", help="time the layer on this token store instead (real text)")
    ap.add_argument("--repeat", type=int, default=3, help="runs with --store")
    ap.add_argument("--merge-only", action="store_true",
                    help="time the merge step alone (short_parts=False): --settings merge-only")
    ap.add_argument("--prune", choices=["on", "off", "both"], default=None,
                    help="the pruned gapped sequence (TemplateConfig.prune), the unpruned one "
                         "(the default), or both after the same mining run")
    ap.add_argument("--short", type=int, default=0, metavar="N",
                    help="with --store: per setting, count the templates of span < L and "
                         "print N of them (evenly over their Ψ order) to judge by eye")
    ap.add_argument("--settings", metavar="A,B,…|all",
                    help="run the layer once per named setting after the same mining run: "
                         + ", ".join(SETTINGS))
    args = ap.parse_args()
    if args.store:
        _bench_store(args)
        return

    from repetend.phrases import find_phrases
    from repetend.phrases.coverage import coverage_mask
    from repetend.phrases.templates import TemplateConfig, find_templates
    from repetend.synth.weblike import weblike

    sc = weblike(args.pages, seed=args.seed)
    store = sc.to_store()
    n = store.n_tokens
    sigma, L = args.sigma, args.L
    # warm-up on a small corpus so that no figure below includes compilation
    small = weblike(120, seed=1).to_store()
    names = _settings(args, ["default", "merge-only"])
    wp = find_phrases(small, min_docs=3, min_len=L)
    for name in names:
        find_templates(small, wp.raw, 3, L, TemplateConfig(**SETTINGS[name]))

    rows, results = [], {}
    t0 = time.perf_counter()
    ph = find_phrases(store, min_docs=sigma, min_len=L)
    rows.append(("exact phrases (find_phrases)", time.perf_counter() - t0, _peak_mb(), ""))
    for name in names:
        t0 = time.perf_counter()
        results[name] = find_templates(store, ph.raw, sigma, L, TemplateConfig(**SETTINGS[name]))
        tm = results[name].summary["timings"]
        rows.append((f"templates ({name})", time.perf_counter() - t0, _peak_mb(),
                     ", ".join(f"{k} {v:.3f}" for k, v in tm.items() if k != "total")))

    print(f"weblike: {args.pages} pages, {n:,} tokens, σ = {sigma}, L = {L}, "
          f"engine {ph.summary['engine']}")
    base = rows[0][1]
    width = max(32, max(len(r[0]) for r in rows))
    print(f"{'step':{width}s} {'time s':>8s} {'µs/token':>9s} {'× mining':>9s} "
          f"{'peak RSS MB':>12s}  stages")
    for name, t, rss, stages in rows:
        print(f"{name:{width}s} {t:8.3f} {t / n * 1e6:9.3f} {t / base:9.2f} {rss:12.0f}  {stages}")

    for label, r in results.items():
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
    for label, r in results.items():
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
            if args.missed:
                _print_missed(args.missed, kd, pos_by_seg, gs, ge, occ, r.table, store, sc)
        lab = kind[inside]
        tot = max(lab.size, 1)
        tpl_kinds = ~np.isin(lab, ["", "body", "title"])
        print(f"  precision: tokens inside template occurrences: {lab.size:,}; in template "
              f"blocks {tpl_kinds.sum() / tot:.2%}, in page titles {np.sum(lab == 'title') / tot:.2%}"
              f" (a title between two blocks is a gap slot), in body "
              f"{np.sum(lab == 'body') / tot:.2%}, between segments {np.sum(lab == '') / tot:.2%}")

    first = names[0]
    print(f"\ntop {args.show} templates ({first}), for inspection by hand:")
    for r in results[first].table.slice(0, args.show).to_pylist():
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
