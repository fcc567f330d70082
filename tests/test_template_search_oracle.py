"""The whole-corpus template search (:mod:`repetend.phrases.templates.search`)
against a regular-expression oracle: each pattern as a Python ``re`` pattern
over one character per token, slots as lazy quantifiers, matched at every
position of every document, then taken in precedence order (occurrences given
first, then templates in order, each by position) where no token is taken yet.
And on the template layer: body text that shares a fixed word is not
swallowed, two templates sharing a fixed part stay two, output deterministic,
the option off gives today's tables."""

from __future__ import annotations

import re
from dataclasses import asdict

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from repetend.phrases.templates import TemplateConfig, find_templates
from repetend.phrases.templates.search import compile_patterns, new_matches

N_VOCAB = 7
NUMS = (5, 6)                     # token ids standing for all-digit tokens
IS_NUM = np.array([1 if v in NUMS else 0 for v in range(N_VOCAB + 2)], dtype=np.uint8)


def _char(v: int) -> str:
    return chr(0x100 + v)


def _regex(el, kinds, lo, hi) -> re.Pattern:
    num = "".join(_char(v) for v in NUMS)
    out, k = [], 0
    for v in el:
        if v >= 0:
            out.append(re.escape(_char(v)))
            continue
        a, b = lo[k], hi[k]
        cls = {"number": f"[{num}]", "word": f"[^{num}]", "gap": "."}[kinds[k]]
        out.append(f"{cls}{{{a},{b}}}?")
        k += 1
    return re.compile("".join(out), re.DOTALL)


def oracle(tokens, doc_offsets, pats, taken_s, taken_e):
    """``(template, start, end)`` of the kept matches, by template then start."""
    taken = np.zeros(len(tokens), dtype=bool)
    for s, e in zip(taken_s, taken_e):
        taken[s:e] = True
    out = []
    for t, p in enumerate(pats):
        if p is None:
            continue
        rx = _regex(*p)
        for d in range(len(doc_offsets) - 1):
            a, b = int(doc_offsets[d]), int(doc_offsets[d + 1])
            text = "".join(_char(int(v)) for v in tokens[a:b])
            for i in range(b - a):
                m = rx.match(text, i)
                if m is None:
                    continue
                s, e = a + m.start(), a + m.end()
                if not taken[s:e].any():
                    taken[s:e] = True
                    out.append((t, s, e))
    return out


def _fast(tokens, doc_offsets, pats, taken_s, taken_e):
    els = [p[0] if p is not None else None for p in pats]
    kinds = [p[1] if p is not None else [] for p in pats]
    los = [p[2] if p is not None else [] for p in pats]
    his = [p[3] if p is not None else [] for p in pats]
    comp = compile_patterns(els, kinds, los, his)
    got = new_matches(np.asarray(tokens, np.int32), IS_NUM, np.asarray(doc_offsets, np.int64),
                      comp, np.asarray(taken_s, np.int64), np.asarray(taken_e, np.int64))
    t, s, e = got[0], got[1], got[2]
    return [(int(a), int(b), int(c)) for a, b, c in zip(t, s, e)]


@st.composite
def _pattern(draw):
    """A pattern with at least one fixed token; a slot at either end has one length."""
    n = draw(st.integers(1, 5))
    el, kinds, lo, hi = [], [], [], []
    for i in range(n):
        if draw(st.booleans()) or i == n // 2:
            el.append(draw(st.integers(0, N_VOCAB - 1)))
            continue
        if el and el[-1] < 0:
            continue
        kind = draw(st.sampled_from(["gap", "word", "number"]))
        if kind == "number":
            a = b = 1
        else:
            a = draw(st.integers(0 if kind == "gap" else 1, 2))
            b = draw(st.integers(a, 3))
        el.append(-1 if kind == "gap" else -2)
        kinds.append(kind)
        lo.append(a)
        hi.append(b)
    if not any(v >= 0 for v in el):
        el.append(0)
    # the ends: one length (the pass never searches a pattern that starts or ends vaguely)
    for end in (0, -1):
        if el[end] < 0:
            k = 0 if end == 0 else len(kinds) - 1
            hi[k] = lo[k] = max(lo[k], 1)
    return el, kinds, lo, hi


@st.composite
def _case(draw):
    n_docs = draw(st.integers(1, 4))
    lens = draw(st.lists(st.integers(0, 25), min_size=n_docs, max_size=n_docs))
    # a skewed vocabulary so that fixed tokens recur
    tokens = draw(st.lists(st.sampled_from([0, 0, 1, 1, 2, 3, 4, 5, 5, 6]),
                           min_size=sum(lens), max_size=sum(lens)))
    offsets = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
    pats = draw(st.lists(st.one_of(st.none(), _pattern()), min_size=1, max_size=4))
    n_tok = len(tokens)
    taken = draw(st.lists(st.tuples(st.integers(0, max(n_tok - 1, 0)), st.integers(1, 4)),
                          max_size=3)) if n_tok else []
    ts = [s for s, _ in taken]
    te = [min(s + w, n_tok) for s, w in taken]
    return tokens, offsets, pats, ts, te


