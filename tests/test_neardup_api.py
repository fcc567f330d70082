"""find_near_duplicates: no false positives, recall on planted copies, dispatch, outputs."""

from __future__ import annotations

import json
import sys

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_neardup import (
    naive_all_measures,
    naive_pairs,
    pairs_as_dict,
    sets_from_python,
)
from repetend.corpus.store import TokenStore
from repetend.errors import ParameterError, RepetendError
from repetend.neardup import NearDupConfig, find_near_duplicates


def planted(rng, n_base=60, size=120, n_copies=40, edits=6):
    """Random base sets plus near-copies with ``edits`` elements replaced (J ≈ 0.9)."""
    py = [set(rng.integers(0, 2**62, size=size).tolist()) for _ in range(n_base)]
    for i in range(n_copies):
        src = sorted(py[i % n_base])
        keep = rng.permutation(len(src))[edits:]
        py.append({src[j] for j in keep} | set(rng.integers(0, 2**62, size=edits).tolist()))
    return py


@settings(max_examples=40, deadline=None)
@given(sets=st.lists(st.sets(st.integers(0, 12), max_size=8), max_size=14),
       t=st.sampled_from([0.3, 0.5, 0.8, 1.0]), bbits=st.sampled_from([None, 2, 8]),
       hash=st.sampled_from(["splitmix64", "crc32"]))
def test_minhash_output_is_exactly_verified(sets, t, bbits, hash):
    ss = sets_from_python(sets)
    r = find_near_duplicates(ss, NearDupConfig(threshold=t, num_perm=32, bbits=bbits, hash=hash,
                                               min_shingles=1))
    truth = naive_pairs(sets, t)
    got = pairs_as_dict(r.pairs)
    assert set(got) <= set(truth)                       # never a pair below the threshold
    for key, val in got.items():
        assert val == pytest.approx(truth[key])
    every = naive_all_measures(sets)
    for key, val in pairs_as_dict(r.candidates).items():  # candidates carry their true measures
        assert val == pytest.approx(every.get(key, (0.0, 0.0, 0.0)))
    assert np.all((r.candidate_estimate >= 0) & (r.candidate_estimate <= 1))


def test_minhash_finds_planted_near_copies():
    rng = np.random.default_rng(11)
    py = planted(rng)
    r = find_near_duplicates(sets_from_python(py), NearDupConfig(threshold=0.8))
    truth = naive_pairs(py, 0.8)
    assert len(truth) >= 40
    # P(0.85) > 0.998 for the chosen banding: all of them, with this fixed seed
    assert set(pairs_as_dict(r.pairs)) == set(truth)
    assert r.summary["p_at_threshold"] >= 0.98
    assert r.clusters.n_clusters == len({min(a, b) % 60 for a, b in truth})


def test_allpairs_dispatch_is_exact():
    rng = np.random.default_rng(3)
    py = planted(rng, n_base=30, size=40, n_copies=20, edits=8)
    r = find_near_duplicates(sets_from_python(py), method="allpairs", threshold=0.6)
    assert pairs_as_dict(r.pairs).keys() == naive_pairs(py, 0.6).keys()
    assert np.isnan(r.candidate_estimate).all()


def test_exact_and_broder_dispatch_on_a_store():
    base = ["the quick brown fox jumps over the lazy dog again and again " * 3,
            "a completely different text about cats and mice in the house " * 3]
    texts = base + ["The  Quick brown fox jumps over the lazy dog again and again " * 3, "", "x"]
    store = TokenStore.from_texts(texts)
    r = find_near_duplicates(store, method="exact")
    assert [(int(a), int(b)) for a, b in zip(r.pairs.a, r.pairs.b)] == [(0, 2)]
    assert r.clusters.representative.tolist() in ([0], [2])
    rb = find_near_duplicates(store, method="broder", threshold=0.8, shingle=3)
    assert set(pairs_as_dict(rb.pairs)) <= {(0, 2)}
    rm = find_near_duplicates(store, threshold=0.8, shingle=3)
    assert set(pairs_as_dict(rm.pairs)) == {(0, 2)}
    assert rm.to_arrow("pairs").column("a").to_pylist() == ["0"]


