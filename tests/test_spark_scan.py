"""``repetend scan --engine spark``: every table of a local scan, from shuffled input.

The Spark engine numbers documents by a hash of id and text
(:mod:`repetend.spark.order`), so the reference is a local scan over the same
records written in that order (:func:`repetend.spark.order.local_order`); the
Spark scan reads a shuffled copy.  Also: quiet runs print nothing, bad input
gives the local counts, methods that do not run on Spark are refused early.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyspark")
if shutil.which("java") is None:  # pragma: no cover - depends on the machine
    pytest.skip("the Spark tests need a Java runtime (openjdk-17-jre-headless)",
                allow_module_level=True)

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from repetend.errors import InputError, ParameterError  # noqa: E402
from repetend.jobs import ScanConfig, scan  # noqa: E402
from repetend.neardup import NearDupConfig  # noqa: E402
from repetend.phrases import PhraseConfig  # noqa: E402
from repetend.spark.order import local_order, order_key  # noqa: E402

HERE = Path(__file__).parent


@pytest.fixture(scope="module", autouse=True)
def _stop_spark_after():
    """The in-process scans start a local[2] session; stop it after this module so
    that the next module's session gets its own master (e.g. local[2,4], retries)."""
    yield
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()


def _rows(n: int, seed: int) -> list[dict]:
    """A web-like corpus (templates, near-duplicates, urls) as JSON records."""
    from repetend.synth import weblike

    c = weblike(n, seed=seed)
    return [{"id": f"doc-{i:06d}", "text": t, "url": u} for i, (t, u) in
            enumerate(zip(c.texts, c.urls))]


def _write(path: Path, rows: list[dict]) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return path


def shuffled_and_reference(tmp: Path, rows: list[dict], seed: int = 0) -> tuple[Path, Path]:
    """(a shuffled JSONL for Spark, the same records in the Spark order for the
    local reference scan)."""
    perm = np.random.default_rng(seed).permutation(len(rows))
    shuffled = _write(tmp / "shuffled.jsonl", [rows[i] for i in perm])
    order = local_order([r["id"] for r in rows], [r["text"] for r in rows])
    ref = _write(tmp / "ordered.jsonl", [rows[i] for i in order])
    return shuffled, ref


def tables(out: Path) -> dict[str, object]:
    """Every Parquet table of a scan directory but the token store's and the corpus
    dataset's (a Spark scan's, compared with the store by :func:`assert_same_corpus`)."""
    return {str(p.relative_to(out)): pq.read_table(p) for p in sorted(out.rglob("*.parquet"))
            if not str(p.relative_to(out)).startswith(("store", "corpus"))}


def assert_same_tables(got: Path, want: Path) -> None:
    a, b = tables(got), tables(want)
    assert sorted(a) == sorted(b)
    for name in a:
        assert a[name].num_rows == b[name].num_rows, name
        got = a[name].select(b[name].column_names)
        if got.equals(b[name]):
            continue
        for c in b[name].column_names:   # NaN (estimates of exact pairs) equals NaN here
            x, y = got.column(c), b[name].column(c)
            if pa.types.is_floating(y.type):
                assert np.array_equal(x.to_numpy(), y.to_numpy(), equal_nan=True), (name, c)
            else:
                assert x.equals(y), (name, c)


def test_order_key_is_the_data_alone():
    assert order_key("a", "x y") == order_key("a", "x y")
    assert order_key("a", "x y") != order_key("a", "x  y")
    assert order_key("ab", "c") != order_key("a", "bc")     # the id is length-prefixed
    ids, texts = ["b", "a", "c"], ["t", "t", "u"]
    perm = local_order(ids, texts)
    assert sorted(perm.tolist()) == [0, 1, 2]
    # shuffling the input permutes the order the same way: it depends on the data alone
    again = local_order(ids[::-1], texts[::-1])
    assert [ids[::-1][i] for i in again] == [ids[i] for i in perm]


def test_scan_of_shuffled_input_equals_the_local_scan(tmp_path):
    """Phrases with templates, df over clusters, MinHash near-duplicates, the cleaning
    plan: every table equal; the input order does not matter."""
    shuffled, ref = shuffled_and_reference(tmp_path, _rows(80, seed=11))
    cfg = dict(phrases=PhraseConfig(min_docs=4), report=False)
    scan([ref], tmp_path / "local", ScanConfig(**cfg))
    scan([shuffled], tmp_path / "spark", ScanConfig(**cfg, spark_master="local[2]"))
    assert_same_tables(tmp_path / "spark", tmp_path / "local")
    t = tables(tmp_path / "local")
    assert t["phrases/phrases.parquet"].num_rows > 0
    assert t["dups/pairs.parquet"].num_rows > 0
    assert t["phrases/templates.parquet"].num_rows > 0


