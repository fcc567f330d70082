"""Templates searched whole (``TemplateConfig(search_whole=True)``,
:mod:`repetend.phrases.templates.search`) against a brute-force oracle: the
templates found without the pass, each searched with Python's ``re`` over the
documents written as one character per token."""

from __future__ import annotations

import re

import numpy as np
import pytest

from repetend.phrases.templates import TemplateConfig, find_templates
from repetend.phrases.templates import _kernels_search as KSr

SLOT = "▢"
N_WORDS = 120
VOCAB = [f"w{i}" for i in range(N_WORDS)] + [str(i) for i in range(40)]
IS_NUM = np.array([v.isdigit() for v in VOCAB] + [False, False], dtype=np.uint8)
NUMS = "".join(chr(0x100 + i) for i in range(len(VOCAB)) if VOCAB[i].isdigit())


def _ch(i: int) -> str:
    return chr(0x100 + int(i))


def _regex(elems, kinds, lo, hi) -> re.Pattern:
    """One template as a regular expression over token characters: its
    slots lazy quantifiers of their kind, each a group."""
    out, k = [], 0
    for v in elems:
        if v >= 0:
            out.append(re.escape(_ch(v)))
            continue
        cls = {"number": f"[{NUMS}]", "word": f"[^{NUMS}]", "gap": "."}[kinds[k]]
        out.append(f"({cls}{{{lo[k]},{hi[k]}}}?)")
        k += 1
    return re.compile("".join(out), re.S)


def _elems(parts, kinds):
    word_id = {w: i for i, w in reversed(list(enumerate(VOCAB)))}
    el, kinds_iter = [], iter(kinds)
    for p in parts:
        if p == SLOT:
            next(kinds_iter)
            el.append(-1)
        else:
            el.extend(word_id[w] for w in p.split(" "))
    return el


def oracle(res, docs, g):
    """The occurrences ``(parts, doc, start, end)`` the pass adds to *res* (a
    result without it), by brute force."""
    text = ["".join(_ch(t) for t in d) for d in docs]
    taken = [np.zeros(len(d), bool) for d in docs]
    occ = res.occurrences.to_pylist()
    for o in occ:
        taken[o["doc_index"]][o["start"]:o["end"]] = True
    rows = res.table.to_pylist()
    added = set()
    for r in rows:
        kinds = [s["kind"] for s in r["slots"]]
        if "gap" in kinds:
            continue                       # not searched
        el = _elems(r["parts"], kinds)
        mine = [o for o in occ if o["template_id"] == r["template_id"]]
        lo0 = [1 if k == "number" else 0 for k in kinds]
        hi0 = [1 if k == "number" else g for k in kinds]
        rx0 = _regex(el, ["number" if k == "number" else "gap" for k in kinds], lo0, hi0)
        lens = []
        for o in mine:
            m = rx0.fullmatch(text[o["doc_index"]], o["start"], o["end"])
            if m is None:
                break
            lens.append([len(x) for x in m.groups()])
        else:
            if not mine or not any(v >= 0 for v in el):
                continue
            L = np.array(lens).reshape(len(mine), len(kinds))
            lo, hi = L.min(axis=0).tolist(), L.max(axis=0).tolist()
            if (el[0] < 0 and lo[0] != hi[0]) or (el[-1] < 0 and lo[-1] != hi[-1]):
                continue
            rx = _regex(el, kinds, lo, hi)
            for d, s in enumerate(text):
                for p in range(len(s)):
                    m = rx.match(s, p)
                    if m is None or taken[d][p:m.end()].any():
                        continue
                    taken[d][p:m.end()] = True
                    added.add((tuple(r["parts"]), d, p, m.end()))
    return added


def _keyed(res):
    parts = res.table.column("parts").to_pylist()
    return {(tuple(parts[o["template_id"]]), o["doc_index"], o["start"], o["end"])
            for o in res.occurrences.to_pylist()}


def _corpus(seed: int):
    """Pages of random body text, a signature-like block (two fixed words, an
    author of one or two words from many, «on», a number, a fixed tail) on
    most pages, a footer sharing «on» on some, and body text holding single
    fixed words of the blocks."""
    rng = np.random.default_rng(seed)
    n_docs = int(rng.integers(20, 45))
    docs = []
    for _ in range(n_docs):
        body = rng.integers(10, N_WORDS, size=int(rng.integers(8, 40))).tolist()
        if rng.random() < 0.3:                       # a fixed word of a block in body text
            body.insert(int(rng.integers(0, len(body))), int(rng.choice([1, 3, 5])))
        if rng.random() < 0.75:
            # an author: one of two frequent ones, or a rare one (1 or 2 words)
            author = ([60 + int(rng.integers(0, 2))] if rng.random() < 0.6 else
                      rng.integers(62, 62 + int(rng.integers(3, 50)),
                                   size=int(rng.integers(1, 3))).tolist())
            sig = [1, 2] + author + [3, 4, N_WORDS + int(rng.integers(0, 40))]
            if seed % 3 == 0:
                sig += [5, 6, 7, 8]
            at = int(rng.integers(0, len(body) + 1))
            body[at:at] = sig
        if rng.random() < 0.5:
            body.extend([9, 5, 6, int(rng.integers(10, N_WORDS)), 3, 4, 11, 12, 13])
        docs.append(body)
    toks = np.array(sum(docs, []), dtype=np.int32)
    off = np.r_[0, np.cumsum([len(d) for d in docs])].astype(np.int64)
    return docs, (toks, off, VOCAB)


