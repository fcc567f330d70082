"""What a new user meets first: the one-time compile said on one line, progress
that suits a log file, repeated ids refused (or renamed on request), simhash in
`scan`, and a failed first run that leaves no directory behind."""

from __future__ import annotations

import io
import json

import numba
import pytest
from click.testing import CliRunner

from repetend import _compile_notice
from repetend._progress import Progress
from repetend.cli import main
from repetend.corpus.readers import read_corpus
from repetend.corpus.record import ReadStats
from repetend.corpus.store import build_store
from repetend.errors import InputError


# -- the compile notice --------------------------------------------------------------

def _fresh_kernel(module: str):
    def f(x):
        return x * 3 + 1
    f.__module__ = module
    return numba.njit(f)   # no cache: it compiles in this process whatever ran before


def test_the_first_compile_of_a_kernel_is_said_once(monkeypatch):
    import repetend._jit  # noqa: F401  (installs the compile listener)

    said = []
    monkeypatch.setattr(_compile_notice, "_said", False)
    monkeypatch.setattr(_compile_notice, "_say", None)
    _compile_notice.announce(said.append)
    try:
        before = _compile_notice.compiled()
        assert _fresh_kernel("elsewhere.module")(2) == 7      # not one of ours: nothing said
        assert said == [] and _compile_notice.compiled() == before
        assert _fresh_kernel("repetend.fake_kernels")(2) == 7
        assert _fresh_kernel("repetend.fake_kernels")(3.0) == 10.0
        assert said == [_compile_notice.NOTICE]                 # once, however many compile
        assert _compile_notice.compiled() == before + 2
    finally:
        _compile_notice.announce(None)


def test_quiet_commands_do_not_announce(monkeypatch, tmp_path):
    calls = []
    import repetend.cli

    monkeypatch.setattr(repetend.cli, "announce", lambda say: calls.append(say))
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "text": "one two three"}\n')
    r = CliRunner().invoke(main, ["tokenize", str(corpus), "-o", str(tmp_path / "s"), "-q"])
    assert r.exit_code == 0, r.output
    assert calls == []
    r = CliRunner().invoke(main, ["tokenize", str(corpus), "-o", str(tmp_path / "s2")])
    assert r.exit_code == 0, r.output
    assert len(calls) == 1


# -- progress ------------------------------------------------------------------------

class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_off_a_terminal_is_one_line_per_stage():
    log = io.StringIO()
    with Progress("tokenize", unit="B", stream=log) as bar:
        for _ in range(1000):
            bar.update(2_500)
    text = log.getvalue()
    assert "\r" not in text and text.count("\n") == 1
    assert text.startswith("tokenize: 2.5 MB in ")


def test_progress_quiet_or_failed_says_nothing():
    log = io.StringIO()
    with Progress("x", stream=log, quiet=True) as bar:
        bar.update(5)
    with pytest.raises(RuntimeError):
        with Progress("y", stream=log) as bar:
            raise RuntimeError
    assert log.getvalue() == ""


def test_progress_on_a_terminal_is_a_bar():
    tty = _Tty()
    with Progress("mining", total=10, stream=tty) as bar:
        bar.update(10)
        assert bar.bar is not None
    assert "mining" in tty.getvalue()


# -- repeated ids --------------------------------------------------------------------

def _jsonl(path, ids):
    path.write_text("".join(json.dumps({"id": d, "text": f"text of {d} number {i}"}) + "\n"
                            for i, d in enumerate(ids)))
    return path


def test_a_repeated_id_is_refused_naming_it_and_both_records(tmp_path):
    src = _jsonl(tmp_path / "c.jsonl", ["a", "b", "c", "b", "a"])
    with pytest.raises(InputError) as exc:
        build_store(read_corpus([src]), out=tmp_path / "store")
    msg = str(exc.value)
    assert "'b'" in msg and "record 1" in msg and "record 3" in msg and "--duplicate-ids" in msg
    assert not (tmp_path / "store").exists()      # nothing written


@pytest.mark.parametrize("ids", [["a", "a", "a"], ["a", "a#2", "a"], ["x", "y", "x", "x#2", "x"],
                                 ["a#2", "a", "a", "a#3", "a"]])
def test_rename_makes_ids_unique_and_keeps_the_first(tmp_path, ids):
    src = _jsonl(tmp_path / "c.jsonl", ids)
    stats = ReadStats()
    got = [r.id for r in read_corpus([src], duplicate_ids="rename", stats=stats)]
    assert len(set(got)) == len(got)
    seen = set()
    for old, new in zip(ids, got):          # an id read for the first time is kept
        if old not in seen and old not in got[:got.index(new)]:
            assert new == old
        seen.add(old)
        assert new == old or new.startswith(old + "#")
    assert stats.renamed_ids == sum(a != b for a, b in zip(ids, got))


