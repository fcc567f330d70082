"""Reading a scan directory (the layout ``repetend scan`` writes).

Every part is optional: a stage that was skipped leaves no directory and the
report says so.  Large tables are read column by column and, where they can be
long (occurrences, pairs, candidates), filtered or capped while reading.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import InputError

__all__ = ["ScanDir", "open_scan"]


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not valid JSON: {exc}", path=str(path)) from exc


def _table(path: Path, columns: list[str] | None = None) -> pa.Table | None:
    if not path.is_file():
        return None
    try:
        if columns is not None:
            have = set(pq.read_schema(path).names)
            columns = [c for c in columns if c in have]
        return pq.read_table(path, columns=columns)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"cannot read Parquet: {exc}", path=str(path)) from exc


@dataclass
class ScanDir:
    """The parts of a scan directory, loaded lazily where they can be big."""

    root: Path
    summary: dict = field(default_factory=dict)
    phrases_summary: dict | None = None
    dups_summary: dict | None = None
    store: Any = None
    store_problem: str | None = None

    @property
    def has_phrases(self) -> bool:
        return (self.root / "phrases" / "phrases.parquet").is_file()

    @property
    def has_dups(self) -> bool:
        return (self.root / "dups").is_dir() and (
            (self.root / "dups" / "pairs.parquet").is_file()
            or (self.root / "dups" / "clusters.parquet").is_file())

    def table(self, rel: str, columns: list[str] | None = None) -> pa.Table | None:
        return _table(self.root / rel, columns)

    def parquet_file(self, rel: str) -> pq.ParquetFile | None:
        p = self.root / rel
        return pq.ParquetFile(p) if p.is_file() else None

    def store_path(self) -> Path:
        s = self.summary.get("store")
        default = self.root / "store"
        if s:
            p = Path(s)
            if not p.is_absolute():
                cand = self.root / p
                p = cand if cand.exists() or not p.exists() else p
            if p.exists() or not default.exists():
                return p
        return default  # the scan directory was moved: its own store


def open_scan(scan_dir: str | Path, *, need_store: bool = False) -> ScanDir:
    """Open a scan directory; the token store is opened when it exists
    (required with ``need_store``)."""
    root = Path(scan_dir)
    if not root.is_dir():
        raise InputError("no such scan directory", path=str(root))
    scan = ScanDir(root=root, summary=_json(root / "summary.json"))
    if (root / "phrases").is_dir():
        scan.phrases_summary = _json(root / "phrases" / "summary.json")
    if (root / "dups").is_dir():
        scan.dups_summary = _json(root / "dups" / "summary.json")
    sp = scan.store_path()
    if (sp / "meta.json").is_file():
        from ..corpus.store import TokenStore

        scan.store = TokenStore.open(sp)
    else:
        scan.store_problem = f"no token store at {sp}"
        if need_store:
            raise InputError("the scan has no token store (needed for the document texts)",
                             path=str(sp))
    if not scan.summary and not scan.has_phrases and not scan.has_dups:
        raise InputError("not a repetend scan directory (no summary.json, phrases/ or dups/)",
                         path=str(root))
    return scan
