"""Every numeric option of every command has a lower and an upper bound, shown in
``--help``; a hostile number is one ``error:`` line and exit 2 before any work; the
library refuses the same values (the bounds are :mod:`repetend.limits`)."""

from __future__ import annotations

import math

import click
import pytest
from click.testing import CliRunner

from repetend import limits as L
from repetend.cli import main
from repetend.cli.options import Real
from repetend.errors import ParameterError, RepetendError


def _commands(group=main, path=()):
    for name, cmd in sorted(group.commands.items()):
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*path, name))
        else:
            yield (*path, name), cmd


def _numeric(cmd):
    return [p for p in cmd.params if isinstance(p, click.Option)
            and isinstance(p.type, (click.types.IntParamType, click.types.FloatParamType))]


ALL = [(" ".join(path), cmd) for path, cmd in _commands()]


def test_the_walk_sees_every_command_and_their_numeric_options():
    names = {n for n, _ in ALL}
    assert {"scan", "dups", "phrases", "clean", "report", "index build", "query", "serve",
            "synth", "lsh-params", "demo", "tokenize"} <= names
    assert sum(len(_numeric(c)) for _, c in ALL) >= 70


@pytest.mark.parametrize("name, cmd", ALL, ids=[n for n, _ in ALL])
def test_every_numeric_option_has_both_bounds_in_its_help(name, cmd):
    ctx = click.Context(cmd, info_name=name)
    for p in _numeric(cmd):
        assert isinstance(p.type, click.types._NumberRangeBase), (name, p.name)
        assert p.type.min is not None and p.type.max is not None, (name, p.name, p.type)
        if isinstance(p.type, click.types.FloatParamType):
            assert isinstance(p.type, Real), (name, p.name)   # nan is refused too
        record = p.get_help_record(ctx)
        assert record is not None and p.type._describe_range() in record[1], (name, p.name)


@pytest.mark.parametrize("args, option", [
    (["dups", "x.jsonl", "-o", "o", "--threshold", "nan"], "--threshold"),
    (["dups", "x.jsonl", "-o", "o", "--shingle", str(10**30)], "--shingle"),
    (["dups", "x.jsonl", "-o", "o", "--seed", "-1"], "--seed"),
    (["dups", "x.jsonl", "-o", "o", "--bands", "0"], "--bands"),
    (["dups", "x.jsonl", "-o", "o", "--max-bucket", str(2**63)], "--max-bucket"),
    (["lsh-params", "--fp-weight", "inf"], "--fp-weight"),
    (["phrases", "x.jsonl", "-o", "o", "--filter-bytes", str(10**15)], "--filter-bytes"),
    (["phrases", "x.jsonl", "-o", "o", "--top", "-5"], "--top"),
    (["scan", "x.jsonl", "-o", "o", "--max-gap", "100000"], "--max-gap"),
    (["scan", "x.jsonl", "-o", "o", "--limit", str(2**40)], "--limit"),
    (["synth", "weblike", "--out", "o", "--docs", str(10**12)], "--docs"),
    (["synth", "weblike", "--out", "o", "--lang-mix", "nan"], "--lang-mix"),
    (["report", "k", "-o", "r.html", "--max-rows", str(10**9)], "--max-rows"),
    (["query", "idx", "--text", "a", "--max-matches", str(10**9)], "--max-matches"),
    (["serve", "idx", "--query-seconds", "1e9"], "--query-seconds"),
    (["serve", "idx", "--max-body-bytes", str(2**40)], "--max-body-bytes"),
    (["demo", "--pages", "0"], "--pages"),
    (["clean", "--scan", "k", "-o", "x.jsonl", "--min-share", "nan"], "--min-share"),
])
def test_a_hostile_number_is_one_error_line(tmp_path, args, option):
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, (args, r.output)
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and option in lines[0], r.output
    assert "--help" in lines[0]


