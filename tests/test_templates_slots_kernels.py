"""Oracle tests of the template layer's slot and pattern kernels
(:mod:`repetend.phrases.templates._kernels_slots`,
:mod:`repetend.phrases.templates._kernels_patterns`): each compared with a
slow, obviously correct numpy/Python reference on random small inputs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from repetend.phrases.templates import _kernels_patterns as KT
from repetend.phrases.templates import _kernels_slots as KS

GAP, NUM = 50, 49


def _gapped(rng, n_docs):
    """A random gapped sequence over a random corpus: per document a few
    gapped positions, each covering 1-3 corpus tokens (``t_start``/``t_end``)
    after a 0-2 token stretch, and the document of each position."""
    t_off = np.zeros(n_docs + 1, dtype=np.int64)
    doc_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    t_start, t_end = [], []
    pos = 0
    for d in range(n_docs):
        n = int(rng.integers(0, 12))
        for _ in range(n):
            pos += int(rng.integers(0, 3))
            t_start.append(pos)
            pos += int(rng.integers(1, 4))
            t_end.append(pos)
        pos += int(rng.integers(0, 3))
        t_off[d + 1] = t_off[d] + n
        doc_offsets[d + 1] = pos
    t_doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(t_off))
    return t_off, np.array(t_start, np.int64), np.array(t_end, np.int64), t_doc, doc_offsets


def _patterns(rng, t_off, n_keys):
    """Random patterns (lengths) and their occurrences: increasing gapped
    positions whose whole length lies inside one document."""
    klen = rng.integers(1, 5, size=n_keys).astype(np.int64)
    found = []
    for k in range(n_keys):
        ok = [p for d in range(t_off.size - 1)
              for p in range(int(t_off[d]), int(t_off[d + 1]) - int(klen[k]) + 1)]
        take = rng.random(len(ok)) < 0.5
        found.append(np.array([p for p, y in zip(ok, take) if y], dtype=np.int64))
    return klen, found


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 6), n_keys=st.integers(0, 6))
def test_kept_occurrences_matches_naive(seed, n_docs, n_keys):
    rng = np.random.default_rng(seed)
    t_off, t_start, t_end, t_doc, doc_offsets = _gapped(rng, n_docs)
    klen, found = _patterns(rng, t_off, n_keys)
    keep = rng.random(n_keys) < 0.6
    kept = np.flatnonzero(keep)
    n_occ = np.array([x.size if keep[k] else 0 for k, x in enumerate(found)], dtype=np.int64)
    off = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum(n_occ, out=off[1:])
    q = np.concatenate([found[k] for k in kept] + [np.zeros(0, np.int64)])
    starts, ends, docs, doc_len = KS.kept_occurrences(q, off, kept, klen, t_start, t_end,
                                                      t_doc, doc_offsets)
    want_s, want_e, want_d = [], [], []
    for k in kept:
        for p in found[k]:
            want_s.append(t_start[p])
            want_e.append(t_end[p + klen[k] - 1])
            want_d.append(np.searchsorted(doc_offsets, t_start[p], side="right") - 1)
    assert starts.tolist() == want_s and ends.tolist() == want_e
    assert docs.tolist() == want_d
    assert doc_len.tolist() == [int(doc_offsets[d + 1] - doc_offsets[d]) for d in want_d]


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_keys=st.integers(0, 8), num=st.booleans())
def test_slot_positions_matches_naive(seed, n_keys, num):
    rng = np.random.default_rng(seed)
    num_id = NUM if num else -1
    keys = [rng.choice(np.array([-1, 1, 2, 3, NUM, GAP], np.int32), size=int(rng.integers(1, 9)))
            for _ in range(n_keys)]
    who = np.sort(rng.choice(100, size=n_keys, replace=False)).astype(np.int64)
    k_off = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum([k.size for k in keys], out=k_off[1:])
    flat = np.concatenate(keys + [np.zeros(0, np.int32)]).astype(np.int32)
    sl_key, sl_pos = KS.slot_positions(flat, k_off, who, np.int32(GAP), np.int32(num_id))
    want = [(int(who[i]), j) for i, k in enumerate(keys) for j in range(k.size)
            if k[j] == GAP or k[j] == num_id or k[j] < 0]
    assert list(zip(sl_key.tolist(), sl_pos.tolist())) == want


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_keys=st.integers(1, 6))
def test_example_picks_matches_lexsort(seed, n_keys):
    rng = np.random.default_rng(seed)
    n_occ = rng.integers(0, 8, size=n_keys)
    n_occ[rng.random(n_keys) < 0.2] = 0
    off = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum(n_occ, out=off[1:])
    n_slots = rng.integers(0, 4, size=n_keys)
    n_slots[n_occ == 0] = 0
    sl_key = np.repeat(np.arange(n_keys, dtype=np.int64), n_slots)
    sl_off = np.zeros(sl_key.size + 1, dtype=np.int64)
    np.cumsum(n_occ[sl_key], out=sl_off[1:])
    ss = rng.integers(0, 5, size=int(sl_off[-1])).astype(np.int64)
    se = ss + rng.integers(0, 2, size=ss.size)
    variable = rng.random(sl_key.size) < 0.7
    starts = np.concatenate([np.sort(rng.choice(1000, size=int(n), replace=False))
                             for n in n_occ]).astype(np.int64)
    doc_len = rng.integers(1, 4, size=starts.size).astype(np.int64)
    occ_empty = np.zeros(starts.size, dtype=np.bool_)
    half = sl_key.size // 2   # two batches of slots: the flags accumulate
    KS.mark_empty_occurrences(occ_empty, off, sl_key[:half], sl_off[:half + 1], ss, se,
                              variable[:half])
    KS.mark_empty_occurrences(occ_empty, off, sl_key[half:], sl_off[half:] - sl_off[half],
                              ss[sl_off[half]:], se[sl_off[half]:], variable[half:])
    pick = KS.example_picks(off, sl_key, occ_empty, doc_len, starts, np.int64(n_keys))
    for k in range(n_keys):
        mine = np.flatnonzero(sl_key == k)
        if mine.size == 0:
            assert pick[k] == -1
            continue
        a, b = int(off[k]), int(off[k + 1])
        nonempty = np.ones(b - a, dtype=bool)
        for s in mine:
            if variable[s]:
                nonempty &= se[sl_off[s]:sl_off[s + 1]] > ss[sl_off[s]:sl_off[s + 1]]
        order = np.lexsort((starts[a:b], doc_len[a:b], ~nonempty))
        assert pick[k] == a + int(order[0])


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300), card=st.integers(1, 20))
def test_select_matches_sort(seed, n, card):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, card, size=n).astype(np.int64)
    for k in sorted({0, n // 2, n - 1}):
        if 0 <= k < n:
            b = a.copy()
            assert KT._select(b, np.int64(n), np.int64(k)) == np.sort(a)[k]
            assert sorted(b.tolist()) == sorted(a.tolist())


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 6), n_keys=st.integers(0, 6))
def test_pattern_stats_matches_naive(seed, n_docs, n_keys):
    rng = np.random.default_rng(seed)
    t_off, t_start, t_end, t_doc, _ = _gapped(rng, n_docs)
    klen, found = _patterns(rng, t_off, n_keys)
    off = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum([x.size for x in found], out=off[1:])
    q = np.concatenate(found + [np.zeros(0, np.int64)])
    med, df = KT.pattern_stats(q, off, klen, t_start, t_end, t_doc)
    for k, x in enumerate(found):
        if x.size == 0:
            assert med[k] == 0 and df[k] == 0
            continue
        spans = np.sort(t_end[x + klen[k] - 1] - t_start[x])
        assert med[k] == spans[x.size // 2]
        assert df[k] == np.unique(t_doc[x]).size


def _naive_pairs(q, key, klen, t_doc, short, t, gap_id, n_keys, d_max):
    out = []
    for a in range(q.size):
        for b in range(a + 1, q.size):
            ka, kb = int(key[a]), int(key[b])
            la, d = int(klen[ka]), int(q[b] - q[a])
            if q[b] > q[a] + la + 1:
                break
            if d >= 1 and d + klen[kb] > la and t_doc[q[b]] == t_doc[q[a]] \
                    and (short[ka] or short[kb]) and (d <= la or t[q[a] + la] == gap_id):
                out.append((a, ((ka * n_keys + kb) * d_max + d, int(q[a]), int(t_doc[q[a]]))))
    return out


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 5), n_keys=st.integers(1, 7),
       cap=st.integers(1, 5))
def test_pair_groups_matches_naive(seed, n_docs, n_keys, cap):
    rng = np.random.default_rng(seed)
    t_off, _, _, t_doc, _ = _gapped(rng, n_docs)
    klen, found = _patterns(rng, t_off, n_keys)
    t = rng.choice(np.array([1, 2, GAP], np.int32), size=t_doc.size + 1)
    short = rng.random(n_keys) < 0.6
    off = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum([x.size for x in found], out=off[1:])
    q, key = KT.by_position(np.concatenate(found + [np.zeros(0, np.int64)]), off)
    want_q = sorted((int(p), k) for k, x in enumerate(found) for p in x)
    assert list(zip(q.tolist(), key.tolist())) == want_q
    d_max = int(klen.max()) + 2
    args = (q, key, klen, t_doc, short, t, np.int32(GAP), np.int64(n_keys), np.int64(d_max))
    naive = _naive_pairs(*args)
    want = [w for _, w in naive]
    code, pos, doc = KT.pair_groups(*args)
    assert list(zip(code.tolist(), pos.tolist(), doc.tolist())) == want
    # tiny buffers: an occurrence whose pairs do not fit is redone, not split
    bufs = (np.empty(cap, np.uint64), np.empty(cap, np.int64), np.empty(cap, np.int32))
    a, cnt = KT._emit_pairs(*args, 0, 0, *bufs)
    assert cnt <= cap and (a == q.size) == (len(want) <= cap)
    done = [w for i, w in naive if i < a]
    assert list(zip(*(b[:cnt].tolist() for b in bufs))) == done
    # counted per pattern A, then emitted a range of patterns at a time
    counts = KT.pair_counts(*args[:-1])
    a_of = (code // np.uint64(d_max) // np.uint64(n_keys)).astype(np.int64)
    assert counts.tolist() == np.bincount(a_of, minlength=n_keys).tolist()
    cut = int(rng.integers(0, n_keys + 1))
    for lo, hi in ((0, cut), (cut, n_keys)):
        got = KT.pair_range(*args, np.int64(lo), np.int64(hi), np.int64(counts[lo:hi].sum()))
        assert list(zip(*(g.tolist() for g in got))) == [
            w for w, k in zip(want, a_of.tolist()) if lo <= k < hi]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 3000), bits=st.sampled_from([4, 20, 64]))
def test_radix_argsort_matches_stable_argsort(seed, n, bits):
    rng = np.random.default_rng(seed)
    h = rng.integers(0, 2**63, size=n, dtype=np.uint64) >> np.uint64(64 - bits)
    if bits == 64:
        h = h * np.uint64(3)                      # the top bit too
    got, order = KT._radix_argsort(h)
    want = np.argsort(h, kind="stable")
    assert order.tolist() == want.tolist() and got.tolist() == h[want].tolist()
    # values only, in place (the packed occurrences of by_position)
    assert KT._radix_sort(h.copy()).tolist() == np.sort(h).tolist()


def _naive_siblings(keys, width, fixed_below):
    parent = list(range(len(keys)))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for x in range(len(keys)):
        for y in range(x + 1, len(keys)):
            a, b = keys[x], keys[y]
            if a.size != b.size:
                continue
            m = a.size
            for k in range(1, width + 1):
                for j in range(1, m - k):
                    out = np.ones(m, bool)
                    out[j:j + k] = False
                    fixed = all(0 <= v < fixed_below for v in np.concatenate((a[j:j + k],
                                                                               b[j:j + k])))
                    if fixed and np.array_equal(a[out], b[out]):
                        rx, ry = find(x), find(y)
                        parent[max(rx, ry)] = min(rx, ry)
    return [find(i) for i in range(len(keys))]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_keys=st.integers(0, 12), width=st.integers(1, 3))
def test_sibling_groups_matches_naive(seed, n_keys, width):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 4, size=6).astype(np.int32)
    keys = []
    for _ in range(n_keys):                       # variations of a few shapes
        k = base[:int(rng.integers(3, 7))].copy()
        flip = rng.random(k.size) < 0.3
        k[flip] = rng.choice(np.array([0, 1, 2, 3, GAP], np.int32), size=int(flip.sum()))
        keys.append(k)
    k_off = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum([k.size for k in keys], out=k_off[1:])
    flat = np.concatenate(keys + [np.zeros(0, np.int32)]).astype(np.int32)
    root = KT.sibling_groups(flat, k_off, np.int64(width), np.int32(GAP))
    assert root.tolist() == _naive_siblings(keys, width, GAP)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_keys=st.integers(1, 6),
       huge=st.booleans(), per=st.integers(0, 40))
def test_by_position_packed_and_argsort_paths_match_sorted_pairs(seed, n_keys, huge, per):
    # positions so large that position × patterns overflows take the argsort path
    rng = np.random.default_rng(seed)
    hi = 2**62 if huge else 50
    found = [np.unique(rng.integers(0, hi, size=int(rng.integers(0, per + 1)), dtype=np.int64))
             for _ in range(n_keys)]
    off = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum([x.size for x in found], out=off[1:])
    q, key = KT.by_position(np.concatenate(found + [np.zeros(0, np.int64)]), off)
    want = sorted((int(p), k) for k, x in enumerate(found) for p in x)
    assert list(zip(q.tolist(), key.tolist())) == want
