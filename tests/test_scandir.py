"""The scan directory as one unit: parts made from another corpus are refused by
the readers (report, clean), and the S-curve points the report draws are the
ones the scan job measured and stored."""

from __future__ import annotations

import json
import shutil

import pytest

from repetend.errors import InputError
from repetend.jobs import ScanConfig, clean_corpus, scan
from repetend.neardup import NearDupConfig
from repetend.phrases import PhraseConfig
from repetend.report import build_report
from repetend.scandir import DUPS, PHRASES, STAMP_KEY, SUMMARY, open_scan, read_stamp
from repetend.synth import weblike


@pytest.fixture(scope="module")
def two_scans(tmp_path_factory):
    root = tmp_path_factory.mktemp("scans")
    outs = {}
    for name, pages, seed in (("a", 120, 1), ("b", 90, 2)):
        corpus = weblike(pages, seed=seed).write(root / f"c{name}")["corpus"]
        outs[name] = (corpus, root / f"s{name}")
        scan([corpus], outs[name][1], ScanConfig(phrases=PhraseConfig(min_docs=4, templates=False),
                                                 dups=NearDupConfig(threshold=0.5)))
    return outs


def test_a_whole_scan_directory_verifies(two_scans):
    _, out = two_scans["a"]
    scan_dir = open_scan(out, verify=True)
    assert scan_dir.verify() == []
    for stage in (PHRASES, DUPS):
        stamp = read_stamp(out / stage)
        assert stamp["corpus"]["documents"] == scan_dir.store.n_docs


@pytest.mark.parametrize("stage", [PHRASES, DUPS])
def test_a_stage_from_another_corpus_is_refused(two_scans, tmp_path, stage):
    """A scan killed after writing the store of corpus A over a scan of B leaves B's
    stages beside A's store: the report and clean refuse it, naming the stage."""
    corpus_a, out_a = two_scans["a"]
    _, out_b = two_scans["b"]
    mixed = tmp_path / "mixed"
    shutil.copytree(out_a, mixed)
    shutil.rmtree(mixed / stage)
    shutil.copytree(out_b / stage, mixed / stage)
    assert any(p.startswith(f"{stage}/") for p in open_scan(mixed).verify())
    with pytest.raises(InputError, match=f"mixes two runs: {stage}/"):
        build_report(mixed, tmp_path / "r.html")
    with pytest.raises(InputError, match="mixes two runs"):
        clean_corpus([corpus_a], mixed, tmp_path / "clean.jsonl")
    assert not (tmp_path / "clean.jsonl").exists() and not (tmp_path / "r.html").exists()


def test_a_scan_without_its_report_measures_no_recall(two_scans, tmp_path):
    corpus_a, _ = two_scans["a"]
    scan([corpus_a], tmp_path / "s", ScanConfig(phrases=None, dups=NearDupConfig(threshold=0.5),
                                                report=False))
    assert "measured_recall" not in json.loads((tmp_path / "s" / DUPS / SUMMARY).read_text())


def test_stages_without_stamps_are_not_judged(two_scans, tmp_path):
    """A phrases directory written by `repetend phrases` (no stage stamp) is read as it is."""
    _, out_a = two_scans["a"]
    plain = tmp_path / "plain"
    shutil.copytree(out_a, plain)
    summary = json.loads((plain / PHRASES / SUMMARY).read_text())
    summary.pop(STAMP_KEY)
    (plain / PHRASES / SUMMARY).write_text(json.dumps(summary))
    assert open_scan(plain, verify=True).verify() == []