@pytest.mark.parametrize("command, option, bound", [
    ("dups", "shingle", L.MAX_SHINGLE), ("scan", "shingle", L.MAX_SHINGLE),
    ("index build", "shingle", L.MAX_SHINGLE), ("dups", "seed", L.MAX_SEED),
    ("dups", "num_perm", L.MAX_NUM_PERM), ("dups", "max_bucket", L.MAX_DOCS),
    ("dups", "min_shingles", L.MAX_DOCS), ("phrases", "min_docs", L.MAX_DOCS),
    ("phrases", "min_len", L.MAX_LEN), ("phrases", "seed_len", L.MAX_LEN),
    ("phrases", "filter_bytes", L.MAX_FILTER_BYTES), ("phrases", "top_k", L.MAX_LIST),
    ("phrases", "max_gap", L.MAX_GAP), ("scan", "template_min_span", L.MAX_LEN),
    ("report", "max_rows", L.MAX_LIST), ("query", "max_matches", L.MAX_LIST),
    ("query", "min_shared", L.MAX_DOCS), ("index build", "postings_max_df", L.MAX_DOCS),
    ("serve", "max_docs", L.SERVE_MAX["max_docs"]), ("serve", "query_seconds", L.MAX_SECONDS),
    ("serve", "max_answer_bytes", L.SERVE_MAX["max_answer_bytes"]),
])
def test_the_command_line_bound_is_the_library_bound(command, option, bound):
    cmd = dict(ALL)[command]
    (p,) = [p for p in cmd.params if p.name == option]
    assert p.type.max == bound


def test_the_library_refuses_what_the_command_line_refuses(tmp_path):
    from repetend.neardup import NearDupConfig, lsh_params
    from repetend.phrases import PhraseConfig
    from repetend.phrases.templates import TemplateConfig
    from repetend.report.build import ReportCaps
    from repetend.serve import create_app
    from repetend.synth.weblike import weblike

    ok = [NearDupConfig(shingle=L.MAX_SHINGLE, seed=L.MAX_SEED, max_bucket=L.MAX_DOCS,
                        min_shingles=L.MAX_DOCS),
          PhraseConfig(min_docs=L.MAX_DOCS, min_len=L.MAX_LEN, top_k=L.MAX_LIST,
                       filter_bytes=L.MAX_FILTER_BYTES, seed_len=L.MAX_LEN,
                       templates=TemplateConfig(max_gap=L.MAX_GAP, min_span=L.MAX_LEN))]
    for cfg in ok:
        cfg.validate()
    bad = [NearDupConfig(shingle=L.MAX_SHINGLE + 1), NearDupConfig(seed=-1),
           NearDupConfig(seed=L.MAX_SEED + 1), NearDupConfig(max_bucket=L.MAX_DOCS + 1),
           NearDupConfig(min_shingles=L.MAX_DOCS + 1), NearDupConfig(threshold=math.nan),
           NearDupConfig(containment=math.nan),
           PhraseConfig(min_docs=L.MAX_DOCS + 1), PhraseConfig(min_len=L.MAX_LEN + 1),
           PhraseConfig(top_k=L.MAX_LIST + 1), PhraseConfig(filter_bytes=L.MAX_FILTER_BYTES + 1),
           PhraseConfig(seed_len=L.MAX_LEN + 1), PhraseConfig(near_full_share=math.nan),
           PhraseConfig(templates=TemplateConfig(max_gap=L.MAX_GAP + 1)),
           PhraseConfig(templates=TemplateConfig(min_span=L.MAX_LEN + 1))]
    for cfg in bad:
        with pytest.raises(ParameterError):
            cfg.validate()
    for kw in (dict(fp_weight=math.inf), dict(fn_weight=-0.1), dict(min_recall=math.nan)):
        with pytest.raises(ParameterError):
            lsh_params(0.8, 128, **kw)
    with pytest.raises(ParameterError):
        ReportCaps(max_rows=L.MAX_LIST + 1)
    with pytest.raises(ParameterError, match="seed"):
        weblike(10, seed=-1)
    for kw in (dict(max_docs=L.SERVE_MAX["max_docs"] + 1), dict(query_seconds=L.MAX_SECONDS * 2),
               dict(max_body_bytes=0), dict(max_depth=L.SERVE_MAX["max_depth"] + 1),
               dict(query_seconds=math.nan)):
        with pytest.raises(RepetendError):   # checked before the index is opened
            create_app(tmp_path / "no-index", **kw)