CFGS = [dict(), dict(slotted_min_span=4), dict(word_slots=0), dict(max_gap=2)]


@pytest.mark.parametrize("seed", range(48))
def test_search_whole_matches_the_regex_oracle(seed):
    docs, corpus = _corpus(seed)
    kw = CFGS[seed % len(CFGS)]
    sigma = 3 + seed % 4
    base = find_templates(corpus, None, sigma, 6, TemplateConfig(part_len=3, search_whole=False,
                                                                 **kw))
    got = find_templates(corpus, None, sigma, 6, TemplateConfig(part_len=3, search_whole=True,
                                                                **kw))
    cfg = TemplateConfig(**kw)
    g = max(cfg.max_gap, cfg.word_slots, 1)
    want_new = oracle(base, docs, g)
    assert _keyed(got) == _keyed(base) | want_new
    assert got.summary["search_whole"]["occurrences_added"] == len(want_new)
    # df and occurrences counted again on all of them
    for r in got.table.to_pylist():
        mine = [o for o in got.occurrences.to_pylist() if o["template_id"] == r["template_id"]]
        assert r["occurrences"] == len(mine)
        assert r["df"] == len({o["doc_index"] for o in mine})
    # no token in two occurrences that the pass added
    seen = set()
    for _, d, s, e in want_new:
        for x in range(s, e):
            assert (d, x) not in seen
            seen.add((d, x))


def test_some_seeds_add_occurrences():
    """The oracle comparison is not vacuous: the pass does find instances."""
    added = 0
    for seed in range(12):
        docs, corpus = _corpus(seed)
        res = find_templates(corpus, None, 4, 6, TemplateConfig(part_len=3, search_whole=True))
        added += res.summary["search_whole"]["occurrences_added"]
    assert added > 0


def _planted(n_docs=30, rare_from=20):
    """«w1 w2 {author} w3 w4 {number}»: authors frequent on the first pages,
    each one rare on the last."""
    rng = np.random.default_rng(7)
    docs = []
    for d in range(n_docs):
        body = rng.integers(30, N_WORDS, size=25).tolist()
        author = [20 + d % 2] if d < rare_from else [40 + d]      # rare author: once
        sig = [1, 2] + author + [3, 4, N_WORDS + d % 40]
        docs.append(body[:10] + sig + body[10:])
    return docs


def _run(docs, **kw):
    toks = np.array(sum(docs, []), dtype=np.int32)
    off = np.r_[0, np.cumsum([len(d) for d in docs])].astype(np.int64)
    return find_templates((toks, off, VOCAB), None, 5, 6, TemplateConfig(part_len=3, **kw))


def test_rare_slot_values_are_found_and_body_text_is_not_swallowed():
    docs = _planted()
    # body text on the rare pages that shares fixed words with the template
    # (each on fewer than σ pages, so no template of its own)
    for d in (20, 21):
        docs[d][2:2] = [1, 2, 50, 51, 3, 4, N_WORDS + 1]   # a value of two words
    for d in (22, 23):
        docs[d][2:2] = [1, 2, 52, 3, 4, 53]                # no number after
    for d in (24, 25):
        docs[d][2:2] = [1, 2, N_WORDS + 2, 3, 4, N_WORDS + 3]   # a number as the author
    base, got = _run(docs, search_whole=False), _run(docs, search_whole=True)
    assert got.n_templates == base.n_templates
    row = [r for r in got.table.to_pylist() if r["parts"] == ["w1 w2", SLOT, "w3 w4", SLOT]]
    assert len(row) == 1
    assert row[0]["df"] == 30                  # the rare authors' pages too
    occ = [o for o in got.occurrences.to_pylist() if o["template_id"] == row[0]["template_id"]]
    for o in occ:
        d = docs[o["doc_index"]]
        assert d[o["start"]:o["start"] + 2] == [1, 2]
        assert d[o["end"] - 3:o["end"] - 1] == [3, 4]
        assert o["end"] - o["start"] == 6     # never the body text's variants
    # slot statistics counted on all occurrences
    slots = row[0]["slots"]
    assert sum(v["count"] for v in slots[0]["top_values"]) <= 30
    assert slots[0]["distinct"] == 12          # 2 frequent authors, 10 rare ones
    assert row[0]["occurrences"] == 30