def test_exact_method_on_spark_equals_local(tmp_path):
    rows = _rows(40, seed=3)
    rows += [{"id": f"copy-{i}", "text": "  " + rows[i]["text"].upper() + "\n", "url": None}
             for i in range(0, 40, 7)]
    shuffled, ref = shuffled_and_reference(tmp_path, rows, seed=1)
    cfg = dict(phrases=None, dups=NearDupConfig(method="exact"), report=False)
    scan([ref], tmp_path / "local", ScanConfig(**cfg))
    scan([shuffled], tmp_path / "spark", ScanConfig(**cfg, spark_master="local[2]"))
    assert_same_tables(tmp_path / "spark", tmp_path / "local")
    assert tables(tmp_path / "local")["dups/pairs.parquet"].num_rows >= 6


def test_methods_that_do_not_run_on_spark_are_refused_before_reading(tmp_path):
    corpus = _write(tmp_path / "c.jsonl", _rows(5, seed=1))
    for method in ("allpairs", "simhash", "broder"):
        with pytest.raises(ParameterError, match="runs minhash and exact"):
            scan([corpus], tmp_path / method,
                 ScanConfig(dups=NearDupConfig(method=method), spark_master="local[2]"))
        assert not (tmp_path / method).exists()


def test_bad_records_give_the_local_counts(tmp_path):
    """Unparseable lines and records without text are skipped by both readers: the
    same documents, the same read counts as a local scan."""
    rows = _rows(30, seed=5)
    shuffled, ref = shuffled_and_reference(tmp_path, rows)
    for path in (shuffled, ref):
        with open(path, "a", encoding="utf-8") as f:
            f.write('{"id": "broken", "text": "no closing quote}\n')
            f.write('{"id": "notext", "body": "x"}\n')
    cfg = dict(phrases=PhraseConfig(min_docs=3, templates=None), report=False)
    a = scan([ref], tmp_path / "local", ScanConfig(**cfg))
    b = scan([shuffled], tmp_path / "spark", ScanConfig(**cfg, spark_master="local[2]"))
    assert a.summary["corpus"]["read"]["malformed"] == 2
    # the same counts, and the local reader's messages (file, line, reason)
    want = dict(a.summary["corpus"]["read"])
    want["errors"] = [e.replace(str(ref), str(shuffled)) for e in want["errors"]]
    assert b.summary["corpus"]["read"] == want
    assert len(want["errors"]) == 2 and ", line 31: not valid JSON" in want["errors"][0]
    assert_same_tables(tmp_path / "spark", tmp_path / "local")
    # --on-error fail: stopped, naming the file and the line
    with pytest.raises(InputError, match="line 31: not valid JSON") as exc:
        scan([shuffled], tmp_path / "fail", ScanConfig(**cfg, spark_master="local[2]",
                                                       input_options={"on_error": "fail"}))
    assert str(shuffled) in str(exc.value)


