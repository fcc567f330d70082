"""`clean --spans frequent` (the default) against `--spans maximal`, re-scanned."""

from __future__ import annotations

import pyarrow.parquet as pq

from repetend.jobs import CleanConfig, ScanConfig, clean_corpus, scan
from repetend.phrases import PhraseConfig
from repetend.synth import weblike


def _phrases(corpus, out):
    scan([corpus], out, ScanConfig(phrases=PhraseConfig(min_docs=5), dups=None, report=False))
    return pq.read_table(out / "phrases" / "phrases.parquet").to_pandas()


def test_frequent_clean_leaves_less_template_than_maximal_clean(tmp_path):
    corpus = weblike(240, seed=5, dup_rate=0.0).write(tmp_path / "c")["corpus"]
    before = _phrases(corpus, tmp_path / "s")
    assert len(before) > 0
    left = {}
    for mode in ("maximal", "frequent"):
        out = tmp_path / f"clean-{mode}.jsonl"
        clean_corpus(None, tmp_path / "s", out,
                     config=CleanConfig(remove_duplicates=False, spans=mode, templates=False))
        after = _phrases(out, tmp_path / f"s-{mode}")
        removed = set(map(tuple, before["tokens"]))
        assert not removed & set(map(tuple, after["tokens"])), mode
        left[mode] = int(after["psi"].sum()) if len(after) else 0
    assert left["frequent"] < left["maximal"]


def test_clean_refuses_to_destroy_inputs_or_other_files(tmp_path):
    import pytest

    from repetend.errors import InputError

    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(8):
        (tree / f"p{i}.txt").write_text(f"page {i} " + "shared footer words here and there " * 3)
    scan([tree], tmp_path / "s", ScanConfig(phrases=PhraseConfig(min_docs=3, min_len=4), dups=None, report=False))
    other = tmp_path / "other"
    other.mkdir()
    (other / "thesis.tex").write_text("keep me")
    with pytest.raises(InputError, match="not empty"):
        clean_corpus(None, tmp_path / "s", other)
    assert (other / "thesis.tex").read_text() == "keep me"
    with pytest.raises(InputError, match="is \\(or contains\\) an input"):
        clean_corpus(None, tmp_path / "s", tree)
    assert len(list(tree.iterdir())) == 8
    res = clean_corpus(None, tmp_path / "s", tmp_path / "fresh", config=CleanConfig(max_cut=1.0))
    assert res.documents_out == 8
