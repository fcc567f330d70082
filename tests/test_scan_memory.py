"""--memory-limit in every stage of scan: the watchdog stops a stage over the
limit, naming it, and leaves nothing behind; a generous limit changes no table."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from repetend._memory import MemoryLimitExceeded, StageWatchdog, rss_now, substage
from repetend.jobs import scan
from repetend.jobs.scan import ScanConfig
from repetend.jobs.scan_memory import MemoryPlanWarning, estimate_stages, unbounded_stages
from repetend.phrases import PhraseConfig
from repetend.synth import weblike


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("web")
    return weblike(240, seed=3).write(out)["corpus"]


def _hold(nbytes: int, seconds: float = 2.0):
    """Allocate and touch *nbytes* of private memory, then run Python bytecode
    for a while (where an asynchronous stop lands)."""
    a = np.ones(nbytes // 8, dtype=np.float64)
    t = time.monotonic()
    while time.monotonic() - t < seconds:
        a[:1] += 1.0
    return a


def test_watchdog_stops_the_stage_over_the_limit_and_names_it():
    limit = rss_now()["anon"] + (64 << 20)
    with StageWatchdog(limit, label="LIM") as wd:
        with wd.stage("small"):
            _hold(1 << 20, 0.2)
        with pytest.raises(MemoryLimitExceeded) as e:
            with wd.stage("big"):
                _hold(256 << 20, 5.0)
                pytest.fail("the stop did not arrive")  # pragma: no cover
    assert e.value.stage == "big" and e.value.limit == limit
    assert e.value.peak > limit
    assert str(e.value).startswith("stage big exceeded --memory-limit LIM (peak ")
    assert wd.peaks["small"] < limit < wd.peaks["big"]


def test_substage_names_the_inner_part_and_is_a_no_op_without_a_watchdog():
    with substage("alone"):      # no watchdog: nothing happens
        pass
    limit = rss_now()["anon"] + (64 << 20)
    with pytest.raises(MemoryLimitExceeded, match="stage templates exceeded"):
        with StageWatchdog(limit) as wd, wd.stage("phrases"), substage("templates"):
            _hold(256 << 20, 5.0)


def test_a_stop_is_not_swallowed_by_except_exception():
    limit = rss_now()["anon"] + (64 << 20)
    with pytest.raises(MemoryLimitExceeded, match="stage guarded"):
        with StageWatchdog(limit) as wd, wd.stage("guarded"):
            try:
                _hold(256 << 20, 5.0)
            except Exception:  # noqa: BLE001 - what a careless stage might do
                pass
            # a stage that finishes over the limit is stopped at its end too
            x = np.ones(256 << 17)   # still held here
            assert x.size


def test_without_a_limit_it_only_measures():
    with StageWatchdog(None) as wd, wd.stage("s"):
        a = _hold(64 << 20, 0.3)
    assert a.size and wd.peaks["s"] >= 64 << 20 and wd.report()["within_limit"] is None


def test_stages_that_cannot_plan_are_listed_and_estimated():
    cfg = ScanConfig(memory_limit="1G")
    assert set(unbounded_stages(cfg)) == {"decisions", "report"}
    from repetend.neardup import NearDupConfig

    assert "dups" in unbounded_stages(ScanConfig(dups=NearDupConfig(method="simhash")))
    est = estimate_stages(cfg, 10_000_000, 10_000)
    assert "phrases" not in est and "dups" not in est      # out of core under the limit
    assert est["templates"] > 0 and est["report"] > 0
    assert "phrases" in estimate_stages(ScanConfig(), 10_000_000, 10_000)


def test_a_tiny_limit_stops_the_scan_naming_the_stage_and_writes_nothing(corpus, tmp_path):
    # in a fresh process: a process that ran other tests first holds freed memory
    # that the scan's arrays can reuse without its private memory growing
    out = tmp_path / "scan"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    code = ("import warnings; from repetend._memory import MemoryLimitExceeded, rss_now; "
            "from repetend.jobs import scan; from repetend.jobs.scan import ScanConfig; "
            "from repetend.phrases import PhraseConfig; "
            "warnings.simplefilter('ignore'); "
            "lim = rss_now()['anon'] + (6 << 20)\n"
            "try:\n"
            f"    scan([{str(corpus)!r}], __import__('pathlib').Path({str(out)!r}), "
            "ScanConfig(memory_limit=lim, phrases=PhraseConfig(min_docs=5)))\n"
            "except MemoryLimitExceeded as e:\n"
            "    print('STOPPED', e.stage)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=600)
    # the corpus is read into arrays far larger than 6 MB over what the process holds
    stopped = [ln.split(" ", 1)[1] for ln in r.stdout.splitlines() if ln.startswith("STOPPED ")]
    assert stopped, (r.stdout, r.stderr)
    assert stopped[0] in {"tokenize", "dups", "dups tables", "phrases", "templates",
                          "phrase tables", "decisions", "report", "scan"}
    assert not out.exists()


def test_the_limit_is_said_up_front(corpus, tmp_path):
    with pytest.warns(MemoryPlanWarning, match="decisions, report run in memory"):
        scan([str(corpus)], tmp_path / "s", ScanConfig(memory_limit="16G",
                                                       phrases=PhraseConfig(min_docs=5)))
    import json

    mem = json.loads((tmp_path / "s" / "summary.json").read_text())["memory"]
    assert mem["memory_limit_given"] == "16G" and set(mem["in_memory_stages"]) == {
        "decisions", "report"}
    assert {"tokenize", "dups", "phrases", "decisions", "report"} <= set(mem["stage_peak_anon_bytes"])


def _tables(d: Path) -> dict[str, object]:
    return {str(p.relative_to(d)): pq.read_table(p) for p in sorted(d.rglob("*.parquet"))
            if "store" not in p.parts}


def test_a_generous_limit_gives_the_same_tables_as_none(corpus, tmp_path):
    cfg = dict(phrases=PhraseConfig(min_docs=5), report=False)
    scan([str(corpus)], tmp_path / "free", ScanConfig(**cfg))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MemoryPlanWarning)
        scan([str(corpus)], tmp_path / "lim", ScanConfig(memory_limit="16G", **cfg))
    free, lim = _tables(tmp_path / "free"), _tables(tmp_path / "lim")
    # the out-of-core MinHash keeps no candidate list; every other table is the same
    free.pop("dups/candidates.parquet", None)
    lim.pop("dups/candidates.parquet", None)
    assert set(free) == set(lim) and len(free) >= 4
    for name in free:
        assert free[name].equals(lim[name]), name


def test_the_cli_stops_with_a_one_line_error_and_exit_code(corpus, tmp_path):
    out = tmp_path / "scan"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    # the package imports lazily: load what the scan runs before measuring what it holds,
    # so the limit is passed mid-run (a stage), not refused up front
    code = ("import sys; from repetend._memory import rss_now; from repetend.cli import main; "
            "import repetend.jobs.scan, repetend.phrases, repetend.neardup, repetend.corpus.store; "
            "lim = str(rss_now()['anon'] + (6 << 20)); "
            f"sys.argv = ['repetend', 'scan', {str(corpus)!r}, '--out', {str(out)!r}, "
            "'--min-docs', '5', '--memory-limit', lim, '--quiet']; main()")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode in (2, 3), r.stderr
    err = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(err) == 1 and "exceeded --memory-limit" in err[0] and "stage " in err[0], r.stderr
    assert "run in memory" in r.stderr          # said up front
    assert not out.exists()


def test_minhash_runs_in_memory_only_when_it_fits_twice():
    from repetend.jobs.scan_memory import dups_fit_in_memory

    held = rss_now()["anon"]
    assert dups_fit_in_memory(held + (4 << 30), 1_000_000, 1_000)[0]
    fits, why = dups_fit_in_memory(held + (64 << 20), 100_000_000, 100_000)
    assert not fits and why.startswith("out of core")