def _cli(args: list[str], **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(HERE.parent / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", "from repetend.cli import main; main()", *args], capture_output=True,
                          text=True, env=env, timeout=600, **kw)


def test_quiet_means_quiet_and_one_line_per_stage(tmp_path):
    corpus = _write(tmp_path / "c.jsonl", _rows(30, seed=2))
    q = _cli(["scan", str(corpus), "--out", str(tmp_path / "q"), "--engine", "spark",
              "--no-report", "-q"])
    assert q.returncode == 0, q.stderr
    assert q.stderr.strip() == "", q.stderr          # no log4j, no progress bars, no warnings
    v = _cli(["scan", str(corpus), "--out", str(tmp_path / "v"), "--engine", "spark",
              "--no-report"])
    assert v.returncode == 0, v.stderr
    lines = [ln for ln in v.stderr.splitlines() if ln.strip()]
    assert any(ln.startswith("spark:") for ln in lines), v.stderr
    assert not any(" INFO " in ln or " WARN " in ln or "[Stage" in ln for ln in lines), v.stderr


def test_no_token_store_the_executors_write_the_corpus(tmp_path):
    """A Spark scan writes no token store: its corpus dataset (written by the
    executors) has the local store's documents, counts, texts and token spans."""
    from repetend.corpus.store import TokenStore
    from repetend.corpus.table_corpus import TableCorpus

    rows = _rows(60, seed=4)
    rows.append({"id": "blank", "text": "  \n ", "url": None})
    shuffled, ref = shuffled_and_reference(tmp_path, rows, seed=2)
    cfg = dict(phrases=PhraseConfig(min_docs=3), report=False)
    scan([ref], tmp_path / "local", ScanConfig(**cfg))
    res = scan([shuffled], tmp_path / "spark", ScanConfig(**cfg, spark_master="local[2]"))
    assert not (tmp_path / "spark" / "store").exists()
    assert len(list((tmp_path / "spark" / "corpus").glob("part-*.parquet"))) >= 1
    want = TokenStore.open(tmp_path / "local" / "store")
    got = TableCorpus.open(tmp_path / "spark" / "corpus")
    assert got.doc_ids == want.doc_ids
    for c in ("url", "host", "n_tokens"):
        assert got.docs.column(c).equals(want.docs.column(c)), c
    for k in ("documents", "tokens", "bytes", "empty_documents", "unit"):
        assert got.summary[k] == want.summary[k], k
    assert res.summary["corpus"]["read"]["empty"] == want.summary["read"]["empty"] == 1
    for d in range(want.n_docs):
        assert got.text(d) == want.text(d)
        assert np.array_equal(got.token_spans(d), want.token_spans(d))
        assert got.order_key(d) == order_key(want.doc_ids[d], want.text(d))


def test_clean_after_a_spark_scan_reads_the_input_in_any_order(tmp_path):
    """`clean` of a Spark scan matches the (shuffled) input to the scan by id: the
    same documents kept, the same texts, the same removal log as a local scan and
    clean of the same records."""
    from repetend.jobs.clean import clean_corpus

    shuffled, ref = shuffled_and_reference(tmp_path, _rows(80, seed=9), seed=5)
    cfg = dict(phrases=PhraseConfig(min_docs=4), report=False)
    scan([ref], tmp_path / "local", ScanConfig(**cfg))
    scan([shuffled], tmp_path / "spark", ScanConfig(**cfg, spark_master="local[2]"))
    a = clean_corpus([ref], tmp_path / "local", tmp_path / "a.jsonl")
    b = clean_corpus([shuffled], tmp_path / "spark", tmp_path / "b.jsonl")
    assert a.as_dict() | {"out": "", "log": ""} == b.as_dict() | {"out": "", "log": ""}
    assert a.documents_out < a.documents_in and a.chars_cut > 0

    def by_id(path, key):
        out = {}
        with open(path, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                r.pop("source", None)
                r.pop("record_no", None)
                out[r[key]] = r
        return out

    assert by_id(tmp_path / "a.jsonl", "id") == by_id(tmp_path / "b.jsonl", "id")
    assert by_id(tmp_path / "a.jsonl.removed.jsonl", "id") == \
        by_id(tmp_path / "b.jsonl.removed.jsonl", "id")
    # an input that changed since the scan is refused, naming the document
    with open(shuffled, encoding="utf-8") as f:
        rows = [json.loads(x) for x in f]
    rows[3]["text"] += " changed"
    _write(tmp_path / "changed.jsonl", rows)
    with pytest.raises(Exception, match="another text"):
        clean_corpus([tmp_path / "changed.jsonl"], tmp_path / "spark", tmp_path / "c.jsonl")
    assert not (tmp_path / "c.jsonl").exists()


def test_report_of_a_spark_scan(tmp_path):
    """The report is built from the tables and the corpus dataset (the texts of the
    documents it shows): the same phrases and figures as the local report."""
    import re

    shuffled, ref = shuffled_and_reference(tmp_path, _rows(60, seed=12), seed=1)
    cfg = dict(phrases=PhraseConfig(min_docs=4))
    scan([ref], tmp_path / "local", ScanConfig(**cfg))
    scan([shuffled], tmp_path / "spark", ScanConfig(**cfg, spark_master="local[2]"))

    def visible(d):
        """The report's visible lines, with the scan's own paths and engine named
        alike, without the summary's JSON (timings) and the S-curve's caption
        (the measured recall needs the token ids: local scans only)."""
        h = (d / "report.html").read_text(encoding="utf-8")
        h = re.sub(r"<script.*?</script>|<style.*?</style>", "", h, flags=re.S)
        h = h.replace(str(tmp_path), "T").replace("ordered.jsonl", "IN").replace(
            "shuffled.jsonl", "IN").replace("T/local", "T/S").replace("T/spark", "T/S").replace(
            "ordered.clean", "OUT").replace("shuffled.clean", "OUT")
        lines = [ln.strip() for ln in re.sub(r"<[^>]+>", "\n", h).splitlines() if ln.strip()]
        lines = lines[:lines.index("Parameters and timings")]
        return [ln for ln in lines if not ln.startswith(("Blue: the prob", "repetend report —",
                                                         "scan T/S · written"))]

    a, b = visible(tmp_path / "local"), visible(tmp_path / "spark")
    assert len(a) > 100
    assert a == b
    phrases = pq.read_table(tmp_path / "local" / "phrases" / "phrases.parquet").column("text")
    assert any(t[:30].replace("&", "&amp;").replace("<", "&lt;") in "\n".join(b)
               for t in phrases.to_pylist())


def test_options_the_spark_engine_does_not_run_are_refused_before_reading(tmp_path):
    """Read and normalization options Spark does not apply are refused, never ignored."""
    corpus = _write(tmp_path / "c.jsonl", _rows(5, seed=1))
    for opts, dups, what in (({"limit": 3}, NearDupConfig(), "--limit"),
                             ({"glob": "*.jsonl"}, NearDupConfig(), "--glob"),
                             ({"duplicate_ids": "rename"}, NearDupConfig(), "--duplicate-ids"),
                             ({}, NearDupConfig(stem="auto"), "stem="),
                             ({}, NearDupConfig(stopwords="english"), "stopwords=")):
        with pytest.raises(ParameterError, match=what):
            scan([corpus], tmp_path / "x", ScanConfig(dups=dups, input_options=opts,
                                                      spark_master="local[2]"))
        assert not (tmp_path / "x").exists()


def test_a_uri_input_is_read_by_spark(tmp_path):
    """A ``file://`` URI (as ``s3a://`` or ``hdfs://`` would be) is read by the Spark
    session, not expanded on the driver: the same tables as from the path."""
    shuffled, ref = shuffled_and_reference(tmp_path, _rows(40, seed=6), seed=4)
    cfg = dict(phrases=PhraseConfig(min_docs=3, templates=None), report=False)
    scan([ref], tmp_path / "local", ScanConfig(**cfg))
    scan([shuffled.as_uri()], tmp_path / "spark", ScanConfig(**cfg, spark_master="local[2]"))
    assert_same_tables(tmp_path / "spark", tmp_path / "local")


def test_a_corpus_without_repeats_an_awkward_file_name_and_a_moved_directory(tmp_path):
    """Nothing repeats (no template part anywhere), the input's name has a space, a
    comma and brackets and one bad line: the scan finishes, the message names the
    file and line as the local reader does.  An earlier local scan's store in the
    directory is removed (it is not this scan's), and a moved directory opens its
    own corpus dataset."""
    from repetend.corpus.table_corpus import TableCorpus
    from repetend.scandir import open_scan

    d = tmp_path / "in dir, [x]"
    d.mkdir()
    corpus = _write(d / "my file,[1].jsonl", [
        {"id": "a", "text": "one two three four five six"},
        {"id": "b", "text": "seven eight nine ten eleven"},
        {"id": "c", "text": "twelve thirteen fourteen"}])
    with open(corpus, "a", encoding="utf-8") as f:
        f.write('{"id": "d", "text": broken}\n')
    out = tmp_path / "scan"
    scan([corpus], out, ScanConfig(phrases=PhraseConfig(min_docs=2)))     # local
    assert (out / "store").is_dir()
    res = scan([corpus], out, ScanConfig(phrases=PhraseConfig(min_docs=2),
                                         spark_master="local[2]"))
    read = res.summary["corpus"]["read"]
    assert read["records"] == 3 and read["malformed"] == 1
    assert read["errors"] == [f"{corpus}, line 4: " + read["errors"][0].split(", line 4: ")[1]]
    assert "not valid JSON" in read["errors"][0]
    assert not (out / "store").exists() and (out / "corpus").is_dir()
    assert (out / "report.html").is_file()
    moved = tmp_path / "moved"
    out.rename(moved)
    sd = open_scan(moved)
    assert isinstance(sd.store, TableCorpus) and sd.store.doc_ids == res.store.doc_ids
