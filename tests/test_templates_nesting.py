"""The nesting filter against a brute-force oracle, its coverage guarantee, and
its parameter read back from a directory written before it existed."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from repetend.phrases.templates.nesting import composite_templates, nested_templates


def naive_nested(tid, doc, start, end, n):
    occ = [[(d, s, e) for t2, d, s, e in zip(tid, doc, start, end) if t2 == t] for t in range(n)]
    out = np.zeros(n, dtype=bool)
    for t in range(n):
        if not occ[t]:
            continue
        for c in range(n):
            if c == t:
                continue
            if all(any(dy == dx and sy <= sx and ex <= ey and (ey - sy > ex - sx or c < t)
                       for dy, sy, ey in occ[c]) for dx, sx, ex in occ[t]):
                out[t] = True
                break
    return out


@st.composite
def occurrences(draw):
    n = draw(st.integers(1, 6))
    k = draw(st.integers(0, 30))
    tid = draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k))
    doc = draw(st.lists(st.integers(0, 2), min_size=k, max_size=k))
    start = draw(st.lists(st.integers(0, 12), min_size=k, max_size=k))
    length = draw(st.lists(st.integers(1, 8), min_size=k, max_size=k))
    end = [s + ln for s, ln in zip(start, length)]
    return (np.array(tid, np.int64), np.array(doc, np.int64), np.array(start, np.int64),
            np.array(end, np.int64), n)


@settings(max_examples=600, deadline=None)
@given(occurrences())
def test_matches_bruteforce(case):
    tid, doc, start, end, n = case
    assert nested_templates(tid, doc, start, end, n).tolist() == \
        naive_nested(tid, doc, start, end, n).tolist()


@settings(max_examples=300, deadline=None)
@given(occurrences())
def test_dropping_keeps_every_covered_token(case):
    tid, doc, start, end, n = case
    drop = nested_templates(tid, doc, start, end, n)

    def covered(mask):
        return {(d, p) for t, d, s, e in zip(tid, doc, start, end) if mask[t]
                for p in range(s, e)}

    assert covered(~drop) == covered(np.ones(n, dtype=bool))


def test_same_occurrences_keep_the_first_and_a_shared_unit_stays():
    # templates 0 and 1 have the same occurrences: 1 goes, 0 stays
    tid = np.array([0, 1, 0, 1]); doc = np.array([0, 0, 1, 1])
    s = np.array([2, 2, 5, 5]); e = np.array([9, 9, 7, 7])
    assert nested_templates(tid, doc, s, e, 2).tolist() == [False, True]
    # footer 2 lies inside template 0 in doc 0 and inside template 1 in doc 1: kept
    tid = np.array([0, 1, 2, 2]); doc = np.array([0, 1, 0, 1])
    s = np.array([0, 0, 5, 6]); e = np.array([10, 10, 10, 10])
    assert nested_templates(tid, doc, s, e, 3).tolist() == [False, False, False]
    # ... but inside template 0 in both: dropped
    tid = np.array([0, 0, 2, 2]); doc = np.array([0, 1, 0, 1])
    assert nested_templates(tid, doc, s, e, 3).tolist() == [False, False, True]


def naive_composite(tid, doc, start, end, df):
    """A template is a composite when each token of each of its occurrences lies in
    an occurrence of a template with a larger df (the union of them covers it)."""
    n = len(df)
    out = np.zeros(n, dtype=bool)
    for t in range(n):
        mine = [(d, s, e) for t2, d, s, e in zip(tid, doc, start, end) if t2 == t]
        if not mine:
            continue
        higher = {(d, p) for t2, d, s, e in zip(tid, doc, start, end) if df[t2] > df[t]
                  for p in range(s, e)}
        out[t] = all((d, p) in higher for d, s, e in mine for p in range(s, e))
    return out


@settings(max_examples=600, deadline=None)
@given(occurrences(), st.data())
def test_composites_match_bruteforce_and_keep_every_covered_token(case, data):
    tid, doc, start, end, n = case
    df = np.array(data.draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)), np.int64)
    drop = composite_templates(tid, doc, start, end, df)
    assert drop.tolist() == naive_composite(tid, doc, start, end, df).tolist()

    def covered(mask):
        return {(d, p) for t, d, s, e in zip(tid, doc, start, end) if mask[t]
                for p in range(s, e)}

    assert covered(~drop) == covered(np.ones(n, dtype=bool))


def test_two_blocks_side_by_side_on_some_pages_are_a_composite():
    # 0: a catalogue line (df 30), 1: a signature (df 25), 2: both side by side on
    # 3 pages (df 3, its occurrences [0, 10) + [10, 18)); 3: a block of its own
    # on those pages whose head is the catalogue's tail: not covered, kept
    tid = np.array([0, 1, 2, 0, 1, 2, 3])
    doc = np.array([0, 0, 0, 1, 1, 1, 2])
    s = np.array([0, 10, 0, 4, 14, 4, 0])
    e = np.array([10, 18, 18, 14, 22, 22, 9])
    df = np.array([30, 25, 3, 3])
    assert composite_templates(tid, doc, s, e, df).tolist() == [False, False, True, False]
    # a gap between the two blocks on one page: the composite adds those tokens, kept
    e2 = e.copy(); s2 = s.copy(); s2[4] = 15; e2[4] = 23; e2[5] = 23
    assert composite_templates(tid, doc, s2, e2, df).tolist() == [False, False, False, False]


def _scan_dir(tmp_path):
    from click.testing import CliRunner

    from repetend.cli import main
    from test_templates_memory import _store

    store = _store(tmp_path)
    out = tmp_path / "scan"
    r = CliRunner().invoke(main, ["scan", str(store.path), "--min-docs", "3", "--min-len", "4",
                                  "--no-dups", "--no-report", "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_read_templates_of_an_old_directory_says_not_nested_filtered(tmp_path):
    from repetend.phrases.templates.result import read_templates

    out = _scan_dir(tmp_path)
    f = out / "phrases" / "templates_summary.json"
    s = json.loads(f.read_text())
    del s["parameters"]["drop_nested"]          # as written before the filter existed
    f.write_text(json.dumps(s))
    assert read_templates(out / "phrases").config.drop_nested is False
