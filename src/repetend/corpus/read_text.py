"""A directory tree of text files, one document per file."""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path
from typing import ClassVar, Iterator

from .read_base import Reader, _decode
from .record import Record

__all__ = ["TextDirReader"]


class TextDirReader(Reader):
    """A directory tree of text files, one document per file (id = relative path).

    Files are visited in path order; hidden files and directories (``.git``,
    ``.venv``) and token stores inside the tree are skipped.  ``glob`` (e.g.
    ``"**/*.md"``) chooses files; by default every file that decodes as text is
    read (UTF-8, or UTF-16 with a byte-order mark), ``.gz`` files are
    decompressed, and binary files (a NUL byte or mostly invalid UTF-8 in their
    first 8 KiB) are counted and skipped.  Given a single
    file, the reader yields that file as one document, its id the path as given.
    """

    fmt = "text"
    sniff_bytes: ClassVar[int] = 8192

    def read_file(self, path: Path) -> Iterator[Record]:
        if path.is_file():  # the path as given: README.md files of many dirs stay apart
            rec = self._read_one(path, path.as_posix(), 0)
            if rec is not None:
                yield rec
            return
        record_no = 0
        for f in self._files(path):
            rec = self._read_one(f, f.relative_to(path).as_posix(), record_no)
            record_no += 1
            if rec is not None:
                yield rec

    def _files(self, root: Path) -> Iterator[Path]:
        return iter(_tree_files(root, self.glob))

    def _read_one(self, f: Path, doc_id: str, record_no: int) -> Record | None:
        self.stats.files += 1
        try:
            opener = gzip.open if f.name.lower().endswith(".gz") else open
            with opener(f, "rb") as fh:
                head = fh.read(self.sniff_bytes)
                if head[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16 with its BOM
                    return self._utf16(f, head + fh.read(), doc_id, record_no)
                if _is_binary(head):  # decided before the rest is read
                    self._skip_binary(f)
                    return None
                raw = head + fh.read()
        except (OSError, EOFError, zlib.error) as exc:
            self.malformed(f, "", f"cannot read ({type(exc).__name__}: {exc})")
            return None
        text, bad = _decode(raw[3:] if raw[:3] == b"\xef\xbb\xbf" else raw)
        del raw
        return self.make(f, record_no, text, doc_id, None, invalid_utf8=bad)

    def _utf16(self, f: Path, raw: bytes, doc_id: str, record_no: int) -> Record:
        try:
            text, bad = raw.decode("utf-16"), False
        except UnicodeDecodeError:
            text, bad = raw.decode("utf-16", "replace"), True
        return self.make(f, record_no, text, doc_id, None, invalid_utf8=bad)

    def _skip_binary(self, f: Path) -> None:
        if hasattr(self.stats, "skipped_binary"):
            self.stats.skipped_binary += 1  # type: ignore[attr-defined]
        self.stats.note_error(f"{f}: binary file skipped")


def _tree_files(root: Path, pattern: str | None) -> list[Path]:
    """Files under *root* in path order, without hidden directories, token stores or
    scan directories (output written into the tree it was read from is not read back)."""
    if pattern:
        return [f for f in sorted(root.glob(pattern), key=lambda f: f.parts)
                if f.is_file() and not any(p.startswith(".") for p in f.relative_to(root).parts)]
    found: list[tuple[tuple[str, ...], Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        dirnames[:] = [n for n in dirnames if not n.startswith(".")
                       and not _looks_like_store(d / n) and not _looks_like_scan(d / n)]
        for n in filenames:
            f = d / n
            if not n.startswith(".") and f.is_file():
                found.append((f.relative_to(root).parts, f))
    found.sort()  # by path components: a/one.md before b.txt
    return [f for _, f in found]


# the writer-lock file a scan keeps in its directory (repetend.scandir.LOCK)
SCAN_DIR_MARKER = ".scan.lock"


def _looks_like_scan(d: Path) -> bool:
    """A scan directory written into the tree it was read from (its lock file, or,
    before scans kept one, a summary.json beside a token store)."""
    return (d / SCAN_DIR_MARKER).is_file() or (
        (d / "summary.json").is_file() and _looks_like_store(d / "store"))


def _looks_like_store(d: Path) -> bool:
    from .store import is_store

    return is_store(d)


def _is_binary(head: bytes) -> bool:
    if not head:
        return False
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
        return False
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 3:  # a character cut at the sniff boundary
            try:
                head[: exc.start].decode("utf-8")
                return False
            except UnicodeDecodeError:
                pass
    bad = head.decode("utf-8", "replace").count("\ufffd")
    return bad > 0.3 * len(head) / 2

