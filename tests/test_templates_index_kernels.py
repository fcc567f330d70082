"""Kernels of the gapped index (:mod:`repetend.phrases.templates._kernels_index`)
against simple oracles: locating patterns, sorting positions."""

from __future__ import annotations

import contextlib
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from repetend.phrases.templates import _kernels_index as KI
from repetend.phrases.templates import gapped_index
from repetend.phrases.templates.gapped_index import _gapped_index, _locate


def _gapped(rng, n_docs, vocab, gap_id):
    """A gapped sequence: a few repeated blocks with gaps, rare tokens and
    sentinels (ids above *gap_id*), documents of 0 … 40 tokens."""
    lens = rng.integers(0, 41, size=n_docs)
    t_off = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(lens, out=t_off[1:])
    blocks = [rng.integers(0, vocab, size=int(rng.integers(3, 9))) for _ in range(3)]
    for b in blocks:
        b[rng.random(b.size) < 0.2] = gap_id
    t = rng.integers(0, vocab, size=int(t_off[-1])).astype(np.int32)
    t[rng.random(t.size) < 0.05] = gap_id
    t[rng.random(t.size) < 0.03] = gap_id + 1 + rng.integers(0, 1000)   # sentinels
    t[rng.random(t.size) < 0.03] = vocab + rng.integers(0, 50)          # rare tokens
    for d in range(n_docs):
        a, n = int(t_off[d]), int(lens[d])
        for b in blocks:
            if n >= b.size and rng.random() < 0.6:
                at = a + int(rng.integers(0, n - b.size + 1))
                t[at:at + b.size] = b
    return t, t_off


def _naive_locate(t, t_off, keys, gap_id):
    doc = np.repeat(np.arange(t_off.size - 1), np.diff(t_off))
    out = []
    for k in keys:
        m = k.size
        hits = []
        for q in range(t.size - m + 1):
            if doc[q] != doc[q + m - 1]:
                continue
            w = t[q:q + m]
            if np.all(np.where(k < 0, w < gap_id, w == k)):
                hits.append(q)
        out.append(hits)
    return out


def _keys(rng, t, t_off, gap_id, n_keys):
    """Windows of *t* made of frequent-looking tokens (no sentinel), some
    tokens turned into wildcards (-1), plus a few random keys."""
    keys = []
    while len(keys) < n_keys and t.size >= 2:
        m = int(rng.integers(1, 9))
        q = int(rng.integers(0, max(t.size - m, 0) + 1))
        k = t[q:q + m].astype(np.int64).copy()
        if k.size == 0 or (k > gap_id).any():
            continue
        wild = (rng.random(k.size) < 0.3) & (k < gap_id)
        k[wild] = -1
        if (k >= 0).any():
            keys.append(k)
    return keys


def _key_blocks(split):
    """With *split*: every key its own block on three threads (the finder
    splits only past 64 keys a block and with more than one thread)."""
    if not split:
        return contextlib.nullcontext()
    stack = contextlib.ExitStack()
    stack.enter_context(mock.patch.object(gapped_index, "_KEYS_PER_BLOCK", 1))
    stack.enter_context(mock.patch.object(gapped_index, "get_num_threads", lambda: 3))
    return stack


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 30), vocab=st.integers(2, 12),
       sigma=st.integers(1, 4), split=st.booleans())