@settings(max_examples=400, deadline=None)
@given(_case())
def test_the_search_equals_the_regex_oracle(case):
    tokens, offsets, pats, ts, te = case
    assert _fast(tokens, offsets, pats, ts, te) == oracle(tokens, offsets, pats, ts, te)


def test_backtracking_takes_the_first_lazy_assignment():
    # «7 ▢{0..3} 1 ▢{1} 2»: the gap's first choice (0) fails at the number, 1 works
    a, b = 0, 1
    tokens = [a, 3, b, 5, 4, a, b, b, 5, 4]
    pat = ([a, -1, b, -2, 4], ["gap", "number"], [0, 1], [3, 1])
    got = _fast(tokens, [0, len(tokens)], [pat], [], [])
    assert got == oracle(tokens, [0, len(tokens)], [pat], [], []) == [(0, 0, 5), (0, 5, 10)]


def test_matches_stay_inside_a_document_and_out_of_taken_tokens():
    tokens = [0, 1, 0, 1, 0, 1]
    pat = ([0, 1], [], [], [])
    assert _fast(tokens, [0, 3, 6], [pat], [], []) == [(0, 0, 2), (0, 4, 6)]
    assert _fast(tokens, [0, 6], [pat], [1], [2]) == [(0, 2, 4), (0, 4, 6)]


def test_earlier_templates_take_precedence_over_later_ones():
    tokens = [0, 1, 2, 3]
    first, second = ([1, 2], [], [], []), ([0, 1], [], [], [])
    assert _fast(tokens, [0, 4], [first, second], [], []) == [(0, 1, 3)]
    assert _fast(tokens, [0, 4], [second, first], [], []) == [(0, 0, 2)]


# --- on the template layer -------------------------------------------------

FIRST = [f"fn{i}" for i in range(400)]
LAST = [f"ln{i}" for i in range(400)]
MONTHS = ["january", "february", "march", "april", "may", "june"]
BODY = [f"w{i}" for i in range(300)] + ["posted", "by", "on", "the", "a", "of"]


def _planted(n_pages=160, seed=0, second=False):
    """Pages of body text with a signature «posted by F L on Month d , yyyy»
    whose names are mostly rare (so most instances are not found through their
    fixed 4-grams), body text that holds «posted by» and «on» loosely, and with
    *second* a review line «reviewed by F L , rating d of 5 stars» sharing «by»."""
    rng = np.random.default_rng(seed)
    vocab: dict[str, int] = {}
    toks, offsets, sig, rev = [], [0], [], []

    def put(words):
        for w in words:
            toks.append(vocab.setdefault(w, len(vocab)))

    for p in range(n_pages):
        put(rng.choice(BODY, int(rng.integers(20, 60))).tolist())
        a = len(toks)
        # a third of the authors come from 3 names (their 4-grams frequent)
        f = FIRST[int(rng.integers(0, 3))] if p % 3 == 0 else FIRST[int(rng.integers(3, 400))]
        l_ = LAST[int(rng.integers(0, 3))] if p % 3 == 0 else LAST[int(rng.integers(3, 400))]
        put(["posted", "by", f, l_, "on", str(rng.choice(MONTHS)), str(int(rng.integers(1, 29))),
             ",", str(int(rng.integers(2001, 2024)))])
        sig.append((p, a, len(toks)))
        put(rng.choice(BODY, int(rng.integers(10, 30))).tolist())
        if second:
            a = len(toks)
            put(["reviewed", "by", FIRST[int(rng.integers(0, 400))], LAST[int(rng.integers(0, 3))],
                 ",", "rating", str(int(rng.integers(1, 6))), "of", "5", "stars"])
            rev.append((p, a, len(toks)))
            put(rng.choice(BODY, int(rng.integers(5, 15))).tolist())
        offsets.append(len(toks))
    words = [None] * len(vocab)
    for w, i in vocab.items():
        words[i] = w
    return (np.array(toks, np.int32), np.array(offsets, np.int64), words), sig, rev


def _occ(res):
    o = res.occurrences
    d = o.column("doc_index").to_numpy()
    off = None
    return (o.column("template_id").to_numpy(), d, o.column("start").to_numpy(),
            o.column("end").to_numpy())


CFG = dict(slotted_min_span=6)


def _run(corpus, **kw):
    return find_templates(corpus, None, 5, 10, TemplateConfig(**{**CFG, **kw}))


def test_on_by_default_and_off_records_nothing():
    corpus, _, _ = _planted(80)
    a = _run(corpus)                                   # the default: on
    b = _run(corpus, search_whole=True)
    assert a.table.equals(b.table) and a.occurrences.equals(b.occurrences)
    assert a.summary["parameters"]["search_whole"] is True
    assert "search_whole" in a.summary
    off = _run(corpus, search_whole=False)             # the tables before the default
    assert "search_whole" not in off.summary["parameters"]
    assert "search_whole" not in off.summary


