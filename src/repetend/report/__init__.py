"""The HTML report of a scan: one self-contained page (``repetend report``).

See ``docs/report.md`` for what the page shows and its caps.
"""

from __future__ import annotations

from .build import ReportCaps, build_report

__all__ = ["ReportCaps", "build_report"]