def test_locate_matches_naive(seed, n_docs, vocab, sigma, split):
    rng = np.random.default_rng(seed)
    gap_id = vocab + 60
    t, t_off = _gapped(rng, n_docs, vocab, gap_id)
    if t.size == 0:
        return
    ix = _gapped_index(t, t_off, gap_id, sigma)
    t_doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(t_off))
    keys = _keys(rng, t, t_off, gap_id, 12)
    # keep the keys whose fixed tokens all have a code (as the finder's keys,
    # made of frequent phrases, do)
    keys = [k for k in keys if (ix.code[np.clip(k[k >= 0], 0, gap_id + 1)] > 0).all()]
    if not keys:
        return
    inf = np.iinfo(np.int64).max
    with _key_blocks(split):
        found, skipped = _locate(ix, t, t_doc, keys, gap_id, np.full(len(keys), inf))
    assert not skipped.any() and len(found) == len(keys)
    want = _naive_locate(t, t_off, keys, gap_id)
    for k, f, w in zip(keys, found, want):
        assert f.tolist() == w, k


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), budget=st.integers(0, 30), split=st.booleans())
def test_locate_skips_by_longest_segment_range(seed, budget, split):
    rng = np.random.default_rng(seed)
    gap_id = 70
    t, t_off = _gapped(rng, 25, 6, gap_id)
    if t.size == 0:
        return
    ix = _gapped_index(t, t_off, gap_id, 2)
    t_doc = np.repeat(np.arange(t_off.size - 1, dtype=np.int64), np.diff(t_off))
    keys = [k for k in _keys(rng, t, t_off, gap_id, 10)
            if (ix.code[np.clip(k[k >= 0], 0, gap_id + 1)] > 0).all()]
    if not keys:
        return
    with _key_blocks(split):
        found, skipped = _locate(ix, t, t_doc, keys, gap_id, np.full(len(keys), budget))
    assert len(found) == len(skipped) == len(keys)
    want = _naive_locate(t, t_off, keys, gap_id)
    codes = ix.text.astype(np.int64)
    for k, f, s, w in zip(keys, found, skipped, want):
        # the longest wildcard-free run (the first of equals), in codes
        best, j = (0, 0), 0
        while j < k.size:
            if k[j] < 0:
                j += 1
                continue
            e = j
            while e < k.size and k[e] >= 0:
                e += 1
            if e - j > best[1] - best[0]:
                best = (j, e)
            j = e
        seg = ix.code[k[best[0]:best[1]]]
        n_seg = sum(1 for p in range(codes.size - seg.size + 1)
                    if np.array_equal(codes[p:p + seg.size], seg))
        assert bool(s) == (n_seg > budget)
        assert f.tolist() == ([] if s else w)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 9000), bits=st.integers(1, 40))
def test_sort_positions_matches_sort(seed, n, bits):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2**bits, size=n, dtype=np.int64)
    got = x.copy()
    KI._sort_positions(got, np.empty(n, np.int64), np.int64(bits))
    assert got.tolist() == np.sort(x).tolist()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_runs=st.integers(1, 150),
       alphabet=st.sampled_from([1, 2, 3, 7, 300]))
def test_lcp_and_docs_match_naive(seed, n_runs, alphabet):
    from repetend.phrases import _suffix_kernels as S
    from repetend.phrases.templates.gapped_index import _suffix_array

    rng = np.random.default_rng(seed)
    lens = rng.integers(1, 15, size=n_runs)
    seg_len = lens.astype(np.int64)
    seg_cstart = np.concatenate(([0], np.cumsum(lens + 1)[:-1])).astype(np.int64)
    seg_doc = np.sort(rng.integers(0, 5, size=n_runs)).astype(np.int32)
    text = np.zeros(int((lens + 1).sum()), dtype=np.uint16 if alphabet > 255 else np.uint8)
    block = rng.integers(1, alphabet + 1, size=15)
    for c, n in zip(seg_cstart, lens):          # repeats, so that LCPs are long
        text[c:c + n] = block[:n] if rng.random() < 0.5 else rng.integers(1, alphabet + 1,
                                                                          size=n)
    sa = _suffix_array(text, min(alphabet, 200))
    doc_at = np.full(text.size, -1)
    for d, c, n in zip(seg_doc, seg_cstart, seg_len):
        doc_at[c:c + n] = d
    want_lcp = [0]
    for i in range(1, sa.size):
        a, b, h = int(sa[i - 1]), int(sa[i]), 0
        while text[a + h] != 0 and text[a + h] == text[b + h]:
            h += 1
        want_lcp.append(h)
    lcp, docs = KI.lcp_and_docs(text, sa, seg_doc, seg_cstart, seg_len)
    assert lcp.tolist() == want_lcp
    assert docs.tolist() == doc_at[sa].tolist()
    # the suffix engine's two kernels it stands for give the same
    lcp0, rank = S.kasai_clamped(text, sa)
    assert lcp0.tolist() == want_lcp
    assert S.docs_in_sa_order(sa, seg_doc, seg_cstart, seg_len, rank).tolist() == docs.tolist()


