"""Hugging Face datasets on disk, read the way text-dedup and datatrove users keep them.

Two layouts are recognised in a directory given as input:

* a ``datasets`` ``save_to_disk`` folder: ``state.json`` naming the Arrow shards
  (``data-00000-of-00001.arrow``, Arrow IPC streams) beside
  ``dataset_info.json``; or a ``DatasetDict`` folder, ``dataset_dict.json``
  listing its splits, one such folder per split;
* a dataset repository in the hub cache (``datasets--owner--name/`` with
  ``refs/`` and ``snapshots/<revision>/``, or one ``snapshots/<revision>/``
  folder): its Parquet / JSONL / CSV files (the README and other files are
  not documents).

:func:`dataset_files` lists the shards of such a folder in dataset order;
:class:`ArrowReader` reads an Arrow shard batch by batch, only the text / id /
url columns, like Parquet.  A missing ``id`` column gives ids
``"{split or folder}/{shard}:{row}"``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from ..errors import InputError
from .read_table import ParquetReader
from .record import Record

__all__ = ["ArrowReader", "arrow_batches", "dataset_files", "is_dataset_dir"]

_HUB_DATA = {".parquet": "parquet", ".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv",
             ".tsv": "tsv"}


def is_dataset_dir(d: Path) -> bool:
    """True for a ``save_to_disk`` folder, a ``DatasetDict`` folder or a hub-cache
    dataset repository (or one of its snapshots)."""
    return ((d / "state.json").is_file() or (d / "dataset_dict.json").is_file()
            or ((d / "snapshots").is_dir() and (d / "refs").is_dir())
            or d.parent.name == "snapshots")


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("this Hugging Face dataset folder lacks this file", path=str(path)) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not a readable dataset file ({exc})", path=str(path)) from None


def _saved_dataset(d: Path) -> list[tuple[Path, str]]:
    state = _read_json(d / "state.json")
    files = state.get("_data_files") if isinstance(state, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, dict) and isinstance(
            f.get("filename"), str) for f in files):
        raise InputError("state.json has no list of data files (_data_files); was this folder "
                         "written by datasets' save_to_disk?", path=str(d / "state.json"))
    out = []
    for f in files:
        p = d / f["filename"]
        if Path(f["filename"]).is_absolute() or ".." in Path(f["filename"]).parts:
            raise InputError(f"data file {f['filename']!r} lies outside the folder",
                             path=str(d / "state.json"))
        if not p.is_file():
            raise InputError(f"the shard {f['filename']} named in state.json is missing",
                             path=str(d))
        out.append((p, "arrow"))
    return out


def _snapshot(repo: Path) -> Path:
    snaps = repo / "snapshots"
    ref = repo / "refs" / "main"
    if ref.is_file():
        rev = ref.read_text(encoding="utf-8").strip()
        if (snaps / rev).is_dir():
            return snaps / rev
    revs = sorted(p for p in snaps.iterdir() if p.is_dir()) if snaps.is_dir() else []
    if len(revs) != 1:
        raise InputError(f"the hub cache folder has {len(revs)} snapshots and no refs/main naming "
                         "one; give the snapshot folder (snapshots/<revision>) instead",
                         path=str(repo))
    return revs[0]


def dataset_files(d: Path) -> list[tuple[Path, str]]:
    """The shards of the dataset folder *d* as ``(path, format)``, in dataset order
    (splits in the order ``dataset_dict.json`` lists them); one clear error for a
    damaged folder (a missing ``state.json`` of a split, a missing shard)."""
    if (d / "dataset_dict.json").is_file():
        splits = _read_json(d / "dataset_dict.json").get("splits")
        if not isinstance(splits, list) or not all(isinstance(s, str) for s in splits):
            raise InputError("dataset_dict.json has no list of splits", path=str(d))
        out = []
        for s in splits:
            if not (d / s).is_dir():
                raise InputError(f"the split {s!r} named in dataset_dict.json is missing", path=str(d))
            out += _saved_dataset(d / s)
        return out
    if (d / "state.json").is_file():
        return _saved_dataset(d)
    snap = _snapshot(d) if (d / "snapshots").is_dir() else d
    out = []
    for p in sorted(snap.rglob("*"), key=lambda q: q.relative_to(snap).parts):
        rel = p.relative_to(snap).parts
        if any(part.startswith(".") for part in rel) or not p.is_file():
            continue
        fmt = _HUB_DATA.get(p.suffix.lower())
        if fmt is not None:
            out.append((p, fmt))
    if not out:
        raise InputError("this dataset snapshot holds no Parquet, JSONL or CSV file", path=str(snap))
    return out


def arrow_batches(path: Path):
    """``(schema, record batches)`` of an Arrow IPC file, stream format (as
    ``datasets`` writes it) or file format, memory-mapped."""
    import pyarrow as pa

    f = pa.memory_map(str(path))
    try:
        reader = pa.ipc.open_stream(f)
        return reader.schema, iter(reader)
    except pa.ArrowInvalid:
        f.seek(0)
        r = pa.ipc.open_file(f)
        return r.schema, (r.get_batch(i) for i in range(r.num_record_batches))


class ArrowReader(ParquetReader):
    """An Arrow IPC shard of a ``save_to_disk`` dataset (stream or file format),
    batch by batch, only the text / id / url columns."""

    fmt = "arrow"

    def read_file(self, path: Path) -> Iterator[Record]:
        import pyarrow as pa

        try:
            schema, batches = arrow_batches(path)
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(f"not a readable Arrow file ({exc})", path=str(path)) from None
        yield from self.table_records(path, schema,
                                      lambda cols: (b.select(cols) for b in batches),
                                      "the dataset's columns")

    def make(self, path: Path, record_no: int, text: str, doc_id=None, url=None, *,
             invalid_utf8: bool = False) -> Record:
        rec = super().make(path, record_no, text, doc_id, url, invalid_utf8=invalid_utf8)
        if doc_id is None or doc_id == "":  # shards of two splits share their names
            rec.id = f"{path.parent.name}/{rec.id}"
        return rec