def test_containment_pairs_reported_apart():
    rng = np.random.default_rng(4)
    long = set(rng.integers(0, 2**62, size=200).tolist())
    short = set(sorted(long)[:60])          # a short page inside a long one: J = 0.3, c = 1
    py = [long, short, set(rng.integers(0, 2**62, size=50).tolist())]
    r = find_near_duplicates(sets_from_python(py), threshold=0.8, containment=0.9,
                             bands=64, rows=2)  # low band threshold: the pair is a candidate
    assert len(r.pairs) == 0
    assert [(int(a), int(b)) for a, b in zip(r.containment.a, r.containment.b)] == [(0, 1)]
    assert r.containment.containment_ba[0] == 1.0


def test_write_parquet_and_jsonl(tmp_path):
    rng = np.random.default_rng(8)
    py = planted(rng, n_base=20, size=50, n_copies=10, edits=2)
    r = find_near_duplicates(sets_from_python(py), threshold=0.5, bands=32, rows=2, num_perm=64)
    assert len(r.candidates) > 3
    files = r.write(tmp_path / "out", candidates_limit=3)
    pairs = pq.read_table(files["pairs"])
    assert pairs.column_names == ["a", "b", "a_index", "b_index", "jaccard",
                                  "containment_ab", "containment_ba", "method"]
    assert pairs.num_rows == len(r.pairs)
    cl = pq.read_table(files["clusters"])
    assert cl.column_names == ["doc_index", "doc_id", "cluster_id", "cluster_size", "is_representative"]
    assert cl.num_rows == r.clusters.documents_in_clusters
    assert sum(cl.column("is_representative").to_pylist()) == r.clusters.n_clusters
    cand = pq.read_table(files["candidates"])
    assert cand.num_rows == 3
    assert cand.column("a").to_pylist() == [str(i) for i in cand.column("a_index").to_pylist()]
    # one row per document; keep is what clean keeps: all but the non-representative members
    docs = pq.read_table(files["documents"]).to_pylist()
    assert [d["doc_index"] for d in docs] == list(range(len(py)))
    members = {}
    for row in cl.to_pylist():
        members.setdefault(row["cluster_id"], []).append(row)
    for d in docs:
        if d["cluster_id"] is None:
            assert d["keep"] and d["is_representative"] and d["cluster_size"] == 1
        else:
            m = {x["doc_index"]: x for x in members[d["cluster_id"]]}[d["doc_index"]]
            assert d["keep"] == d["is_representative"] == m["is_representative"]
            assert d["cluster_size"] == len(members[d["cluster_id"]])
    assert sum(d["keep"] for d in docs) == len(py) - r.clusters.documents_in_clusters \
        + r.clusters.n_clusters
    summary = json.loads(files["summary"].read_text())
    assert summary["candidates_sampled"] is True and summary["candidates"] == len(r.candidates)
    assert summary["verified_pairs"] == len(r.pairs) and len(summary["s_curve"]) == 20
    jfiles = r.write(tmp_path / "j", format="jsonl")
    rows = [json.loads(x) for x in jfiles["pairs"].read_text().splitlines()]
    assert len(rows) == len(r.pairs) and rows[0]["method"] == "minhash"
    with pytest.raises(ParameterError):
        r.write(tmp_path / "x", format="csv")


@pytest.mark.parametrize("kwargs", [
    dict(threshold=0.0), dict(threshold=1.2), dict(shingle=0), dict(num_perm=0),
    dict(num_perm=128, bands=3), dict(num_perm=128, bands=16, rows=9), dict(method="nosuch"),
    dict(bbits=0), dict(hash="md5"), dict(max_bucket=2), dict(min_shingles=0),
    dict(containment=0.0),
])
def test_parameter_errors(kwargs):
    with pytest.raises(ParameterError):
        NearDupConfig(**kwargs).validate()
    with pytest.raises(ParameterError):
        find_near_duplicates(sets_from_python([{1}, {1}]), **kwargs)


