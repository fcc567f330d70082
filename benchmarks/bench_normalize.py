"""Near-copies that differ by inflection and small rewording: does normalization help, and what does it cost?

Corpus (built here from real text on this machine, one run per language):

* Russian: every page under ``/usr/share/man/ru/`` (troff stripped); English: a
  sample of ``/usr/share/man/man1/``.  Each page is cut into base documents of
  consecutive sentences (>= ``MIN_WORDS`` words).  Bases that already resemble
  each other (J >= 0.2 on 3-shingles, raw, stemmed or stemmed without stop
  words) are dropped, so the
  planted pairs are the only true near-duplicates.
* For ``N_COPIES`` bases a near-copy is made with these documented edits
  (probabilities per profile in ``PROFILES``: ``heavy`` rewording, ``light`` near-identical):
    - inflection swap: each word whose Snowball family (words of the corpus with the
      same stem) has another form is replaced by a random other form with
      probability ``inflect`` (this uses the same stemmer we evaluate: it measures
      what stemming can recover, an upper bound for real inflection);
    - deletion: each word is dropped with probability ``delete``;
    - insertion: after each word a random corpus word is inserted with probability ``insert``;
    - sentence reordering (``swap``): one random pair of adjacent sentences is swapped.
* Ground truth: the (base, copy) pairs.  Recall = planted pairs found / planted;
  precision = planted pairs found / pairs found.

Runs every method (allpairs = exact Jaccard join, minhash = MinHash + LSH,
simhash with Hamming 3, 8 and 16) with normalization off, stemming, and
stemming + stop words, at threshold ``T`` on word ``K``-shingles, and prints
recall, precision, time and peak RSS side by side.  Then the cost of the
normalization pass (vocabulary stemming + compiled stream rewrite) next to
shingling on a larger English corpus.

Usage: ``.venv/bin/python benchmarks/bench_normalize.py [--pages-en 600] [--big-pages 4000]``
"""

from __future__ import annotations

import argparse
import gzip
import random
import re
import resource
import sys
import time
from pathlib import Path

import numpy as np

from repetend.corpus.store import TokenStore
from repetend.neardup import find_near_duplicates, shingle_sets, token_hashes
from repetend.neardup.normalize import normalize_tokens, normalize_vocabulary, stem_words
from repetend.neardup.simhash import hamming_distance, simhash_fingerprints

MIN_WORDS = 60
MAX_WORDS = 200
N_COPIES = 300
# edit profiles: probability of an inflection swap / deletion / insertion per word, sentence swap
PROFILES = {
    "heavy": dict(inflect=0.25, delete=0.03, insert=0.03, swap=True),
    "light": dict(inflect=0.05, delete=0.005, insert=0.005, swap=False),
}
K = 3
T = 0.5
SEED = 7

WORD = re.compile(r"[^\W_]+")
SENT = re.compile(r"(?<=[.!?])\s+")
_ESC = [(re.compile(r"\\f(\[[^\]]*\]|\(..|.)"), ""), (re.compile(r"\\\((..)"), " "),
        (re.compile(r"\\\*(\(..|\[[^\]]*\]|.)"), " "), (re.compile(r"\\\[[^\]]*\]"), " "),
        (re.compile(r"\\-"), "-"), (re.compile(r"\\[&%|^0~ ]"), " "), (re.compile(r"\\e"), " "),
        (re.compile(r"\\."), "")]
_TEXT_MACROS = {"SH", "SS", "B", "I", "BR", "IR", "RB", "BI", "IB", "RI", "IP", "TP", "SM", "SB"}


def strip_troff(src: str) -> str:
    out = []
    for line in src.splitlines():
        if line.startswith((".\\\"", "'\\\"", "\\\"")):
            continue
        if line.startswith((".", "'")):
            parts = line[1:].split(None, 1)
            if not parts or parts[0] not in _TEXT_MACROS or len(parts) < 2:
                continue
            line = parts[1].replace('"', " ")
        for rx, rep in _ESC:
            line = rx.sub(rep, line)
        out.append(line)
    return " ".join(" ".join(out).split())


