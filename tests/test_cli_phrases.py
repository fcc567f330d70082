"""``repetend phrases`` through click's CliRunner."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from repetend.cli import main

pytest.importorskip("pydivsufsort")
# the filter's hash arithmetic wraps around on purpose: silent under numba,
# a RuntimeWarning when the kernels run as Python (NUMBA_DISABLE_JIT=1)
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

SHOP = [
    "Новый ноутбук Acer Swift. Доставка бесплатно при заказе от 3000 рублей!",
    "Чехол для iPhone 15 — доставка бесплатно, при заказе от 3000 рублей",
    "Доставка бесплатно при заказе от 3000 рублей; наушники Sony",
    "Наушники Sony WH-1000 доставка бесплатно",
]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "shop.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i, t in enumerate(SHOP):
            f.write(json.dumps({"id": f"p{i + 1}", "url": f"https://shop{i % 2}.ru/{i}",
                                "text": t}, ensure_ascii=False) + "\n")
    return path


def test_phrases_command_writes_tables_and_prints_summary(corpus, tmp_path):
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["phrases", str(corpus), "--min-docs", "3", "--min-len", "2",
                                  "--engine", "suffix", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    assert "phrases: 1" in r.output
    assert "df       3" in r.output
    assert "при заказе от 3000 рублей" in r.output.lower()
    assert "56.76% of the corpus" in r.output  # 21 of 37 tokens
    ph = pq.read_table(out / "phrases.parquet").to_pylist()
    assert ph[0]["df"] == 3 and ph[0]["length"] == 7
    assert (out / "hosts.parquet").exists()
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["covered_tokens"] == 21 and summary["tokens"] == 37


def test_jsonl_output_and_store_input(corpus, tmp_path):
    store = tmp_path / "store"
    r = CliRunner().invoke(main, ["phrases", str(corpus), "-s", "3", "-L", "2", "--store",
                                  str(store), "--out", str(tmp_path / "a"), "-q"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["phrases", str(store), "-s", "3", "-L", "2",
                                  "--out", str(tmp_path / "b"), "--out-format", "jsonl", "-q"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in
            (tmp_path / "b" / "phrases.jsonl").read_text(encoding="utf-8").splitlines()]
    assert pq.read_table(tmp_path / "a" / "phrases.parquet").to_pylist() == rows


@pytest.mark.parametrize("args, match", [
    (["--min-docs", "0"], "is not in the range 1<=x<="),
    (["--min-len", "0"], "is not in the range 1<=x<="),
    (["--near-full", "2"], "Invalid value for '--near-full'"),
])
def test_bad_parameters_are_one_line_errors(corpus, tmp_path, args, match):
    r = CliRunner().invoke(main, ["phrases", str(corpus), "--out", str(tmp_path / "o"), "-q",
                                  *args])
    assert r.exit_code == 2
    assert match in r.output
    assert "Traceback" not in r.output
    assert not (tmp_path / "o").exists()


def test_empty_corpus_is_an_input_error(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text(json.dumps({"id": "a", "text": "!!! ..."}) + "\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["phrases", str(path), "--out", str(tmp_path / "o"), "-q"])
    assert r.exit_code == 2
    assert "empty corpus" in r.output