def _clamped(text, p):
    """The suffix at *p* up to and including its first separator."""
    e = p
    while text[e] != 0:
        e += 1
    return text[p:e + 1].tolist()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_runs=st.integers(1, 40),
       alphabet=st.sampled_from([1, 2, 3, 300]), bits=st.integers(0, 3))
def test_run_suffix_array_sorts_up_to_the_separator(seed, n_runs, alphabet, bits):
    from repetend.phrases.templates.gapped_index import _run_suffix_array

    rng = np.random.default_rng(seed)
    pool = [rng.integers(1, alphabet + 1, size=int(rng.integers(1, 8))) for _ in range(4)]
    runs = [pool[int(rng.integers(0, 4))] if rng.random() < 0.7
            else rng.integers(1, alphabet + 1, size=int(rng.integers(1, 8)))
            for _ in range(n_runs)]
    seg_len = np.array([r.size for r in runs], dtype=np.int64)
    seg_cstart = np.concatenate(([0], np.cumsum(seg_len + 1)[:-1])).astype(np.int64)
    text = np.zeros(int((seg_len + 1).sum()), dtype=np.uint16 if alphabet > 255 else np.uint8)
    for c, r in zip(seg_cstart, runs):
        text[c:c + r.size] = r
    # the classes: equal runs, and only those, share one
    # a table just larger than the runs: long probes
    cls, reps = KI.run_classes(text, seg_cstart, seg_len,
                               np.int64(max(n_runs.bit_length(), 1) + bits))
    for a in range(n_runs):
        for b in range(n_runs):
            assert (cls[a] == cls[b]) == (runs[a].tolist() == runs[b].tolist())
    assert reps.tolist() == sorted({int(np.flatnonzero(cls == u)[0]) for u in set(cls)})
    for share in (0.5, 1.0):            # 1.0: expand whenever two runs are equal
        sa = _run_suffix_array(text, seg_cstart, seg_len, min(alphabet, 200), share)
        assert sorted(sa.tolist()) == list(range(text.size))
        keys = [_clamped(text, int(p)) for p in sa]
        assert keys == sorted(keys)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_runs=st.integers(1, 120), alphabet=st.integers(1, 4))
def test_expand_suffixes_matches_one_pass(seed, n_runs, alphabet):
    """The chunked expansion writes what one pass in order writes: every
    separator in text order, then each distinct suffix in every run of its
    class (distinct suffix arrays from 2 to several hundred entries, so the
    chunks hold from none to many)."""
    from repetend.phrases.templates.gapped_index import _suffix_array

    rng = np.random.default_rng(seed)
    pool = [rng.integers(1, alphabet + 1, size=int(rng.integers(1, 6))) for _ in range(5)]
    runs = [pool[int(rng.integers(0, 5))] for _ in range(n_runs)]
    seg_len = np.array([r.size for r in runs], dtype=np.int64)
    seg_cstart = np.concatenate(([0], np.cumsum(seg_len + 1)[:-1])).astype(np.int64)
    text = np.zeros(int((seg_len + 1).sum()), dtype=np.uint8)
    for c, r in zip(seg_cstart, runs):
        text[c:c + r.size] = r
    cls, reps = KI.run_classes(text, seg_cstart, seg_len, np.int64(8))
    dtext = np.empty(int(seg_len[reps].sum()) + reps.size, dtype=text.dtype)
    dstart, dclass, mem_off, mem_start = KI.distinct_runs(text, seg_cstart, seg_len, cls,
                                                         reps, dtext)
    dsa = _suffix_array(dtext)
    want = [int(c + n) for c, n in zip(seg_cstart, seg_len)]
    for x in dsa.tolist():
        u = int(dclass[x])
        if u >= 0:
            want += [int(p) + x - int(dstart[u]) for p in mem_start[mem_off[u]:mem_off[u + 1]]]
    got = KI.expand_suffixes(dsa, dclass, dstart, mem_off, mem_start, seg_cstart, seg_len,
                             np.int64(text.size))
    assert got.tolist() == want


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 30), vocab=st.integers(2, 12),
       sigma=st.integers(2, 4), filt=st.booleans())