def read_pages(paths) -> list[str]:
    texts = []
    for p in paths:
        try:
            raw = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
            texts.append(strip_troff(raw.decode("utf-8", "replace")))
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
    return texts


def chunks(text: str) -> list[list[list[str]]]:
    """Base documents of a page: lists of sentences, each a list of lower-cased words."""
    docs, cur, n = [], [], 0
    for s in SENT.split(text):
        words = WORD.findall(s.lower())
        if not words:
            continue
        cur.append(words)
        n += len(words)
        if n >= MIN_WORDS:
            if n <= MAX_WORDS:
                docs.append(cur)
            cur, n = [], 0
    return docs


def families(vocab: list[str], lang: str) -> dict[str, list[str]]:
    """word -> other surface forms of the corpus with the same Snowball stem."""
    stems = stem_words(vocab, lang)
    by_stem: dict[str, list[str]] = {}
    for w, s in zip(vocab, stems):
        by_stem.setdefault(s, []).append(w)
    return {w: [x for x in by_stem[s] if x != w] for w, s in zip(vocab, stems) if len(by_stem[s]) > 1}


def edit(doc: list[list[str]], fam, vocab, rng: random.Random, prof: dict) -> list[list[str]]:
    out = []
    for sent in doc:
        new = []
        for w in sent:
            if rng.random() < prof["delete"]:
                continue
            if w in fam and rng.random() < prof["inflect"]:
                w = rng.choice(fam[w])
            new.append(w)
            if rng.random() < prof["insert"]:
                new.append(rng.choice(vocab))
        out.append(new)
    if prof["swap"] and len(out) >= 2:
        i = rng.randrange(len(out) - 1)
        out[i], out[i + 1] = out[i + 1], out[i]
    return out


def as_text(doc) -> str:
    return " ".join(" ".join(s) + "." for s in doc)


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_corpus(pages: list[str], lang: str, rng: random.Random, prof: dict):
    bases = [c for p in pages for c in chunks(p)]
    store = TokenStore.from_texts([as_text(b) for b in bases])
    drop = set()
    for nkw in ({}, {"stem": lang}, {"stem": lang, "stopwords": lang}):
        r = find_near_duplicates(store, method="allpairs", threshold=0.2, shingle=K, **nkw)
        drop |= set(r.pairs.b.tolist())
    bases = [b for i, b in enumerate(bases) if i not in drop]
    vocab = sorted({w for b in bases for s in b for w in s})
    fam = families(vocab, lang)
    src = rng.sample(range(len(bases)), min(N_COPIES, len(bases)))
    copies = [edit(bases[i], fam, vocab, rng, prof) for i in src]
    texts = [as_text(b) for b in bases] + [as_text(c) for c in copies]
    truth = {(i, len(bases) + j) for j, i in enumerate(src)}
    return TokenStore.from_texts(texts), truth, len(bases), len(fam) / max(len(vocab), 1)


RUNS = [("allpairs", {}), ("minhash", {}), ("simhash", {"hamming": 3}), ("simhash", {"hamming": 8}),
        ("simhash", {"hamming": 16})]


