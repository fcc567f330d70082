"""What every reader shares: opening (compressed) files, decoding, the
:class:`Reader` base with field names, id fallback, error policy and counters."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import sys
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Callable, ClassVar, Iterator, Literal, Sequence

from ..errors import InputError, ParameterError, require
from .record import ReadStats, Record

__all__ = ["STDIN", "OnError", "Reader", "open_binary"]

OnError = Literal["skip", "fail"]


# -- opening files ----------------------------------------------------------------
STDIN = "-"


def open_binary(path: str | os.PathLike) -> BinaryIO:
    """Open *path* for reading bytes, decompressing gzip and zstandard (recognised
    by their magic bytes, whatever the name) and ``.bz2`` / ``.xz`` (by the name).
    ``"-"`` is the standard input (closing the result leaves it open).
    The result is buffered and iterates by lines."""
    p = str(path)
    low = p.lower()
    if p == STDIN:
        fh = _stdin()
    else:
        fh = open(p, "rb", buffering=1 << 20)
    try:
        magic = fh.peek(4)[:4]
        if magic[:2] == b"\x1f\x8b":
            # gzip's own small buffer: a truncated file loses at most a few KB of lines
            return _GzipOwning(fh)  # type: ignore[return-value]
        if magic == b"\x28\xb5\x2f\xfd" or (low.endswith((".zst", ".zstd")) and not magic):
            zstd = require("zstandard", "zstd", f"reading {Path(p).name}")
            return io.BufferedReader(_ZstdRaw(fh, zstd), buffer_size=1 << 18)  # type: ignore[arg-type]
        if low.endswith(".bz2"):
            return _Bz2Owning(fh)  # type: ignore[return-value]
        if low.endswith(".xz"):
            return _LzmaOwning(fh)  # type: ignore[return-value]
    except BaseException:
        fh.close()
        raise
    return fh  # type: ignore[return-value]


class _StdinRaw(io.RawIOBase):
    """The standard input's bytes; closing this leaves stdin open."""

    def __init__(self) -> None:
        self._buf = sys.stdin.buffer

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self._buf.read(len(b))
        b[:len(data)] = data
        return len(data)


def _stdin() -> io.BufferedReader:
    return io.BufferedReader(_StdinRaw(), buffer_size=1 << 20)


class _OwnsFile:
    """Mixin for a decompressing stream over an open file: it closes the file with
    itself."""

    _owned: BinaryIO

    def close(self) -> None:
        try:
            super().close()  # type: ignore[misc]
        finally:
            self._owned.close()


class _GzipOwning(_OwnsFile, gzip.GzipFile):
    def __init__(self, fh: BinaryIO) -> None:
        super().__init__(fileobj=fh, mode="rb")
        self._owned = fh


class _Bz2Owning(_OwnsFile, bz2.BZ2File):
    def __init__(self, fh: BinaryIO) -> None:
        super().__init__(fh, "rb")
        self._owned = fh


class _LzmaOwning(_OwnsFile, lzma.LZMAFile):
    def __init__(self, fh: BinaryIO) -> None:
        super().__init__(fh, "rb")
        self._owned = fh


class _ZstdRaw(io.RawIOBase):
    """A zstandard stream of one or more frames; unlike ``stream_reader`` it raises
    :class:`EOFError` when the file ends inside a frame (a truncated file)."""

    def __init__(self, fh: BinaryIO, zstd: Any) -> None:
        self._f = fh
        self._zstd = zstd
        self._d = zstd.ZstdDecompressor().decompressobj()
        self._fed = False           # data given to the current frame
        self._buf = b""
        self._pos = 0
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while self._pos >= len(self._buf) and not self._eof:
            chunk = self._f.read(1 << 17)
            if not chunk:
                self._eof = True
                if self._fed and not self._d.eof:
                    raise EOFError("zstandard stream ended before the end of a frame")
                break
            out = [self._d.decompress(chunk)]
            self._fed = True
            while self._d.eof:
                rest = self._d.unused_data
                self._d = self._zstd.ZstdDecompressor().decompressobj()
                self._fed = bool(rest)
                if not rest:
                    break
                out.append(self._d.decompress(rest))
            self._buf = b"".join(out)
            self._pos = 0
        n = min(len(b), len(self._buf) - self._pos)
        b[:n] = self._buf[self._pos:self._pos + n]
        self._pos += n
        return n

    def close(self) -> None:
        self._f.close()
        super().close()


# Errors a damaged compressed stream raises while it is being read.
_STREAM_ERRORS: tuple[type[BaseException], ...] = (EOFError, zlib.error, gzip.BadGzipFile,
                                                   lzma.LZMAError, OSError)


def _stream_errors() -> tuple[type[BaseException], ...]:
    try:
        import zstandard

        return _STREAM_ERRORS + (zstandard.ZstdError,)
    except ImportError:  # pragma: no cover - zstandard is an extra
        return _STREAM_ERRORS


