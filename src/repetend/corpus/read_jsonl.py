"""JSON Lines (plain, gzip, zstandard, bz2, xz), one object a line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from ..errors import InputError
from .read_base import Reader, _fix_surrogates, _stream_errors, open_binary
from .record import Record

__all__ = ["JsonlReader"]

_json_decode = json.JSONDecoder().decode
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]").search


def _lookup(obj: dict, field: str) -> tuple[bool, Any]:
    """``obj[field]``, or a dotted path into nested objects; (found, value)."""
    if field in obj:
        return True, obj[field]
    if "." in field:
        cur: Any = obj
        for part in field.split("."):
            if not isinstance(cur, dict) or part not in cur:
                return False, None
            cur = cur[part]
        return True, cur
    return False, None


class JsonlReader(Reader):
    """JSON Lines: one JSON object a line (plain, gzip, zstandard, bz2, xz)."""

    fmt = "jsonl"

    def read_file(self, path: Path) -> Iterator[Record]:
        errors = _stream_errors()
        first = True
        lineno = 0
        with open_binary(path) as fh:
            it = iter(fh)
            while True:
                try:
                    line = next(it)
                except StopIteration:
                    break
                except errors as exc:
                    self.stream_failed(path, f"after line {lineno}", exc)
                    break
                lineno += 1
                rec = self._parse_line(path, lineno, line, first)
                line = b""  # not held while the record is out (a 100 MB document)
                if rec is None:
                    continue
                first = False
                if rec is not False:
                    yield rec

    def _parse_line(self, path: Path, lineno: int, line: bytes, first: bool):
        """A Record, ``None`` for a blank or unparseable line, ``False`` for a
        parsed object that is unusable (it still counts as the first record)."""
        try:
            sline, bad = line.decode("utf-8"), False
        except UnicodeDecodeError:
            sline, bad = line.decode("utf-8", "replace"), True
        try:
            obj = _json_decode(sline)
        except ValueError as exc:
            if not line.strip():
                return None  # blank line
            if lineno == 1 and line.startswith(b"\xef\xbb\xbf"):
                return self._parse_line(path, lineno, line[3:], first)
            if first and line.lstrip()[:1] == b"[":
                raise InputError("this is a JSON array, not JSON Lines (one object a line); "
                                 "convert it with: jq -c '.[]'", path=str(path)) from None
            if first and line.strip() == b"{":
                raise InputError("this is pretty-printed JSON, not JSON Lines (one object a "
                                 "line); convert it with: jq -c .", path=str(path)) from None
            self.malformed(path, f"line {lineno}", f"not valid JSON ({exc})")
            return None
        if first and isinstance(obj, list):
            raise InputError("this is a JSON array, not JSON Lines (one object a line); "
                             "convert it with: jq -c '.[]'", path=str(path))
        if not isinstance(obj, dict):
            self.malformed(path, f"line {lineno}",
                           f"a JSON {type(obj).__name__}, not an object")
            return False
        if first:
            self.check_fields(path, lambda f: _lookup(obj, f)[0], list(obj))
        found, text = _lookup(obj, self.text_field)
        if not found or text is None:
            self.malformed(path, f"line {lineno}",
                           f"no text field {self.text_field!r}" if not found
                           else f"text field {self.text_field!r} is null", missing_text=True)
            return False
        if not isinstance(text, str):
            self.malformed(path, f"line {lineno}",
                           f"text field {self.text_field!r} holds a {type(text).__name__}, "
                           "not a string")
            return False
        if b"\\" in line and _SURROGATE_ESCAPE(line):
            text, fixed = _fix_surrogates(text)
            bad = bad or fixed
        _, doc_id = _lookup(obj, self.id_field)
        _, url = _lookup(obj, self.url_field)
        return self.make(path, lineno - 1, text, doc_id, url, invalid_utf8=bad)