def test_index_of_distinct_runs_mines_and_locates_as_a_full_sort(seed, n_docs, vocab, sigma,
                                                                filt):
    from dataclasses import replace

    from repetend.phrases.templates.gapped_index import (_mine_indexed, _run_suffix_array,
                                                         _suffix_array)

    rng = np.random.default_rng(seed)
    gap_id = vocab + 60
    t, t_off = _gapped(rng, n_docs, vocab, gap_id)
    if t.size == 0:
        return
    ix = _gapped_index(t, t_off, gap_id, sigma, 2 if filt else 1, filt)
    # the distinct-run sort whenever two runs are equal (max_distinct=1.0; the
    # default 0.5 mostly sorts the whole text here, as the reference does)
    ix = replace(ix, sa=_run_suffix_array(ix.text, ix.seg_cstart, ix.seg_len, 0, 1.0))
    full = replace(ix, sa=_suffix_array(ix.text))
    got, want = _mine_indexed(ix, n_docs, sigma, 2), _mine_indexed(full, n_docs, sigma, 2)
    for g, w in zip(got, want):
        assert g.tolist() == w.tolist()
    if filt:
        return
    t_doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(t_off))
    keys = [k for k in _keys(rng, t, t_off, gap_id, 10)
            if (ix.code[np.clip(k[k >= 0], 0, gap_id + 1)] > 0).all()]
    if keys:
        budget = np.full(len(keys), 5)
        (f1, s1), (f2, s2) = (_locate(x, t, t_doc, keys, gap_id, budget) for x in (ix, full))
        assert s1.tolist() == s2.tolist()
        assert [x.tolist() for x in f1] == [x.tolist() for x in f2]


def _naive_peel(t, occ_offsets, occ_starts, lengths, next_sentinel):
    """Every position of every occurrence in order, a fresh sentinel the first time."""
    t = t.copy()
    s = int(next_sentinel)
    for i in range(lengths.size):
        for k in range(int(occ_offsets[i]), int(occ_offsets[i + 1])):
            for p in range(int(occ_starts[k]), int(occ_starts[k]) + int(lengths[i])):
                if t[p] < next_sentinel:
                    t[p] = s
                    s += 1
    return t, s


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), n_phrases=st.integers(0, 6),
       period=st.integers(1, 5), ascending=st.booleans())
def test_peel_matches_naive_on_overlapping_occurrences(seed, n, n_phrases, period, ascending):
    # periodic text: a phrase's occurrences overlap (every period), the case the
    # skip over already peeled prefixes is for; unsorted occurrences too
    rng = np.random.default_rng(seed)
    first = 50
    t = np.resize(rng.integers(0, 8, period), n).astype(np.int32)
    t[rng.random(n) < 0.05] = first + 7        # sentinels of an earlier round
    lengths = rng.integers(1, max(2, n // 2), n_phrases).astype(np.int64)
    occ = [np.sort(rng.choice(n - int(m) + 1, rng.integers(1, 12), replace=True))
           if m <= n else np.zeros(0, np.int64) for m in lengths]
    if not ascending:
        occ = [rng.permutation(x) for x in occ]
    occ_offsets = np.zeros(n_phrases + 1, np.int64)
    occ_offsets[1:] = np.cumsum([x.size for x in occ])
    occ_starts = np.concatenate(occ).astype(np.int64) if occ else np.zeros(0, np.int64)
    want, want_s = _naive_peel(t, occ_offsets, occ_starts, lengths, np.int32(first + 100))
    got = t.copy()
    got_s = KI.peel(got, occ_offsets, occ_starts, lengths, np.int32(first + 100))
    assert int(got_s) == want_s
    np.testing.assert_array_equal(got, want)
