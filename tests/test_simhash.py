"""SimHash: fingerprints against a Python twin, Hamming tables against brute force, the method end to end."""

from __future__ import annotations

import json
import warnings
from math import comb

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_neardup import naive_pairs, pairs_as_dict, sets_as_python, sets_from_python
from repetend.cli import main
from repetend.corpus.store import TokenStore
from repetend.errors import ParameterError
from repetend.neardup import find_near_duplicates, shingle_sets, token_hashes
from repetend.neardup.shingles import ShingleSets
from repetend.neardup.simhash import (
    DEFAULT_SIMHASH_SEED,
    SimHashRecallWarning,
    check_threshold,
    hamming_candidates,
    hamming_distance,
    simhash_fingerprints,
    simhash_recall,
    simhash_tables,
)

M64 = (1 << 64) - 1


def py_splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def py_simhash(features: dict[int, int], seed: int = DEFAULT_SIMHASH_SEED) -> int:
    """Charikar's fingerprint, bit by bit: features {hash: weight}."""
    v = [0] * 64
    for h, w in features.items():
        g = py_splitmix64(h ^ seed)
        for b in range(64):
            v[b] += w if (g >> b) & 1 else -w
    return sum(1 << b for b in range(64) if v[b] > 0)


def brute_pairs(fps, k, valid=None):
    n = len(fps)
    ok = [True] * n if valid is None else list(valid)
    return {(i, j) for i in range(n) for j in range(i + 1, n)
            if ok[i] and ok[j] and bin(int(fps[i]) ^ int(fps[j])).count("1") <= k}


def random_fps_with_planted(rng, n, k, n_planted):
    fps = rng.integers(0, 2**63, size=n, dtype=np.int64).astype(np.uint64) * np.uint64(2) \
        + rng.integers(0, 2, size=n).astype(np.uint64)
    for _ in range(n_planted):                       # copies within distance 0..k+1 (edge included)
        src = int(rng.integers(0, n))
        dst = int(rng.integers(0, n))
        flips = rng.choice(64, size=int(rng.integers(0, k + 2)), replace=False)
        x = int(fps[src])
        for f in flips:
            x ^= 1 << int(f)
        fps[dst] = np.uint64(x)
    return fps


# -- candidate stage: every pair within k, each once --------------------------------------

@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 120), k=st.integers(0, 7),
       extra_blocks=st.sampled_from([None, 0, 1, 3]), masked=st.booleans())
