"""The report in a real browser: headless Chromium renders it, the inline script
runs to the end (it sets ``document.body.dataset.ok``), no script from the corpus
runs, and a screenshot is taken."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from test_report import HOSTILE, make_scan, patch_token_spans, web_corpus

pytestmark = pytest.mark.browser

CHROMIUM = next((p for p in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                             shutil.which("chromium-browser"), shutil.which("google-chrome"))
                 if p and os.path.exists(p)), None)

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed "
                                    "(apt-get install chromium, or set CHROMIUM=/path/to/chrome)")


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage", f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    patch_token_spans(mp)
    root = tmp_path_factory.mktemp("browser")
    texts, ids, urls = web_corpus(5, 30)
    texts[0] = "<script>document.body.dataset.pwned='1';alert(1)</script> " + texts[0]
    make_scan(root / "scan", texts, ids, urls, min_docs=3, min_len=4)
    from repetend.report import build_report

    out = build_report(root / "scan", root / "report.html")
    mp.undo()
    return root, out


@needs_chromium
def test_renders_and_script_runs(page, tmp_path):
    root, html_file = page
    res = _chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", html_file.as_uri())
    dom = res.stdout
    assert "<body" in dom, res.stderr[-2000:]
    assert 'data-ok="1"' in dom, "the inline script did not run to the end"
    assert "data-pwned" not in dom                 # the corpus's script never ran
    assert "&lt;script&gt;document.body.dataset.pwned" in dom   # it is shown as text
    for anchor in ("summary", "eaters", "coverage", "hosts", "dups", "lsh", "params"):
        assert f'id="{anchor}"' in dom
    for h in HOSTILE[:1]:
        assert h not in dom


@needs_chromium
def test_tables_sort(page, tmp_path):
    root, html_file = page
    res = _chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", html_file.as_uri() + "#selftest")
    assert 'data-ok="1"' in res.stdout, res.stderr[-2000:]
    assert 'data-sorted="1"' in res.stdout
    assert 'aria-sort="descending"' in res.stdout


@needs_chromium
def test_screenshot(page, tmp_path):
    root, html_file = page
    shot = root / "report.png"
    res = _chromium(tmp_path, "--hide-scrollbars", "--window-size=1400,3000", f"--screenshot={shot}",
                    html_file.as_uri())
    assert shot.is_file() and shot.stat().st_size > 20_000, res.stderr[-2000:]
    keep = os.environ.get("REPETEND_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)
