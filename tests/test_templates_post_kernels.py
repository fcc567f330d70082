"""Compiled parts of the template post-passes against their numpy twins.

``nearest_classes`` (heads and tails, :func:`repetend.phrases.templates.ends.
_best_class`) replaced a sort-based numpy pass; that pass is kept here as the
oracle and both are compared on random inputs (ties in units, distances and
classes are frequent by construction)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from repetend.phrases.templates import _kernels_variants as KV


def _nearest_classes_numpy(tid, unit, cls, valid, n):
    """The numpy pass the kernel replaced (sorts over all occurrences)."""
    m, w = cls.shape
    occ = np.repeat(np.arange(m, dtype=np.int64), w)
    kk = np.tile(np.arange(w, dtype=np.int64), m)
    v = valid.ravel()
    occ, kk, cl = occ[v], kk[v], cls.ravel()[v]
    key = (occ << np.int64(32)) | (cl + 8)
    o = np.argsort(key, kind="stable")
    occ, kk, cl = occ[o], kk[o], cl[o]
    first = np.ones(occ.size, dtype=bool)
    first[1:] = (occ[1:] != occ[:-1]) | (cl[1:] != cl[:-1])
    occ, kk, cl = occ[first], kk[first], cl[first]
    t, u = tid[occ], unit[occ]
    o = np.lexsort((u, (t << np.int64(32)) | (cl + 8)))
    t, cl_s, u_s, occ_s, kk_s = t[o], cl[o], u[o], occ[o], kk[o]
    new_pair = np.ones(t.size, dtype=bool)
    new_pair[1:] = (t[1:] != t[:-1]) | (cl_s[1:] != cl_s[:-1])
    new_unit = new_pair.copy()
    new_unit[1:] |= u_s[1:] != u_s[:-1]
    pair_id = np.cumsum(new_pair) - 1
    docs = np.bincount(pair_id, weights=new_unit, minlength=int(pair_id[-1]) + 1 if
                       pair_id.size else 0).astype(np.int64)
    ksum = np.bincount(pair_id, weights=kk_s, minlength=docs.size)
    starts = np.flatnonzero(new_pair)
    p_t, p_cl = t[starts], cl_s[starts]
    cnt = np.bincount(pair_id, minlength=docs.size)
    mean_k = ksum / np.maximum(cnt, 1)
    o = np.lexsort((p_cl, mean_k, -docs, p_t))
    best = np.full(n, -1, dtype=np.int64)
    best_cls = np.zeros(n, dtype=np.int64)
    best_docs = np.zeros(n, dtype=np.int64)
    head_of = np.ones(o.size, dtype=bool)
    head_of[1:] = p_t[o][1:] != p_t[o][:-1]
    sel = o[head_of]
    best[p_t[sel]] = sel
    best_cls[p_t[sel]] = p_cl[sel]
    best_docs[p_t[sel]] = docs[sel]
    dist = np.full(m, -1, dtype=np.int64)
    chosen = best[t] == pair_id
    dist[occ_s[chosen]] = kk_s[chosen]
    return best_cls, best_docs, dist


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 6), st.integers(1, 80), st.integers(1, 6),
       st.integers(1, 8), st.booleans(), st.floats(0.0, 1.0))
def test_nearest_classes_equal_the_numpy_pass(seed, n, m, w, n_cls, sorted_tid, p_valid):
    rng = np.random.default_rng(seed)
    tid = rng.integers(0, n, m).astype(np.int64)
    if sorted_tid:                      # as extend_ends lays them out
        tid.sort()
    unit = rng.integers(0, max(1, m // 3), m).astype(np.int64)
    cls = rng.integers(-3, n_cls, (m, w)).astype(np.int64)
    cls[cls == -2] = -3                 # the number class and token ids
    cls[cls == -1] = 10**6
    valid = rng.random((m, w)) < p_valid
    got = KV.nearest_classes(tid, unit, cls, valid, np.int64(n))
    want = _nearest_classes_numpy(tid, unit, cls, valid, n)
    for a, b in zip(got, want):
        assert np.array_equal(a, b)


def test_nearest_classes_mean_distance_then_class_break_ties():
    # template 0: classes 7 and 5 both in two documents; 7 nearer on average
    tid = np.zeros(4, np.int64)
    unit = np.array([0, 0, 1, 1], np.int64)
    cls = np.array([[7, 5], [5, 7], [7, 5], [7, 5]], np.int64)
    valid = np.ones((4, 2), bool)
    best_cls, best_docs, dist = KV.nearest_classes(tid, unit, cls, valid, np.int64(2))
    assert best_cls.tolist() == [7, 0] and best_docs.tolist() == [2, 0]
    assert dist.tolist() == [0, 1, 0, 0]
    # equal means: the smaller class
    cls = np.array([[7, 5], [5, 7], [7, 5], [5, 7]], np.int64)
    best_cls, _, dist = KV.nearest_classes(tid, unit, cls, valid, np.int64(2))
    assert best_cls.tolist() == [5, 0] and dist.tolist() == [1, 0, 1, 0]


def test_vocab_maps_give_each_word_its_first_id():
    import pyarrow as pa
    import pyarrow.compute as pc

    from repetend.phrases.templates.corpus import _Corpus
    from repetend.phrases.templates.variants import _vocab_maps

    vocab = ["a", "b", "12", "a", "c", "b", "x y", "3"]
    c = _Corpus(np.zeros(1, np.int32), np.array([0, 1]), vocab, ["d"], None)
    parts = [["a b", "▢", "12 c"], ["zz b", "▢"], ["▢", "3"]]
    word_id, is_num = _vocab_maps(c, parts)
    need = sorted({w for ps in parts for p in ps if p != "▢" for w in p.split(" ")})
    idx = pc.index_in(pa.array(need, pa.string()),
                      value_set=pa.array(vocab, pa.string())).to_pylist()
    assert word_id == {w: i for w, i in zip(need, idx) if i is not None}
    assert word_id == {"a": 0, "b": 1, "12": 2, "c": 4, "3": 7}
    assert is_num[:len(vocab)].tolist() == [0, 0, 1, 0, 0, 0, 0, 1]
    from repetend.phrases.templates.parts import _number_mask

    assert np.array_equal(_number_mask(c), _number_mask(vocab))
    assert _number_mask(c) is _number_mask(c)            # built once per corpus


def test_slot_kinds_equal_the_rows():
    from repetend.phrases.templates import TemplateConfig, find_templates
    from repetend.phrases.templates.variants import _slot_kinds

    rng = np.random.default_rng(3)
    docs = []
    for i in range(30):
        body = list(rng.integers(1000, 10**6, 15))
        docs.append(body + [1, 2, 3, 4, 50 + i % 7, 5, 6, 7, 8, 900 + i, 901 + i, 9, 10, 11, 12]
                    + body[:3])
    toks = np.array(sum(docs, []), dtype=np.int32)
    offs = np.cumsum([0] + [len(d) for d in docs])
    res = find_templates((toks, offs), None, 5, 4, TemplateConfig(part_len=4))
    assert res.table.num_rows
    for t in (res.table, res.table.slice(1), res.table.slice(0, 0)):
        rows = [[s["kind"] for s in sl] for sl in t.column("slots").to_pylist()]
        assert _slot_kinds(t) == rows


def _window_numpy(tokens, is_num, gs, ge, doc_lo, doc_hi, head, g, stop):
    """The numpy pass ``window_classes`` replaced (dense (m, g + 1) arrays of
    positions and lookups)."""
    ks = np.arange(g + 1, dtype=np.int64)
    pos = (gs[:, None] - 1 - ks[None, :]) if head else (ge[:, None] + ks[None, :])
    valid = (pos >= doc_lo[:, None]) & (pos < doc_hi[:, None])
    if stop is not None:
        back, reach, L = stop
        cp = np.clip(pos, 0, tokens.size - 1)
        if head:
            valid &= ~((back[cp] <= cp) & (gs[:, None] - back[cp] >= L))
        else:
            valid &= ~((reach[cp] > cp) & (reach[cp] - ge[:, None] >= L))
    tok = tokens[np.clip(pos, 0, tokens.size - 1)].astype(np.int64)
    cls = np.where(is_num[tok] != 0, -3, tok)
    return cls, valid


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 40), st.integers(0, 5), st.booleans(),
       st.integers(0, 30), st.integers(1, 6))
def test_window_classes_equal_the_numpy_pass(seed, m, g, head, n_phr, min_len):
    from repetend.phrases.templates.ends import _Back, _Reach

    rng = np.random.default_rng(seed)
    n_tok = 200
    tokens = rng.integers(0, 12, n_tok).astype(np.int32)
    is_num = (rng.random(14) < 0.3).astype(np.uint8)
    offsets = np.unique(np.concatenate(([0, n_tok], rng.integers(0, n_tok, 6))))
    d = rng.integers(0, offsets.size - 1, m)
    doc_lo, doc_hi = offsets[d].astype(np.int64), offsets[d + 1].astype(np.int64)
    gs = np.minimum(doc_lo + rng.integers(0, 30, m), doc_hi - 1)
    ge = np.minimum(gs + rng.integers(1, 12, m), doc_hi)
    stop = None
    if n_phr:
        rs = rng.integers(0, n_tok - 1, n_phr).astype(np.int64)
        re_ = np.minimum(rs + rng.integers(1, 15, n_phr), n_tok)
        stop = (_Back(rs, re_), _Reach(rs, re_), min_len)
        lk = stop[0] if head else stop[1]
        keys, vals = (lk._e, lk._m) if head else (lk._s, lk._m)
    else:
        keys = vals = np.zeros(0, np.int64)
    cls, valid = KV.window_classes(tokens, is_num, gs, ge, doc_lo, doc_hi, head, np.int64(g),
                                   keys, vals, stop is not None, np.int64(min_len),
                                   np.int64(-3))
    want_cls, want_valid = _window_numpy(tokens, is_num, gs, ge, doc_lo, doc_hi, head, g, stop)
    assert np.array_equal(valid, want_valid)
    assert np.array_equal(cls[valid], want_cls[want_valid])


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 8), st.integers(1, 4))
def test_constant_slots_equal_one_distinct_hash(seed, n_pat, n_vals):
    from repetend.phrases.templates import _kernels_slots as KS

    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, n_vals, 300).astype(np.int32)
    n_t = 100
    t_start = np.sort(rng.integers(0, 290, n_t)).astype(np.int64)
    t_end = t_start + rng.integers(0, 3, n_t)
    n_occ = rng.integers(0, 6, n_pat)
    off = np.concatenate(([0], np.cumsum(n_occ))).astype(np.int64)
    q = rng.integers(0, n_t - 4, int(off[-1])).astype(np.int64)
    sl_key = np.repeat(np.arange(n_pat, dtype=np.int64), 3)
    sl_pos = np.tile(np.arange(3, dtype=np.int64), n_pat)
    const, fss, fse = KS.constant_slots(tokens, q, off, sl_key, sl_pos, t_start, t_end)
    sl_off = np.concatenate(([0], np.cumsum(n_occ[sl_key]))).astype(np.int64)
    ss, se = KS.slot_ranges(q, off, sl_key, sl_pos, sl_off, t_start, t_end)
    h = KS.value_hashes(tokens, ss, se)
    for s in range(sl_key.size):
        a, b = sl_off[s], sl_off[s + 1]
        assert const[s] == (b > a and np.unique(h[a:b]).size == 1)
        if b > a:
            assert (fss[s], fse[s]) == (ss[a], se[a])


def test_slot_stats_of_non_templates_cut_short_give_the_same_tables(monkeypatch):
    # number tables (patterns of number slots only: never templates) beside
    # real templates; counting every slot whole must give the same tables
    import repetend.phrases.templates.find as F
    from repetend.phrases.templates import TemplateConfig, find_templates

    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(2000)] + [str(i) for i in range(300)]
    num = lambda: 2000 + int(rng.integers(0, 300))  # noqa: E731
    docs = []
    for i in range(40):
        body = [int(x) for x in rng.integers(0, 2000, 20)]
        table = [num() for _ in range(12)]
        block = [1, 2, 3, num(), 4, 5, int(rng.integers(600, 700)), 6, 7, 8, 9]
        const_slot = [11, 12, num(), 13, 14, 2299, 15, 16, 17]
        docs.append(body + table + body[:5] + block + body[5:9] + const_slot + body[9:])
    toks = np.array(sum(docs, []), dtype=np.int32)
    offs = np.cumsum([0] + [len(d) for d in docs])
    cfg = TemplateConfig(part_len=3, min_fixed=4)
    res = find_templates((toks, offs, vocab), None, 5, 4, cfg)
    assert res.table.num_rows
    orig = F._slot_stats

    def whole(*a, **k):
        k["min_fixed"] = None
        return orig(*a, **k)

    monkeypatch.setattr(F, "_slot_stats", whole)
    res2 = find_templates((toks, offs, vocab), None, 5, 4, cfg)
    assert res.table.equals(res2.table) and res.occurrences.equals(res2.occurrences)
