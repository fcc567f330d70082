"""Atomic output: write to a temporary sibling, then rename over the target.

An interrupted run leaves either the old file or no file, never half a file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

__all__ = ["atomic_path", "atomic_dir", "recover_dir", "write_json", "write_jsonl",
           "write_parquet"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to *target*; rename it onto *target* on success."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        os.replace(tmp_path, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


def recover_dir(target: str | os.PathLike) -> bool:
    """Undo a replacement that :func:`atomic_dir` did not finish: a kill between
    its two renames leaves ``.NAME.old`` and no ``NAME``; put the old one back.
    Returns True when it did."""
    target = Path(target)
    old = target.with_name(f".{target.name}.old")
    if not target.exists() and old.is_dir():
        os.replace(old, target)
        return True
    return False


@contextlib.contextmanager
def atomic_dir(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory; on success it replaces *target* as a whole."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    recover_dir(target)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700
        if target.exists():
            old = target.with_name(f".{target.name}.old")
            if old.exists():
                shutil.rmtree(old)
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _default(o: Any):
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def write_json(target: str | os.PathLike, obj: Any) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False, default=_default) + "\n",
                       encoding="utf-8")


def write_jsonl(target: str | os.PathLike, table) -> None:
    """Write a pyarrow Table atomically as JSON lines, one object per row, in
    batches (not the whole table as Python objects at once)."""
    with atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8") as f:
        for batch in table.to_batches(max_chunksize=65536):
            for row in batch.to_pylist():
                f.write(json.dumps(row, ensure_ascii=False))
                f.write("\n")


def write_parquet(target: str | os.PathLike, table) -> None:
    """Write a pyarrow Table (or anything with ``to_arrow()``) atomically."""
    import pyarrow.parquet as pq

    with atomic_path(target) as tmp:
        pq.write_table(table, tmp, compression="zstd")
