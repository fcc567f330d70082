"""Programming-language tokens (``unit="code"``) from Pygments lexers.

The MinHash/LSH article (docs/references.md) measures similarity of Go files on "5 Go tokens in a row, comments
dropped".  Here a document's tokens are the tokens of a Pygments lexer:

* the lexer is ``lang`` (a Pygments name or alias, e.g. ``"go"``) if given, else
  the one for the file name's extension (``names[i]`` / ``name``), else
  ``pygments.lexers.guess_lexer`` on the first 4 KiB, else ``TextLexer``;
* ``Comment.*`` tokens are dropped, except ``Comment.Preproc`` /
  ``Comment.PreprocFile`` (``#include <x.h>`` is code, not a comment);
* each token is stripped of surrounding whitespace, whitespace-only tokens are
  dropped, and ``Text`` tokens (what ``TextLexer`` and lexer fall-backs emit)
  are split at whitespace, so the fall-back still gives word-like tokens;
* case and Unicode form are kept as written (no NFC, no lower-casing): token
  spans are exact substrings of the original text.

Pygments is the optional ``code`` extra; without it a
:class:`repetend.errors.MissingExtraError` is raised.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Sequence

import numpy as np
import numpy.typing as npt

from ..errors import ParameterError, require

__all__ = ["code_token_spans", "code_tokenize_batch", "code_tokens", "lexer_by_name", "lexer_for"]

_WS = re.compile(r"\S+")
_GUESS_CHARS = 4096


def _pygments():
    return require("pygments", "code", "code tokenization")


@lru_cache(maxsize=256)
def lexer_by_name(lang: str):
    _pygments()
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(lang, stripnl=False, stripall=False, ensurenl=False)
    except ClassNotFound:
        raise ParameterError(f"unknown code language {lang!r} (not a Pygments lexer name)") from None


@lru_cache(maxsize=1024)
def _lexer_by_ext(ext: str):
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename("x" + ext, stripnl=False, stripall=False, ensurenl=False)
    except ClassNotFound:
        return None


def lexer_for(text: str, lang: str | None = None, name: str | None = None):
    """The Pygments lexer used for *text* (see the module docstring for the order)."""
    _pygments()
    if lang:
        return lexer_by_name(lang.lower())
    if name:
        base = os.path.basename(str(name))
        ext = os.path.splitext(base)[1].lower()
        lex = _lexer_by_ext(ext) if ext else _lexer_by_ext_or_name(base)
        if lex is not None:
            return lex
    from pygments.lexers import guess_lexer
    from pygments.lexers.special import TextLexer
    from pygments.util import ClassNotFound

    try:
        lex = guess_lexer(text[:_GUESS_CHARS], stripnl=False, stripall=False, ensurenl=False)
    except ClassNotFound:  # pragma: no cover - guess_lexer falls back itself
        lex = None
    return lex if lex is not None else TextLexer(stripnl=False, ensurenl=False)


@lru_cache(maxsize=256)
def _lexer_by_ext_or_name(base: str):
    """Lexer for an extension-less file name such as ``Makefile`` or ``Dockerfile``."""
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename(base, stripnl=False, stripall=False, ensurenl=False)
    except ClassNotFound:
        return None


def _spans_and_tokens(text: str, lexer) -> tuple[list[tuple[int, int]], list[str]]:
    from pygments.token import Comment, Text

    keep_comment = (Comment.Preproc, Comment.PreprocFile)
    # many lexers expect a final newline (line comments end in \n); the extra
    # character is whitespace and never part of a token we keep
    src = text if text.endswith("\n") else text + "\n"
    n = len(text)
    spans: list[tuple[int, int]] = []
    toks: list[str] = []
    for start, ttype, value in lexer.get_tokens_unprocessed(src):
        if ttype in Comment and not any(ttype in k for k in keep_comment):
            continue
        if not value or value.isspace():
            continue
        if ttype in Text:
            for m in _WS.finditer(value):
                a, b = start + m.start(), min(start + m.end(), n)
                if a < b:
                    spans.append((a, b))
                    toks.append(text[a:b])
            continue
        lead = len(value) - len(value.lstrip())
        trail = len(value) - len(value.rstrip())
        a, b = start + lead, min(start + len(value) - trail, n)
        if a < b:
            spans.append((a, b))
            toks.append(text[a:b])
    return spans, toks


def code_tokens(text: str, lang: str | None = None, name: str | None = None) -> list[str]:
    """Code tokens of one document."""
    return _spans_and_tokens(text, lexer_for(text, lang, name))[1]


def code_token_spans(text: str, lang: str | None = None,
                     name: str | None = None) -> npt.NDArray[np.int64]:
    """Character spans ``[n, 2]`` of :func:`code_tokens` in *text*."""
    spans, _ = _spans_and_tokens(text, lexer_for(text, lang, name))
    if not spans:
        return np.empty((0, 2), dtype=np.int64)
    return np.asarray(spans, dtype=np.int64)


def code_tokenize_batch(texts: Sequence[str], lang: str | None = None,
                        names: Sequence[str] | None = None
                        ) -> tuple[list[str], npt.NDArray[np.int64]]:
    """All documents' code tokens back to back, and the per-document offsets."""
    _pygments()
    toks: list[str] = []
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    for i, text in enumerate(texts):
        name = names[i] if names is not None else None
        toks.extend(code_tokens(text, lang, name))
        offsets[i + 1] = len(toks)
    return toks, offsets