def test_scan_and_clean_with_renamed_ids(tmp_path):
    lines = [{"id": "p", "text": f"page {i} " + "a shared footer line that repeats everywhere " * 2}
             for i in range(12)]
    src = tmp_path / "c.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in lines))
    runner = CliRunner()
    r = runner.invoke(main, ["scan", str(src), "-o", str(tmp_path / "k"), "--min-docs", "3", "-q"])
    assert r.exit_code == 2 and "'p' repeats" in r.output
    assert not (tmp_path / "k").exists()          # a failed first run leaves no directory
    r = runner.invoke(main, ["scan", str(src), "-o", str(tmp_path / "k"), "--min-docs", "3", "-q",
                             "--duplicate-ids", "rename", "--method", "simhash"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["clean", str(src), "--scan", str(tmp_path / "k"),
                             "-o", str(tmp_path / "out.jsonl"), "-q"])
    assert r.exit_code == 0, r.output


def test_a_failed_rerun_keeps_the_directory(tmp_path):
    src = _jsonl(tmp_path / "c.jsonl", [f"d{i}" for i in range(10)])
    runner = CliRunner()
    k = tmp_path / "k"
    assert runner.invoke(main, ["scan", str(src), "-o", str(k), "--min-docs", "2", "-q"]).exit_code == 0
    bad = _jsonl(tmp_path / "bad.jsonl", ["x", "x"])
    r = runner.invoke(main, ["scan", str(bad), "-o", str(k), "--min-docs", "2", "-q"])
    assert r.exit_code == 2
    assert (k / "summary.json").is_file()         # the earlier scan is still there


# -- scan --config FILE.toml -----------------------------------------------------------

def test_scan_options_from_a_toml_file_the_command_line_overrides(tmp_path):
    src = _jsonl(tmp_path / "c.jsonl", [f"d{i}" for i in range(8)])
    cfg = tmp_path / "scan.toml"
    cfg.write_text(f'[scan]\ninputs = ["{src}"]\nout = "{tmp_path / "k"}"\nmin-docs = 2\n'
                   'min_len = 3\nno-report = true\nmethod = "exact"\n')
    runner = CliRunner()
    r = runner.invoke(main, ["scan", "--config", str(cfg), "-q"])
    assert r.exit_code == 0, r.output
    s = json.loads((tmp_path / "k" / "summary.json").read_text())
    assert s["parameters"]["min_docs"] == 2 and s["parameters"]["min_len"] == 3
    assert s["parameters"]["dups_method"] == "exact" and s["stages"]["report"] is False
    assert s["config_file"]["path"] == str(cfg.resolve())
    assert s["config_file"]["options"]["min-docs"] == 2
    r = runner.invoke(main, ["scan", "--config", str(cfg), "-q", "--min-docs", "3",
                             "-o", str(tmp_path / "k2")])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "k2" / "summary.json").read_text())["parameters"]["min_docs"] == 3


@pytest.mark.parametrize("text, message", [("min-dox = 3\n", "unknown option 'min-dox'"),
                                           ("min-docs = 'x'\n", "--min-docs"),
                                           ("min-docs = \n", "--config")])
def test_a_bad_config_file_is_one_usage_error(tmp_path, text, message):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    r = CliRunner().invoke(main, ["scan", "x.jsonl", "--config", str(cfg), "-o", str(tmp_path / "k")])
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output
    assert not (tmp_path / "k").exists()


def test_the_service_warms_up_on_a_document_of_its_index(tmp_path, monkeypatch):
    from repetend.cli.index_cmd import _warm_up
    from repetend.index import NearDupIndex

    src = _jsonl(tmp_path / "c.jsonl", [f"d{i}" for i in range(5)])
    r = CliRunner().invoke(main, ["index", "build", str(src), "-o", str(tmp_path / "idx"), "-q"])
    assert r.exit_code == 0, r.output
    idx = NearDupIndex.open(tmp_path / "idx")
    seen = []
    real = idx.query
    monkeypatch.setattr(idx, "query", lambda texts, **kw: seen.append((texts, kw)) or real(texts, **kw))
    _warm_up(idx)
    assert seen == [([idx.text(0)], {"fragments": True, "phrases": True, "limit": 5})]
