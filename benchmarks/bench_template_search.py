"""Cost and gain of ``TemplateConfig(search_whole=True)`` on a token store:
one exact mining run (``find_phrases``, templates off), then the template layer
per setting, ``--repeat`` times, CPU seconds of this process and the ratio to
the mining's CPU, with the templates, occurrences and coverage.

    PYTHONPATH=src nice .venv/bin/python benchmarks/bench_template_search.py \
        /work/data/debian-small.store [--sigma 20] [--L 10] [--repeat 2]
"""

from __future__ import annotations

import argparse
import time

from repetend.corpus.store import TokenStore
from repetend.phrases import PhraseConfig, find_phrases
from repetend.phrases.templates import TemplateConfig, find_templates

SETTINGS = (("slotted-6", {"slotted_min_span": 6}),
            ("slotted-6-whole", {"slotted_min_span": 6, "search_whole": True}),
            ("slotted-6-fixed-1-whole", {"slotted_min_span": 6, "min_fixed": 1,
                                         "search_whole": True}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--L", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    store = TokenStore.open(a.store)
    t = time.process_time()
    ph = find_phrases(store, PhraseConfig(min_docs=a.sigma, min_len=a.L, templates=None))
    mine = time.process_time() - t
    print(f"{a.store}: mining CPU {mine:.2f} s")
    for rep in range(a.repeat):
        for name, kw in SETTINGS:
            t = time.process_time()
            r = find_templates(store, ph.raw, a.sigma, a.L, TemplateConfig(**kw))
            cpu = time.process_time() - t
            s = r.summary
            print(f"{rep} {name:24s} CPU {cpu:6.2f} s  x mining {cpu / mine:5.2f}  "
                  f"templates {r.n_templates}  occurrences {r.occurrences.num_rows:,}  "
                  f"template share {s['template_covered_share'] * 100:.2f}%  "
                  f"union {s['union_covered_share'] * 100:.2f}%  "
                  f"{s.get('search_whole', '')}", flush=True)


if __name__ == "__main__":
    main()
