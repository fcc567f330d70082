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

``build`` (and ``create``) never write into the target: the whole index is
built in a temporary sibling ``.INDEX.<random>.tmp`` (same filesystem, never
inside the input) and swapped in at the end by :func:`repetend._atomic.atomic_dir`
(``INDEX`` -> ``.INDEX.old``, temporary -> ``INDEX``, old removed), under the
old index's writer lock (:func:`replacing`).  The two renames are not one
atomic step: a kill between them leaves ``.INDEX.old`` and no ``INDEX``;
:func:`recover` (called by every open and every writer) puts the old index
back, unless the build is alive and holds that lock, in which case the new
index appears a moment later.  A temporary sibling of a killed build carries
the marker :data:`BUILDING` and no live lock; it is never opened as the index
and the next build removes it (:func:`clean_leftovers`).

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
import re
import secrets
import shutil
import time
from pathlib import Path
from typing import Iterator

from .._atomic import atomic_dir, recover_dir, write_json
from ..errors import InputError

__all__ = ["BUILDING", "FORMAT_VERSION", "KIND", "MANIFEST", "clean_leftovers", "is_index",
           "new_segment_name", "read_manifest", "recover", "replacing", "test_pause",
           "write_manifest", "writer_lock"]

FORMAT_VERSION = 1
KIND = "repetend-neardup-index"
MANIFEST = "MANIFEST.json"
LOCK = ".writer.lock"
SLEEP_ENV = "REPETEND_INDEX_TEST_PAUSE"  # test hook: "STAGE=SECONDS", STAGE segment|manifest|swap
BUILDING = ".repetend-index-build"  # marker inside the temporary directory of a build
LEFTOVER_GRACE = 10.0  # seconds: a younger unlocked build directory may be starting up
RECOVER_WAIT = 10.0  # seconds to wait for a live build to finish its swap


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
    ``manifest``: the segment is in place, the manifest not yet replaced;
    ``swap``: a build's new index is complete beside the old one, not yet swapped in)."""
    spec = os.environ.get(SLEEP_ENV, "")
    if "=" in spec:
        name, _, seconds = spec.partition("=")
        if name == stage:
            import time

            time.sleep(float(seconds))


@contextlib.contextmanager
def writer_lock(path: str | os.PathLike) -> Iterator[None]:
    """Exclusive writer lock (``flock``; released by the kernel if the process dies).

    *path* must exist (an index, or the directory a build is writing).  When a
    build swapped the directory while this writer waited, the lock it got is the
    old index's: it is dropped and the lock of the index now at *path* taken.
    """
    p = Path(path)
    for attempt in range(100):
        try:
            fd = os.open(p / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:
            recover(p)  # a build between its two renames (live: wait; killed: undo)
            if attempt < 3 and p.is_dir():
                continue
            raise InputError("not a repetend index (no such directory)", path=str(p)) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            st = os.fstat(fd)
            try:
                now = os.stat(p / LOCK)
            except FileNotFoundError:
                now = None
            if now is not None and (now.st_ino, now.st_dev) == (st.st_ino, st.st_dev):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the directory was replaced meanwhile: lock the new one
        if now is None:
            recover(p)
    else:
        raise InputError("could not lock the index: its directory keeps being replaced",
                         path=str(p))
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _old_sibling(path: Path) -> Path:
    return path.with_name(f".{path.name}.old")  # the name repetend._atomic.atomic_dir uses


def recover(path: str | os.PathLike, wait: float = RECOVER_WAIT) -> bool:
    """Undo a swap that a killed build did not finish; returns whether it did.

    :func:`replacing` renames ``INDEX`` to ``.INDEX.old`` and then the new index
    to ``INDEX``, holding the old index's writer lock.  Seeing ``.INDEX.old`` and
    no ``INDEX`` therefore means either a build is between its two renames (its
    lock is held: wait up to *wait* seconds for ``INDEX`` to appear) or a build
    was killed there (the lock is free: put the old index back with
    :func:`repetend._atomic.recover_dir`, holding the lock so that concurrent
    readers recover once).
    """
    path = Path(path)
    old = _old_sibling(path)
    deadline = time.monotonic() + wait
    while not path.exists() and old.is_dir():
        try:
            fd = os.open(old / LOCK, os.O_RDWR)
        except FileNotFoundError:  # not an index (a replaced empty directory), or just moved
            with contextlib.suppress(OSError):
                return recover_dir(path)
            return False
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # a live build is swapping: its new index comes next
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.005)
                continue
            try:
                return recover_dir(path)
            except OSError:  # another process recovered it first, or the build finished
                return False
        finally:
            os.close(fd)
    return False


def _leftover_pattern(path: Path) -> re.Pattern:
    # the temporary names of repetend._atomic.atomic_dir: ".NAME.<random>.tmp"
    return re.compile(rf"\.{re.escape(path.name)}\.[A-Za-z0-9_]+\.tmp")


def clean_leftovers(path: str | os.PathLike, grace: float = LEFTOVER_GRACE) -> list[Path]:
    """Remove the temporary build directories that killed builds of *path* left
    beside it; returns them.

    Removed are siblings named like a build's temporary directory that hold the
    :data:`BUILDING` marker (or nothing), are not locked by a live build and
    were last changed more than *grace* seconds ago (a build locks its directory
    right after creating it).  Anything else is left alone.
    """
    path = Path(path)
    pat = _leftover_pattern(path)
    removed = []
    try:
        entries = list(path.parent.iterdir())
    except OSError:
        return removed
    for p in entries:
        if not pat.fullmatch(p.name):
            continue
        try:
            if p.is_symlink() or not p.is_dir() or time.time() - p.stat().st_mtime < grace:
                continue
            if not ((p / BUILDING).is_file() or not any(p.iterdir())):
                continue
            fd = os.open(p, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # a live build
                continue
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
        finally:
            os.close(fd)
    return removed


@contextlib.contextmanager
def replacing(path: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty temporary sibling of *path* to build a whole index in; on
    success it replaces *path* (an index, an empty directory or nothing).

    The temporary directory is locked (``flock`` on the directory) and marked
    with :data:`BUILDING` until it has been swapped in; the swap
    (:func:`repetend._atomic.atomic_dir`) runs under the old index's writer
    lock, so no ``add`` or ``merge`` of the old index is half-way through it.
    On an error the temporary directory is removed and *path* is unchanged;
    after a kill at any moment *path* (after :func:`recover`) is the old index
    or the new one.
    """
    path = Path(path)
    recover(path)
    clean_leftovers(path)
    with contextlib.ExitStack() as held:  # released after the swap below
        with atomic_dir(path) as tmp:
            fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)
            held.callback(os.close, fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
            (tmp / BUILDING).touch()  # kept until after the swap: a kill between the
            yield tmp                  # renames leaves a temporary that is still marked
            test_pause("swap")
            if is_index(path):
                held.enter_context(writer_lock(path))
        with contextlib.suppress(FileNotFoundError):
            (path / BUILDING).unlink()


def new_segment_name(generation: int) -> str:
    """A fresh segment directory name: generation plus a random suffix, so that a
    half-written leftover of a crashed writer never collides with a new one."""
    return f"s{int(generation):06d}-{secrets.token_hex(4)}"