def evaluate(store, truth, lang):
    norms = [("off", {}), ("stem", {"stem": lang}), ("stem+stop", {"stem": lang, "stopwords": lang})]
    print(f"{'method':<14}{'normalize':<11}{'recall':>7}{'prec.':>7}{'pairs':>7}{'cand.':>8}"
          f"{'time s':>8}{'norm s':>8}{'shingle s':>10}")
    for method, extra in RUNS:
        label = method + (f" k={extra['hamming']}" if "hamming" in extra else "")
        for nname, nkw in norms:
            t0 = time.perf_counter()
            r = find_near_duplicates(store, method=method, threshold=T, shingle=K, **extra, **nkw)
            dt = time.perf_counter() - t0
            found = set(zip(r.pairs.a.tolist(), r.pairs.b.tolist()))
            hit = len(found & truth)
            tm = r.summary["timings_s"]
            print(f"{label:<14}{nname:<11}{hit / len(truth):>7.3f}{(hit / len(found) if found else 1.0):>7.3f}"
                  f"{len(found):>7}{len(r.candidates):>8}{dt:>8.3f}{tm.get('normalize', 0.0):>8.3f}"
                  f"{tm['shingles']:>10.3f}")
    # how Jaccard of the planted pairs moves
    a = np.array([p[0] for p in sorted(truth)])
    b = np.array([p[1] for p in sorted(truth)])
    for nname, nkw in norms:
        if nkw:
            nz = normalize_vocabulary(store.vocab, **nkw)
            toks, off = normalize_tokens(store.tokens, store.doc_offsets, nz.remap)
            sets = shingle_sets(toks, off, token_hashes(nz.vocab), K)
        else:
            sets = shingle_sets(store.tokens, store.doc_offsets, token_hashes(store.vocab), K)
        from repetend.neardup.pairs import verify_pairs

        j = verify_pairs(sets, a, b).jaccard
        fp = simhash_fingerprints(sets)
        hd = hamming_distance(fp[a], fp[b])
        print(f"  planted pairs, {nname:<10} Jaccard of {K}-shingles: median {np.median(j):.3f}, "
              f"p10 {np.quantile(j, 0.1):.3f}, share >= {T}: {np.mean(j >= T):.3f}; SimHash Hamming "
              f"median {np.median(hd):.0f}, share <= 3: {np.mean(hd <= 3):.3f}, <= 16: {np.mean(hd <= 16):.3f}")


def normalization_cost(pages: list[str], lang: str, repeat: int = 3):
    store = TokenStore.from_texts(pages)
    best = {"vocab": 1e9, "rewrite": 1e9, "shingle_raw": 1e9, "shingle_norm": 1e9}
    for _ in range(repeat):
        t = time.perf_counter()
        nz = normalize_vocabulary(store.vocab, stem=lang, stopwords=lang)
        best["vocab"] = min(best["vocab"], time.perf_counter() - t)
        t = time.perf_counter()
        toks, off = normalize_tokens(store.tokens, store.doc_offsets, nz.remap)
        best["rewrite"] = min(best["rewrite"], time.perf_counter() - t)
        t = time.perf_counter()
        shingle_sets(store.tokens, store.doc_offsets, token_hashes(store.vocab), 5)
        best["shingle_raw"] = min(best["shingle_raw"], time.perf_counter() - t)
        t = time.perf_counter()
        shingle_sets(toks, off, token_hashes(nz.vocab), 5)
        best["shingle_norm"] = min(best["shingle_norm"], time.perf_counter() - t)
    n = store.n_tokens
    norm = best["vocab"] + best["rewrite"]
    raw_sets = shingle_sets(store.tokens, store.doc_offsets, token_hashes(store.vocab), 5)
    print(f"{store.n_docs:,} documents, {n:,} tokens, vocabulary {len(store.vocab):,} -> "
          f"{nz.types_after:,} stems ({nz.stopword_types:,} stop-word types), tokens after {toks.size:,}")
    print(f"{'stage':<34}{'s (best of %d)' % repeat:>16}{'ns/token':>10}")
    for name, v in [("stem + stop list on the vocabulary", best["vocab"]),
                    ("compiled stream rewrite", best["rewrite"]),
                    ("normalization total", norm),
                    ("shingling k=5, raw tokens", best["shingle_raw"]),
                    ("shingling k=5, normalized tokens", best["shingle_norm"])]:
        print(f"{name:<34}{v:>16.4f}{v / n * 1e9:>10.1f}")
    print(f"normalization / shingling = {norm / best['shingle_raw']:.2f}; stemmer calls: "
          f"{len(store.vocab):,} (vocabulary) instead of {n:,} (tokens), {n / max(len(store.vocab), 1):.0f}x fewer")
    print(f"memory: normalized stream {(toks.nbytes + off.nbytes) / 2**20:.1f} MiB + remap "
          f"{nz.remap.nbytes / 2**20:.2f} MiB, against raw shingle sets {raw_sets.hashes.nbytes / 2**20:.1f} MiB")