def test_hamming_candidates_equal_brute_force(seed, n, k, extra_blocks, masked):
    rng = np.random.default_rng(seed)
    fps = random_fps_with_planted(rng, n, k, n_planted=n // 2)
    if n > 4:                                        # a run of identical fingerprints
        fps[: n // 5] = fps[0]
    valid = rng.random(n) < 0.8 if masked else None
    blocks = None if extra_blocks is None else k + 1 + extra_blocks
    hc = hamming_candidates(fps, k, valid=valid, blocks=blocks)
    got = list(zip(hc.a.tolist(), hc.b.tolist()))
    assert len(got) == len(set(got)), "a pair was emitted by two tables"
    assert all(a < b for a, b in got)
    assert set(got) == brute_pairs(fps, k, valid)
    assert hc.stats["pairs_within_k"] == len(got)


def test_hamming_candidates_low_bit_density_and_big_k():
    """Fingerprints that differ only in one block region stress the table choice."""
    rng = np.random.default_rng(7)
    base = np.uint64(0xDEADBEEF12345678)
    fps = np.array([base ^ np.uint64(int(x)) for x in rng.integers(0, 1 << 12, size=300)], dtype=np.uint64)
    for k in (3, 6, 10):
        hc = hamming_candidates(fps, k)
        assert set(zip(hc.a.tolist(), hc.b.tolist())) == brute_pairs(fps, k)


def test_table_design():
    for k in range(0, 9):
        for n in (10, 10**5, 10**8):
            d = simhash_tables(k, n)
            assert d.n_tables == comb(d.blocks, k)
            assert all(len(c) == d.blocks - k for c in d.combos)
            masks = [int(m) for m in d.block_masks]
            assert sum(masks) == M64 and all(a & b == 0 for i, a in enumerate(masks) for b in masks[i + 1:])
    assert simhash_tables(3, 1000).blocks == 4
    assert simhash_tables(3, 10**7).n_tables > 4              # longer keys for big corpora
    with pytest.raises(ParameterError):
        simhash_tables(3, 10, blocks=3)
    with pytest.raises(ParameterError):
        simhash_tables(40, 10)


def test_hamming_distance_matches_bit_count():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2**63, size=200, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    y = rng.integers(0, 2**63, size=200, dtype=np.int64).astype(np.uint64)
    want = [bin(int(a) ^ int(b)).count("1") for a, b in zip(x, y)]
    assert hamming_distance(x, y).tolist() == want


# -- fingerprints against the Python twin ---------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(sets=st.lists(st.sets(st.integers(0, 2**64 - 1), max_size=12), max_size=8))
def test_binary_fingerprints_match_python(sets):
    ss = sets_from_python(sets)
    fps = simhash_fingerprints(ss)
    assert [int(f) for f in fps] == [py_simhash({h: 1 for h in s}) for s in sets]


def test_count_fingerprints_weigh_repeated_shingles():
    rng = np.random.default_rng(2)
    words = ["w%d" % i for i in range(6)]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(0, 25)))) for _ in range(25)] + ["w1"]
    store = TokenStore.from_texts(texts)
    th = token_hashes(store.vocab)
    k = 2
    fps = simhash_fingerprints(weights="count", tokens=store.tokens, doc_offsets=store.doc_offsets,
                               tok_hash=th, k=k)
    sets = shingle_sets(store.tokens, store.doc_offsets, th, k)
    for d in range(store.n_docs):
        # shingle counts from per-window singleton sets (each window's hash via the library's own shingler)
        toks = store.doc_tokens(d)
        n = len(toks)
        starts = range(n - k + 1) if n >= k else ([0] if n else [])
        width = k if n >= k else n
        counts: dict[int, int] = {}
        for s in starts:
            one = shingle_sets(toks[s:s + width], np.array([0, width], np.int64), th, width)
            h = int(one.hashes[0])
            counts[h] = counts.get(h, 0) + 1
        assert set(counts) == set(int(x) for x in sets.of(d))
        assert int(fps[d]) == py_simhash(counts), d


def test_fingerprint_distance_follows_the_angle():
    """Charikar: P[bit differs] = θ/π with θ the angle of the (binary) feature vectors."""
    rng = np.random.default_rng(9)
    common = set(rng.integers(0, 2**62, size=300).tolist())
    a = common | set(rng.integers(0, 2**62, size=100).tolist())
    b = common | set(rng.integers(0, 2**62, size=100).tolist())
    ss = sets_from_python([a, b])
    cos = len(a & b) / np.sqrt(len(a) * len(b))
    p = np.arccos(cos) / np.pi
    seeds = range(300)
    d = np.array([hamming_distance(*simhash_fingerprints(ss, seed=s))[0] for s in seeds], dtype=float)
    # 300 × 64 bit trials (bits of one fingerprint are not independent: loose 6-sigma band)
    sd = np.sqrt(64 * p * (1 - p) / len(seeds))
    assert abs(d.mean() - 64 * p) < 6 * sd * 2


# -- the method end to end -------------------------------------------------------------------

def planted_sets(rng, n_base=50, size=150, n_copies=30, edits=3):
    py = [set(rng.integers(0, 2**62, size=size).tolist()) for _ in range(n_base)]
    for i in range(n_copies):
        src = sorted(py[i % n_base])
        keep = rng.permutation(len(src))[edits:]
        py.append({src[j] for j in keep} | set(rng.integers(0, 2**62, size=edits).tolist()))
    py += [py[0].copy(), set()]
    return py


@pytest.mark.parametrize("k", [0, 3, 8])
def test_simhash_method_is_verified_and_complete_on_its_candidates(k):
    rng = np.random.default_rng(k)
    py = planted_sets(rng)
    ss = sets_from_python(py)
    with pytest.warns(SimHashRecallWarning):          # k <= 8 cannot reach J = 0.8
        r = find_near_duplicates(ss, method="simhash", threshold=0.8, hamming=k)
    fps = simhash_fingerprints(ss)
    valid = [bool(s) for s in py]
    truth = naive_pairs(py, 0.8)
    within = brute_pairs(fps, k, valid)
    assert pairs_as_dict(r.pairs) == {p: v for p, v in truth.items() if p in within}
    assert set(zip(r.candidates.a.tolist(), r.candidates.b.tolist())) == within
    assert (0, len(py) - 2) in pairs_as_dict(r.pairs)          # the identical copy: distance 0
    assert np.isnan(r.candidate_estimate).all()
    assert r.summary["simhash"]["hamming"] == k


