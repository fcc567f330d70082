"""Step 2's pruning (:mod:`repetend.phrases.templates.links`): which runs go
into the gapped sequence, against a loop over the runs; and a corpus where
pruning changes the templates, as the brute-force twin says it should."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from test_templates import fast_as_naive, naive_templates, signature_corpus
from repetend.phrases.templates import TemplateConfig, find_templates
from repetend.phrases.templates.links import _kept_runs


def naive_kept(run_offsets, starts, ends, max_gap, min_span):
    """Per run: kept (its chain reaches min_span) and linked to the next."""
    keep, link = [], []
    for d in range(len(run_offsets) - 1):
        rs = [(int(starts[r]), int(ends[r])) for r in range(run_offsets[d], run_offsets[d + 1])]
        ln = [i + 1 < len(rs) and rs[i + 1][0] - rs[i][1] <= max_gap for i in range(len(rs))]
        kp = [False] * len(rs)
        i = 0
        while i < len(rs):
            j = i
            while ln[j]:
                j += 1
            reach = sum(e - s for s, e in rs[i:j + 1]) + (j - i) * max_gap
            kp[i:j + 1] = [reach >= min_span] * (j - i + 1)
            i = j + 1
        keep += kp
        link += ln
    return keep, link


@st.composite
def run_layouts(draw):
    """Documents with random disjoint runs in each."""
    n_docs = draw(st.integers(1, 8))
    offsets, ro, starts, ends = [0], [0], [], []
    for _ in range(n_docs):
        n = draw(st.integers(0, 30))
        base = offsets[-1]
        p = 0
        while p < n:
            p += draw(st.integers(0, 5))
            length = draw(st.integers(1, 6))
            if p + length > n:
                break
            starts.append(base + p)
            ends.append(base + p + length)
            p += length + 1             # runs are maximal: at least one token between
        offsets.append(base + n)
        ro.append(len(starts))
    return np.array(ro, np.int64), np.array(starts, np.int64), np.array(ends, np.int64)


@settings(max_examples=200, deadline=None)
@given(run_layouts(), st.integers(0, 4), st.integers(1, 12))
def test_kept_runs_match_a_loop_over_the_runs(layout, max_gap, min_span):
    ro, starts, ends = layout
    keep, link, counts = _kept_runs(ro, starts, ends, max_gap, min_span, True)
    want_keep, want_link = naive_kept(ro, starts, ends, max_gap, min_span)
    assert keep.tolist() == want_keep
    assert link.tolist() == want_link
    assert counts["short_runs_dropped"] == want_keep.count(False)
    assert counts["short_tokens_dropped"] == int((ends - starts)[~np.array(want_keep, bool)].sum())
    keep, link, counts = _kept_runs(ro, starts, ends, max_gap, min_span, False)
    assert keep.all() and link.tolist() == want_link and counts == {}


def test_pruning_changes_what_short_runs_counted_as_the_twin_says():
    """«posted by ann lee on» is in 3 documents (σ = 3), but in two of them it is
    a run of 5 tokens alone (the month after it is rare), too short to hold a
    template of 7; pruned, those two no longer count, the fragment is no
    candidate, and the template built on it and its sibling «posted by bob ray
    on» («posted by ▢ ▢ on july ▢ ▢») goes.  The twin, pruning the same way,
    agrees in both settings."""
    rng = np.random.default_rng(9)
    n_docs = int(rng.integers(4, 12))
    tokens, offsets, vocab = signature_corpus(rng, n_docs)
    got = {}
    for prune in (False, True):
        res = find_templates((tokens, offsets, vocab), None, 3, 5,
                             TemplateConfig(max_gap=4, part_len=3, min_span=7, prune=prune,
                                            search_whole=False,       # the twin has no search
                                            slotted_min_span=None))   # the twin: min_span for all
        got[prune] = fast_as_naive(res)
        assert got[prune] == naive_templates(tokens, offsets, vocab, 3, 3, 4, 7, 2,
                                             prune=prune)
    assert [k[0] for k in got[False]] == [("posted by", "▢", "▢", "on july", "▢", "▢")]
    assert got[True] == {}
    assert res.summary["short_runs_dropped"] > 0
    unpruned = find_templates((tokens, offsets, vocab), None, 3, 5,
                              TemplateConfig(max_gap=4, part_len=3, min_span=7))
    assert res.summary["gapped_length"] < unpruned.summary["gapped_length"]


@settings(max_examples=150, deadline=None)
@given(run_layouts(), st.integers(0, 4), st.integers(1, 12), st.booleans())
def test_gapped_corpus_writes_the_kept_runs(layout, max_gap, min_span, prune):
    """The gapped sequence from the keep / link masks, against a loop: the kept
    runs' tokens, one gap token between two linked consecutive runs, a fresh
    sentinel between any other two kept runs of a document."""
    from repetend.phrases.templates import _kernels_index as KI

    ro, starts, ends = layout
    n_tok = int(ends.max(initial=0)) + 3
    tokens = np.arange(n_tok, dtype=np.int32) % 7
    doc_offsets = np.zeros(ro.size, dtype=np.int64)
    for d in range(ro.size - 1):         # documents end after their last run
        last = int(ends[ro[d + 1] - 1]) if ro[d + 1] > ro[d] else 0
        doc_offsets[d + 1] = max(doc_offsets[d], last)
    doc_offsets[-1] = n_tok
    keep, link, _ = _kept_runs(ro, starts, ends, max_gap, min_span, prune)
    gap, sent = 100, 101
    t, t_start, t_end, t_off = KI.gapped_corpus(tokens, doc_offsets, ro, starts, ends, keep,
                                                link, np.int32(gap), np.int32(sent))
    want, want_pos, want_off, s = [], [], [0], sent
    for d in range(ro.size - 1):
        prev = None
        for r in range(ro[d], ro[d + 1]):
            if not keep[r]:
                continue
            if prev is not None:
                if prev == r - 1 and link[prev]:
                    want.append(gap)
                else:
                    want.append(s)
                    s += 1
                want_pos.append((int(ends[prev]), int(starts[r])))
            for p in range(starts[r], ends[r]):
                want.append(int(tokens[p]))
                want_pos.append((p, p + 1))
            prev = r
        want_off.append(len(want))
    assert t.tolist() == want
    assert list(zip(t_start.tolist(), t_end.tolist())) == want_pos
    assert t_off.tolist() == want_off
