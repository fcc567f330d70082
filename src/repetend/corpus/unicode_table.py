"""Per-code-point lookup tables for the compiled tokenizer.

Built once per process from the running Python's :mod:`unicodedata` (so the
compiled scanner and the reference tokenizer always agree on the Unicode
version), cached on disk in the user cache directory keyed by
``unicodedata.unidata_version``, and kept in memory afterwards.  Building from
scratch takes about 0.5 s; loading the cache about 10 ms.

Tables (all of length ``0x110000``, indexed by code point):

``flags`` (uint8)
    ``WORD``   the character's category is L*, N* or M* (it belongs to a token);
    ``SINGLE`` a word character in a Han / Hiragana / Katakana range
    (:func:`repetend.corpus.tokenize_ref.is_single_char_token`): a token alone;
    ``SPACE``  ``str.isspace()`` (the ``char`` unit collapses runs of these);
    ``NOT_QC_YES`` NFC_Quick_Check is No or Maybe (the text may not be NFC);
    ``SPECIAL_LOWER`` ``str.lower`` of this character is not a context-free
    single code point (U+0130 expands to two, U+03A3 depends on Final_Sigma);
    ``MAYBE`` NFC_Quick_Check is Maybe: the character may compose with the
    starter before it (``compose_keys`` says with which);
    ``NO_BOUNDARY`` there is no normalization boundary before the character:
    the first character of its canonical decomposition is a non-starter or may
    compose with the character before (so NFC of a text is the concatenation
    of the NFCs of the pieces cut before every character without this bit).
``compose_keys`` (int64, sorted)
    ``first << 21 | second`` of every primary composite pair (Hangul excluded:
    the kernel composes L+V and LV+T arithmetically), plus ``c << 21`` (second
    0) for every starter whose canonical decomposition ends in a mark.
``lflags`` (uint8)
    ``WORD | SINGLE | SPACE`` of the *lower-cased* character, with
    ``NOT_QC_YES | MAYBE | SPECIAL_LOWER`` of the character itself, and
    ``LF_CCC`` (ccc != 0), ``LF_LOWER`` (``lower[c] != c``): one lookup per
    character on the fast path, which lowers inside the kernel.
``lower`` (int32)
    the single code point ``chr(c).lower()`` (``c`` itself for SPECIAL_LOWER).
``ccc`` (uint8)
    canonical combining class (for the NFC canonical-order check).
``lower_len`` (uint8)
    ``len(chr(c).lower())`` (1 except U+0130).
"""

from __future__ import annotations

import os
import sys
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .tokenize_ref import is_single_char_token

__all__ = ["UnicodeTables", "tables", "WORD", "SINGLE", "SPACE", "NOT_QC_YES", "SPECIAL_LOWER", "NO_BOUNDARY", "MAYBE", "LF_CCC", "LF_LOWER"]

WORD = 1
SINGLE = 2
SPACE = 4
NOT_QC_YES = 8
SPECIAL_LOWER = 16
NO_BOUNDARY = 32
MAYBE = 64
# bits of lflags only
LF_CCC = 32       # canonical combining class is not 0
LF_LOWER = 128    # lower[c] != c

_TABLE_VERSION = 5
_N = 0x110000


@dataclass(frozen=True)
class UnicodeTables:
    flags: np.ndarray
    lflags: np.ndarray
    lower: np.ndarray
    ccc: np.ndarray
    lower_len: np.ndarray
    compose_keys: np.ndarray


