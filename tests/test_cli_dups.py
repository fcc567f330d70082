"""``repetend dups`` and ``repetend lsh-params`` through click's runner."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from repetend.cli import main
from repetend.neardup.lsh import lsh_params, s_curve


@pytest.fixture()
def corpus(tmp_path):
    rng = np.random.default_rng(1)
    words = ["".join(rng.choice(list("abcdefghij"), size=6)) for _ in range(2000)]
    docs = [" ".join(rng.choice(words, size=120)) for _ in range(60)]
    docs += [d + " with a short tail" for d in docs[:8]]          # J = 116/124 ≈ 0.94
    docs += [""]
    path = tmp_path / "c.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i, d in enumerate(docs):
            f.write(json.dumps({"id": f"doc{i}", "text": d}) + "\n")
    return path


def test_dups_minhash_writes_every_table(corpus, tmp_path):
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["dups", str(corpus), "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    assert "8 pairs with J >= 0.8" in res.output
    pairs = pq.read_table(out / "pairs.parquet").to_pylist()
    assert {(p["a"], p["b"]) for p in pairs} == {(f"doc{i}", f"doc{60 + i}") for i in range(8)}
    assert all(p["jaccard"] >= 0.8 and p["method"] == "minhash" for p in pairs)
    clusters = pq.read_table(out / "clusters.parquet").to_pylist()
    assert len(clusters) == 16
    reps = {c["doc_id"] for c in clusters if c["is_representative"]}
    assert reps == {f"doc{60 + i}" for i in range(8)}               # the longer copy
    for name in ("containment.parquet", "candidates.parquet"):
        assert (out / name).is_file()
    s = json.loads((out / "summary.json").read_text())
    p = lsh_params(0.8, 128)
    assert (s["bands"], s["rows"]) == (p.bands, p.rows)
    assert s["verified_pairs"] == 8 and s["clusters"] == 8 and s["documents"] == 69
    assert s["lsh"]["empty_documents"] == 1


def test_dups_other_methods_and_jsonl(corpus, tmp_path):
    for method in ("allpairs", "exact"):
        out = tmp_path / method
        res = CliRunner().invoke(main, ["dups", str(corpus), "--method", method, "--out", str(out),
                                        "--out-format", "jsonl", "-q"])
        assert res.exit_code == 0, res.output
        rows = (out / "pairs.jsonl").read_text().splitlines()
        assert len(rows) == (8 if method == "allpairs" else 0)


def test_dups_with_explicit_banding_and_store_input(corpus, tmp_path):
    store = tmp_path / "store"
    from repetend.corpus import load_store

    load_store([str(corpus)], out=store)
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["dups", str(store), "-K", "64", "-b", "16", "-r", "4",
                                    "--bbits", "16", "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    s = json.loads((out / "summary.json").read_text())
    assert (s["bands"], s["rows"], s["bits"]) == (16, 4, 16)
    assert s["p_at_threshold"] == pytest.approx(s_curve(0.8, 16, 4))


@pytest.mark.parametrize("args", [["-t", "1.5"], ["-K", "100", "-b", "7"], ["-k", "0"]])
def test_dups_parameter_errors_are_one_line(corpus, tmp_path, args):
    res = CliRunner().invoke(main, ["dups", str(corpus), "--out", str(tmp_path / "o"), "-q", *args])
    assert res.exit_code == 2
    assert res.output.strip().startswith("error:") and len(res.output.strip().splitlines()) == 1


def test_lsh_params_prints_choice_and_s_curve():
    res = CliRunner().invoke(main, ["lsh-params", "--threshold", "0.8", "--num-perm", "128"])
    assert res.exit_code == 0, res.output
    p = lsh_params(0.8, 128)
    assert f"bands b = {p.bands}, rows r = {p.rows}" in res.output
    assert f"P(0.8) = {p.p_at_threshold:.4f}" in res.output
    table = [ln.split() for ln in res.output.splitlines() if ln.startswith("  0.") or ln.startswith("  1.0")]
    assert [float(r[0]) for r in table] == pytest.approx([i / 10 for i in range(1, 11)])
    assert [float(r[1]) for r in table] == pytest.approx(
        [s_curve(i / 10, p.bands, p.rows) for i in range(1, 11)], abs=1e-4)


def test_lsh_params_given_banding_and_errors():
    res = CliRunner().invoke(main, ["lsh-params", "-t", "0.5", "-K", "48", "-b", "16", "-r", "3"])
    assert res.exit_code == 0 and "bands b = 16, rows r = 3" in res.output
    assert f"{(1 / 16) ** (1 / 3):.4f}" in res.output
    bad = CliRunner().invoke(main, ["lsh-params", "-t", "0.5", "-K", "48", "-b", "16", "-r", "4"])
    assert bad.exit_code == 2 and "error:" in bad.output


def test_dups_oph_crc32_finds_the_planted_pairs(corpus, tmp_path):
    out = tmp_path / "oph"
    res = CliRunner().invoke(main, ["dups", str(corpus), "--scheme", "oph", "--hash", "crc32",
                                    "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    s = json.loads((out / "summary.json").read_text())
    assert (s["scheme"], s["hash"]) == ("oph", "crc32")
    pairs = pq.read_table(out / "pairs.parquet").to_pylist()
    assert {(p["a"], p["b"]) for p in pairs} == {(f"doc{i}", f"doc{60 + i}") for i in range(8)}


def test_dups_out_of_core_prints_the_same_summary(corpus, tmp_path):
    """--memory-limit on a store: the same pairs, tables and printed summary keys as in
    memory (the out-of-core summary once lacked 'shingles' and 'lsh': KeyError)."""
    store = tmp_path / "store"
    from repetend.corpus import load_store

    load_store([str(corpus)], out=store)
    outs = {}
    for extra in ([], ["--memory-limit", "4G"]):
        out = tmp_path / ("ooc" if extra else "mem")
        res = CliRunner().invoke(main, ["dups", str(store), "--out", str(out), *extra])
        assert res.exit_code == 0, res.output
        assert "8 pairs with J >= 0.8" in res.output and "shingles (k=5)" in res.output
        outs[bool(extra)] = out
    a, b = (pq.read_table(o / "pairs.parquet").select(["a", "b", "jaccard"]) for o in outs.values())
    assert a.equals(b)
    sm, so = (json.loads((o / "summary.json").read_text()) for o in outs.values())
    for key in ("shingles", "num_perm", "bits", "scheme", "bands", "rows", "verified_pairs",
                "clusters", "pairs_not_enumerated"):
        assert sm[key] == so[key], key
    assert sm["lsh"]["empty_documents"] == so["lsh"]["empty_documents"] == 1
