"""The language of each document (``--lang-detect``): what a detector is fed, and which one.

Detector: py3langid (the maintained fork of Lui & Baldwin's langid.py: a naive Bayes
model over byte n-grams, 97 languages, the model shipped in the wheel, pure Python +
numpy).  lingua (``lingua-language-detector``) was measured beside it; the figures and
the reason for the choice are in ``docs/multilingual.md`` (``benchmarks/bench_langdetect.py``).

What the detector reads is :func:`detector_input` of the text, not the text: letters
only (digits, punctuation, markup and code symbols removed; words of letters kept
with single spaces) and at most ``PREFIX_CHARS`` of them.  Fed whole pages of
documentation with code, py3langid labelled English pages ``zh`` or ``la``; fed
their letters it does not, and the prefix bounds the cost per document.

The result per document is an ISO 639-1 code (``"en"``, ``"ru"``, …), or ``""``
for a document with fewer than ``MIN_LETTERS`` letters (nothing to judge).
Optional extra ``lang`` (``pip install 'repetend[lang]'``).
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

import numpy as np

from ..errors import MissingExtraError

__all__ = ["MIN_LETTERS", "PREFIX_CHARS", "UNDETERMINED", "detect_language", "detect_languages",
           "detector_input", "language_counts", "require_detector"]

PREFIX_CHARS = 2000
MIN_LETTERS = 20
UNDETERMINED = ""

_LETTERS = re.compile(r"[^\W\d_]+")
_NON_LETTER = re.compile(r"[\W\d_]")


def detector_input(text: str, limit: int = PREFIX_CHARS) -> str:
    """The letters of *text* as words separated by single spaces, at most *limit* characters.

    Equal to ``" ".join(re.findall(r"[^\W\d_]+", text))[:limit]``, but scans only
    as much of the text as it needs (pieces of about ``4 * limit`` characters,
    each cut at a non-letter), so a long page costs no more than its beginning.
    """
    out: list[str] = []
    n = 0
    pos = 0
    size = len(text)
    step = max(4 * limit, 1024)
    while n <= limit and pos < size:
        end = pos + step
        if end < size:
            m = _NON_LETTER.search(text, end)
            end = m.start() if m is not None else size
        for w in _LETTERS.findall(text, pos, end):
            out.append(w)
            n += len(w) + 1
            if n > limit:
                break
        pos = end
    return " ".join(out)[:limit]


def require_detector():
    """The py3langid module, or :class:`MissingExtraError` naming the extra."""
    try:
        import py3langid
    except ImportError as exc:
        raise MissingExtraError("py3langid", "lang", "language detection (--lang-detect, "
                                "--stem/--stopwords/--lemmatize auto)") from exc
    return py3langid


def _model():
    return require_detector()


def detect_language(text: str) -> str:
    """ISO 639-1 code of *text*'s language, ``""`` when it has too few letters."""
    x = detector_input(text)
    if sum(c != " " for c in x) < MIN_LETTERS:
        return UNDETERMINED
    return str(_model().classify(x)[0])


def detect_languages(texts: Iterable[str]) -> list[str]:
    """:func:`detect_language` of each text, in order."""
    require_detector()
    return [detect_language(t) for t in texts]


def language_counts(langs: Sequence[str | None]) -> list[tuple[str, int]]:
    """(language, documents) pairs, most documents first (``""`` is shown as ``und``)."""
    if len(langs) == 0:
        return []
    vals, counts = np.unique(np.asarray([("und" if not x else x) for x in langs], dtype=object)
                             .astype(str), return_counts=True)
    order = np.lexsort((vals, -counts))
    return [(str(vals[i]), int(counts[i])) for i in order]


LANGUAGE_COLUMN = "language"


def store_languages(store, say=None) -> list[str]:
    """Each document's language: the store's ``language`` column (``--lang-detect``
    when it was built), else detected now from its texts."""
    if LANGUAGE_COLUMN in store.docs.column_names:
        return [x or "" for x in store.docs.column(LANGUAGE_COLUMN).to_pylist()]
    if say is not None:
        say(f"detecting the language of {store.n_docs:,} documents (py3langid)")
    require_detector()
    return [detect_language(store.text(d)) for d in range(store.n_docs)]
