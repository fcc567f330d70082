"""``--template-slotted-span``: from the command line to the template layer,
into the recorded parameters and the scan's reuse key (a rerun with another
value recomputes the template tables instead of reusing stale ones; the
default ``auto`` is recorded as the span it resolves to, so a directory
written when the default was off is not reused as if it had it)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from repetend.cli import main
from repetend.cli.options import template_config
from repetend.phrases import PhraseConfig
from repetend.phrases.templates import TemplateConfig
from repetend.synth import weblike

KW = {"no_templates": False, "max_gap": 4, "template_min_span": None, "template_prune": False,
      "template_parts": True}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return weblike(240, seed=3).write(tmp_path_factory.mktemp("web"))["corpus"]


def test_the_option_maps_to_the_config_field():
    assert template_config(KW).slotted_min_span == TemplateConfig().slotted_min_span == "auto"
    assert template_config({**KW, "template_slotted_span": "auto"}).slotted_min_span == "auto"
    assert template_config({**KW, "template_slotted_span": None}).slotted_min_span is None
    assert template_config({**KW, "template_slotted_span": 0}).slotted_min_span == 0
    assert template_config({**KW, "template_slotted_span": 6}).slotted_min_span == 6


@pytest.mark.parametrize("command", ["scan", "phrases"])
def test_the_option_is_parsed_bounded_and_documented(command, corpus, tmp_path):
    r = CliRunner().invoke(main, [command, "--help"])
    assert r.exit_code == 0 and "--template-slotted-span" in r.output
    assert "auto" in r.output and "off" in r.output
    args = [command, str(corpus), "--out", str(tmp_path / "o")]
    args += ["--min-docs", "5"] if command == "scan" else ["-s", "5"]
    for bad in ("-1", "x", "1000001", "6.5"):
        r = CliRunner().invoke(main, args + ["--template-slotted-span", bad])
        assert r.exit_code == 2 and "--template-slotted-span" in r.output, r.output


def test_the_option_values():
    from repetend.cli.options import SLOTTED_SPAN

    assert [SLOTTED_SPAN.convert(v, None, None) for v in ("auto", "AUTO", "off", "0", 0, "6", 7)] \
        == ["auto", "auto", 0, 0, 0, 6, 7]


def test_params_round_trip_and_stay_as_before_when_off():
    for off in (PhraseConfig(min_docs=5, templates=TemplateConfig(slotted_min_span=None)),
                PhraseConfig(min_docs=5, templates=TemplateConfig(slotted_min_span=0)),
                PhraseConfig(min_docs=5, templates=None)):
        assert "template_slotted_span" not in off.to_params()      # as before the option
    off = PhraseConfig(min_docs=5, templates=TemplateConfig(slotted_min_span=None))
    assert PhraseConfig.from_params(off.to_params()) == off
    on = PhraseConfig(min_docs=5, templates=TemplateConfig(slotted_min_span=7))
    p = on.to_params()
    assert p["template_slotted_span"] == 7
    assert PhraseConfig.from_params(p) == on
    # the default is recorded as the span it resolves to (6 at L = 10), so a
    # summary written before it was the default (no key: off) reads as off
    auto = PhraseConfig(min_docs=5)
    assert auto.to_params()["template_slotted_span"] == 6
    assert PhraseConfig.from_params(auto.to_params()) == auto
    six = PhraseConfig(min_docs=5, templates=TemplateConfig(slotted_min_span=6))
    assert six.to_params() == auto.to_params()                       # the same run
    assert PhraseConfig(min_docs=5, min_len=8).to_params()["template_slotted_span"] == 6
    for short in (PhraseConfig(min_docs=5, min_len=5),                # 6 is not below L
                  PhraseConfig(min_docs=5, templates=TemplateConfig(short_parts=False))):
        assert "template_slotted_span" not in short.to_params()
        assert PhraseConfig.from_params(short.to_params()) == short
    kinds = PhraseConfig(templates=TemplateConfig(slotted_min_span=6, short_slots="any"))
    assert kinds.to_params()["template_short_slots"] == "any"
    assert PhraseConfig.from_params(kinds.to_params()).templates.short_slots == "any"


def _tables(out):
    return (pq.read_table(out / "phrases" / "templates.parquet"),
            pq.read_table(out / "phrases" / "template_occurrences.parquet"))


def test_a_scan_rerun_with_another_value_recomputes(corpus, tmp_path):
    out = tmp_path / "o"
    base = ["scan", str(corpus), "--out", str(out), "--min-docs", "5", "--no-dups",
            "--no-report", "--reuse"]
    runs = {}
    for flag in (["--template-slotted-span", "off"], [], ["--template-slotted-span", "7"],
                 ["--template-slotted-span", "off"]):
        r = CliRunner().invoke(main, base + flag)
        assert r.exit_code == 0, r.output
        assert "reusing phrases" not in r.output, flag            # each value differs
        s = json.loads((out / "phrases" / "templates_summary.json").read_text())
        want = 6 if not flag else (None if flag[1] == "off" else int(flag[1]))
        assert s["parameters"]["slotted_min_span"] == want
        scan_params = json.loads((out / "summary.json").read_text())["parameters"]
        assert scan_params.get("template_slotted_span") == want
        assert ("template_slotted_span" in scan_params) is (want is not None)
        t, occ = _tables(out)
        spans = t.column("span_tokens").to_pylist()
        assert min(spans) >= (want or 10)
        if want:
            assert min(spans) < 10                                 # short slotted ones
        runs.setdefault(tuple(flag), []).append((t, occ))
    # off again: the tables of the first run, byte for byte (not the 7's reused)
    off = ("--template-slotted-span", "off")
    (t0, o0), (t1, o1) = runs[off]
    assert t0.equals(t1) and o0.equals(o1)
    texts = {k: set(map(" ".join, v[0][0].column("parts").to_pylist()))
             for k, v in runs.items()}
    assert "showing ▢ ▢ of ▢ items" in texts[()] - texts[off]
    # the default and an explicit 6 are one run: reused
    CliRunner().invoke(main, base)
    r = CliRunner().invoke(main, base + ["--template-slotted-span", "6"])
    assert "reusing phrases" in r.output


def test_a_scan_written_before_the_default_is_not_reused_as_if_new(corpus, tmp_path):
    # a directory of the old default (slotted span off: no key in its stamps)
    # must be recomputed by a scan at the new default, and reused when off
    out = tmp_path / "o"
    base = ["scan", str(corpus), "--out", str(out), "--min-docs", "5", "--no-dups",
            "--no-report", "--reuse"]
    r = CliRunner().invoke(main, base + ["--template-slotted-span", "off"])
    assert r.exit_code == 0, r.output
    old_params = json.loads((out / "summary.json").read_text())["parameters"]
    assert "template_slotted_span" not in old_params               # as old scans wrote it
    r = CliRunner().invoke(main, base + ["--template-slotted-span", "0"])
    assert "reusing phrases" in r.output                            # 0 is off
    r = CliRunner().invoke(main, base)
    assert r.exit_code == 0 and "reusing phrases" not in r.output, r.output
    assert json.loads((out / "summary.json").read_text())["parameters"][
        "template_slotted_span"] == 6
