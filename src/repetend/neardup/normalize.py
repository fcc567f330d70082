"""Normalization of the token stream before shingling: stop words and Snowball stemming.

The shingling article (normalization before shingling; docs/references.md) lists
lower-casing, punctuation removal, stop-word removal and lemmatization or
stemming, and warns that for languages with rich morphology (Russian, German)
shingles of raw word forms miss copies that differ only in inflection.  The
tokenizer already lower-cases and drops punctuation; this module adds the last
two steps, for near-duplicate detection only (phrase mining stays verbatim:
boilerplate is the same text, not the same stems).

The work is done on the **vocabulary**, not on the corpus: each distinct token is
looked up in the stop list and stemmed once (PyStemmer, the compiled Snowball
stemmers), which gives a remap array ``vocab id -> normalized id`` (``-1`` for a
stop word).  A compiled kernel then rewrites every document's token stream through
that array, dropping stop words, and shingles are formed on the rewritten stream
with hashes of the *normalized strings* (so the same stems give the same shingles
in any store).

Sources
-------
* Stop words for a language come from the ``stop-words`` package (PyPI
  ``stop-words``, 33 languages, maintained, plain text lists shipped in the wheel;
  Russian 421 words, English 1,333).  Its English list is long; for a short list
  (e.g. Snowball's own ``english.stop``), pass a file: one word per line, ``#``
  starts a comment (Snowball's ``|`` comments are accepted too).
* Stemming is Snowball through PyStemmer (``Stemmer.Stemmer(lang)``).

Both are optional extras: a missing package raises
:class:`~repetend.errors.MissingExtraError` naming the extra (``stopwords`` /
``stem``).  One language for the whole corpus here; by each document's language
(``auto``) and with Russian lemmas: :mod:`.normalize_lang`.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from .._arrays import sorted_unique
from ..errors import InputError, MissingExtraError, ParameterError
from . import _normalize_kernels as K

__all__ = ["Normalization", "load_stopwords", "normalize_tokens", "normalize_vocabulary",
           "stem_words", "stemmer_language"]

# ISO 639-1 codes of the Snowball stemmers shipped by PyStemmer.
_STEM_CODES = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech",
    "da": "danish", "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian",
    "fi": "finnish", "fr": "french", "de": "german", "el": "greek", "hi": "hindi",
    "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian", "lt": "lithuanian",
    "ne": "nepali", "no": "norwegian", "nb": "norwegian", "fa": "persian", "pl": "polish",
    "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian", "st": "sesotho",
    "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}


def _stemmer_module():
    try:
        import Stemmer  # PyStemmer
    except ImportError as exc:
        raise MissingExtraError("PyStemmer", "stem", "stemming (--stem)") from exc
    return Stemmer


def stemmer_language(lang: str) -> str:
    """The Snowball algorithm name for *lang* (a name such as ``russian`` or an ISO code such as ``ru``)."""
    Stemmer = _stemmer_module()
    name = str(lang).strip().lower()
    name = _STEM_CODES.get(name, name)
    algos = Stemmer.algorithms()
    if name not in algos:
        raise ParameterError(f"no Snowball stemmer for {lang!r}; available: {', '.join(sorted(algos))}")
    return name


def stem_words(words: list[str], lang: str) -> list[str]:
    """Snowball stems of *words* (lower-cased first), one compiled call.

    A word that is not valid Unicode (a lone surrogate) is left as it is.
    """
    Stemmer = _stemmer_module()
    st = Stemmer.Stemmer(stemmer_language(lang), 0)  # no cache: each word is stemmed once
    lowered = [w.lower() for w in words]
    try:
        return st.stemWords(lowered)
    except UnicodeEncodeError:
        out = []
        for w in lowered:
            try:
                out.append(st.stemWord(w))
            except UnicodeEncodeError:
                out.append(w)
        return out


def _dictionary_encode(forms: list[str]) -> tuple[np.ndarray, list[str]]:
    """(codes, distinct values in first-seen order) of a list of strings."""
    import pyarrow as pa

    try:
        enc = pa.array(forms, pa.string()).dictionary_encode()
    except UnicodeEncodeError:  # lone surrogates: the Python way
        index: dict[str, int] = {}
        codes = np.fromiter((index.setdefault(f, len(index)) for f in forms), dtype=np.int32, count=len(forms))
        return codes, list(index)
    codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int32).copy()
    return codes, enc.dictionary.to_pylist()


def _member_mask(words: list[str], value_set: frozenset[str]) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        hit = pc.is_in(pa.array(words, pa.string()), value_set=pa.array(sorted(value_set), pa.string()))
        return np.asarray(hit.to_numpy(zero_copy_only=False), dtype=bool)
    except UnicodeEncodeError:
        return np.fromiter((w in value_set for w in words), dtype=bool, count=len(words))


def _clean(word: str) -> str:
    return unicodedata.normalize("NFC", word.strip()).lower()


def _looks_like_path(spec: str) -> bool:
    return os.sep in spec or "/" in spec or spec.endswith((".txt", ".stop", ".lst"))


def load_stopwords(spec: str) -> frozenset[str]:
    """Stop words named by *spec*: an existing file (one word per line) or a language.

    Parameters
    ----------
    spec : str
        A path to a UTF-8 text file — one word per line; ``#`` or ``|`` start a
        comment, so Snowball's ``*.stop`` lists work as they are — or a language
        name or ISO code understood by the ``stop-words`` package (``ru``,
        ``english``, …).

    Returns
    -------
    frozenset of str
        NFC-normalized, lower-cased words.
    """
    spec = str(spec)
    p = Path(spec)
    if p.is_file():
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read stop-word list ({exc})", path=spec) from exc
        words = set()
        for line in text.splitlines():
            for sep in ("#", "|"):
                line = line.split(sep, 1)[0]
            for w in line.split():
                words.add(_clean(w))
        return frozenset(w for w in words if w)
    if _looks_like_path(spec):
        raise InputError("stop-word file not found", path=spec)
    try:
        import stop_words
    except ImportError as exc:
        raise MissingExtraError("stop-words", "stopwords", f"stop words for language {spec!r}") from exc
    try:
        words = stop_words.get_stop_words(spec.strip().lower())
    except stop_words.StopWordError as exc:
        raise ParameterError(f"no stop-word list for {spec!r} (and no such file); available: "
                             f"{', '.join(sorted(set(stop_words.AVAILABLE_LANGUAGES)))}") from exc
    return frozenset(_clean(w) for w in words if w.strip())


@dataclass(slots=True)
class Normalization:
    """A vocabulary remap: ``remap[id]`` is the normalized id of token *id*, or -1 for a stop word.

    ``vocab[j]`` is the normalized string of normalized id *j* (the stem, or the
    token itself without stemming); shingle hashes are computed from these strings.
    """

    remap: npt.NDArray[np.int32]
    vocab: list[str]
    stopwords: str | None
    stem: str | None
    stopword_types: int   # vocabulary entries dropped as stop words

    @property
    def types_before(self) -> int:
        return int(self.remap.shape[0])

    @property
    def types_after(self) -> int:
        """Distinct normalized strings in use (stop words excluded)."""
        kept = self.remap[self.remap >= 0]
        return int(sorted_unique(kept).shape[0]) if kept.size else 0


def normalize_vocabulary(vocab: list[str], *, stopwords: str | frozenset[str] | None = None,
                         stem: str | None = None) -> Normalization:
    """Map each distinct token once: stop word → -1, else → id of its (stemmed) form.

    Parameters
    ----------
    vocab : list of str
        The store's vocabulary (row number = token id).
    stopwords : str or frozenset of str, optional
        A file or language for :func:`load_stopwords`, or the words themselves.
        Stop words are matched on the lower-cased surface form, before stemming.
    stem : str, optional
        Snowball language (``russian``, ``ru``, ``english``, …) for PyStemmer.

    Returns
    -------
    Normalization

    Notes
    -----
    The shingling article (normalization before shingling).  Cost is one pass over the
    vocabulary (|V| strings), independent of the corpus length; the per-token
    work is the compiled rewrite in :func:`normalize_tokens`.
    """
    stop_spec = None
    if stopwords is not None and not isinstance(stopwords, (frozenset, set)):
        stop_spec = str(stopwords)
        stopwords = load_stopwords(stop_spec)
    if stem is not None:
        lang = stemmer_language(stem)
        forms = stem_words(vocab, lang)
    else:
        lang = None
        forms = vocab
    remap, norm_vocab = _dictionary_encode(list(forms))
    n_stop = 0
    if stopwords:
        mask = _member_mask([_clean(w) for w in vocab], frozenset(stopwords))
        remap[mask] = -1
        n_stop = int(mask.sum())
    if stop_spec is None and stopwords:
        stop_spec = f"<{len(stopwords)} words>"
    return Normalization(remap, norm_vocab, stop_spec, lang, n_stop)


def normalize_tokens(tokens: npt.NDArray[np.int32], doc_offsets: npt.NDArray[np.int64],
                     remap: npt.NDArray[np.int32]) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    """Rewrite the token stream through *remap* (compiled; -1 entries are dropped).

    Returns the new tokens and document offsets: document d becomes
    ``out[new_offsets[d]:new_offsets[d+1]]``.
    """
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    remap = np.ascontiguousarray(remap, dtype=np.int32)
    if tokens.size and (int(tokens.max()) >= remap.shape[0] or int(tokens.min()) < 0):
        raise ParameterError(f"token ids outside the remap array of {remap.shape[0]} entries")
    counts = K.kept_counts(tokens, doc_offsets, remap)
    new_offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=new_offsets[1:])
    out = np.empty(int(new_offsets[-1]), dtype=np.int32)
    K.remap_fill(tokens, doc_offsets, remap, new_offsets, out)
    return out, new_offsets