def _decode(raw: bytes) -> tuple[str, bool]:
    """UTF-8 text of *raw* and whether bytes had to be replaced."""
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace"), True


_SURROGATE = re.compile("[\ud800-\udfff]")


def _fix_surrogates(text: str) -> tuple[str, bool]:
    """Replace lone surrogates (from ``\\ud800`` escapes or surrogateescape) by U+FFFD."""
    try:
        text.encode("utf-8")
        return text, False
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text), True


def _blank(text: str) -> bool:
    return not text or text.isspace()


# -- the shared reader ------------------------------------------------------------
class Reader:
    """What every format shares; a subclass implements only :meth:`read_file`.

    Parameters
    ----------
    text_field, id_field, url_field
        Names of the fields (keys, columns) that hold the text, the id and the
        url.  A missing id becomes ``"{file name}:{record_no}"``; a missing url
        becomes ``None``.
    on_error
        ``"skip"``: count a malformed record, note a message and go on;
        ``"fail"``: raise :class:`~repetend.errors.InputError` at once.
    stats
        Counters updated while reading (see :class:`ReadStats`).
    """

    fmt: ClassVar[str] = ""

    def __init__(self, *, text_field: str = "text", id_field: str = "id",
                 url_field: str = "url", on_error: OnError = "skip",
                 stats: ReadStats | None = None, glob: str | None = None) -> None:
        if on_error not in ("skip", "fail"):
            raise ParameterError(f"on_error must be 'skip' or 'fail', not {on_error!r}")
        for name, value in (("text_field", text_field), ("id_field", id_field),
                            ("url_field", url_field)):
            if not isinstance(value, str) or not value:
                raise ParameterError(f"{name} must be a non-empty string, not {value!r}")
        self.text_field = text_field
        self.id_field = id_field
        self.url_field = url_field
        self.on_error = on_error
        self.stats = stats if stats is not None else ReadStats()
        self.glob = glob

    # subclasses implement this ---------------------------------------------------
    def read_file(self, path: Path) -> Iterator[Record]:
        """Yield the records of one file (or directory, for text)."""
        raise NotImplementedError

    # shared helpers --------------------------------------------------------------
    def malformed(self, path: Path | str, where: str, message: str, *,
                  record: int | None = None, missing_text: bool = False) -> None:
        """Count a record that cannot be used; raise with ``on_error="fail"``."""
        self.stats.malformed += 1
        if missing_text:
            self.stats.missing_text += 1
        full = f"{path}, {where}: {message}" if where else f"{path}: {message}"
        if self.on_error == "fail":
            raise InputError(f"{where}: {message}" if where else message, path=str(path))
        self.stats.note_error(full)

    def missing_field_error(self, path: Path | str, field: str, what: str,
                            existing: Sequence[str], where: str = "in the first record"
                            ) -> InputError:
        existing = list(existing)
        shown = ", ".join(repr(f) for f in existing[:30]) or "none"
        if len(existing) > 30:
            shown += f", … ({len(existing)} in all)"
        option = {"text": "--text-field", "id": "--id-field", "url": "--url-field"}[what]
        return InputError(f"no {what} field {field!r} {where}; fields that exist: "
                          f"{shown} (choose one with {option})", path=str(path))

    def check_fields(self, path: Path | str, has: Callable[[str], bool],
                     existing: Sequence[str], where: str = "in the first record") -> None:
        """The text field must exist; an id or url field must exist when it was
        named (not left at its default ``"id"`` / ``"url"``), else the ids would
        silently fall back to file:record numbers."""
        if not has(self.text_field):
            raise self.missing_field_error(path, self.text_field, "text", existing, where)
        for what, field in (("id", self.id_field), ("url", self.url_field)):
            if field != what and not has(field):
                raise self.missing_field_error(path, field, what, existing, where)

    def make(self, path: Path, record_no: int, text: str, doc_id: Any = None,
             url: Any = None, *, invalid_utf8: bool = False) -> Record:
        """Build a record with the id fallback, and count it."""
        if invalid_utf8:
            self.stats.invalid_utf8 += 1
        if _blank(text):
            self.stats.empty += 1
        if doc_id is None or doc_id == "":
            doc_id = f"{'stdin' if str(path) == STDIN else path.name}:{record_no}"
        elif not isinstance(doc_id, str):
            doc_id = str(doc_id)
        if url is not None and not isinstance(url, str):
            url = str(url)
        return Record(id=doc_id, text=text, url=url or None, source=str(path),
                      record_no=record_no)

    def stream_failed(self, path: Path, where: str, exc: BaseException) -> None:
        """A compressed stream broke off (truncated / corrupt): count and stop the file."""
        self.malformed(path, where, f"file is damaged or truncated, rest of the file "
                                    f"skipped ({type(exc).__name__}: {exc})")
