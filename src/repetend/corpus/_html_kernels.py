"""Compiled line layout of the text of an HTML page: UTF-8 bytes in, UTF-8 bytes out.

Only ``@jit`` functions over arrays and scalars.  :func:`clean_lines` does in one
pass what ``read_warc._clean_lines`` defines in Python: runs of the characters of
``read_warc._SPACES`` become one space, the text is split at ``\\n``, each line is
stripped of Python's whitespace (``str.strip()``), empty lines are left out and
the rest joined by ``\\n``.  A byte that does not start a valid UTF-8 sequence is
taken as one ordinary character (the input is valid UTF-8 in practice).
:func:`has_invalid_xml_chars` tells whether trafilatura's control-character
regular expression would change a page at all.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit


@jit
def _cont(buf, i, k, end):
    """Whether ``buf[i + 1 : i + k]`` are ``k - 1`` continuation bytes before *end*."""
    if i + k > end:
        return False
    for j in range(1, k):
        if buf[i + j] & 0xC0 != 0x80:
            return False
    return True


@jit
def _decode(buf, i, end):
    """The code point starting at ``buf[i]`` and its length in bytes (a byte that
    does not start a whole sequence: itself, marked above U+10FFFF, length 1)."""
    b0 = buf[i]
    if b0 < 0x80:
        return np.int64(b0), 1
    if b0 >= 0xC0 and b0 < 0xE0 and _cont(buf, i, 2, end):
        return (np.int64(b0 & 0x1F) << 6) | np.int64(buf[i + 1] & 0x3F), 2
    if b0 >= 0xE0 and b0 < 0xF0 and _cont(buf, i, 3, end):
        return ((np.int64(b0 & 0x0F) << 12) | (np.int64(buf[i + 1] & 0x3F) << 6)
                | np.int64(buf[i + 2] & 0x3F)), 3
    if b0 >= 0xF0 and b0 < 0xF8 and _cont(buf, i, 4, end):
        return ((np.int64(b0 & 0x07) << 18) | (np.int64(buf[i + 1] & 0x3F) << 12)
                | (np.int64(buf[i + 2] & 0x3F) << 6) | np.int64(buf[i + 3] & 0x3F)), 4
    return np.int64(b0) | np.int64(1 << 30), 1


@jit
def _kind(cp):
    """1: a character of ``_SPACES`` (runs become one space); 2: other whitespace
    that ``str.strip()`` removes at the ends of a line; 0: anything else."""
    if cp == 0x20 or cp == 0x09 or cp == 0x0B or cp == 0x0C or cp == 0x0D or cp == 0xA0 \
            or (cp >= 0x2000 and cp <= 0x200B) or cp == 0x3000:
        return 1
    if (cp >= 0x1C and cp <= 0x1F) or cp == 0x85 or cp == 0x1680 or cp == 0x2028 \
            or cp == 0x2029 or cp == 0x202F or cp == 0x205F:
        return 2
    return 0


@jit
def _kind_at(buf, i, end):
    """``(_kind, length in bytes)`` of the character starting at ``buf[i]``."""
    b0 = buf[i]
    if b0 < 0x80:
        if b0 == 0x20 or (b0 >= 0x09 and b0 <= 0x0D):
            return 1, 1
        if b0 >= 0x1C and b0 <= 0x1F:
            return 2, 1
        return 0, 1
    cp, k = _decode(buf, i, end)
    return _kind(cp), k


@jit
def clean_lines(buf, out):
    """Write the laid-out text of ``buf`` (uint8) into ``out`` (uint8, at least
    ``len(buf)`` long); returns the number of bytes written."""
    n = buf.shape[0]
    o = 0
    start = 0
    while start <= n:
        # the line is buf[start:end]; its content runs from its first to its last
        # character that is not whitespace
        end = start
        first = -1
        last = -1
        i = start
        while i < n:
            b0 = buf[i]
            if b0 == 0x0A:
                break
            if b0 < 0x80:
                if b0 > 0x20 or (b0 < 0x1C and (b0 < 0x09 or b0 > 0x0D)):
                    if first < 0:
                        first = i
                    last = i + 1
                i += 1
            else:
                kind, k = _kind_at(buf, i, n)
                if kind == 0:
                    if first < 0:
                        first = i
                    last = i + k
                i += k
        end = i
        if first >= 0:
            if o > 0:
                out[o] = 0x0A
                o += 1
            i = first
            prev_space = False
            while i < last:
                b0 = buf[i]
                if b0 < 0x80:
                    if b0 == 0x20 or (b0 >= 0x09 and b0 <= 0x0D):
                        if not prev_space:
                            out[o] = 0x20
                            o += 1
                        prev_space = True
                    else:
                        out[o] = b0
                        o += 1
                        prev_space = False
                    i += 1
                    continue
                kind, k = _kind_at(buf, i, last)
                if kind == 1:
                    if not prev_space:
                        out[o] = 0x20
                        o += 1
                    prev_space = True
                else:
                    for j in range(k):
                        out[o + j] = buf[i + j]
                    o += k
                    prev_space = False
                i += k
        start = end + 1
    return o


@jit
def has_invalid_xml_chars(buf):
    """True when the UTF-8 text ``buf`` holds a character of trafilatura's
    ``INVALID_XML_CHARS`` (``[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\ufffe\\uffff]``)."""
    n = buf.shape[0]
    for i in range(n):
        b = buf[i]
        if b < 0x20:
            if b != 0x09 and b != 0x0A and b != 0x0D:
                return True
        elif b == 0xEF and i + 2 < n and buf[i + 1] == 0xBF and (buf[i + 2] == 0xBE
                                                                 or buf[i + 2] == 0xBF):
            return True
    return False
