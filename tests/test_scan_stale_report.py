"""`scan B -o K --no-report` over an earlier scan in K does not leave that scan's
report.html behind as if it showed B: it is removed, with a warning (quiet or not)."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from repetend.cli import main


def _corpus(path, word: str, n: int):
    path.write_text("".join(json.dumps({"id": f"{word}{i}", "text": f"{word} page {i} with a "
                                        f"footer about {word} shared by every page here"})
                            + "\n" for i in range(n)))
    return path


def test_a_scan_without_report_removes_the_earlier_report(tmp_path):
    a, b = _corpus(tmp_path / "a.jsonl", "alpha", 30), _corpus(tmp_path / "b.jsonl", "beta", 20)
    k = tmp_path / "k"
    base = ["--min-docs", "3", "--no-templates", "-q"]
    r = CliRunner().invoke(main, ["scan", str(a), "-o", str(k), *base])
    assert r.exit_code == 0, r.output
    assert (k / "report.html").is_file()
    cli = [sys.executable, "-m", "repetend.cli", "scan", str(b), "-o", str(k), "--no-report", *base]
    r = subprocess.run(cli, capture_output=True, text=True, timeout=300)   # the real warning path
    assert r.returncode == 0, r.stderr
    assert not (k / "report.html").exists()
    warned = [ln for ln in r.stderr.splitlines() if ln.startswith("warning: removing")]
    assert len(warned) == 1 and "report.html" in warned[0] and "--no-report" in warned[0], r.stderr
    r = subprocess.run(cli, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr     # nothing to remove
    assert json.loads((k / "summary.json").read_text())["corpus"]["documents"] == 20
