"""CPU seconds of the template layer per stage on a token store, over exact
phrases mined once and kept beside the store (``STORE.raw<σ>.pkl``), so that
two trees can be timed back to back on the same input and their outputs
compared::

    PYTHONPATH=OLD/src .venv/bin/python benchmarks/bench_template_stages.py STORE \
        --sigma 200 --repeat 2 --save /tmp/ref
    PYTHONPATH=NEW/src .venv/bin/python benchmarks/bench_template_stages.py STORE \
        --sigma 200 --repeat 2 --compare /tmp/ref

Prints ``cpu_timings`` of every call (the first call of a process also loads
the cached kernels) and, with ``--compare``, whether the templates, their
occurrences and the summary (timings aside) equal the saved ones.  The first
run on a store mines its exact phrases (templates off) and prints that CPU
time; ``--mining N`` times the mining N more times (templates off).
``--slotted-spans off,6,default`` runs the layer once per value of
``TemplateConfig.slotted_min_span`` in turn within each repeat (``default``:
``TemplateConfig()``), and prints each call's layer CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store")
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--L", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--mining", type=int, default=0)
    ap.add_argument("--save")
    ap.add_argument("--compare")
    ap.add_argument("--slotted-spans", default=None,
                    help="comma list of TemplateConfig.slotted_min_span values ('off', 'default' "
                         "or K), run in turn within each repeat (default: TemplateConfig() only)")
    a = ap.parse_args()
    import pyarrow.parquet as pq

    from repetend.corpus.store import TokenStore
    from repetend.phrases import find_phrases
    from repetend.phrases.templates import TemplateConfig, find_templates

    store = TokenStore.open(a.store)
    raw_path = a.store.rstrip("/") + f".raw{a.sigma}.pkl"
    if not os.path.exists(raw_path):
        c = time.process_time()
        r = find_phrases(store, min_docs=a.sigma, min_len=a.L, templates=None)
        print("mining CPU s (templates off, first call)", round(time.process_time() - c, 2))
        with open(raw_path, "wb") as f:
            pickle.dump(r.raw, f)
    for _ in range(a.mining):
        c = time.process_time()
        find_phrases(store, min_docs=a.sigma, min_len=a.L, templates=None)
        print("mining CPU s (templates off)", round(time.process_time() - c, 2), flush=True)
    with open(raw_path, "rb") as f:
        raw = pickle.load(f)
    settings = [None] if a.slotted_spans is None else a.slotted_spans.split(",")
    res = None
    for _ in range(a.repeat):
        for sp in settings:
            cfg = (TemplateConfig() if sp in (None, "default")
                   else TemplateConfig(slotted_min_span=None if sp == "off" else int(sp)))
            c = time.process_time()
            res = find_templates(store, raw, a.sigma, a.L, cfg)
            total = time.process_time() - c
            print(*(() if sp is None else (f"slotted {sp}: layer CPU s {total:.2f}",)),
                  {k: round(v, 3) for k, v in res.summary["cpu_timings"].items()}, flush=True)
    if res is None:
        return
    summary = json.loads(json.dumps({k: v for k, v in res.summary.items()
                                     if k not in ("timings", "cpu_timings")},
                                    sort_keys=True, default=str))
    if a.save:
        os.makedirs(a.save, exist_ok=True)
        pq.write_table(res.table, os.path.join(a.save, "templates.parquet"))
        pq.write_table(res.occurrences, os.path.join(a.save, "template_occurrences.parquet"))
        with open(os.path.join(a.save, "summary.json"), "w") as f:
            json.dump(summary, f)
    if a.compare:
        with open(os.path.join(a.compare, "summary.json")) as f:
            same_summary = summary == json.load(f)
        print("equal:",
              res.table.equals(pq.read_table(os.path.join(a.compare, "templates.parquet"))),
              res.occurrences.equals(
                  pq.read_table(os.path.join(a.compare, "template_occurrences.parquet"))),
              same_summary)


if __name__ == "__main__":
    main()