def test_two_templates_sharing_a_fixed_part_stay_two():
    rng = np.random.default_rng(3)
    docs = []
    for d in range(40):
        body = rng.integers(30, N_WORDS, size=20).tolist()
        a = [20 + d % 3] if d < 30 else [40 + d]
        if d % 2:
            blk = [1, 2] + a + [3, 4, N_WORDS + d % 40]      # «w1 w2 ▢ w3 w4 ▢»
        else:
            blk = [8, 9] + a + [3, 4, N_WORDS + d % 40]      # «w8 w9 ▢ w3 w4 ▢»
        docs.append(body[:8] + blk + body[8:])
    base, got = _run(docs, search_whole=False), _run(docs, search_whole=True)
    heads = sorted(r["parts"][0] for r in got.table.to_pylist())
    assert heads == sorted(r["parts"][0] for r in base.table.to_pylist())
    for r in got.table.to_pylist():
        mine = [o for o in got.occurrences.to_pylist() if o["template_id"] == r["template_id"]]
        first = {tuple(docs[o["doc_index"]][o["start"]:o["start"] + 2]) for o in mine}
        assert len(first) == 1


def test_output_is_deterministic_and_on_by_default():
    docs = _planted()
    a, b = _run(docs, search_whole=True), _run(docs, search_whole=True)
    assert a.table.equals(b.table) and a.occurrences.equals(b.occurrences)
    default = _run(docs)
    assert a.table.equals(default.table) and a.occurrences.equals(default.occurrences)
    off = _run(docs, search_whole=False)
    assert "search_whole" not in off.summary["parameters"]
    assert "search_whole" not in off.summary
    assert a.summary["parameters"]["search_whole"] is True


def _kernel_match(tokens, pat, kinds, lo, hi, p, e, need_end=-1):
    slot_of = np.cumsum(np.array(pat) < 0) - 1
    slot_of = np.where(np.array(pat) < 0, slot_of, -1).astype(np.int64)
    slot_elem = np.flatnonzero(np.array(pat) < 0).astype(np.int64)
    n = max(len(lo), 1)
    cur, qs = np.zeros(n, np.int64), np.zeros(n, np.int64)
    q = KSr.match_at(np.array(tokens, np.int32), IS_NUM, np.array(pat, np.int32), slot_of,
                     slot_elem, np.array(kinds, np.int64), np.array(lo, np.int64),
                     np.array(hi, np.int64), p, e, need_end, cur, qs)
    return q, [(int(qs[k]), int(qs[k] + cur[k])) for k in range(len(lo))] if q >= 0 else None


@pytest.mark.parametrize("seed", range(300))
def test_match_at_is_the_lazy_regex_match(seed):
    rng = np.random.default_rng(1000 + seed)
    toks = rng.choice([1, 2, 3, N_WORDS, N_WORDS + 1], size=int(rng.integers(1, 14))).tolist()
    n_el = int(rng.integers(1, 6))
    pat, kinds, lo, hi = [], [], [], []
    names = {0: "gap", 1: "word", 2: "number"}
    for _ in range(n_el):
        if rng.random() < 0.5:
            pat.append(int(rng.choice([1, 2, 3])))
        else:
            k = int(rng.integers(0, 3))
            pat.append(-1)
            kinds.append(k)
            a = 1 if k == 2 else int(rng.integers(0, 3))
            lo.append(a)
            hi.append(1 if k == 2 else a + int(rng.integers(0, 3)))
    rx = _regex(pat, [names[k] for k in kinds], lo, hi)
    s = "".join(_ch(t) for t in toks)
    for p in range(len(toks)):
        m = rx.match(s, p)
        q, sl = _kernel_match(toks, pat, kinds, lo, hi, p, len(toks))
        assert q == (m.end() if m else -1)
        if m:
            assert sl == [m.span(i + 1) for i in range(len(lo))]
        for end in range(p, len(toks) + 1):
            m = rx.fullmatch(s, p, end)
            q, sl = _kernel_match(toks, pat, kinds, lo, hi, p, len(toks), end)
            assert q == (end if m else -1)
            if m:
                assert sl == [m.span(i + 1) for i in range(len(lo))]


def test_taken_marks_the_union_of_the_intervals():
    """The taken tokens (one byte each, the intervals merged first) against a
    loop over the intervals: overlapping, nested, adjacent, empty ones."""
    from repetend.phrases.templates.search import _taken

    rng = np.random.default_rng(0)
    for _ in range(2000):
        n = int(rng.integers(1, 60))
        k = int(rng.integers(0, 15))
        ts = rng.integers(0, n, k)
        te = np.minimum(ts + rng.integers(0, 8, k), n)
        want = np.zeros(n, np.uint8)
        for a, b in zip(ts, te):
            want[a:b] = 1
        got = _taken(n, ts.astype(np.int64), te.astype(np.int64))
        assert got.dtype == np.uint8 and got.tolist() == want.tolist()
