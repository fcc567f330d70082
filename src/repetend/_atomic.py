"""Atomic output: write to a temporary sibling, then rename over the target.

An interrupted run leaves either the old file or no file, never half a file.  The
temporary file of :func:`atomic_path` is ``flock``-ed while it is written, so the
next write of the same target removes the temporaries that killed writers left
(unlocked, a few seconds old) instead of letting them pile up.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

__all__ = ["LEFTOVER_GRACE", "atomic_path", "atomic_dir", "recover_dir", "remove_leftovers",
           "write_json", "write_jsonl", "write_parquet"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


LEFTOVER_GRACE = 2.0    # seconds: a temporary younger than this may not be locked yet
_RANDOM = 8             # characters of tempfile's random part of a name


def remove_leftovers(target: str | os.PathLike, grace: float = LEFTOVER_GRACE) -> list[Path]:
    """Remove the temporary files of *target* (``.NAME.<random>.tmp``) that killed
    writers left: regular files that no live writer locks, last changed more than
    *grace* seconds ago.  Returns them."""
    target = Path(target)
    prefix = f".{target.name}."
    removed: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for e in entries:
        n = e.name
        if not (n.startswith(prefix) and n.endswith(".tmp")
                and len(n) == len(prefix) + _RANDOM + 4 and "." not in n[len(prefix):-4]):
            continue
        try:
            if not e.is_file(follow_symlinks=False) or time.time() - e.stat().st_mtime < grace:
                continue
            fd = os.open(e.path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)   # fails while its writer lives
            os.unlink(e.path)
            removed.append(Path(e.path))
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to *target*; rename it onto *target* on success.

    The temporary file is locked (``flock``, released by the kernel when the process
    dies) until it is renamed or removed; temporaries of *target* left by killed
    writers are removed first (:func:`remove_leftovers`)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    tmp_path = Path(tmp)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        os.replace(tmp_path, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise
    finally:
        os.close(fd)


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
