"""``repetend tokenize`` and ``repetend info`` through click's runner."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from repetend.cli import main
from repetend.corpus.store import TokenStore

DATA = Path(__file__).parent / "data" / "readers"


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result


def _jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


ROWS = [{"id": f"d{i}", "text": f"Doc {i}: free delivery from 3000 roubles, item {i % 3}",
         "url": f"https://shop{i % 2}.example/{i}"} for i in range(6)]


def test_tokenize_writes_store_and_summary(tmp_path):
    src = _jsonl(tmp_path / "c.jsonl", ROWS)
    out = tmp_path / "store"
    r = run("tokenize", src, "--out", out, "-q")
    assert r.exit_code == 0, r.output
    store = TokenStore.open(out)
    ref = TokenStore.from_texts([x["text"] for x in ROWS], ids=[x["id"] for x in ROWS],
                                urls=[x["url"] for x in ROWS])
    assert store.doc_ids == ref.doc_ids and store.n_docs == 6
    assert [store.token_strings(store.doc_tokens(d)) for d in range(6)] == \
        [ref.token_strings(ref.doc_tokens(d)) for d in range(6)]
    summary = json.loads((out / "summary.json").read_text())
    meta = json.loads((out / "meta.json").read_text())
    assert summary == meta["summary"]
    assert summary["documents"] == 6 and summary["tokens"] == store.n_tokens
    assert summary["read"]["records"] == 6 and summary["read"]["files"] == 1
    assert f"{store.n_tokens:,} tokens" in r.output and "6 documents" in r.output
    info = run("info", out)
    assert info.exit_code == 0 and "6 documents" in info.output
    med = int(np.median(np.diff(store.doc_offsets)))
    assert f"median {med:,}" in info.output
    assert "2 hosts (6 documents with a url)" in info.output
    assert "shop0.example 3, shop1.example 3" in info.output
    js = run("info", out, "--json")
    assert json.loads(js.output) == summary


def test_bad_records_are_counted_and_shown(tmp_path):
    src = tmp_path / "c.jsonl"
    src.write_bytes(b'{"text": "good one"}\nnot json at all\n{"text": "caf\xe9"}\n'
                    b'{"text": "   "}\n{"other": 1}\n')
    out = tmp_path / "s"
    r = run("tokenize", src, "-o", out, "-q")
    assert r.exit_code == 0, r.output
    read = json.loads((out / "summary.json").read_text())["read"]
    assert (read["records"], read["malformed"], read["missing_text"], read["invalid_utf8"],
            read["empty"]) == (3, 2, 1, 1, 1)
    assert "2 malformed" in r.output and "1 with invalid UTF-8" in r.output
    assert "line 2" in r.output and "c.jsonl" in r.output
    js = run("tokenize", src, "-o", tmp_path / "s2", "-q", "--json")
    assert json.loads(js.output)["read"]["malformed"] == 2


@pytest.mark.parametrize("case", ["missing", "nofield", "fail", "parquet", "glob", "format"])
def test_user_errors_are_one_line_exit_2(tmp_path, case):
    src = _jsonl(tmp_path / "c.jsonl", [{"body": "x"}])
    args = ["tokenize", src, "-o", tmp_path / "s", "-q"]
    want = "'body'"
    if case == "missing":
        args[1], want = tmp_path / "nope.jsonl", "no such file"
    elif case == "fail":
        src.write_text('{"text": "a"}\n{oops\n')
        args += ["--on-error", "fail"]
        want = "line 2"
    elif case == "parquet":
        args[1] = tmp_path / "c.parquet"
        pq.write_table(pa.table({"content": ["a"]}), args[1])
        want = "'content'"
    elif case == "glob":
        args[1], want = str(tmp_path / "*.csv"), "no file matches"
    elif case == "format":
        (tmp_path / "c.data").write_text("x")
        args[1], want = tmp_path / "c.data", "--format"
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    err = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
    assert len(err) == 1 and want in err[0], r.output
    assert not (tmp_path / "s").exists()


def test_out_guards(tmp_path):
    src = _jsonl(tmp_path / "c.jsonl", ROWS)
    precious = tmp_path / "mine"
    precious.mkdir()
    (precious / "thesis.txt").write_text("do not delete")
    r = run("tokenize", src, "-o", precious, "-q")
    assert r.exit_code == 2 and "not a token store" in r.output
    assert (precious / "thesis.txt").read_text() == "do not delete"
    out = tmp_path / "st"
    assert run("tokenize", src, "-o", out, "-q").exit_code == 0
    again = run("tokenize", out, "-o", tmp_path / "st2", "-q")
    assert again.exit_code == 2 and "already a token store" in again.output
    # an existing store is replaced, and a failed run leaves the old one intact
    _jsonl(src, ROWS[:2])
    assert run("tokenize", src, "-o", out, "-q").exit_code == 0
    assert TokenStore.open(out).n_docs == 2
    src.write_text("{bad\n")
    assert run("tokenize", src, "-o", out, "-q", "--on-error", "fail").exit_code == 2
    assert TokenStore.open(out).n_docs == 2


def test_no_documents_warns(tmp_path):
    src = tmp_path / "e.jsonl"
    src.write_text("")
    r = run("tokenize", src, "-o", tmp_path / "s", "-q")
    assert r.exit_code == 0 and "warning: no documents" in r.stderr
    assert TokenStore.open(tmp_path / "s").n_docs == 0


def test_info_errors(tmp_path):
    r = run("info", tmp_path / "none")
    assert r.exit_code == 2 and "no such file" in r.output
    r = run("info", tmp_path)
    assert r.exit_code == 2 and "not a repetend token store" in r.output


def test_text_tree_with_glob_limit_and_mixed_inputs(tmp_path):
    docs = tmp_path / "docs"
    (docs / "a").mkdir(parents=True)
    (docs / "a" / "one.md").write_text("alpha beta gamma")
    (docs / "two.txt").write_text("delta epsilon")
    (docs / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (docs / "three.txt.gz").write_bytes(gzip.compress(b"zeta eta"))
    out = tmp_path / "s"
    r = run("tokenize", docs, "-o", out, "-q")
    assert r.exit_code == 0, r.output
    store = TokenStore.open(out)
    assert store.doc_ids == ["a/one.md", "three.txt.gz", "two.txt"]
    assert "blob.bin" in (out / "summary.json").read_text()
    r = run("tokenize", docs, "-o", out, "-q", "--glob", "**/*.md")
    assert r.exit_code == 0 and TokenStore.open(out).doc_ids == ["a/one.md"]
    src = _jsonl(tmp_path / "c.jsonl", ROWS)
    r = run("tokenize", src, docs, "-o", out, "-q", "--limit", "7")
    assert r.exit_code == 0, r.output
    store = TokenStore.open(out)
    assert store.n_docs == 7 and store.doc_ids[:6] == [x["id"] for x in ROWS]


def test_every_committed_sample_tokenizes(tmp_path):
    for i, p in enumerate(sorted(DATA.iterdir())):
        out = tmp_path / f"s{i}"
        r = run("tokenize", p, "-o", out, "-q")
        assert r.exit_code == 0, (p, r.output)
        store = TokenStore.open(out)
        assert store.n_docs >= 2 and store.n_tokens > 0, p
        if p.name.startswith("sample.") and "warc" not in p.name:
            assert store.doc_ids == ["p0", "p1", "p2", "p3"], p
            assert store.has_urls
    assert np.all(TokenStore.open(tmp_path / "s0").df > 0)


def test_progress_goes_to_stderr_not_stdout(tmp_path):
    src = _jsonl(tmp_path / "c.jsonl", ROWS)
    r = run("tokenize", src, "-o", tmp_path / "s", "--json")
    assert r.exit_code == 0
    assert json.loads(r.stdout)["documents"] == 6


def test_progress_unless_quiet(tmp_path):
    src = _jsonl(tmp_path / "c.jsonl", ROWS)
    loud = run("tokenize", src, "-o", tmp_path / "a")
    quiet = run("tokenize", src, "-o", tmp_path / "b", "-q")
    assert loud.exit_code == quiet.exit_code == 0
    assert "tokenize" in loud.stderr and quiet.stderr == ""


def test_tokenize_from_standard_input(tmp_path):
    data = "".join(json.dumps(r) + "\n" for r in ROWS).encode()
    r = CliRunner().invoke(main, ["tokenize", "-", "-o", str(tmp_path / "s"), "-q"],
                           input=gzip.compress(data))
    assert r.exit_code == 0, r.output
    assert TokenStore.open(tmp_path / "s").doc_ids == [x["id"] for x in ROWS]