def test_simhash_recall_on_close_copies_grows_with_k():
    rng = np.random.default_rng(1)
    py = planted_sets(rng, edits=2)
    ss = sets_from_python(py)
    truth = naive_pairs(py, 0.9)
    found = []
    for k in (0, 3, 8):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SimHashRecallWarning)   # k = 0 and 3 warn at J = 0.9
            r = find_near_duplicates(ss, method="simhash", threshold=0.9, hamming=k)
        found.append(len(set(pairs_as_dict(r.pairs)) & set(truth)))
    assert found == sorted(found) and found[-1] >= 0.9 * len(truth)


def test_simhash_count_weights_need_a_store_and_run_on_one():
    ss = sets_from_python([{1, 2, 3}, {1, 2, 3}])
    with pytest.raises(ParameterError, match="TokenStore"):
        find_near_duplicates(ss, method="simhash", simhash_weights="count", threshold=0.98)
    store = TokenStore.from_texts(["a b c d e f a b c", "a b c d e f a b c", "x y z"])
    r = find_near_duplicates(store, method="simhash", simhash_weights="count", shingle=2,
                             threshold=0.98)
    assert pairs_as_dict(r.pairs).keys() == {(0, 1)}


@pytest.mark.parametrize("kwargs", [dict(hamming=-1), dict(hamming=33), dict(simhash_blocks=2),
                                    dict(simhash_weights="tf")])
def test_simhash_parameter_errors(kwargs):
    ss = sets_from_python([{1, 2}])
    with pytest.raises(ParameterError):
        find_near_duplicates(ss, method="simhash", **kwargs)


def test_cli_simhash(tmp_path):
    rng = np.random.default_rng(1)
    words = ["".join(rng.choice(list("abcdefghij"), size=6)) for _ in range(2000)]
    docs = [" ".join(rng.choice(words, size=120)) for _ in range(40)]
    docs += [d + " tail" for d in docs[:5]]
    path = tmp_path / "c.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i, d in enumerate(docs):
            f.write(json.dumps({"id": f"doc{i}", "text": d}) + "\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["dups", str(path), "--out", str(out), "-q", "--method", "simhash",
                                    "--hamming", "4"])
    assert res.exit_code == 0, res.output
    assert "SimHash 64 bits" in res.output and "5 pairs with J >= 0.8" in res.output
    s = json.loads((out / "summary.json").read_text())
    assert s["method"] == "simhash" and s["simhash"]["hamming"] == 4


# -- the reach of k: recall model and warning ------------------------------------------

def equal_size_pairs(rng, jac: float, size: int, n: int) -> ShingleSets:
    """n pairs of random sets of *size* shingles with Jaccard *jac* (|A ∩ B| rounded)."""
    inter = int(round(2 * jac * size / (1 + jac)))
    parts, offs = [], [0]
    for _ in range(n):
        u = rng.choice(2**62, 2 * size - inter, replace=False).astype(np.uint64)
        parts += [np.sort(u[:size]), np.sort(np.concatenate([u[:inter], u[size:]]))]
        offs += [offs[-1] + size, offs[-1] + 2 * size]
    return ShingleSets(np.concatenate(parts), np.array(offs, np.int64), 5)


@pytest.mark.parametrize("jac", [0.8, 0.9, 0.97])
def test_recall_model_matches_measured_distances(jac):
    """P(Binomial(64, arccos(2J/(1+J))/π) <= k) against fingerprints of random pairs."""
    rng = np.random.default_rng(int(jac * 100))
    size = 200
    ss = equal_size_pairs(rng, jac, size, 1000)
    fps = simhash_fingerprints(ss)
    d = hamming_distance(fps[0::2], fps[1::2])
    real_j = (int(round(2 * jac * size / (1 + jac)))) / (2 * size - int(round(2 * jac * size / (1 + jac))))
    for k in (3, 8, 12):
        assert abs(np.mean(d <= k) - simhash_recall(real_j, k)) < 0.05, k


def test_recall_model_values():
    assert simhash_recall(1.0, 0) == 1.0
    assert simhash_recall(0.8, 3) < 0.02 and simhash_recall(0.97, 3) > 0.5
    assert simhash_recall(0.8, 13) > 0.9
    ks = [simhash_recall(0.85, k) for k in range(0, 33)]
    assert ks == sorted(ks)
    js = [simhash_recall(j / 20, 3) for j in range(21)]
    assert js == sorted(js)


