"""Which language detector, fed what: accuracy and speed on real pages of this machine.

Labelled pages (the label is where the page lives, checked by hand on the misses):

* ``ru``: every Russian man page (``/usr/share/man/ru``), ``de``: every German one
  (``/usr/share/man/de``), ``en``: a sample of ``/usr/share/man/man1`` — troff
  stripped with the bench_normalize.py stripper;
* ``en``: a sample of the Debian documentation corpus (``bench-data/debian.jsonl``,
  English pages with code, tables and markup), as they come.

Each page is fed **long** (the whole text) and **short** (its first 200 characters),
and each detector is fed either the raw text or :func:`repetend.corpus.lang.detector_input`
(letters only, the first ``PREFIX_CHARS`` of them).  Printed: accuracy per
label, the most frequent wrong answers, and ms per page.

Usage: ``.venv/bin/python benchmarks/bench_langdetect.py [--debian 3000] [--en-man 300]``
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_normalize import read_pages  # noqa: E402

from repetend.corpus.lang import detector_input  # noqa: E402


def load(n_debian: int, n_en_man: int, seed: int = 3):
    rng = random.Random(seed)
    items = []
    for lang in ("ru", "de"):
        for t in read_pages(sorted(Path(f"/usr/share/man/{lang}").rglob("*.gz"))):
            if len(t) >= 200:
                items.append((lang, "man", t))
    en = sorted(Path("/usr/share/man/man1").glob("*.gz"))
    for t in read_pages(rng.sample(en, min(n_en_man, len(en)))):
        if len(t) >= 200:
            items.append(("en", "man", t))
    deb = Path("/work/main/bench-data/debian.jsonl")
    if deb.is_file() and n_debian:
        lines = deb.read_text(encoding="utf-8").splitlines()
        for line in rng.sample(lines, min(n_debian, len(lines))):
            t = json.loads(line)["text"]
            if len(t) >= 200:
                items.append(("en", "debian", t))
    return items


def py3langid_fn():
    import py3langid
    return lambda t: py3langid.classify(t)[0]


def lingua_fn(low: bool):
    from lingua import LanguageDetectorBuilder
    b = LanguageDetectorBuilder.from_all_languages()
    if low:
        b = b.with_low_accuracy_mode()
    det = b.build()

    def f(t):
        r = det.detect_language_of(t)
        return r.iso_code_639_1.name.lower() if r is not None else "??"
    return f


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--debian", type=int, default=3000)
    ap.add_argument("--en-man", type=int, default=300)
    ap.add_argument("--detectors", default="py3langid,lingua-low,lingua")
    args = ap.parse_args(argv)
    items = load(args.debian, args.en_man)
    groups = collections.Counter((l, s) for l, s, _ in items)
    print("pages:", ", ".join(f"{l}/{s} {n}" for (l, s), n in sorted(groups.items())),
          f"; median length {sorted(len(t) for *_, t in items)[len(items) // 2]:,} chars")
    makers = {"py3langid": py3langid_fn, "lingua-low": lambda: lingua_fn(True),
              "lingua": lambda: lingua_fn(False)}
    print(f"{'detector':<11}{'input':<9}{'length':<7}" + "".join(f"{l + '/' + s:>11}" for l, s in sorted(groups))
          + f"{'ms/page':>9}  wrong answers")
    for name in args.detectors.split(","):
        t0 = time.perf_counter()
        fn = makers[name]()
        load_s = time.perf_counter() - t0
        for prep in ("raw", "letters"):
            for length in ("long", "short"):
                hits = collections.Counter()
                wrong = collections.Counter()
                t0 = time.perf_counter()
                for lang, src, text in items:
                    x = text if length == "long" else text[:200]
                    x = detector_input(x) if prep == "letters" else x
                    got = fn(x)
                    if got == lang:
                        hits[lang, src] += 1
                    else:
                        wrong[got] += 1
                ms = (time.perf_counter() - t0) * 1000 / len(items)
                print(f"{name:<11}{prep:<9}{length:<7}"
                      + "".join(f"{hits[g] / groups[g]:>11.3f}" for g in sorted(groups))
                      + f"{ms:>9.2f}  " + ", ".join(f"{k} {v}" for k, v in wrong.most_common(4)))
        print(f"{name}: model load {load_s:.2f} s")


if __name__ == "__main__":
    main()
