"""Rerunning ``scan`` into the same directory: what the template layer keeps,
runs again or removes — a layer skipped or downgraded under the memory limit
is not reused once there is room, a full layer is, and templates left by an
earlier run do not survive a run without them."""

from __future__ import annotations

import json

from click.testing import CliRunner

from repetend.cli import main
from repetend.phrases import find as phrase_find

from test_templates_memory import LIMIT, _fake_anon, _store


def _scan(store, out, *extra):
    r = CliRunner().invoke(main, ["scan", str(store.path), "--min-docs", "3", "--min-len", "4",
                                  "--no-dups", "--no-report", "--out", str(out), *extra])
    assert r.exit_code == 0, r.output
    return r, json.loads((out / "phrases" / "summary.json").read_text())


def test_reuse_does_not_keep_a_skipped_template_layer(tmp_path, monkeypatch):
    store = _store(tmp_path)
    out = tmp_path / "scan"
    real = phrase_find.rss_now
    _fake_anon(monkeypatch, 10, LIMIT)
    _, s = _scan(store, out, "--memory-limit", str(LIMIT))
    assert "templates_skipped" in s and "templates" not in s
    # room again (no limit): the skipped layer is not an answer to reuse
    monkeypatch.setattr(phrase_find, "rss_now", real)
    r, s = _scan(store, out, "--reuse")
    assert "templates_skipped" not in s, r.output
    assert s["templates"]["memory_plan"]["mode"] == "default"


def test_reuse_does_not_keep_a_downgraded_template_layer(tmp_path, monkeypatch):
    store = _store(tmp_path)
    out = tmp_path / "scan"
    need = phrase_find._TEMPLATE_BYTES_PER_TOKEN * store.n_tokens
    _fake_anon(monkeypatch, need - 1, LIMIT)
    _, s = _scan(store, out, "--memory-limit", str(LIMIT))
    assert s["templates"]["memory_plan"]["mode"] == "merge-only"
    _fake_anon(monkeypatch, need, LIMIT)
    _, s = _scan(store, out, "--memory-limit", str(LIMIT), "--reuse")
    assert s["templates"]["memory_plan"]["mode"] == "default"


def test_reuse_keeps_a_full_template_layer(tmp_path):
    store = _store(tmp_path)
    out = tmp_path / "scan"
    _scan(store, out)
    r, _ = _scan(store, out, "--reuse")
    assert "reusing phrases" in r.output


def test_a_skipped_layer_does_not_leave_the_previous_templates(tmp_path, monkeypatch):
    """Rerunning into the same directory without templates must not leave the
    previous run's templates for the report and ``clean`` to use."""
    store = _store(tmp_path)
    out = tmp_path / "scan"
    _scan(store, out)
    assert (out / "phrases" / "templates.parquet").is_file()
    _fake_anon(monkeypatch, 10, LIMIT)
    _, s = _scan(store, out, "--memory-limit", str(LIMIT))
    assert "templates_skipped" in s
    assert not (out / "phrases" / "templates.parquet").is_file()
    assert not (out / "phrases" / "template_occurrences.parquet").is_file()


def test_no_templates_does_not_leave_the_previous_templates(tmp_path):
    store = _store(tmp_path)
    out = tmp_path / "scan"
    _scan(store, out)
    _scan(store, out, "--no-templates")
    assert not (out / "phrases" / "templates.parquet").is_file()
