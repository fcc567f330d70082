"""``TemplateConfig.slotted_min_span``: templates with a slot shorter than L.

A block of 6 tokens with slots («© {year} {company} ltd all rights reserved»)
is below ``min_span`` = L and was never a template.  The option lowers the
shortest span for patterns with a slot only; everything else is the same
run: the oracle is the run with the option at 1, filtered by span.  The
default, ``"auto"``, is the run with L' + 2 (6 at L = 10) given.  Which
slots such a short template may have (``short_slots``: number and word
slots by default, number slots only, any) is a filter on the kinds of its slots:
the oracle is the run with ``short_slots="any"`` filtered by them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from repetend.phrases.templates import TemplateConfig
from test_templates_variants import _corpus, _covering, _occ, _pages, _run

SHORT_FOOTER = "{year} {company} ltd all rights reserved"          # 6 tokens
LISTING = "showing {d} {m} of {y} items"                            # 6 tokens
GAPPED = "please read the notes {first} before you start here"       # 9 tokens, a gap slot
CORE = {"merge_variants": False, "ends": False, "drop_nested": False, "search_whole": False}


def _rows(res):
    t = res.table
    return sorted(zip(map(tuple, t.column("parts").to_pylist()), t.column("df").to_pylist(),
                      t.column("occurrences").to_pylist(), t.column("span_tokens").to_pylist()))


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10 ** 6), s=st.integers(2, 9))
def test_same_as_the_unfiltered_run_filtered_by_span(seed, s):
    # oracle: with slotted_min_span = 1 every pattern with a slot is kept;
    # with s, exactly those rows whose median span is ≥ s (or ≥ min_span = L)
    store, _ = _corpus(60, [("footer", SHORT_FOOTER, 0.5, "end"),
                            ("listing", LISTING, 0.4, "mid")], seed)
    L = 10
    low = _run(store, sigma=5, L=L, slotted_min_span=1, short_slots="any", **CORE)
    got = _run(store, sigma=5, L=L, slotted_min_span=s, short_slots="any", **CORE)
    want = [r for r in _rows(low) if r[3] >= min(s, L)]
    assert _rows(got) == want
    # every reported occurrence set: ≥ σ documents, median span as reported
    tid, od, st_, en = _occ(got, store)
    for row in got.table.to_pylist():
        sel = tid == row["template_id"]
        assert np.unique(od[sel]).size == row["df"] >= 5


def test_off_and_at_or_above_min_span_is_the_run_without_it():
    store, _ = _corpus(60, [("footer", SHORT_FOOTER, 0.5, "end")], 3)
    for kw in ({}, CORE):
        base = _run(store, sigma=5, L=10, slotted_min_span=None, **kw)
        for v in (0, 10, 12):
            r = _run(store, sigma=5, L=10, slotted_min_span=v, short_slots="any", **kw)
            assert r.table.equals(base.table) and r.occurrences.equals(base.occurrences)
            assert r.summary["parameters"]["slotted_min_span"] == (None if v == 0 else v)


def test_the_default_is_part_length_plus_two_when_below_min_span():
    # "auto" (the default) is the run with slotted_min_span = L' + 2 given,
    # table for table and in the recorded parameters; off where that is not
    # below min_span (L = 5, or min_span 6) and in merge-only
    store, _ = _corpus(60, [("footer", SHORT_FOOTER, 0.5, "end"),
                            ("listing", LISTING, 0.4, "mid")], 5)
    assert TemplateConfig().slotted_min_span == "auto"
    cases = [({}, 10, 6), ({"part_len": 3}, 10, 5), ({"min_span": 6}, 10, None),
             ({}, 5, None), ({"short_parts": False}, 10, None)]
    for kw, L, want in cases:
        assert TemplateConfig(**kw).resolved_slotted_span(L) == want
        auto = _run(store, sigma=5, L=L, **kw)
        given = _run(store, sigma=5, L=L, slotted_min_span=want, **kw)
        assert auto.table.equals(given.table) and auto.occurrences.equals(given.occurrences)
        assert auto.summary["parameters"] == given.summary["parameters"]
        assert auto.summary["parameters"]["slotted_min_span"] == want
    # and at L = 10 it finds what the run without it misses (the 6-token blocks)
    assert _rows(_run(store, sigma=5)) != _rows(_run(store, sigma=5, slotted_min_span=None))
    assert min(_run(store, sigma=5).table.column("span_tokens").to_pylist()) == 6


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_short_blocks_are_one_template_each_and_precise(seed):
    store, truth = _corpus(200, [("footer", SHORT_FOOTER, 0.5, "end"),
                                 ("listing", LISTING, 0.3, "mid")], seed)
    off = _run(store, slotted_min_span=None)
    assert not _covering(off, store, truth, "footer")                # below L: none when off
    res = _run(store, slotted_min_span=6, short_slots="word")
    default = _run(store)                                            # the default: the same
    assert default.table.equals(res.table) and default.occurrences.equals(res.occurrences)
    for name in ("footer", "listing"):
        cover = _covering(res, store, truth, name)
        # a company slot value on < σ pages is no word-slot value: ~7 % of them
        assert cover and max(cover.values()) >= 0.9 * _pages(truth, name)
    # precision: template tokens are block tokens
    tid, od, s, e = _occ(res, store)
    inside = body = 0
    for d, a, b in zip(od.tolist(), s.tolist(), e.tolist()):
        marks = truth[d]
        for p in range(a, b):
            inside += 1
            body += not any(m[1] <= p < m[2] for m in marks)
    assert inside and body / inside <= 0.01


def test_short_blocks_adjacent_on_a_fraction_of_pages_stay_two():
    # the footer right after the listing on ~15 % of the pages, apart (body
    # text between) elsewhere: no occurrence holds a listing and a footer that
    # are apart, and each block is found whole on its own pages
    store, truth = _corpus(300, [("listing", LISTING, 0.3, "end"),
                                 ("listing", LISTING, 0.3, "mid"),
                                 ("footer", SHORT_FOOTER, 0.5, "end")], 7)
    res = _run(store, slotted_min_span=6, short_slots="word")
    tid, od, s, e = _occ(res, store)
    apart = 0
    for d, marks in enumerate(truth):
        for a in marks:
            for b in marks:
                if a[0] == "listing" and b[0] == "footer" and a[2] != b[1]:
                    apart += 1
                    lo, hi = min(a[1], b[1]), max(a[2], b[2])
                    assert not ((od == d) & (s <= lo) & (e >= hi)).any()
    assert apart > 20
    for name in ("footer", "listing"):
        cover = _covering(res, store, truth, name)
        assert max(cover.values()) >= 0.85 * _pages(truth, name)


def test_one_fixed_part_shared_by_two_short_templates_stays_two():
    other = "showing {d} {m} of {y} reviews"
    store, truth = _corpus(240, [("listing", LISTING, 0.4, "mid"),
                                 ("reviews", other, 0.4, "end")], 11)
    res = _run(store, slotted_min_span=6, short_slots="word")
    tl = _covering(res, store, truth, "listing")
    tr = _covering(res, store, truth, "reviews")
    bl = max(tl, key=tl.get)
    br = max(tr, key=tr.get)
    assert bl != br
    texts = dict(zip(res.table.column("template_id").to_pylist(),
                     res.table.column("text").to_pylist()))
    assert "items" in texts[bl] and "reviews" not in texts[bl]
    assert "reviews" in texts[br] and "items" not in texts[br]


def _kinds(res):
    return {r["template_id"]: {s["kind"] for s in r["slots"]} for r in res.table.to_pylist()}


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 10 ** 6))
def test_short_slot_kinds_filter_the_any_run(seed):
    # oracle: the run with short_slots="any", without the rows shorter than
    # min_span that have a variable slot of a kind not allowed; longer rows stay
    store, _ = _corpus(80, [("footer", SHORT_FOOTER, 0.5, "end"),
                            ("listing", LISTING, 0.4, "mid"),
                            ("gapped", GAPPED, 0.4, "top")], seed)
    L = 10
    every = _run(store, sigma=5, L=L, slotted_min_span=5, short_slots="any", **CORE)
    kinds = _kinds(every)
    spans = dict(zip(every.table.column("template_id").to_pylist(),
                     every.table.column("span_tokens").to_pylist()))
    t = every.table
    rows = {tid: (tuple(p), df, n, sp) for tid, p, df, n, sp in zip(
        t.column("template_id").to_pylist(), t.column("parts").to_pylist(),
        t.column("df").to_pylist(), t.column("occurrences").to_pylist(),
        t.column("span_tokens").to_pylist())}
    seen = set()
    for mode, allowed in (("number", {"number"}), ("word", {"number", "word"})):
        got = _run(store, sigma=5, L=L, slotted_min_span=5, short_slots=mode, **CORE)
        want = sorted(rows[t] for t in rows if spans[t] >= L or kinds[t] <= allowed)
        assert _rows(got) == want, mode
        assert got.summary["short_slotted_dropped"] == len(rows) - len(want)
        seen.update(k for t in rows if spans[t] < L and not kinds[t] <= allowed
                    for k in kinds[t])
    assert "gap" in seen                 # the filter had something to drop


def test_short_slot_kinds_on_the_blocks():
    store, truth = _corpus(200, [("footer", SHORT_FOOTER, 0.5, "end"),
                                 ("listing", LISTING, 0.3, "mid"),
                                 ("gapped", GAPPED, 0.3, "top")], 5)
    found = {}
    for mode in ("number", "word", "any"):
        res = _run(store, slotted_min_span=6, short_slots=mode)
        found[mode] = {name: max(_covering(res, store, truth, name).values(), default=0)
                       / _pages(truth, name) for name in ("footer", "listing", "gapped")}
    # the listing has number slots only; the footer a company word slot; the
    # gapped block a gap slot: each found whole from the mode that allows it
    assert min(found[m]["listing"] for m in found) >= 0.9
    assert found["number"]["footer"] < 0.5 <= 0.9 <= found["word"]["footer"]
    assert found["word"]["gapped"] < 0.5 and found["any"]["gapped"] >= 0.9


def test_validated():
    from repetend.errors import ParameterError

    for bad in (-1, "x", "off", 1.5, True, 10 ** 9):
        with pytest.raises(ParameterError, match="slotted_min_span"):
            TemplateConfig(slotted_min_span=bad).validate()
    for ok in (None, 0, "auto", 1, 6):
        TemplateConfig(slotted_min_span=ok).validate()
    with pytest.raises(ParameterError, match="short_slots"):
        TemplateConfig(short_slots="gap").validate()