def test_the_report_draws_the_recall_the_scan_measured(two_scans, tmp_path):
    _, out = two_scans["a"]
    dsum = json.loads((out / DUPS / SUMMARY).read_text())
    m = dsum["measured_recall"]
    assert len(m["centres"]) == len(m["share"]) == len(m["count"]) > 0
    assert all(0.0 <= s <= 1.0 for s in m["share"]) and all(c > 0 for c in m["count"])
    page = build_report(out, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Green points" in page
    dsum.pop("measured_recall")
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    (copy / DUPS / SUMMARY).write_text(json.dumps(dsum))
    page = build_report(copy, tmp_path / "r2.html").read_text(encoding="utf-8")
    assert "Green points" not in page and "The measured share of pairs found per bin" in page


def test_a_stage_from_other_files_of_the_same_size_is_refused(tmp_path):
    """Two corpora with the same documents and tokens, different files: the stamp's
    input files tell them apart."""
    texts = [f"page {i} shared footer words here and there again and again" for i in range(12)]
    runs = {}
    for name in ("a", "b"):
        src = tmp_path / f"{name}.jsonl"
        src.write_text("".join(json.dumps({"id": f"{name}{i}", "text": t}) + "\n"
                               for i, t in enumerate(texts)))
        runs[name] = tmp_path / f"s{name}"
        scan([src], runs[name], ScanConfig(phrases=PhraseConfig(min_docs=3, min_len=4,
                                                                templates=False),
                                           dups=None, report=False))
    mixed = tmp_path / "mixed"
    shutil.copytree(runs["a"], mixed)
    summary = json.loads((mixed / SUMMARY).read_text())
    summary["store"] = str(mixed / "store")
    (mixed / SUMMARY).write_text(json.dumps(summary))
    shutil.rmtree(mixed / PHRASES)
    shutil.copytree(runs["b"] / PHRASES, mixed / PHRASES)
    assert open_scan(runs["a"], verify=True).verify() == []
    assert open_scan(mixed).verify() == [
        "phrases/ was made from other input files than the token store "
        "(their paths, sizes or modification times differ)"]


def test_a_scan_of_another_scans_store_verifies(two_scans, tmp_path):
    """`scan OUT1/store -o OUT2`: the stages name OUT1's store, whose own stamp lists
    the original files; the report and clean accept OUT2."""
    corpus_a, out_a = two_scans["a"]
    out2 = tmp_path / "again"
    scan([str(out_a / "store")], out2, ScanConfig(phrases=PhraseConfig(min_docs=4,
                                                                      templates=False),
                                                  dups=NearDupConfig(threshold=0.5)))
    assert open_scan(out2, verify=True).verify() == []
    assert (out2 / "report.html").is_file()
    clean_corpus([corpus_a], out2, tmp_path / "clean.jsonl")


def test_a_skipped_stage_of_another_corpus_is_removed(two_scans, tmp_path):
    """A rerun with --no-dups into a directory scanned from another corpus: the old
    dups/ no longer belongs and goes; one of the same corpus stays."""
    corpus_a, _ = two_scans["a"]
    corpus_b, out_b = two_scans["b"]
    out = tmp_path / "rerun"
    shutil.copytree(out_b, out)
    summary = json.loads((out / SUMMARY).read_text())
    summary["store"] = str(out / "store")
    (out / SUMMARY).write_text(json.dumps(summary))
    cfg = ScanConfig(phrases=PhraseConfig(min_docs=4, templates=False), dups=None)
    scan([corpus_b], out, cfg)            # same corpus: its dups/ stays
    assert (out / DUPS).is_dir()
    scan([corpus_a], out, cfg)            # another corpus: the stale dups/ goes
    assert not (out / DUPS).exists()
    assert open_scan(out, verify=True).verify() == []
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="dups"' not in page and "not in this scan (no <code>dups/</code>)" in page


def test_the_job_measures_recall_only_from_a_complete_candidate_list(two_scans, tmp_path):
    from repetend.jobs.scan import _measured_recall

    _, out = two_scans["a"]
    store = open_scan(out).store
    assert _measured_recall(store, out / DUPS) is not None
    copy = tmp_path / "dups"
    shutil.copytree(out / DUPS, copy)
    dsum = json.loads((copy / SUMMARY).read_text())
    for change in ({"candidates_sampled": True}, {"candidates_written": dsum["candidates"] - 1},
                   {"pairs_not_enumerated": 5}, {"bands": None, "parameters": {}}):
        (copy / SUMMARY).write_text(json.dumps({**dsum, **change}))
        assert _measured_recall(store, copy) is None, change


def test_a_second_writer_stops_with_the_first_ones_pid(two_scans, tmp_path):
    import os

    from click.testing import CliRunner

    from repetend.cli import main
    from repetend.scandir import writer_lock

    corpus_a, out_a = two_scans["a"]
    out = tmp_path / "busy"
    shutil.copytree(out_a, out)
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    with writer_lock(out):
        r = CliRunner().invoke(main, ["scan", str(corpus_a), "-o", str(out), "-q"])
    assert r.exit_code == 2, r.output
    assert f"another repetend scan (pid {os.getpid()}) is writing into this directory" in r.output
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()
            and p.name != ".scan.lock"} == {p: t for p, t in before.items()
                                             if p.name != ".scan.lock"}
    r = CliRunner().invoke(main, ["scan", str(corpus_a), "-o", str(out), "--min-docs", "4",
                                  "--no-templates", "--threshold", "0.5", "-q"])
    assert r.exit_code == 0, r.output            # the lock went with its holder


def test_two_scans_started_together_leave_one_whole_directory(two_scans, tmp_path):
    """Two scans into one directory 0.2 s apart (once: 3 of 10 trials left it mixed):
    one writes, the other stops with an error; the directory verifies."""
    import subprocess
    import sys
    import time

    corpus_a, _ = two_scans["a"]
    corpus_b, _ = two_scans["b"]
    out = tmp_path / "k"
    cmd = [sys.executable, "-m", "repetend.cli", "scan", "--min-docs", "4", "-q", "-o", str(out)]
    first = subprocess.Popen(cmd + [str(corpus_a)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    time.sleep(0.2)
    second = subprocess.run(cmd + [str(corpus_b)], capture_output=True, timeout=300)
    first_out, first_err = first.communicate(timeout=300)
    codes = sorted([first.returncode, second.returncode])
    errs = first_err.decode() + second.stderr.decode()
    if codes == [0, 0]:   # the first had finished before the second started: nothing to lock
        pytest.skip("the first scan finished within 0.2 s")
    assert codes == [0, 2], errs
    assert "another repetend scan" in errs
    assert open_scan(out, verify=True).verify() == []