def _inside(spans_by_doc, d, s, e):
    offsets = spans_by_doc
    return any(a <= s and e <= b for a, b in offsets.get(int(d), []))


def test_the_signature_is_found_on_more_pages_and_never_in_body_text():
    corpus, sig, _ = _planted()
    toks, offsets, vocab = corpus
    off = _run(corpus, search_whole=False)
    on = _run(corpus)                                  # on by default
    planted = {}
    for p, a, b in sig:
        planted.setdefault(p, []).append((a - offsets[p], b - offsets[p]))

    def whole(res):
        tid, d, s, e = _occ(res)
        return {int(dd) for dd, ss, ee in zip(d, s, e)
                if any(ss <= a and b <= ee for a, b in planted[int(dd)])}

    assert len(whole(on)) > len(whole(off))
    assert len(whole(on)) >= 0.9 * len(sig)
    # every occurrence with the pass lies inside a planted signature: no body text
    tid, d, s, e = _occ(on)
    assert all(_inside(planted, dd, ss, ee) for dd, ss, ee in zip(d, s, e))
    # the occurrences found before are all still there
    before = set(zip(*[x.tolist() for x in _occ(off)[1:]]))
    after = set(zip(*[x.tolist() for x in _occ(on)[1:]]))
    assert before <= after
    assert on.summary["search_whole"]["occurrences_added"] == len(after) - len(before) > 0


def test_two_templates_sharing_a_fixed_part_stay_two():
    corpus, sig, rev = _planted(200, seed=1, second=True)
    toks, offsets, vocab = corpus
    on = _run(corpus, search_whole=True)
    parts = [" ".join(p) for p in on.table.column("parts").to_pylist()]
    assert any("posted by" in p for p in parts) and any("reviewed by" in p for p in parts)
    assert not any("posted" in p and "reviewed" in p for p in parts)
    planted = {}
    for p, a, b in sig + rev:
        planted.setdefault(p, []).append((a - offsets[p], b - offsets[p]))
    tid, d, s, e = _occ(on)
    assert all(_inside(planted, dd, ss, ee) for dd, ss, ee in zip(d, s, e))


def test_the_pass_is_deterministic():
    corpus, _, _ = _planted(120, seed=2, second=True)
    a = _run(corpus, search_whole=True)
    b = _run(corpus, search_whole=True)
    assert a.table.equals(b.table) and a.occurrences.equals(b.occurrences)


def test_the_option_reaches_the_config_and_the_params():
    from repetend.cli.options import template_config
    from repetend.phrases import PhraseConfig

    kw = {"no_templates": False, "max_gap": 4, "template_min_span": None,
          "template_prune": False, "template_parts": True}
    assert template_config(kw).search_whole is True                # on by default
    assert template_config({**kw, "template_search_whole": False}).search_whole is False
    off = PhraseConfig(min_docs=5, templates=TemplateConfig(search_whole=False))
    assert "template_search_whole" not in off.to_params()
    assert PhraseConfig.from_params(off.to_params()) == off
    on = PhraseConfig(min_docs=5)
    assert on.to_params()["template_search_whole"] is True
    assert PhraseConfig.from_params(on.to_params()) == on
    # a summary written before the default (no key) reads back as off
    old = {k: v for k, v in on.to_params().items() if k != "template_search_whole"}
    assert PhraseConfig.from_params(old).templates.search_whole is False
    assert "template_search_whole" not in PhraseConfig(min_docs=5, templates=None).to_params()
    with pytest.raises(Exception):
        TemplateConfig(search_whole="yes").validate()


@pytest.mark.parametrize("command", ["scan", "phrases"])
def test_the_flag_is_on_both_commands(command):
    from click.testing import CliRunner

    from repetend.cli import main

    r = CliRunner().invoke(main, [command, "--help"])
    assert r.exit_code == 0 and "--template-search-whole" in r.output
    assert "--no-template-search-whole" in r.output


def test_the_flag_reaches_the_phrases_summary(tmp_path):
    import json

    from click.testing import CliRunner

    from repetend.cli import main
    from repetend.synth import weblike

    corpus = weblike(120, seed=5).write(tmp_path / "web")["corpus"]
    for flag, want in (([], True), (["--template-search-whole"], True),
                       (["--no-template-search-whole"], False)):
        out = tmp_path / f"o{len(flag)}{int(want)}"
        r = CliRunner().invoke(main, ["phrases", str(corpus), "--out", str(out), "-s", "5"] + flag)
        assert r.exit_code == 0, r.output
        s = json.loads((out / "templates_summary.json").read_text())
        assert ("search_whole" in s["parameters"]) is want
        p = json.loads((out / "summary.json").read_text())["parameters"]
        assert ("template_search_whole" in p) is want
