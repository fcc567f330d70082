"""Templates with variable parts: the fast path against a brute-force twin,
the planted templates of the web-like generator, outputs and errors."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_phrases import naive_phrases
from repetend.errors import InputError, ParameterError
from repetend.phrases.suffix import mine_suffix
from repetend.phrases.templates import (SLOT, TemplateConfig, TemplateResult, find_templates,
                                        read_templates, template_spans)


# -- the brute-force twin ------------------------------------------------------------

def naive_templates(tokens, offsets, vocab, sigma, part_len, max_gap, min_span, min_fixed,
                    mask_numbers=True, rounds=3, word_slots=2, join_share=0.5,
                    drop_nested=True, prune=False, variant_evidence=True):
    """Obviously correct and slow: every step of the module docstring spelled out.

    Returns {(parts tuple, df, occurrences tuple ((doc, start, end) local)):
    tuple of slot distinct counts}."""
    tokens = [int(t) for t in tokens]
    NUM = -1
    num = {i for i, w in enumerate(vocab) if w.isdigit()} if mask_numbers else set()
    masked = [NUM if t in num else t for t in tokens]
    docs = [(int(offsets[d]), int(offsets[d + 1])) for d in range(len(offsets) - 1)]
    # 1. positions covered by a frequent part_len-gram of the masked corpus
    docset = defaultdict(set)
    for d, (a, b) in enumerate(docs):
        for i in range(a, b - part_len + 1):
            docset[tuple(masked[i:i + part_len])].add(d)
    covered = [False] * len(tokens)
    for d, (a, b) in enumerate(docs):
        for i in range(a, b - part_len + 1):
            if len(docset[tuple(masked[i:i + part_len])]) >= sigma:
                for p in range(i, i + part_len):
                    covered[p] = True
    # 2. runs; a gap of 1..max_gap uncovered tokens between runs is one GAP token,
    #    a longer one a unique sentinel.  Pruned: runs linked by GAPs form a
    #    chain, and a chain whose tokens plus max_gap per GAP are fewer than
    #    min_span is left out (a sentinel where it was)
    GAP = -2
    doc_runs = []
    for d, (a, b) in enumerate(docs):
        runs, p = [], a
        while p < b:
            if covered[p]:
                q = p
                while q < b and covered[q]:
                    q += 1
                runs.append((p, q))
                p = q
            else:
                p += 1
        doc_runs.append(runs)

    def linked(r0, r1):
        return r1[0] - r0[1] <= max_gap

    T, T_pos, T_off = [], [], [0]       # token, original (start, end)
    sentinel = -10
    for d, runs in enumerate(doc_runs):
        keep = [True] * len(runs)
        if prune:
            i = 0
            while i < len(runs):
                j = i
                while j + 1 < len(runs) and linked(runs[j], runs[j + 1]):
                    j += 1
                reach = sum(e - s for s, e in runs[i:j + 1]) + (j - i) * max_gap
                for k in range(i, j + 1):
                    keep[k] = reach >= min_span
                i = j + 1
        prev = None
        for i, (s, e) in enumerate(runs):
            if not keep[i]:
                continue
            if prev is not None:
                if prev == i - 1 and linked(runs[prev], runs[i]):
                    T.append(GAP)
                else:
                    T.append(sentinel)
                    sentinel -= 1
                T_pos.append((runs[prev][1], s))
            for p in range(s, e):
                T.append(masked[p])
                T_pos.append((p, p + 1))
            prev = i
        T_off.append(len(T))
    # 3. maximal frequent phrases of T (the brute-force miner), edge gaps trimmed;
    #    peeling rounds: found occurrences become sentinels, mine the rest again
    shift = 10 - sentinel - 10 * len(T)     # naive_phrases wants non-negative ids
    residue = list(T)
    groups = set()
    for _ in range(rounds):
        mcfp = naive_phrases([x + shift for x in residue], T_off, sigma, 2)
        if not mcfp:
            break
        for phrase, (_, starts) in mcfp.items():
            ph = [x - shift for x in phrase]
            for q in starts:
                for j in range(len(ph)):
                    residue[q + j] = sentinel
                    sentinel -= 1
            keep = [i for i, x in enumerate(ph) if x != GAP]
            if not keep:
                continue
            groups.add(tuple(ph[keep[0]:keep[-1] + 1]))
    # 4. siblings: candidates equal but for one window of ≤ word_slots fixed
    #    tokens strictly inside them merge into a pattern with wildcards
    WILD = -3
    cands = sorted(groups)
    parent = list(range(len(cands)))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    fixed = lambda x: x not in (GAP, NUM)
    for i1, a in enumerate(cands):
        for i2, b in enumerate(cands):
            if i2 <= i1 or len(a) != len(b):
                continue
            for k in range(1, word_slots + 1):
                if len(a) - k < 2:
                    continue
                for j in range(1, len(a) - k):
                    if a[:j] == b[:j] and a[j + k:] == b[j + k:] and \
                            all(fixed(x) for x in a[j:j + k] + b[j:j + k]):
                        parent[find(i2)] = find(i1)
    members = defaultdict(list)
    for i in range(len(cands)):
        members[find(i)].append(cands[i])
    patterns = set()
    evidence = set()     # merged from >= 2 candidates that each have min_fixed fixed tokens
    for ms in members.values():
        if len(ms) == 1:
            if GAP in ms[0] or NUM in ms[0]:
                patterns.add(ms[0])
            continue
        pat = tuple(WILD if len({m[p] for m in ms}) > 1 else ms[0][p]
                    for p in range(len(ms[0])))
        patterns.add(pat)
        if variant_evidence and all(sum(fixed(x) for x in m) >= min_fixed for m in ms):
            evidence.add(pat)
    doc_of = [d for d in range(len(docs)) for _ in range(T_off[d], T_off[d + 1])]

    def match(inner):
        """Every occurrence of a pattern, whatever its context."""
        m = len(inner)
        return [q for q in range(len(T) - m + 1)
                if all(T[q + j] == x or (x == WILD and (T[q + j] >= 0 or T[q + j] == NUM))
                       for j, x in enumerate(inner)) and doc_of[q] == doc_of[q + m - 1]]

    def median_span(inner, qs):
        spans = sorted(T_pos[q + len(inner) - 1][1] - T_pos[q][0] for q in qs)
        return spans[len(spans) // 2]

    # 5. joins: two patterns, one short, overlapping / touching / one gap apart
    #    at the same offset in >= sigma documents
    occ_of = {p: match(p) for p in patterns}
    short = {p: median_span(p, qs) < min_span for p, qs in occ_of.items()}
    pair_docs = defaultdict(set)
    for A, qa_list in occ_of.items():
        for B, qb_list in occ_of.items():
            if not (short[A] or short[B]):
                continue
            for qa in qa_list:
                for qb in qb_list:
                    dd = qb - qa
                    if 1 <= dd <= len(A) + 1 and dd + len(B) > len(A) \
                            and doc_of[qa] == doc_of[qb] \
                            and (dd <= len(A) or T[qa + len(A)] == GAP):
                        pair_docs[(A, B, dd)].add(doc_of[qa])
    pdf = {p: len({doc_of[q] for q in qs}) for p, qs in occ_of.items()}
    joined = set()
    for (A, B, dd), ds in pair_docs.items():
        if len(ds) < max(sigma, join_share * min(pdf[A], pdf[B])):
            continue
        if dd <= len(A):
            ov = len(A) - dd
            if A[dd:] != B[:ov]:
                continue
            K = A + B[ov:]
        else:
            K = A + (GAP,) + B
        if K not in patterns:
            joined.add(K)
    groups = patterns | joined
    out = {}
    for inner in groups:
        m = len(inner)
        qs = match(inner)
        elems = []
        for j, x in enumerate(inner):
            if x in (GAP, NUM, WILD):
                elems.append(("s", [tuple(tokens[T_pos[q + j][0]:T_pos[q + j][1]]) for q in qs]))
            else:
                elems.append(("f", x))
        parts, distinct, fixed, kinds = [], [], 0, []
        for x, e in zip(inner, elems):
            if e[0] == "s" and len(set(e[1])) > 1:
                parts.append(SLOT)
                distinct.append(len(set(e[1])))
                kinds.append("number" if x == NUM else "gap" if x == GAP else "word")
                continue
            words = [vocab[e[1]]] if e[0] == "f" else [vocab[t] for t in e[1][0]]
            fixed += len(words)
            if not words:
                continue
            if parts and parts[-1] != SLOT:
                parts[-1] += " " + " ".join(words)
            else:
                parts.append(" ".join(words))
        occ = []
        for q in qs:
            s, e = T_pos[q][0], T_pos[q + m - 1][1]
            d = next(i for i, (a, b) in enumerate(docs) if a <= s < b)
            occ.append((d, s - docs[d][0], e - docs[d][0]))
        spans = sorted(e - s for _, s, e in occ)
        # variant evidence: one fixed token is enough for a merge of variants that
        # each have min_fixed, unless most of its variable slots are numbers
        need = min(min_fixed, 1) if inner in evidence and inner not in joined else min_fixed
        if not distinct or fixed < need or spans[len(spans) // 2] < min_span:
            continue
        if fixed < min_fixed and 2 * kinds.count("number") > len(kinds):
            continue
        df = len({d for d, _, _ in occ})
        out[(tuple(parts), df, tuple(sorted(occ)))] = (tuple(distinct),
                                                       spans[len(spans) // 2] * df)
    # 8. nesting: drop a template whose every occurrence lies inside an occurrence
    #    of one same other template (longer, or the same span and first in Ψ order),
    #    then the composites of the rest
    order = sorted(out, key=lambda k: (-out[k][1], -k[1], k[0]))
    rank = {k: i for i, k in enumerate(order)}
    drop = set()
    if drop_nested:
        for t in order:
            for c in order:
                if c != t and all(any(dy == dx and sy <= sx and ex <= ey
                                      and (ey - sy > ex - sx or rank[c] < rank[t])
                                      for dy, sy, ey in c[2]) for dx, sx, ex in t[2]):
                    drop.add(t)
                    break
        # ... then a composite: every token of every occurrence inside an
        # occurrence of a kept template found in more documents
        kept = [k for k in order if k not in drop]
        for t in kept:
            higher = {(d, p) for c in kept if c[1] > t[1] for d, a, b in c[2]
                      for p in range(a, b)}
            if all((d, p) in higher for d, a, b in t[2] for p in range(a, b)):
                drop.add(t)
    return {k: v[0] for k, v in out.items() if k not in drop}


def fast_as_naive(res: TemplateResult):
    occ = defaultdict(list)
    for r in res.occurrences.to_pylist():
        occ[r["template_id"]].append((r["doc_index"], r["start"], r["end"]))
    return {(tuple(r["parts"]), r["df"], tuple(sorted(occ[r["template_id"]]))):
            tuple(s["distinct"] for s in r["slots"]) for r in res.table.to_pylist()}


def random_corpus(rng, n_docs, vocab_words=6, share=0.4):
    """Random documents over a tiny alphabet with planted templates: a fixed
    phrase, a number or a short random run, another fixed phrase (each piece
    of a document is one with probability *share*)."""
    vocab = [f"w{i}" for i in range(vocab_words)] + [str(i) for i in range(5)]
    V = len(vocab)
    pieces = [list(rng.integers(0, vocab_words, size=int(rng.integers(1, 4))))
              for _ in range(3)]
    docs = []
    for _ in range(n_docs):
        doc = []
        for _ in range(int(rng.integers(0, 4))):
            r = rng.random()
            if r < share:
                a, b = pieces[int(rng.integers(3))], pieces[int(rng.integers(3))]
                gap = list(rng.integers(vocab_words, V, size=int(rng.integers(0, 3)))) \
                    if rng.random() < 0.5 else list(rng.integers(0, V, size=int(rng.integers(0, 4))))
                doc += a + gap + b
            else:
                doc += list(rng.integers(0, V, size=int(rng.integers(0, 6))))
        docs.append(doc)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    tokens = np.array(sum(docs, []), dtype=np.int32)
    return tokens, offsets, vocab


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(5, 12), sigma=st.integers(2, 4),
       part_len=st.integers(1, 3), max_gap=st.integers(0, 3), min_span=st.integers(1, 6),
       min_fixed=st.integers(0, 2), mask=st.booleans(), rounds=st.integers(1, 3),
       engine=st.sampled_from(["suffix", "bloomspan", "auto"]), word_slots=st.integers(0, 2),
       prune=st.booleans())
def test_matches_bruteforce(seed, n_docs, sigma, part_len, max_gap, min_span, min_fixed, mask,
                            rounds, engine, word_slots, prune):
    rng = np.random.default_rng(seed)
    # templates in most documents: about 40 % of the examples have some
    tokens, offsets, vocab = random_corpus(rng, n_docs, share=0.8)
    if tokens.size == 0:
        return
    cfg = TemplateConfig(max_gap=max_gap, part_len=part_len, min_span=min_span,
                         min_fixed=min_fixed, mask_numbers=mask, top_values=3, rounds=rounds,
                         engine=engine, word_slots=word_slots, prune=prune,
                         merge_variants=False, ends=False,   # the naive has no post-passes
                         search_whole=False,
                         slotted_min_span=None)               # ... and min_span for all
    res = find_templates((tokens, offsets, vocab), None, sigma, 5, cfg)
    want = naive_templates(tokens, offsets, vocab, sigma, part_len, max_gap, min_span,
                           min_fixed, mask_numbers=mask, rounds=rounds, word_slots=word_slots,
                           prune=prune)
    assert fast_as_naive(res) == want
    # every occurrence reads back as its template: fixed parts equal the tokens
    parts = res.table.column("parts").to_pylist()
    for r in res.occurrences.to_pylist():
        a = int(offsets[r["doc_index"]])
        words = [vocab[t] for t in tokens[a + r["start"]:a + r["end"]]]
        fixed = [p.split(" ") for p in parts[r["template_id"]] if p != SLOT]
        text = " ".join(words)
        pos = 0
        for f in fixed:
            j = text.find(" ".join(f), pos)
            assert j >= 0
            pos = j + len(" ".join(f))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), sigma=st.integers(2, 3), L=st.integers(1, 3),
       max_gap=st.integers(0, 3), min_span=st.integers(1, 6), prune=st.booleans())
def test_merge_only_mode_matches_bruteforce(seed, sigma, L, max_gap, min_span, prune):
    """short_parts=False: the parts are the given exact phrases (no masking)."""
    rng = np.random.default_rng(seed)
    tokens, offsets, vocab = random_corpus(rng, 10, share=0.8)
    if tokens.size == 0:
        return
    raw = mine_suffix(tokens, offsets, sigma, L)
    cfg = TemplateConfig(merge_variants=False, ends=False, slotted_min_span=None,
                         search_whole=False,
                         max_gap=max_gap, short_parts=False, min_span=min_span, min_fixed=1,
                         prune=prune)
    res = find_templates((tokens, offsets, vocab), raw, sigma, L, cfg)
    want = naive_templates(tokens, offsets, vocab, sigma, L, max_gap, min_span, 1,
                           mask_numbers=False, prune=prune)
    assert fast_as_naive(res) == want


def signature_corpus(rng, n_docs):
    """«posted by {author} on {month} {day} {year}» between random noise: two
    authors of two words, three months, numbers — low-cardinality word slots
    next to number slots, the case for word-slot siblings and joins."""
    noise = [f"w{i}" for i in range(30)]
    vocab = noise + ["posted", "by", "on", "ann", "lee", "bob", "ray", "march", "june", "july"] \
        + [str(i) for i in range(10)]
    ix = {w: i for i, w in enumerate(vocab)}
    docs = []
    for _ in range(n_docs):
        doc = [ix[w] for w in rng.choice(noise, size=int(rng.integers(0, 6)))]
        author = ["ann", "lee"] if rng.random() < 0.5 else ["bob", "ray"]
        month = str(rng.choice(["march", "june", "july"]))
        doc += [ix[w] for w in ["posted", "by", *author, "on", month, str(rng.integers(10)),
                                str(rng.integers(10))]]
        doc += [ix[w] for w in rng.choice(noise, size=int(rng.integers(0, 6)))]
        docs.append(doc)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    return np.array(sum(docs, []), dtype=np.int32), offsets, vocab


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(4, 11), sigma=st.integers(2, 3),
       part_len=st.integers(1, 3), min_span=st.integers(3, 8),
       join_share=st.sampled_from([0.0, 0.5, 0.9]))
def test_word_slots_and_joins_match_bruteforce(seed, n_docs, sigma, part_len, min_span,
                                               join_share):
    rng = np.random.default_rng(seed)
    tokens, offsets, vocab = signature_corpus(rng, n_docs)
    res = find_templates((tokens, offsets, vocab), None, sigma, 8,
                         TemplateConfig(part_len=part_len, min_span=min_span,
                                        join_share=join_share, merge_variants=False,
                                        ends=False, slotted_min_span=None, search_whole=False))
    want = naive_templates(tokens, offsets, vocab, sigma, part_len, 4, min_span, 2,
                           join_share=join_share)
    assert fast_as_naive(res) == want
    res = find_templates((tokens, offsets, vocab), None, sigma, 8,
                         TemplateConfig(part_len=part_len, min_span=min_span,
                                        join_share=join_share, drop_nested=False,
                                        prune=False, merge_variants=False, ends=False,
                                        slotted_min_span=None, search_whole=False))
    want = naive_templates(tokens, offsets, vocab, sigma, part_len, 4, min_span, 2,
                           join_share=join_share, drop_nested=False, prune=False)
    assert fast_as_naive(res) == want


def test_signature_is_one_template_with_word_slots():
    """Author (two words, two values) and month (three values) are frequent
    values, so no exact gap separates them; word-slot siblings and a join
    still give one template «posted by ▢ ▢ on ▢ ▢ ▢» over every document."""
    tokens, offsets, vocab = signature_corpus(np.random.default_rng(5), 30)
    res = find_templates((tokens, offsets, vocab), None, 3, 8, TemplateConfig(part_len=2))
    rows = res.table.to_pylist()
    top = rows[0]
    assert top["parts"] == ["posted by", SLOT, SLOT, "on", SLOT, SLOT, SLOT]
    assert top["df"] == 30
    assert [s["kind"] for s in top["slots"]] == ["word", "word", "word", "number", "number"]
    assert [s["distinct"] for s in top["slots"][:3]] == [2, 2, 3]
    assert res.summary["joined_patterns"] >= 1


# -- small worked examples ---------------------------------------------------------------

def _listing_store():
    from repetend.corpus.store import TokenStore

    rng = np.random.default_rng(7)
    letters = list("абвгдежзиклмнопрстуфхцчшэюя")
    words = ["".join(rng.choice(letters, size=6)) for _ in range(400)]
    texts = []
    for i in range(12):
        body = " ".join(rng.choice(words, size=6))
        total = int(rng.integers(21, 900))
        texts.append(f"{body.capitalize()}. Показано {1 + 20 * (i % 3)}–{20 + 20 * (i % 3)} "
                     f"из {total} товаров. © {2019 + i % 5} Магазин «Лето». Все права защищены.")
    return TokenStore.from_texts(texts), texts


def test_listing_and_footer_surface_text():
    store, texts = _listing_store()
    res = find_templates(store, None, 5, 8, TemplateConfig(part_len=3))
    assert res.n_templates == 1
    row = res.table.to_pylist()[0]
    assert row["text"] == "Показано ▢–▢ из ▢ товаров. © ▢ Магазин «Лето». Все права защищены"
    assert row["parts"] == ["показано", SLOT, SLOT, "из", SLOT, "товаров", SLOT,
                            "магазин лето все права защищены"]
    assert row["df"] == 12 and row["occurrences"] == 12
    kinds = [s["kind"] for s in row["slots"]]
    assert kinds == ["number"] * 4
    firsts = row["slots"][0]
    assert firsts["distinct"] == 3 and sum(v["count"] for v in firsts["top_values"]) == 12
    years = row["slots"][3]
    assert years["distinct"] == 5
    assert {v["value"] for v in years["top_values"]} == {str(2019 + k) for k in range(5)}
    # the exact phrases alone cannot see it: no frequent phrase of 8 tokens
    raw = mine_suffix(store.tokens, store.doc_offsets, 5, 8)
    assert raw.n_phrases == 0
    assert res.summary["gained_tokens"] == res.summary["template_covered_tokens"] > 0


def test_constant_slot_folds_and_no_variable_slot_no_template():
    # the number never changes: an exact phrase, not a template
    vocab = ["a", "b", "c", "d", "e", "7"]
    doc = [0, 1, 5, 2, 3, 4]
    tokens = np.array(doc * 4, dtype=np.int32)
    offsets = np.arange(0, 25, 6)
    res = find_templates((tokens, offsets, vocab), None, 3, 3, TemplateConfig(part_len=2))
    assert res.n_templates == 0


def test_gap_longer_than_max_gap_breaks_the_chain():
    vocab = [f"w{i}" for i in range(40)]
    docs = [[1, 2, 3] + [10 + i] * (k + 1) + [4, 5, 6] for i, k in enumerate([2, 2, 2, 2])]
    tokens = np.array(sum(docs, []), dtype=np.int32)
    offsets = np.zeros(5, np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    found = find_templates((tokens, offsets, vocab), None, 3, 6,
                           TemplateConfig(part_len=3, max_gap=3))
    assert found.n_templates == 1 and found.table.column("parts")[0].as_py() == \
        ["w1 w2 w3", SLOT, "w4 w5 w6"]
    none = find_templates((tokens, offsets, vocab), None, 3, 6,
                          TemplateConfig(part_len=3, max_gap=2))
    assert none.n_templates == 0


# -- the web-like generator's planted templates ---------------------------------------------

@pytest.fixture(scope="module")
def weblike_run():
    from repetend.phrases import find_phrases
    from repetend.synth.weblike import weblike

    sc = weblike(600, seed=3)
    store = sc.to_store()
    phrases = find_phrases(store, min_docs=8, min_len=8, engine="suffix")
    res = find_templates(store, phrases.raw, 8, 8, TemplateConfig(min_span=6))
    return sc, store, phrases, res


def _token_block_labels(sc, store, min_docs=1):
    """Per global token: the kind of its truth segment (None: between segments,
    or a block in fewer than *min_docs* documents)."""
    kinds = np.empty(store.n_tokens, dtype=object)
    blocks = sc.truth["blocks"]
    for d, doc in enumerate(sc.truth["docs"]):
        spans = store.token_spans(d)
        a = int(store.doc_offsets[d])
        mid = (spans[:, 0] + spans[:, 1]) // 2
        for s in doc["spans"]:
            if s["block"] is not None and blocks[s["block"]]["docs"] < min_docs:
                continue
            sel = (mid >= s["start"]) & (mid < s["end"])
            kinds[a + np.flatnonzero(sel)] = s["kind"]
    return kinds


def _inside_templates(res, store):
    occ = res.occurrences
    d = occ.column("doc_index").to_numpy()
    s = occ.column("start").to_numpy() + store.doc_offsets[d]
    e = occ.column("end").to_numpy() + store.doc_offsets[d]
    inside = np.zeros(store.n_tokens, dtype=bool)
    for a, b in zip(s, e):
        inside[a:b] = True
    return inside


def test_weblike_listing_found_as_one_template(weblike_run):
    """The listing «Показано 1–20 из 345 товаров» is one template (its three
    numbers are slots, not breaks), possibly with the blocks that follow it;
    and most listing and footer occurrences lie inside a template occurrence."""
    sc, store, phrases, res = weblike_run
    listing = {"en": ("showing", "of", "items"), "ru": ("показано", "из", "товаров")}
    langs = {b["lang"] for b in sc.truth["blocks"].values()
             if b["kind"] == "listing" and b["docs"] >= 8}
    assert langs
    for lang in langs:
        a, b, c = listing[lang]
        hits = [p for p in res.table.column("parts").to_pylist()
                if any(p[i].endswith(a) and p[i + 1:i + 3] == [SLOT, SLOT]
                       and p[i + 3] == b and p[i + 4] == SLOT
                       and p[i + 5].split(" ")[0] == c for i in range(len(p) - 5))]
        assert hits, lang
    # recall: the slotted blocks are inside a template or an exact phrase, far
    # more than inside the exact phrases alone
    from repetend.phrases.coverage import coverage_mask

    exact = coverage_mask(phrases.raw, store.n_tokens)
    both = _inside_templates(res, store) | exact
    kinds = _token_block_labels(sc, store, min_docs=8)     # σ: the blocks one can find
    for kind in ("listing", "footer"):
        sel = kinds == kind
        assert both[sel].mean() > 0.9, kind
        assert both[sel].mean() > exact[sel].mean() + 0.05, kind


def test_weblike_no_body_text_in_fixed_parts(weblike_run):
    """Precision: every token of a template occurrence is template text (a
    block of the truth) or a slot; slots hold truth slot values or a title."""
    sc, store, phrases, res = weblike_run
    kinds = _token_block_labels(sc, store)
    inside = _inside_templates(res, store)
    labels = kinds[inside]
    body = sum(1 for k in labels if k is None or k == "body")
    assert body / max(labels.size, 1) < 0.01
    assert res.summary["gained_tokens"] > 0


def test_exact_phrases_unchanged_and_deterministic(weblike_run):
    sc, store, phrases, res = weblike_run
    before = [a.copy() for a in (phrases.raw.lengths, phrases.raw.occ_starts)]
    again = find_templates(store, phrases.raw, 8, 8, TemplateConfig(min_span=6))
    assert again.table.equals(res.table) and again.occurrences.equals(res.occurrences)
    assert np.array_equal(before[0], phrases.raw.lengths)
    assert np.array_equal(before[1], phrases.raw.occ_starts)


def test_nested_fragments_go_and_no_covered_token_is_lost():
    """drop_nested removes exactly the templates whose every occurrence lies inside
    an occurrence of one same kept or dropped template, then the composites of the
    rest, and nothing that is covered (800 web-like pages at σ = 5, L = 6 hold 7
    such fragments)."""
    from repetend.phrases import find_phrases
    from repetend.phrases.templates import template_spans
    from repetend.phrases.templates.nesting import nested_templates
    from repetend.synth.weblike import weblike

    store = weblike(800, seed=3).to_store()
    phrases = find_phrases(store, min_docs=5, min_len=6, templates=False)
    res = find_templates(store, phrases.raw, 5, 6)
    full = find_templates(store, phrases.raw, 5, 6, TemplateConfig(drop_nested=False))
    occ = full.occurrences
    drop = nested_templates(*(occ.column(c).to_numpy() for c in
                              ("template_id", "doc_index", "start", "end")),
                            full.table.num_rows)
    assert drop.any()
    assert res.summary["nested_dropped"] == int(drop.sum())
    # then the composites among the rest (templates side by side on some pages,
    # each token in an occurrence of a template on more documents)
    from repetend.phrases.templates.nesting import composite_templates

    t, d, s, e = (occ.column(c).to_numpy() for c in ("template_id", "doc_index", "start", "end"))
    keep_occ = ~drop[t]
    new_id = np.cumsum(~drop) - 1
    comp = composite_templates(new_id[t[keep_occ]], d[keep_occ], s[keep_occ], e[keep_occ],
                               full.table.filter(pa.array(~drop)).column("df").to_numpy())
    assert res.summary["composites_dropped"] == int(comp.sum())
    drop[np.flatnonzero(~drop)[comp]] = True
    assert res.table.num_rows == full.table.num_rows - int(drop.sum())
    kept = full.table.filter(pa.array(~drop))
    assert res.table.drop_columns(["template_id"]).equals(kept.drop_columns(["template_id"]))
    assert res.table.column("template_id").to_pylist() == list(range(res.table.num_rows))
    a, b = template_spans(full), template_spans(res)
    assert a.keys() == b.keys() and all(np.array_equal(a[d], b[d]) for d in a)
    for k in ("template_covered_tokens", "union_covered_tokens", "gained_tokens"):
        assert res.summary[k] == full.summary[k]


# -- outputs ------------------------------------------------------------------------------

def test_write_read_and_spans(tmp_path):
    store, _ = _listing_store()
    res = find_templates(store, None, 5, 8, TemplateConfig(part_len=3))
    res.write(tmp_path / "out")
    back = read_templates(tmp_path / "out")
    assert back.table.equals(res.table) and back.occurrences.equals(res.occurrences)
    assert back.config == res.config
    spans = template_spans(tmp_path / "out")
    assert sorted(spans) == list(range(12))
    for d, sp in spans.items():
        occ = [(r["start"], r["end"]) for r in res.occurrences.to_pylist() if r["doc_index"] == d]
        assert sp.tolist() == [list(o) for o in occ]
    assert res.to_pandas().shape[0] == 1
    assert res.to_pandas("occurrences").shape[0] == 12
    # a store on disk (memory-mapped) by path gives the same result
    store.save(tmp_path / "store")
    again = find_templates(str(tmp_path / "store"), None, 5, 8, TemplateConfig(part_len=3))
    assert again.table.equals(res.table) and again.occurrences.equals(res.occurrences)


def test_template_spans_merges_overlaps():
    occ = pa.table({"template_id": [0, 1, 2, 0], "doc_index": [3, 3, 3, 1],
                    "start": [0, 4, 12, 5], "end": [6, 9, 14, 7]})
    got = template_spans(occ)
    assert {k: v.tolist() for k, v in got.items()} == {3: [[0, 9], [12, 14]], 1: [[5, 7]]}


def test_empty_and_errors():
    toks = np.array([1, 2, 3, 4], dtype=np.int32)
    res = find_templates((toks, np.array([0, 2, 4])), None, 2, 2)
    assert res.n_templates == 0 and res.occurrences.num_rows == 0
    with pytest.raises(ParameterError):
        find_templates((toks, np.array([0, 2, 4])), None, 1, 2)
    with pytest.raises(ParameterError):
        find_templates((toks, np.array([0, 2, 4])), None, 2, 2, TemplateConfig(max_gap=-1))
    with pytest.raises(ParameterError):
        find_templates((toks, np.array([0, 2, 4])), None, 2, 2, TemplateConfig(engine="fast"))
    with pytest.raises(ParameterError):
        find_templates((toks, np.array([0, 2, 4])), None, 2, 2,
                       TemplateConfig(short_parts=False))
    with pytest.raises(InputError):
        find_templates((toks, np.array([0, 3])), None, 2, 2)
    with pytest.raises(InputError):
        find_templates("not-a-corpus.txt".split(), None, 2, 2)
    # ids past the vocabulary would be read out of bounds by the kernels (number
    # mask); float offsets are no offsets; documents without tokens are fine
    with pytest.raises(InputError, match="outside the vocabulary"):
        find_templates((toks, np.array([0, 2, 4]), ["a", "1", "b", "c"]), None, 2, 2)
    with pytest.raises(InputError, match="doc_offsets must be integers"):
        find_templates((toks, np.array([0.0, 2.0, 4.0])), None, 2, 2)
    with pytest.raises(InputError, match="token ids"):
        find_templates((np.array([1, 2**31 - 2]), np.array([0, 2])), None, 2, 2)
    res = find_templates((np.zeros(0, np.int32), np.array([0, 0, 0])), None, 2, 2)
    assert res.n_templates == 0 and res.summary["tokens"] == 0


# -- report section -------------------------------------------------------------------------

def test_report_section_escapes_and_renders(tmp_path):
    from repetend.corpus.store import TokenStore
    from repetend.report.templates_section import templates_section_html

    texts = [f"<b>Tag</b> & co: Показано {i}–{i + 19} из {100 + 7 * i} товаров <script>x</script>"
             for i in range(1, 7)]
    store = TokenStore.from_texts(texts)
    res = find_templates(store, None, 3, 4, TemplateConfig(part_len=2))
    assert res.n_templates >= 1
    res.write(tmp_path / "scan" / "phrases")
    out = templates_section_html(tmp_path / "scan")
    assert out.startswith('<section id="templates">') and out.rstrip().endswith("</section>")
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "b&gt;Tag&lt;/b&gt; &amp; co: Показано ▢–▢ из ▢ товаров &lt;script&gt;x" in out
    assert "distinct values" in out
    # no templates file: a note, still one section
    empty = templates_section_html(tmp_path / "nothing")
    assert "not in this scan" in empty and empty.count("<section") == 1


def test_packed_parts_with_a_real_32bit_mix_collision():
    """Two 4-grams of real tokens whose packed keys (11-bit codes: 2,000
    frequent words) share the top 32 bits of their 64-bit mix (the packed
    path once sorted by them; now they fall into one bucket, whose entries keep
    the rest of a bijective mix): the parts, and so the templates, are those
    of the suffix path and the brute force."""
    from naive_phrases import as_runs, naive_runs

    from repetend.phrases.templates.parts import _packed_ngram_runs

    V = 2000
    vocab = [f"w{i}" for i in range(V)]
    a = [743, 1750, 414, 906]              # codes (id + 1) 744 1751 415 907
    b = [744, 410, 1219, 107]              # codes 745 411 1220 108

    def key(g):
        k = 0
        for x in g:
            k = (k << 11) | (x + 1)
        return k

    mix = 0x9E3779B97F4A7C15
    assert key(a) != key(b)
    assert (key(a) * mix % 2**64) >> 32 == (key(b) * mix % 2**64) >> 32
    rng = np.random.default_rng(7)
    docs = [list(rng.permutation(V)), list(rng.permutation(V))]  # every word df 2
    tail = [7, 8, 9, 10]
    docs += [[1500] + a + [1600] + tail, [1501] + a + [1601, 1602] + tail,
             b + [1603] + tail + [1700], [1704, 1705] + b + [1604] + tail,
             b + [5] + tail + a + [6] + tail, a + [1605] + [11, 12]]
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    tokens = np.array(sum(docs, []), dtype=np.int32)
    runs, kept = _packed_ngram_runs(tokens, offsets, 2, 4, V)
    grams = defaultdict(set)
    for d in range(len(docs)):
        for i in range(offsets[d], offsets[d + 1] - 3):
            grams[tuple(tokens[i:i + 4])].add(d)
    want = np.zeros(tokens.size + 1, dtype=bool)
    for d in range(len(docs)):
        for i in range(offsets[d], offsets[d + 1] - 3):
            if len(grams[tuple(tokens[i:i + 4])]) >= 2:
                want[i:i + 4] = True
    assert kept == sum(len(ds) >= 2 for ds in grams.values())
    assert as_runs(*runs) == naive_runs(want, offsets)
    cfg = TemplateConfig(part_len=4, max_gap=2, min_fixed=1, search_whole=False)
    fast = find_templates((tokens, offsets, vocab), None, 2, 4, cfg)
    slow = find_templates((tokens, offsets, vocab), None, 2, 4,
                          TemplateConfig(part_len=4, max_gap=2, min_fixed=1, engine="suffix",
                                         search_whole=False))
    assert fast.table.num_rows > 0
    assert fast.table.equals(slow.table) and fast.occurrences.equals(slow.occurrences)
    assert fast_as_naive(fast) == naive_templates(tokens, offsets, vocab, 2, 4, 2, 4, 1)


def test_merge_only_reuses_the_phrases_frequent_spans():
    """find_phrases hands its frequent spans to merge-only mode; the templates are
    those of a run that scans the corpus again, and spans of another corpus are
    refused."""
    from repetend.phrases import find_phrases
    from repetend.phrases.frequent_spans import frequent_spans
    from repetend.synth.weblike import weblike

    store = weblike(400, seed=5).to_store()
    res = find_phrases(store, min_docs=5, min_len=6, templates=TemplateConfig(short_parts=False))
    again = find_templates(store, res.raw, 5, 6, TemplateConfig(short_parts=False))
    assert res.templates.table.num_rows > 0
    assert res.templates.table.equals(again.table)
    assert res.templates.occurrences.equals(again.occurrences)
    other = weblike(50, seed=6).to_store()
    spans = frequent_spans(other.tokens, other.doc_offsets,
                           find_phrases(other, min_docs=3, min_len=6).raw, 6)
    with pytest.raises(InputError, match="spans are not of this corpus"):
        find_templates(store, res.raw, 5, 6, TemplateConfig(short_parts=False), spans=spans)


def test_jsonl_output_reads_back_as_parquet_does(tmp_path):
    """``phrases --out-format jsonl`` writes the templates as JSON lines too;
    they read back (tables, spans, report section) as the Parquet ones, and a
    rewrite in the other format leaves no table of the first behind."""
    from repetend.phrases import find_phrases, read_result
    from repetend.report.templates_section import templates_section_html
    from repetend.synth.weblike import weblike

    res = find_phrases(weblike(300, seed=2).to_store(), min_docs=5, min_len=6)
    assert res.templates.n_templates > 0
    res.write(tmp_path / "p")
    res.write(tmp_path / "j", format="jsonl")
    names = {f.name for f in (tmp_path / "j").iterdir()}
    assert {"templates.jsonl", "template_occurrences.jsonl"} <= names
    assert not any(n.endswith(".parquet") for n in names)
    a, b = read_templates(tmp_path / "p"), read_templates(tmp_path / "j")
    assert a.table.equals(b.table) and a.occurrences.equals(b.occurrences)
    sa, sb = template_spans(tmp_path / "p"), template_spans(tmp_path / "j")
    assert sa.keys() == sb.keys() and all(np.array_equal(sa[k], sb[k]) for k in sa)
    assert templates_section_html(tmp_path / "j") == templates_section_html(tmp_path / "p")
    res.write(tmp_path / "p", format="jsonl")       # parquet -> jsonl in place
    names = {f.name for f in (tmp_path / "p").iterdir()}
    assert not any(n.endswith(".parquet") for n in names)
    assert read_result(tmp_path / "p").phrases.num_rows == res.phrases.num_rows
