"""One dedup run over a mixed Russian / English / German corpus with inflected copies planted.

Corpus (real text of this machine):

* base documents: man pages of ``/usr/share/man/ru``, ``/usr/share/man/de`` and a
  sample of ``/usr/share/man/man1`` (troff stripped, bench_normalize.py), cut into
  runs of sentences of 60-200 words; a base is kept only when py3langid
  (:func:`repetend.corpus.lang.detect_language`) gives it its directory's language
  (the localized man pages leave many sections in English); bases resembling each
  other (J >= 0.2 on 3-shingles, raw or stemmed by language) are dropped;
* for ``N_COPIES`` bases per language an **inflected copy**: Russian — each word
  with another form in its pymorphy3 lexeme is replaced by a random other form with
  probability ``RU_INFLECT`` (the share of words changed is printed, >= 0.5);
  English, German — each word with another form of the corpus with the same Snowball
  stem is replaced by one with probability ``EN_DE_INFLECT``; in every language one
  word in 200 deleted and one in 200 inserted.

Ground truth: the (base, copy) pairs.  Printed per configuration (off,
``stem=auto``, ``stem=auto, lemmatize=auto`` with the first parse's normal form and with
lexeme keys, the default) and method: recall per language,
pairs found that were not planted, and pairs between documents of two languages.

Usage: ``.venv/bin/python benchmarks/bench_multilingual.py [--copies 200] [--en-pages 400]``
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_normalize import as_text, chunks, families, read_pages  # noqa: E402

from repetend.corpus.lang import detect_language  # noqa: E402
from repetend.corpus.store import TokenStore  # noqa: E402
from repetend.neardup import find_near_duplicates  # noqa: E402

K = 3
T = 0.8
RU_INFLECT = 1.0
EN_DE_INFLECT = 0.3
INDEL = 0.005
SEED = 11
_CYR = re.compile(r"[\u0400-\u04ff]")


def bases_of(lang: str, paths, rng) -> list:
    out = []
    for page in read_pages(paths):
        for c in chunks(page):
            if detect_language(as_text(c)) == lang:
                out.append(c)
    return out


def ru_inflector(consistent: bool):
    """Other forms of a word's lexeme (its most probable parse); *consistent*: only the
    forms whose own most probable parse has the same normal form (no ambiguity left
    for the lemmatizer: what lemmatization can recover, an upper bound)."""
    import pymorphy3

    morph = pymorphy3.MorphAnalyzer(lang="ru")
    cache: dict[str, list[str]] = {}

    def forms(w: str) -> list[str]:
        if w not in cache:
            if not _CYR.search(w):
                cache[w] = []
            else:
                p = morph.parse(w)[0]
                alts = sorted({f.word for f in p.lexeme} - {w})
                if consistent:
                    alts = [a for a in alts if morph.parse(a)[0].normal_form == p.normal_form]
                cache[w] = alts
        return cache[w]
    return forms


def inflect(doc, forms, p, vocab, rng, stats):
    out = []
    for sent in doc:
        new = []
        for w in sent:
            if rng.random() < INDEL:
                continue
            alt = forms(w)
            stats[1] += 1
            if alt and rng.random() < p:
                w = rng.choice(alt)
                stats[0] += 1
            new.append(w)
            if rng.random() < INDEL:
                new.append(rng.choice(vocab))
        out.append(new)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=200)
    ap.add_argument("--en-pages", type=int, default=400)
    ap.add_argument("--methods", default="minhash,allpairs")
    args = ap.parse_args(argv)
    rng = random.Random(SEED)
    t0 = time.perf_counter()
    en_paths = sorted(Path("/usr/share/man/man1").glob("*.gz"))
    sources = {"ru": sorted(Path("/usr/share/man/ru").rglob("*.gz")),
               "de": sorted(Path("/usr/share/man/de").rglob("*.gz")),
               "en": rng.sample(en_paths, min(args.en_pages, len(en_paths)))}
    bases, lang_of = [], []
    for lang, paths in sources.items():
        b = bases_of(lang, paths, rng)
        bases += b
        lang_of += [lang] * len(b)
    # drop bases that resemble each other (raw or stemmed), so planted pairs are the truth
    store0 = TokenStore.from_texts([as_text(b) for b in bases], lang_detect=True)
    drop = set()
    for nkw in ({}, {"stem": "auto"}):
        r = find_near_duplicates(store0, method="allpairs", threshold=0.2, shingle=K, **nkw)
        drop |= set(r.pairs.b.tolist())
    keep = [i for i in range(len(bases)) if i not in drop]
    bases = [bases[i] for i in keep]
    lang_of = [lang_of[i] for i in keep]
    texts = [as_text(b) for b in bases]
    truth: dict[tuple[int, int], str] = {}
    ru_idx = [i for i, x in enumerate(lang_of) if x == "ru"]
    rng.shuffle(ru_idx)
    half = len(ru_idx) // 2
    groups = {"ru-any": ru_idx[:half], "ru-cons": ru_idx[half:],
              "en": [i for i, x in enumerate(lang_of) if x == "en"],
              "de": [i for i, x in enumerate(lang_of) if x == "de"]}
    for lang, idx in groups.items():
        vocab = sorted({w for i in idx for s in bases[i] for w in s})
        if lang.startswith("ru"):
            forms, p = ru_inflector(lang == "ru-cons"), RU_INFLECT
        else:
            fam = families(vocab, {"en": "english", "de": "german"}[lang])
            forms, p = (lambda w, fam=fam: fam.get(w, [])), EN_DE_INFLECT
        stats = [0, 0]
        for i in rng.sample(idx, min(args.copies // (2 if lang.startswith("ru") else 1), len(idx))):
            truth[(i, len(texts))] = lang
            texts.append(as_text(inflect(bases[i], forms, p, vocab, rng, stats)))
            lang_of.append(lang[:2])
        print(f"[{lang}] {len(idx)} bases, {sum(1 for v in truth.values() if v == lang)} inflected copies, "
              f"{stats[0] / max(stats[1], 1):.2f} of their words changed")
    t1 = time.perf_counter()
    store = TokenStore.from_texts(texts, lang_detect=True)
    det = store.docs.column("language").to_pylist()
    agree = sum(a == b for a, b in zip(det, lang_of)) / len(det)
    print(f"corpus: {store.n_docs} documents, {store.n_tokens:,} tokens; built in {t1 - t0:.1f} s; "
          f"detection {time.perf_counter() - t1:.1f} s (with tokenizing), agrees with the "
          f"source language on {agree:.3f} of documents")
    print("recall per group (ru-any: any other form of the lexeme; ru-cons: forms the lemmatizer "
          "maps back to the same normal form), pairs found beyond the planted ones, pairs across "
          f"languages; {K}-shingles, t = {T}")
    print(f"{'normalization':<38}{'method':<10}{'ru-any':>7}{'ru-cons':>8}{'en':>7}{'de':>7}{'other':>7}"
          f"{'cross':>7}{'time s':>8}")
    for label, nkw in (("off", {}), ("stem=auto", {"stem": "auto"}),
                       ("stem=auto, lemmatize (first parse)", {"stem": "auto", "lemmatize": "auto",
                                                               "lemma_keys": "first"}),
                       ("stem=auto, lemmatize=auto", {"stem": "auto", "lemmatize": "auto"}),
                       ("stem+stopwords=auto, lemmatize", {"stem": "auto", "stopwords": "auto",
                                                           "lemmatize": "auto"})):
        for method in args.methods.split(","):
            ts = time.perf_counter()
            r = find_near_duplicates(store, method=method, threshold=T, shingle=K, **nkw)
            dt = time.perf_counter() - ts
            found = set(zip(r.pairs.a.tolist(), r.pairs.b.tolist()))
            rec = {lang: sum(1 for p, l in truth.items() if l == lang and p in found)
                   / max(1, sum(1 for l in truth.values() if l == lang)) for lang in groups}
            other = len(found - set(truth))
            cross = sum(1 for a, b in found if lang_of[a] != lang_of[b])
            print(f"{label:<38}{method:<10}{rec['ru-any']:>7.3f}{rec['ru-cons']:>8.3f}{rec['en']:>7.3f}"
                  f"{rec['de']:>7.3f}"
                  f"{other:>7}{cross:>7}{dt:>8.2f}")


if __name__ == "__main__":
    main()