def method_speed(pages: list[str], lang: str, t: float = 0.8):
    """The methods side by side on many documents (no ground truth: time, candidates, pairs, RSS)."""
    docs = [as_text(c) for p in pages for c in chunks(p)]
    store = TokenStore.from_texts(docs)
    print(f"{len(docs):,} documents, {store.n_tokens:,} tokens, threshold {t}, {K}-shingles, stem={lang}")
    print("(huge buckets / groups of identical fingerprints are capped at 200: star + chain; "
          "'in clust.' = documents in clusters, comparable across methods)")
    print(f"{'method':<14}{'pairs':>7}{'not enum.':>10}{'in clust.':>10}{'cand.':>9}{'total s':>9}{'norm s':>8}{'shingle s':>10}"
          f"{'sig s':>7}{'pairs s':>8}{'verify s':>9}{'RSS MiB':>9}")
    for method, extra in [("allpairs", {}), ("minhash", {}), ("simhash", {"hamming": 3}),
                          ("simhash", {"hamming": 8})]:
        r = find_near_duplicates(store, method=method, threshold=t, shingle=K, stem=lang, **extra)
        tm = r.summary["timings_s"]
        label = method + (f" k={extra['hamming']}" if extra else "")
        pair_s = tm.get("lsh", tm.get("tables", tm.get("pairs", 0.0)))
        print(f"{label:<14}{len(r.pairs):>7}{r.summary.get('pairs_not_enumerated', 0):>10}"
              f"{r.summary['documents_in_clusters']:>10}{len(r.candidates):>9}{tm['total']:>9.3f}{tm.get('normalize', 0):>8.3f}"
              f"{tm['shingles']:>10.3f}{tm.get('signatures', 0):>7.3f}{pair_s:>8.3f}{tm.get('verify', 0):>9.3f}"
              f"{r.summary['peak_rss_bytes'] / 2**20:>9.0f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages-en", type=int, default=600)
    ap.add_argument("--big-pages", type=int, default=4000)
    ap.add_argument("--profiles", nargs="+", choices=sorted(PROFILES), default=["heavy", "light"])
    args = ap.parse_args(argv)
    rng = random.Random(SEED)
    ru_paths = sorted(Path("/usr/share/man/ru").rglob("*.gz"))
    en_all = sorted(Path("/usr/share/man/man1").glob("*.gz"))
    en_paths = random.Random(SEED).sample(en_all, min(args.pages_en, len(en_all)))
    print(f"{K}-word shingles, threshold {T}; edit profiles (per-word probabilities): {PROFILES}")
    # warm the numba cache so the first row is not charged with loading kernels
    warm = TokenStore.from_texts(["a b c d e f", "a b c d e g"])
    for m, extra in RUNS:
        find_near_duplicates(warm, method=m, threshold=T, shingle=K, stem="en", **extra)
    pages = {"russian": read_pages(ru_paths), "english": read_pages(en_paths)}
    for pname, lang in [(p, lang) for p in args.profiles for lang in ("russian", "english")]:
        if not pages[lang]:
            print(f"\n[{lang}] no man pages found, skipped")
            continue
        store, truth, n_bases, fam_share = build_corpus(pages[lang], lang, rng, PROFILES[pname])
        print(f"\n[{lang}, {pname} edits] {len(pages[lang])} man pages -> {n_bases} base documents + {len(truth)} edited copies, "
              f"{store.n_tokens:,} tokens; {fam_share:.0%} of the vocabulary has another inflected form")
        evaluate(store, truth, lang)
    if en_all and args.big_pages:
        print(f"\n[cost] normalization vs shingling on {args.big_pages} English man pages")
        normalization_cost(read_pages(en_all[: args.big_pages]), "english")
    if en_all and args.big_pages:
        print(f"\n[speed] methods on base documents of {args.big_pages} English man pages")
        method_speed(read_pages(en_all[: args.big_pages]), "english")
    print(f"\npeak RSS {rss_mib():.0f} MiB")


if __name__ == "__main__":
    sys.exit(main())