def _cache_dir() -> Path:
    if os.environ.get("REPETEND_CACHE_DIR"):
        return Path(os.environ["REPETEND_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "repetend"


def _cache_file() -> Path:
    return _cache_dir() / (
        f"unicode-{unicodedata.unidata_version}-py{sys.version_info[0]}{sys.version_info[1]}"
        f"-v{_TABLE_VERSION}.npz")


def build_tables() -> UnicodeTables:
    """Build the tables from :mod:`unicodedata` (about 0.5 s)."""
    chars = [chr(c) for c in range(_N)]
    cat = unicodedata.category
    flags = np.zeros(_N, dtype=np.uint8)
    word = np.fromiter((cat(ch)[0] in "LNM" for ch in chars), dtype=bool, count=_N)
    flags[word] = WORD
    # single-character tokens: only inside the CJK / kana ranges
    for lo, hi in ((0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9F), (0x3400, 0x4DBF),
                   (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF)):
        rng = np.arange(lo, hi + 1)
        sel = rng[word[lo:hi + 1]]
        flags[sel] |= SINGLE
    assert all(is_single_char_token(chr(c)) for c in np.flatnonzero(flags & SINGLE)[::997])
    space = np.fromiter((ch.isspace() for ch in chars), dtype=bool, count=_N)
    flags[space] |= SPACE

    ccc = np.fromiter(map(unicodedata.combining, chars), dtype=np.uint8, count=_N)

    # NFC_Quick_Check != Yes: "No" = cannot occur in NFC (NFC(c) != c);
    # "Maybe" = second element of a primary composite, plus Hangul V and T jamo.
    isnorm = unicodedata.is_normalized
    not_yes = np.fromiter((not isnorm("NFC", ch) for ch in chars), dtype=bool, count=_N)
    decomp = unicodedata.decomposition
    normalize = unicodedata.normalize
    maybe = np.zeros(_N, dtype=bool)
    keys = []
    for c in range(_N):
        d = decomp(chars[c])
        if d and d[0] != "<":
            parts = d.split()
            if len(parts) == 2 and normalize("NFC", chars[c]) == chars[c]:
                first, second = int(parts[0], 16), int(parts[1], 16)
                maybe[second] = True
                keys.append((first << 21) | second)
    maybe[0x1161:0x1176] = True
    maybe[0x11A8:0x11C3] = True
    not_yes |= maybe
    flags[not_yes] |= NOT_QC_YES
    flags[maybe] |= MAYBE
    # a starter whose decomposition ends in a mark (ô = o + U+0302) is keyed with
    # second = 0: a composing mark of lower class after it makes NFC reorder and
    # recompose (ô + U+0323 → ộ), so the kernel must send that text to NFC
    for c in range(_N):
        d = decomp(chars[c])
        if d and d[0] != "<" and ccc[c] == 0:
            nfd = normalize("NFD", chars[c])
            if len(nfd) > 1 and ccc[ord(nfd[-1])] != 0:
                keys.append(c << 21)
    compose_keys = np.unique(np.array(keys, dtype=np.int64))
    # boundary before c: NFD(c) starts with a starter that never composes backwards
    first = np.fromiter((ord(normalize("NFD", ch)[0]) if ch else 0 for ch in chars),
                        dtype=np.int64, count=_N)
    no_bound = (ccc[first] != 0) | np.isin(first, np.flatnonzero(not_yes & (ccc == 0)))
    no_bound |= ccc != 0
    flags[no_bound] |= NO_BOUNDARY

    low_strs = [ch.lower() for ch in chars]
    lower_len = np.fromiter(map(len, low_strs), dtype=np.uint8, count=_N)
    lower = np.arange(_N, dtype=np.int32)
    changed = [c for c in range(_N) if low_strs[c] != chars[c]]
    for c in changed:
        s = low_strs[c]
        if len(s) == 1:
            lower[c] = ord(s)
        else:
            flags[c] |= SPECIAL_LOWER
    # Final_Sigma: str.lower maps U+03A3 to U+03C3 or U+03C2 depending on context
    flags[0x03A3] |= SPECIAL_LOWER
    lower[0x03A3] = 0x03A3
    lflags = ((flags[lower] & (WORD | SINGLE | SPACE))
              | (flags & (NOT_QC_YES | MAYBE | SPECIAL_LOWER)))
    lflags[ccc != 0] |= LF_CCC
    lflags[lower != np.arange(_N)] |= LF_LOWER
    return UnicodeTables(flags, lflags.astype(np.uint8), lower, ccc, lower_len, compose_keys)


def _load(path: Path) -> UnicodeTables | None:
    try:
        with np.load(path) as z:
            t = UnicodeTables(*(np.ascontiguousarray(z[k]) for k in _FIELDS))
    except Exception:  # missing or corrupt cache: rebuild
        return None
    if any(a.shape != (_N,) for a in (t.flags, t.lflags, t.lower, t.ccc, t.lower_len)):
        return None
    return t


def _save(path: Path, t: UnicodeTables) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp.npz")
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, **{k: getattr(t, k) for k in _FIELDS})
        os.replace(tmp, path)
    except OSError:  # read-only home etc.: the tables are rebuilt next time
        pass


_FIELDS = ("flags", "lflags", "lower", "ccc", "lower_len", "compose_keys")
_TABLES: UnicodeTables | None = None


def tables() -> UnicodeTables:
    """The process-wide tables (loaded from the cache or built and cached)."""
    global _TABLES
    if _TABLES is None:
        path = _cache_file()
        t = _load(path)
        if t is None:
            t = build_tables()
            _save(path, t)
        _TABLES = t
    return _TABLES