def test_warning_when_k_cannot_reach_the_threshold():
    ss = sets_from_python([{1, 2, 3, 4}, {1, 2, 3, 4}, {7, 8}])
    with pytest.warns(SimHashRecallWarning, match=r"Hamming distance 3 .* threshold 0\.8.*"
                                                  r"raise the Hamming distance to 13.*minhash"):
        r = find_near_duplicates(ss, method="simhash")          # defaults: t = 0.8, k = 3
    assert pairs_as_dict(r.pairs).keys() == {(0, 1)}
    with pytest.warns(SimHashRecallWarning, match="minhash"):
        check_threshold(0.3, 3)


@pytest.mark.parametrize("kwargs", [dict(method="simhash", threshold=0.97),
                                    dict(method="simhash", threshold=0.8, hamming=13),
                                    dict(method="simhash", threshold=1.0, hamming=0),
                                    dict(method="minhash", threshold=0.5),
                                    dict(method="allpairs", threshold=0.3)])
def test_no_warning_where_k_reaches_the_threshold(kwargs):
    ss = sets_from_python([{1, 2, 3, 4}, {1, 2, 3, 4}, {7, 8}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        find_near_duplicates(ss, **kwargs)


def test_cli_shows_the_warning_once_on_stderr(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in
                            ["a b c d e f g h", "a b c d e f g h", "x y z w v"]), encoding="utf-8")
    res = CliRunner().invoke(main, ["dups", str(path), "--out", str(tmp_path / "o"), "-q",
                                    "--method", "simhash", "-k", "2"])
    assert res.exit_code == 0, res.output
    assert res.stderr.count("warning: SimHash with Hamming distance 3") == 1
    assert "--hamming" in res.stderr and "Traceback" not in res.stderr
    assert "warning:" not in res.stdout
    res = CliRunner().invoke(main, ["dups", str(path), "--out", str(tmp_path / "o2"), "-q",
                                    "--method", "simhash", "-k", "2", "--hamming", "13"])
    assert res.exit_code == 0 and "warning" not in res.stderr


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cap=st.integers(3, 12), k=st.integers(0, 4))
def test_capped_groups_of_identical_fingerprints(seed, cap, k):
    """Star + chain per capped group; emitted + not enumerated = every pair within k."""
    rng = np.random.default_rng(seed)
    fps = random_fps_with_planted(rng, 60, k, n_planted=20)
    for g in range(3):                               # groups of identical copies, some above the cap
        m = int(rng.integers(2, 20))
        fps[rng.choice(60, size=m, replace=False)] = fps[g]
    sizes = rng.integers(1, 50, size=60)
    hc = hamming_candidates(fps, k, max_group=cap, sizes=sizes)
    got = set(zip(hc.a.tolist(), hc.b.tolist()))
    truth = brute_pairs(fps, k)
    assert len(got) == len(hc) and got <= truth
    assert len(got) + hc.stats["pairs_not_enumerated"] == len(truth)
    _, inv, counts = np.unique(fps, return_inverse=True, return_counts=True)
    assert hc.stats["capped_groups"] == int((counts >= cap).sum())
    for g in np.flatnonzero(counts >= cap):          # each capped group stays connected, 2m - 3 edges
        members = set(np.flatnonzero(inv.reshape(-1) == g).tolist())
        inner = [p for p in got if p[0] in members and p[1] in members]
        assert len(inner) == 2 * len(members) - 3
        first = min(members, key=lambda d: (sizes[d], d))
        assert {p[0] if p[1] == first else p[1] for p in inner if first in p} == members - {first}
    uncapped = hamming_candidates(fps, k, max_group=None)
    assert set(zip(uncapped.a.tolist(), uncapped.b.tolist())) == truth


def test_parallel_table_path_equals_the_serial_one(monkeypatch):
    import repetend.neardup.simhash as S

    rng = np.random.default_rng(4)
    fps = random_fps_with_planted(rng, 400, 4, n_planted=200)
    want = hamming_candidates(fps, 4)
    monkeypatch.setattr(S, "SERIAL_COMPARISONS", 0)
    got = hamming_candidates(fps, 4)
    assert sorted(zip(got.a.tolist(), got.b.tolist())) == sorted(zip(want.a.tolist(), want.b.tolist()))
    assert set(zip(got.a.tolist(), got.b.tolist())) == brute_pairs(fps, 4)
