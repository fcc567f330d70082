"""`repetend scan` and `repetend demo` end to end, through the CLI as a user runs them."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from repetend import TokenStore
from repetend.cli import main
from repetend.jobs import choose_min_docs
from repetend.neardup import NearDupConfig
from repetend.phrases import PhraseConfig
from repetend.synth import weblike


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("web")
    return weblike(240, seed=3).write(out)["corpus"]


def test_scan_writes_every_output_and_they_agree(corpus, tmp_path):
    out = tmp_path / "scan"
    r = CliRunner().invoke(main, ["scan", str(corpus), "--out", str(out), "--min-docs", "5",
                                  "--quiet"])
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["parameters"]["min_docs"] == 5
    assert summary["corpus"]["documents"] == 240
    phrases = pq.read_table(out / "phrases" / "phrases.parquet").to_pandas()
    assert len(phrases) > 0 and (phrases["df"] >= 5).all() and (phrases["length"] >= 10).all()
    docs = pq.read_table(out / "phrases" / "documents.parquet").to_pandas()
    assert len(docs) == 240
    pairs = pq.read_table(out / "dups" / "pairs.parquet").to_pandas()
    assert len(pairs) > 0 and (pairs["jaccard"] >= 0.8).all()
    assert (out / "report.html").stat().st_size > 0
    assert (out / "phrases" / "templates.parquet").is_file()
    assert 'id="templates"' in (out / "report.html").read_text(encoding="utf-8")
    store = TokenStore.open(out / "store")
    assert store.n_docs == 240
    assert "biggest index eaters" in r.output


def test_reuse_skips_finished_stages_and_reruns_changed_ones(corpus, tmp_path):
    out = tmp_path / "scan"
    args = ["scan", str(corpus), "--out", str(out), "--min-docs", "5", "--no-report"]
    assert CliRunner().invoke(main, args + ["--quiet"]).exit_code == 0
    before = (out / "phrases" / "phrases.parquet").stat().st_mtime_ns
    r = CliRunner().invoke(main, args + ["--reuse"])
    assert r.exit_code == 0, r.output
    assert "reusing phrases" in r.output and "reusing near-duplicates" in r.output
    assert (out / "phrases" / "phrases.parquet").stat().st_mtime_ns == before
    r = CliRunner().invoke(main, ["scan", str(corpus), "--out", str(out), "--min-docs", "6",
                                  "--no-report", "--reuse"])
    assert r.exit_code == 0, r.output
    assert "reusing phrases" not in r.output
    assert json.loads((out / "phrases" / "summary.json").read_text())[
        "parameters"]["min_docs"] == 6


def test_scan_accepts_a_token_store_and_skips_stages(corpus, tmp_path):
    runner = CliRunner()
    assert runner.invoke(main, ["tokenize", str(corpus), "--out", str(tmp_path / "st"),
                                "--quiet"]).exit_code == 0
    r = runner.invoke(main, ["scan", str(tmp_path / "st"), "--out", str(tmp_path / "o"),
                             "--no-dups", "--no-report", "--no-templates", "--quiet"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "o" / "phrases" / "phrases.parquet").is_file()
    assert not (tmp_path / "o" / "phrases" / "templates.parquet").exists()
    assert not (tmp_path / "o" / "dups").exists()
    assert not (tmp_path / "o" / "store").exists(), "a store input is not copied"


@pytest.mark.parametrize("args, message", [
    (["--min-docs", "0"], "min-docs"),
    (["--min-len", "0"], "min-len"),
])
def test_bad_parameters_are_one_line_errors(corpus, tmp_path, args, message):
    r = CliRunner().invoke(main, ["scan", str(corpus), "--out", str(tmp_path / "o"), *args])
    assert r.exit_code == 2
    assert message in r.output and "Traceback" not in r.output


@pytest.fixture(scope="module")
def bigger_corpus(tmp_path_factory):
    """1,500 pages: tokenizing and mining take over a second here."""
    out = tmp_path_factory.mktemp("web1500")
    return weblike(1500, seed=4).write(out)["corpus"]


BAD_OPTIONS = [
    (["--shingle", "0"], "Invalid value for '--shingle'"),
    (["--num-perm", "0"], "Invalid value for '--num-perm'"),
    (["--threshold", "1.5"], "Invalid value for '--threshold'"),
    (["--threshold", "0"], "Invalid value for '--threshold'"),
    (["--min-len", "0"], "Invalid value for '--min-len'"),
    (["--min-docs", "0"], "Invalid value for '--min-docs'"),
    (["--memory-limit", "8Q"], "cannot read memory size '8Q'"),
    (["--memory-limit", "0"], "memory size must be positive"),
    (["--memory-limit", "1M"], "--memory-limit 1M is too small"),   # was refused after tokenizing
    (["--unit", "code", "--lang", "no-such-language"], "unknown code language"),
    (["--no-phrases", "--no-dups", "--shingle", "-3"], "Invalid value for '--shingle'"),
    (["--no-dups", "--threshold", "1.5"], "Invalid value for '--threshold'"),   # a skipped stage too
    (["--no-phrases", "--engine", "bogus"], "Invalid value for '--engine'"),
]


@pytest.mark.parametrize("args, message", BAD_OPTIONS)
def test_bad_options_fail_before_any_stage_runs(bigger_corpus, tmp_path, monkeypatch, args, message):
    """Every option is checked first: no tokenizing, no output directory, well under a second."""
    import time

    import repetend.corpus.load as corpus_load

    def no_stage(*a, **k):
        raise AssertionError("a stage ran before the options were checked")

    monkeypatch.setattr(corpus_load, "load_store", no_stage)
    out = tmp_path / "o"
    CliRunner().invoke(main, ["scan", str(bigger_corpus), "--out", str(tmp_path / "warm"), "--quiet",
                              *args])   # imports done once, so the timing is the check alone
    t0 = time.perf_counter()
    r = CliRunner().invoke(main, ["scan", str(bigger_corpus), "--out", str(out), "--quiet", *args])
    elapsed = time.perf_counter() - t0
    assert r.exit_code == 2, r.output
    assert "error: " in r.output.lower() and message in r.output and "Traceback" not in r.output
    assert not out.exists()
    assert elapsed < 0.5


def test_bad_option_leaves_an_existing_scan_untouched(corpus, tmp_path):
    out = tmp_path / "scan"
    assert CliRunner().invoke(main, ["scan", str(corpus), "--out", str(out), "--min-docs", "5",
                                     "--no-report", "--quiet"]).exit_code == 0
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    r = CliRunner().invoke(main, ["scan", str(corpus), "--out", str(out), "--reuse",
                                  "--shingle", "0", "--quiet"])
    assert r.exit_code == 2 and "--shingle" in r.output
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


def test_missing_input_fails_before_the_output_is_made(tmp_path):
    r = CliRunner().invoke(main, ["scan", str(tmp_path / "nope.jsonl"), "--out",
                                  str(tmp_path / "o"), "--quiet"])
    assert r.exit_code == 2 and "no such file" in r.output
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("kwargs, message", [
    (dict(phrases=PhraseConfig(engine="bogus")), "engine must be one of"),
    (dict(dups=NearDupConfig(method="bogus")), "method must be one of"),
    (dict(input_options={"unit": "bogus"}), "--unit must be one of"),
    (dict(input_options={"fmt": "docx"}), "--format must be one of"),
    (dict(input_options={"limit": 0}), "--limit must be >= 1"),
    (dict(input_options={"txt_field": "body"}), "unknown input option"),
    (dict(memory_limit="lots"), "cannot read memory size"),
])
def test_scan_config_is_checked_before_the_output_is_made(corpus, tmp_path, kwargs, message):
    from repetend.errors import ParameterError
    from repetend.jobs import ScanConfig, scan

    with pytest.raises(ParameterError, match=message.replace("(", r"\(")):
        scan([corpus], tmp_path / "o", ScanConfig(**kwargs))
    assert not (tmp_path / "o").exists()


def test_empty_corpus_is_an_error(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    r = CliRunner().invoke(main, ["scan", str(empty), "--out", str(tmp_path / "o"), "--quiet"])
    assert r.exit_code == 2
    assert "no documents" in r.output


def test_min_docs_rule_follows_site_size_then_corpus_size():
    # urls known: 40 pages on a.example, 2 on b.example → median site size over documents 40
    urls = [f"https://a.example/{i}" for i in range(40)] + ["https://b.example/1",
                                                            "https://b.example/2"]
    store = TokenStore.from_texts(["x"] * 42, urls=urls)
    assert choose_min_docs(store)[0] == 10
    # a corpus of small sites: never below 3
    store = TokenStore.from_texts(["x"] * 6, urls=[f"https://h{i % 3}.example/" for i in range(6)])
    assert choose_min_docs(store)[0] == 3
    # no urls: 0.2 % of the corpus, at least 5
    assert choose_min_docs(TokenStore.from_texts(["x"] * 100))[0] == 5
    assert choose_min_docs(TokenStore.from_texts(["x"] * 10_000))[0] == 20
    # counted over distinct documents (near-duplicate clusters) when they are known:
    # copies do not raise σ
    assert choose_min_docs(TokenStore.from_texts(["x"] * 10_000), n_distinct=5_000)[0] == 10
    sigma, why = choose_min_docs(TokenStore.from_texts(["x"] * 40_000), n_distinct=10_000)
    assert sigma == 20 and "10000 distinct documents" in why
    assert choose_min_docs(TokenStore.from_texts(["x"] * 10_000), n_distinct=100)[0] == 5


def test_demo_runs_and_compares_with_the_truth(tmp_path):
    r = CliRunner().invoke(main, ["demo", "--out", str(tmp_path / "d"), "--pages", "300",
                                  "--quiet"])
    assert r.exit_code == 0, r.output
    assert "ground truth" in r.output
    assert "planted copies" in r.output
    assert (tmp_path / "d" / "scan" / "report.html").is_file()


def test_reuse_never_reuses_another_corpus(corpus, tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps({"id": f"o{i}", "text": f"other text {i} " * 5}) + "\n"
                             for i in range(30)))
    out = tmp_path / "scan"
    args = ["--out", str(out), "--min-docs", "5", "--no-report", "--quiet"]
    assert CliRunner().invoke(main, ["scan", str(corpus), *args]).exit_code == 0
    r = CliRunner().invoke(main, ["scan", str(other), *args, "--reuse"])
    assert r.exit_code == 0, r.output
    assert "30 documents" in r.output
    assert json.loads((out / "summary.json").read_text())["corpus"]["documents"] == 30
    assert TokenStore.open(out / "store").n_docs == 30


def test_out_of_core_phrases_equal_in_memory(corpus, tmp_path):
    from repetend._memory import rss_now

    # the limit covers the whole process: what the test process already holds + 512 MiB
    limit = str(max(rss_now()["anon"], rss_now()["rss"]) + 512 * 2**20)
    outs = []
    for extra in ([], ["--memory-limit", limit]):
        out = tmp_path / ("ooc" if extra else "mem")
        r = CliRunner().invoke(main, ["scan", str(corpus), "--out", str(out), "--min-docs", "5",
                                      "--no-report", "--no-templates", "--quiet",
                                      *extra])
        assert r.exit_code == 0, r.output
        outs.append(out)
    for t in ("phrases", "occurrences", "spans", "documents"):
        assert pq.read_table(outs[0] / "phrases" / f"{t}.parquet").equals(
            pq.read_table(outs[1] / "phrases" / f"{t}.parquet")), t
    for t in ("pairs", "clusters"):
        assert pq.read_table(outs[0] / "dups" / f"{t}.parquet").equals(
            pq.read_table(outs[1] / "dups" / f"{t}.parquet")), t


def test_scan_reads_the_standard_input_and_never_reuses_it(tmp_path):
    """`scan -` tokenizes stdin (it crashed stamping '-' as a file); stdin has no size
    or mtime, so --reuse must not take an earlier store for it."""
    out = tmp_path / "scan"
    lines = [json.dumps({"id": str(i), "text": f"doc {i} shared words here and there"}) for i in range(6)]
    args = ["scan", "-", "--out", str(out), "--no-report", "--no-phrases", "--quiet"]
    r = CliRunner().invoke(main, args, input="\n".join(lines) + "\n")
    assert r.exit_code == 0, r.output
    assert json.loads((out / "summary.json").read_text())["corpus"]["documents"] == 6
    r = CliRunner().invoke(main, args + ["--reuse"], input="\n".join(lines[:4]) + "\n")
    assert r.exit_code == 0, r.output
    assert json.loads((out / "summary.json").read_text())["corpus"]["documents"] == 4


def test_no_template_parts_only_chains_exact_phrases(corpus, tmp_path):
    """--no-template-parts: templates from the exact phrases alone (no short-part pass),
    the same exact phrases, and a changed option is not reused."""
    runs = {}
    for flag in ("--template-parts", "--no-template-parts"):
        out = tmp_path / flag
        r = CliRunner().invoke(main, ["scan", str(corpus), "--out", str(out), "--min-docs", "5",
                                      "--no-dups", "--no-report", "--quiet", flag])
        assert r.exit_code == 0, r.output
        runs[flag] = out
    tpl = {f: json.loads((o / "phrases" / "templates_summary.json").read_text())
           for f, o in runs.items()}
    assert tpl["--no-template-parts"]["parts_engine"] == "given"
    assert tpl["--template-parts"]["parts_engine"] != "given"
    a, b = (pq.read_table(o / "phrases" / "phrases.parquet") for o in runs.values())
    assert a.equals(b)
    assert json.loads((runs["--no-template-parts"] / "summary.json").read_text())[
        "parameters"]["template_parts"] is False
    out = runs["--no-template-parts"]
    r = CliRunner().invoke(main, ["scan", str(corpus), "--out", str(out), "--min-docs", "5",
                                  "--no-dups", "--no-report", "--reuse"])
    assert r.exit_code == 0, r.output
    assert "reusing phrases" not in r.output


def test_template_parts_must_be_a_bool():
    from repetend.errors import ParameterError
    from repetend.phrases.templates import TemplateConfig
    with pytest.raises(ParameterError, match="short_parts"):
        PhraseConfig(templates=TemplateConfig(short_parts="no")).validate()


def test_template_gap_and_min_span_reach_the_layer_and_the_reuse_key(corpus, tmp_path):
    """scan --max-gap / --template-min-span: passed to the template layer (a
    lower min span finds the short listing «Showing ▢–▢ of ▢ items» alone),
    recorded, and a changed value is not reused."""
    out = tmp_path / "o"
    # the slotted span off: --template-min-span then bounds every template
    base = ["scan", str(corpus), "--out", str(out), "--min-docs", "5", "--no-dups",
            "--no-report", "--template-slotted-span", "off"]
    texts = {}
    for span in ("10", "6"):
        r = CliRunner().invoke(main, base + ["--max-gap", "3", "--template-min-span", span,
                                             "--reuse"])
        assert r.exit_code == 0, r.output
        assert "reusing phrases" not in r.output
        s = json.loads((out / "phrases" / "templates_summary.json").read_text())
        assert s["parameters"]["max_gap"] == 3 and s["parameters"]["min_span"] == int(span)
        t = pq.read_table(out / "phrases" / "templates.parquet").to_pandas()
        assert (t["span_tokens"] >= int(span)).all()
        texts[span] = set(t["parts"].map(" ".join))
    assert "showing ▢ ▢ of ▢ items" in texts["6"] - texts["10"]   # parts: token strings
    r = CliRunner().invoke(main, base + ["--max-gap", "3", "--template-min-span", "6",
                                         "--reuse"])
    assert "reusing phrases" in r.output
    r = CliRunner().invoke(main, base + ["--template-min-span", "0"])
    assert r.exit_code != 0 and "--template-min-span" in r.output


def test_template_prune_reaches_the_layer_and_the_reuse_key(corpus, tmp_path):
    """scan / phrases --template-prune: the layer leaves short chains out (its
    summary counts them), the value is recorded, and a changed value is not
    reused."""
    out = tmp_path / "o"
    base = ["scan", str(corpus), "--out", str(out), "--min-docs", "5", "--no-dups",
            "--no-report", "--reuse"]
    for flag, pruned in (([], False), (["--template-prune"], True)):
        r = CliRunner().invoke(main, base + flag)
        assert r.exit_code == 0, r.output
        assert "reusing phrases" not in r.output
        s = json.loads((out / "phrases" / "templates_summary.json").read_text())
        assert s["parameters"]["prune"] is pruned
        assert ("short_runs_dropped" in s) is pruned
    r = CliRunner().invoke(main, base + ["--template-prune"])
    assert "reusing phrases" in r.output
    r = CliRunner().invoke(main, ["phrases", str(corpus), "-s", "5", "--out",
                                  str(tmp_path / "p"), "--template-prune", "--quiet"])
    assert r.exit_code == 0, r.output
    s = json.loads((tmp_path / "p" / "templates_summary.json").read_text())
    assert s["parameters"]["prune"] is True and s["short_tokens_dropped"] >= 0


def test_the_command_line_maps_options_to_nested_configs():
    """scan's options become one PhraseConfig (with its TemplateConfig) and one
    NearDupConfig; --engine spark alone means Spark's local mode."""
    from repetend.cli.options import scan_config
    from repetend.cli.scan_cmd import scan as scan_cmd

    def config(*args):
        return scan_config(scan_cmd.make_context("scan", ["c.jsonl", "-o", "o", *args]).params)

    cfg = config("--min-docs", "7", "--max-gap", "2", "--template-prune", "--method", "allpairs",
                 "--threshold", "0.6", "--memory-limit", "2G", "--unit", "char")
    assert (cfg.phrases.min_docs, cfg.phrases.templates.max_gap, cfg.phrases.templates.prune) \
        == (7, 2, True)
    assert (cfg.dups.method, cfg.dups.threshold, cfg.memory_limit) == ("allpairs", 0.6, "2G")
    assert cfg.input_options["unit"] == "char" and cfg.spark_master is None
    assert config().phrases.min_docs is None               # σ chosen from the corpus
    assert config("--no-templates", "--no-dups").phrases.templates is None
    assert config("--no-dups").dups is None and config("--no-phrases").phrases is None
    assert config("--engine", "spark").spark_master == "local[2]"
    assert config("--engine", "spark").phrases.engine == "auto"
    assert config("--spark-master", "spark://h:7077").spark_master == "spark://h:7077"


def test_sigma_without_urls_counts_distinct_documents(tmp_path):
    """The automatic σ of a scan without urls is taken over the near-duplicate
    clusters the dups stage found (docs/sigma.md), so copies do not raise it."""
    from repetend.jobs import ScanConfig, scan
    from repetend.phrases import PhraseConfig

    base = [" ".join(f"w{i}x{j}" for j in range(30)) for i in range(1000)]
    texts = base + base[:1000] * 2          # every document three times
    res = scan(TokenStore.from_texts(texts), tmp_path / "s",
               ScanConfig(phrases=PhraseConfig(min_docs=None, templates=False), report=False))
    p = res.summary["parameters"]
    assert "1000 distinct documents" in p["min_docs_rule"] and p["min_docs"] == 5
    assert choose_min_docs(TokenStore.from_texts(texts))[0] == 6   # 0.2 % of 3,000 documents