def test_wrong_input_and_methods_needing_a_store():
    ss = sets_from_python([{1}, {1}])
    with pytest.raises(ParameterError):
        find_near_duplicates([1, 2, 3])
    with pytest.raises(ParameterError):
        find_near_duplicates(ss, method="exact")
    with pytest.raises(ParameterError):
        find_near_duplicates(ss, method="broder")


def test_missing_method_module_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "repetend.neardup.allpairs", None)
    with pytest.raises(RepetendError, match="allpairs"):
        find_near_duplicates(sets_from_python([{1}, {1}]), method="allpairs")


def test_public_names_are_pinned():
    import repetend.neardup as nd

    assert nd.__all__ == sorted(nd.__all__)
    assert set(nd.__all__) == {
        "Clusters", "LSHCandidates", "LSHParams", "MinHashSignatures", "NearDupConfig",
        "NearDupResult", "Pairs", "ShingleSets", "band_keys", "banding_params", "bucket_pairs",
        "check_jaccard_threshold", "clusters_from_pairs", "containment_pairs", "estimate",
        "find_near_duplicates", "lsh_candidates", "lsh_params", "lsh_threshold",
        "minhash_signatures", "minhash_summary", "outcome_summary", "s_curve",
        "set_fingerprints", "shingle_sets", "standard_error", "storage_dtype", "token_hashes",
        "verify_pairs"}
    for name in nd.__all__:
        assert hasattr(nd, name)


def test_result_tables_have_the_dups_directory_schemas():
    from repetend.neardup.result import (CANDIDATES_SCHEMA, CLUSTERS_SCHEMA, DOCUMENTS_SCHEMA,
                                         DUPS_TABLES, PAIRS_SCHEMA)

    r = find_near_duplicates(sets_from_python([{1, 2, 3}, {1, 2, 3}, {9}]), min_shingles=1)
    want = {"pairs": PAIRS_SCHEMA, "containment": PAIRS_SCHEMA, "clusters": CLUSTERS_SCHEMA,
            "candidates": CANDIDATES_SCHEMA, "documents": DOCUMENTS_SCHEMA}
    assert set(want) == set(DUPS_TABLES)
    for name, schema in want.items():
        assert r.to_arrow(name).schema.equals(schema), name


def test_to_pandas_matches_arrow():
    pd = pytest.importorskip("pandas")
    r = find_near_duplicates(sets_from_python([{1, 2, 3}, {1, 2, 3}, {9}]), min_shingles=1)
    df = r.to_pandas("pairs")
    assert isinstance(df, pd.DataFrame) and df[["a_index", "b_index"]].values.tolist() == [[0, 1]]


def test_oph_scheme_end_to_end():
    rng = np.random.default_rng(12)
    py = planted(rng, n_base=30, size=300, n_copies=20, edits=10)
    r = find_near_duplicates(sets_from_python(py), threshold=0.8, scheme="oph")
    truth = naive_pairs(py, 0.8)
    got = set(pairs_as_dict(r.pairs))
    assert got <= set(truth) and len(got) >= 0.95 * len(truth)
    assert r.summary["scheme"] == "oph"


def test_progress_names_every_stage():
    msgs: list[str] = []
    store = TokenStore.from_texts(["one two three four five six seven"] * 3 + ["other words here"])
    r = find_near_duplicates(store, progress=msgs.append, shingle=3)
    assert [m.split()[0] for m in msgs] == ["shingling", "MinHash", "LSH:", "verifying"]
    assert r.to_arrow("clusters").column("doc_id").to_pylist() == ["0", "1", "2"]
