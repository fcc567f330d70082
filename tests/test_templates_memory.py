"""The template layer under a memory limit: it runs in memory, so ``find_phrases``
plans it from an estimate — the layer asked for when it fits, merge-only when only
that fits, none (with the reason in the summary, the CLI and the report) when
nothing fits."""

from __future__ import annotations

import json

from click.testing import CliRunner

from repetend.cli import main
from repetend.corpus.store import TokenStore
from repetend.phrases import find as phrase_find
from repetend.phrases import find_phrases
from repetend.phrases.templates import TemplateConfig


def _store(tmp_path):
    import numpy as np

    rng = np.random.default_rng(3)
    words = ["".join(rng.choice(list("abcdefghijklmnop"), size=5)) for _ in range(500)]
    texts = []
    for i in range(12):
        body = " ".join(rng.choice(words, size=60))     # most tokens are in no phrase
        texts.append(f"{body} {i} text number {i * 7}. Показано {1 + 20 * (i % 3)}–{20 + 20 * (i % 3)}"
                     f" из {100 + i} товаров. © {2019 + i % 5} Магазин «Лето». Все права "
                     f"защищены. Read <b>more</b> & more about it here today.")
    store = TokenStore.from_texts(texts)
    path = tmp_path / "c.store"
    store.save(path)
    return TokenStore.open(path)


def _fake_anon(monkeypatch, free: int, limit: int):
    """Pretend the process holds ``limit - free`` private bytes when the plan is made."""
    monkeypatch.setattr(phrase_find, "rss_now", lambda: {"anon": limit - free, "file": 0,
                                                         "rss": 0, "hwm": 0})


LIMIT = 2**36        # above what a long test process holds (the out-of-core miner refuses less)


def _plan(store, monkeypatch, free, **kw):
    _fake_anon(monkeypatch, free, LIMIT)
    res = find_phrases(store, min_docs=3, min_len=4, memory_limit=LIMIT, **kw)
    return res, res.summary


def test_no_limit_runs_the_layer_asked_for(tmp_path):
    store = _store(tmp_path)
    for parts, mode in ((True, "default"), (False, "merge-only")):
        s = find_phrases(store, min_docs=3, min_len=4,
                         templates=TemplateConfig(short_parts=parts)).summary
        assert s["templates"]["memory_plan"] == {"asked": mode, "mode": mode}


def test_plan_follows_the_estimates(tmp_path, monkeypatch):
    store = _store(tmp_path)
    n = store.n_tokens
    need_default = phrase_find._TEMPLATE_BYTES_PER_TOKEN * n
    assert find_phrases(store, min_docs=3, min_len=4).summary["frequent_share"] < 0.4
    # plenty: the default layer, its estimate and measured peak recorded
    res, s = _plan(store, monkeypatch, need_default)
    plan = s["templates"]["memory_plan"]
    assert plan["mode"] == "default" and "reason" not in plan
    assert plan["estimate_bytes"]["default"] == need_default
    assert plan["peak_anon_bytes"] > 0
    default_table = res.templates.table
    # one byte short of the default layer: merge-only, with the reason
    res, s = _plan(store, monkeypatch, need_default - 1)
    plan = s["templates"]["memory_plan"]
    assert plan["mode"] == "merge-only" and "merge-only" in plan["reason"]
    assert res.templates.summary["parameters"]["short_parts"] is False
    merge = find_phrases(store, min_docs=3, min_len=4,
                         templates=TemplateConfig(short_parts=False)).templates
    assert res.templates.table.equals(merge.table)
    assert not default_table.equals(merge.table)       # the corpus tells the modes apart
    # nothing fits: no templates, the reason in the summary
    res, s = _plan(store, monkeypatch, plan["estimate_bytes"]["merge-only"] - 1)
    assert res.templates is None and "templates" not in s
    assert "--memory-limit" in s["templates_skipped"]["reason"]
    assert s["templates_skipped"]["mode"] == "skipped"
    # the exact phrases are the same whatever the plan
    assert res.phrases.equals(find_phrases(store, min_docs=3, min_len=4,
                                           memory_limit=LIMIT).phrases)


def test_merge_only_asked_never_upgrades(tmp_path, monkeypatch):
    store = _store(tmp_path)
    _, s = _plan(store, monkeypatch, 10**12, templates=TemplateConfig(short_parts=False))
    assert s["templates"]["memory_plan"]["mode"] == "merge-only"


def test_cli_and_report_say_why(tmp_path, monkeypatch):
    store = _store(tmp_path)
    limit = 2**36        # above what a long test process holds (scan refuses a limit below it)
    _fake_anon(monkeypatch, 10, limit)
    out = tmp_path / "scan"
    r = CliRunner().invoke(main, ["scan", str(store.path), "--min-docs", "3", "--min-len", "4",
                                  "--memory-limit", str(limit), "--no-dups", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "templates skipped" in r.output and "--memory-limit" in r.output
    summary = json.loads((out / "phrases" / "summary.json").read_text())
    assert summary["templates_skipped"]["mode"] == "skipped"
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'href="#templates"' in html and "Templates skipped:" in html
    r = CliRunner().invoke(main, ["phrases", str(store.path), "-s", "3", "-L", "4",
                                  "--memory-limit", str(limit), "--out", str(tmp_path / "ph")])
    assert r.exit_code == 0, r.output
    assert "templates skipped" in r.output


def test_report_escapes_the_reason(tmp_path):
    from repetend.report.templates_section import templates_section_html

    d = tmp_path / "scan" / "phrases"
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({"templates_skipped": {"reason": "<b>x</b> & y"}}))
    html = templates_section_html(tmp_path / "scan")
    assert "&lt;b&gt;x&lt;/b&gt; &amp; y" in html and "<b>x</b>" not in html
