"""On-disk format of a near-duplicate index: manifest, segments, writer lock.

Layout of an index directory::

    INDEX/MANIFEST.json            the one source of truth (replaced atomically)
    INDEX/.writer.lock             flock()ed by add / merge (one writer at a time)
    INDEX/segments/<name>/         immutable segments (see :mod:`.segments`)
    INDEX/phrases-<generation>/    known boilerplate phrases (optional)

``MANIFEST.json`` holds ``format_version`` (:data:`FORMAT_VERSION`), the
near-duplicate settings (a :class:`~repetend.neardup.config.NearDupConfig`), the
tokenizer unit, the banding, the ordered list of segments with their document
counts, and a ``generation`` counter.  A writer (``add``, ``merge``) first
writes a whole new segment directory (itself atomically: temporary sibling,
then rename), then replaces the manifest with ``os.replace``.  A process killed
at any moment leaves either the old manifest or the new one, and every
segment the surviving manifest names is complete; directories no manifest
names are garbage, removed by the next writer.

Readers never lock: they read the manifest once and memory-map the segments it
names, so an ``add`` that runs meanwhile does not change what they see (a
consistent snapshot).  Segments replaced by ``merge`` are deleted only after
the new manifest is in place; a reader that has them mapped keeps its mapping
(POSIX unlink semantics), and a reader that races the deletion re-reads the
manifest.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
from pathlib import Path
from typing import Iterator

from .._atomic import write_json
from ..errors import InputError

__all__ = ["FORMAT_VERSION", "KIND", "MANIFEST", "read_manifest", "write_manifest",
           "writer_lock", "new_segment_name", "is_index", "test_pause"]

FORMAT_VERSION = 1
KIND = "repetend-neardup-index"
MANIFEST = "MANIFEST.json"
LOCK = ".writer.lock"
SLEEP_ENV = "REPETEND_INDEX_TEST_PAUSE"  # test hook: "STAGE=SECONDS", STAGE segment|manifest


def is_index(path: str | os.PathLike) -> bool:
    return (Path(path) / MANIFEST).is_file()


def read_manifest(path: str | os.PathLike) -> dict:
    """The manifest of the index at *path*; a clear :class:`InputError` when it is
    missing, damaged, of another kind or of another format version."""
    path = Path(path)
    f = path / MANIFEST
    if not f.is_file():
        if path.is_dir() and (path / "meta.json").is_file():
            raise InputError("this is a token store, not an index; build one with "
                             "'repetend index build STORE --out INDEX'", path=str(path))
        raise InputError("not a repetend index (no MANIFEST.json)", path=str(path))
    try:
        m = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"unreadable index manifest: {exc}", path=str(f)) from exc
    if not isinstance(m, dict) or m.get("kind") != KIND:
        raise InputError("MANIFEST.json does not describe a repetend near-duplicate index",
                         path=str(f))
    v = m.get("format_version")
    if v != FORMAT_VERSION:
        raise InputError(
            f"index format version {v!r} cannot be read by this repetend (it reads format "
            f"{FORMAT_VERSION}); rebuild the index with 'repetend index build'", path=str(path))
    for key in ("config", "segments", "generation", "unit", "bands", "rows"):
        if key not in m:
            raise InputError(f"index manifest lacks {key!r}", path=str(f))
    return m


def write_manifest(path: str | os.PathLike, manifest: dict) -> None:
    """Replace the manifest atomically (the commit point of every writer)."""
    test_pause("manifest")
    write_json(Path(path) / MANIFEST, manifest)


def test_pause(stage: str) -> None:
    """Crash-test hook: sleep at *stage* when ``REPETEND_INDEX_TEST_PAUSE=stage=seconds``
    (``segment``: the segment's files are written, its directory not yet renamed;
    ``manifest``: the segment is in place, the manifest not yet replaced)."""
    spec = os.environ.get(SLEEP_ENV, "")
    if "=" in spec:
        name, _, seconds = spec.partition("=")
        if name == stage:
            import time

            time.sleep(float(seconds))


@contextlib.contextmanager
def writer_lock(path: str | os.PathLike) -> Iterator[None]:
    """Exclusive writer lock (``flock``; released by the kernel if the process dies)."""
    p = Path(path)
    p.mkdir(parents=True, exist_ok=True)
    fd = os.open(p / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def new_segment_name(generation: int) -> str:
    """A fresh segment directory name: generation plus a random suffix, so that a
    half-written leftover of a crashed writer never collides with a new one."""
    return f"s{int(generation):06d}-{secrets.token_hex(4)}"
