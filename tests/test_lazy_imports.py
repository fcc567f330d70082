"""``import repetend.neardup`` loads only what near-duplicate detection needs; the
package's public names load on first use and all still resolve (PEP 562)."""

from __future__ import annotations

import json
import subprocess
import sys

import repetend

# packages a near-duplicate run in memory never uses
HEAVY = ("repetend.phrases", "repetend.jobs", "repetend.index", "repetend.report",
         "repetend.clean", "repetend.spark", "repetend.cli", "repetend.corpus.readers",
         "pyarrow.dataset", "pandas")


def _modules_after(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          "print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_neardup_loads_no_phrase_template_job_index_or_report_module():
    mods = _modules_after("import repetend.neardup")
    loaded = [m for m in mods if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert loaded == []
    assert "repetend.neardup.find" in mods


def test_every_public_name_resolves_lazily_and_is_listed_by_dir():
    assert set(repetend.__all__) <= set(dir(repetend))
    code = ("import repetend\n"
            "ok = [n for n in repetend.__all__ if getattr(repetend, n) is not None]\n"
            "print(len(ok))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout.strip()) == len(repetend.__all__)


def test_lazy_names_are_the_objects_of_their_modules():
    from repetend.corpus.store import TokenStore
    from repetend.jobs import scan
    from repetend.neardup import find_near_duplicates
    from repetend.phrases.templates import TemplateConfig

    from repetend import TemplateConfig as T2, TokenStore as S2, find_near_duplicates as F2, scan as s2

    assert (S2, F2, s2, T2) == (TokenStore, find_near_duplicates, scan, TemplateConfig)


def test_unknown_name_raises_attribute_error():
    import pytest

    with pytest.raises(AttributeError):
        repetend.no_such_name  # noqa: B018
