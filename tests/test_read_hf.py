"""Hugging Face datasets on disk: a `save_to_disk` folder, a DatasetDict folder and a
hub-cache dataset repository are read as their documents; damaged folders give one
clear error and nothing is written."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from repetend.cli import main
from repetend.corpus.readers import expand_inputs, read_corpus
from repetend.errors import InputError

datasets = pytest.importorskip("datasets")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

ROWS = {"id": [f"doc-{i}" for i in range(7)],
        "text": [f"text number {i} with ünïcode and 日本語 {i * 'x'}" for i in range(7)],
        "url": [f"https://site{i % 2}.example/p{i}" for i in range(7)],
        "extra": list(range(7))}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    ds = datasets.Dataset.from_dict(ROWS)
    ds.save_to_disk(str(root / "one"), num_shards=3)   # several shards
    datasets.DatasetDict({"train": ds, "test": ds.select([1, 3]).map(
        lambda r: {"id": r["id"] + "-test"})}).save_to_disk(str(root / "dict"))
    datasets.Dataset.from_dict({"text": ["a b c", "d e f"]}).save_to_disk(str(root / "noid"))
    return root


def test_a_saved_dataset_is_read_in_order(saved):
    files = expand_inputs([saved / "one"])
    assert files and all(f == "arrow" for _, f in files)
    recs = list(read_corpus([saved / "one"]))
    assert [r.id for r in recs] == ROWS["id"]
    assert [r.text for r in recs] == ROWS["text"]
    assert [r.url for r in recs] == ROWS["url"]


def test_a_dataset_dict_is_read_split_by_split(saved):
    recs = list(read_corpus([saved / "dict"]))
    assert [r.id for r in recs] == ROWS["id"] + ["doc-1-test", "doc-3-test"]


def test_without_an_id_column_ids_name_the_folder_and_shard(saved):
    ids = [r.id for r in read_corpus([saved / "noid"])]
    assert len(set(ids)) == 2 and all(i.startswith("noid/data-") for i in ids)


def test_the_command_line_reads_a_dataset_folder(saved, tmp_path):
    r = CliRunner().invoke(main, ["tokenize", str(saved / "dict"), "-o", str(tmp_path / "s"), "-q",
                                  "--json"])
    assert r.exit_code == 0, r.output
    assert '"documents": 9' in r.output


def _copy(src, dst):
    import shutil

    shutil.copytree(src, dst)
    return dst


@pytest.mark.parametrize("damage", ["state", "shard", "split", "garbage"])
def test_a_damaged_dataset_folder_is_one_error_and_nothing_is_written(saved, tmp_path, damage):
    d = _copy(saved / "dict", tmp_path / "dict")
    if damage == "state":
        (d / "train" / "state.json").unlink()
        (d / "train" / "dataset_info.json").unlink()
    elif damage == "shard":
        next((d / "test").glob("*.arrow")).unlink()
    elif damage == "split":
        import shutil

        shutil.rmtree(d / "test")
    else:
        next((d / "test").glob("*.arrow")).write_bytes(b"not arrow at all")
    r = CliRunner().invoke(main, ["tokenize", str(d), "-o", str(tmp_path / "s"), "-q"])
    assert r.exit_code == 2, r.output
    assert r.output.startswith("error:") and "Traceback" not in r.output
    assert not (tmp_path / "s").exists()


def test_a_hub_cache_repository_is_read_from_its_snapshot(tmp_path):
    repo = tmp_path / "datasets--someone--corpus"
    rev = "0123abcd"
    (repo / "blobs").mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(rev)
    snap = repo / "snapshots" / rev
    (snap / "data").mkdir(parents=True)
    for split, lo in (("train", 0), ("test", 5)):
        blob = repo / "blobs" / f"blob{split}"
        pq.write_table(pa.table({"id": [f"{split}{i}" for i in range(lo, lo + 3)],
                                 "text": [f"words of {split} {i}" for i in range(3)]}), blob)
        (snap / "data" / f"{split}-00000-of-00001.parquet").symlink_to(blob)
    (snap / "README.md").write_text("---\nlicense: mit\n---\n# a dataset card, not a document\n")
    (snap / ".gitattributes").write_text("*.parquet filter=lfs\n")
    for given in (repo, snap):
        ids = [r.id for r in read_corpus([given])]
        assert ids == ["test5", "test6", "test7", "train0", "train1", "train2"]


def test_a_hub_cache_repository_without_a_ref_and_two_snapshots_is_refused(tmp_path):
    repo = tmp_path / "datasets--a--b"
    for rev in ("r1", "r2"):
        (repo / "snapshots" / rev).mkdir(parents=True)
    (repo / "refs").mkdir()
    with pytest.raises(InputError, match="2 snapshots"):
        expand_inputs([repo])


def _word(i: int) -> str:
    return "".join("bcdfghklmnprstvz"[(i >> (4 * k)) % 16] + "aeiou"[(i + k) % 5] for k in range(3))


def test_clean_writes_a_dataset_folder_back_that_datasets_opens(saved, tmp_path):
    """scan + clean of a DatasetDict folder: the cleaned folder has the same layout and
    columns, loads with datasets.load_from_disk, and holds exactly the kept rows."""
    rows = {"id": [f"p{i}" for i in range(30)],
            "text": [f"page {_word(i)} body {_word(i * 7 + 3)} {_word(i * 13 + 5)} " + "the shared "
                     "footer of every page is written right here at the end" for i in range(30)],
            "extra": list(range(30))}
    ds = datasets.Dataset.from_dict(rows)
    dd = datasets.DatasetDict({"train": ds.select(range(20)), "test": ds.select(range(20, 30))})
    src = tmp_path / "dd"
    dd.save_to_disk(str(src))
    runner = CliRunner()
    r = runner.invoke(main, ["scan", str(src), "-o", str(tmp_path / "k"), "--min-docs", "3",
                             "--min-len", "5", "-q", "--no-report"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["clean", str(src), "--scan", str(tmp_path / "k"),
                             "-o", str(tmp_path / "clean"), "-q"])
    assert r.exit_code == 0, r.output
    out = datasets.load_from_disk(str(tmp_path / "clean"))
    assert set(out) == {"train", "test"}
    for split in ("train", "test"):
        assert out[split].column_names == ["id", "text", "extra"]
        for row in out[split]:
            i = int(row["id"][1:])
            assert row["extra"] == i and "shared footer" not in row["text"]
            assert row["text"].startswith(f"page {_word(i)} body")
