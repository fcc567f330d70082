"""Normalization by each document's language: ``--stem auto``, ``--stopwords auto``, ``--lemmatize``.

:mod:`.normalize` maps the vocabulary once for the whole corpus (one stop list,
one stemmer).  A crawl mixes languages page by page, so here each document's
language (:mod:`repetend.corpus.lang`) chooses its analysers:

* ``stopwords="auto"``: the ``stop-words`` list of the document's language (none
  when the package has no list for it); a language or a file: that list everywhere.
* ``stem="auto"``: the Snowball stemmer of the document's language (none when
  Snowball has none); a language: that stemmer everywhere.
* ``lemmatize="ru"``: every Cyrillic word of every document is replaced by its most
  probable normal form (pymorphy3, the first parse: the analyser orders parses by
  estimated probability); ``lemmatize="auto"``: the same, in the documents detected
  as Russian.  A lemmatized word is not stemmed; the other words of the document
  (Latin option names, numbers) go to its stemmer as before.

The work stays on the vocabulary.  Documents are grouped into *rows*, one per
distinct choice of analysers (all languages without a stemmer or stop list share
the identity row).  A compiled pass marks which token ids occur in each row
(``used[row, id]``); each (word, row) pair is analysed once; the forms of all rows
are dictionary-encoded together, so the same stem or lemma is the same
normalized id (and the same shingle hash) in any language, and
``remap[row, id]`` is its id or -1 for a stop word.  A second compiled pass
rewrites every document through its row.  Memory: one byte and four bytes per
(row, vocabulary entry).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import numpy.typing as npt

from ..errors import MissingExtraError, ParameterError
from . import _normalize_kernels as K
from .normalize import (_STEM_CODES, _clean, _dictionary_encode, _member_mask, load_stopwords,
                        stem_words, stemmer_language)

__all__ = ["AUTO", "LanguageNormalization", "LEMMA_LANGUAGES", "check_normalization_options",
           "LEMMA_KEYS", "lemmatize_words", "lexeme_keys", "needs_languages", "normalize_by_language", "normalize_tokens_rows",
           "per_language"]

AUTO = "auto"
LEMMA_LANGUAGES = ("ru",)
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")


def _lemma_code(value: str | None) -> str | None:
    if value is None:
        return None
    v = str(value).strip().lower()
    if v in ("ru", "russian", "rus"):
        return "ru"
    if v == AUTO:
        return AUTO
    raise ParameterError(f"lemmatize must be 'ru' (pymorphy3, Russian) or 'auto', got {value!r}")


def per_language(stopwords: str | None, stem: str | None, lemmatize: str | None) -> bool:
    """Whether these options take the per-language path (any ``auto``, or lemmatization)."""
    return stopwords == AUTO or stem == AUTO or lemmatize is not None


def needs_languages(stopwords: str | None, stem: str | None, lemmatize: str | None) -> bool:
    """Whether these options need each document's language."""
    return AUTO in (stopwords, stem, _lemma_code(lemmatize))


def _morph():
    try:
        import pymorphy3
    except ImportError as exc:
        raise MissingExtraError("pymorphy3", "lemma", "lemmatization (--lemmatize)") from exc
    try:
        return pymorphy3.MorphAnalyzer(lang="ru")
    except Exception as exc:  # the dictionaries are a separate package
        raise MissingExtraError("pymorphy3-dicts-ru", "lemma",
                                f"lemmatization (--lemmatize; {exc})") from exc


def check_normalization_options(stopwords: str | None, stem: str | None,
                                lemmatize: str | None) -> None:
    """Fail before the corpus is read: a wrong language, file or a missing extra."""
    if stem is not None and stem != AUTO:
        stemmer_language(stem)
    elif stem == AUTO:
        from .normalize import _stemmer_module
        _stemmer_module()
    if stopwords is not None and stopwords != AUTO:
        load_stopwords(stopwords)
    elif stopwords == AUTO:
        load_stopwords("en")
    if _lemma_code(lemmatize) is not None:
        _morph()
    if needs_languages(stopwords, stem, lemmatize):
        from ..corpus.lang import require_detector
        require_detector()


def lemmatize_words(words: Sequence[str], morph=None) -> list[str]:
    """The most probable normal form of each word (pymorphy3's first parse), lower-cased."""
    morph = morph or _morph()
    out = []
    for w in words:
        try:
            out.append(morph.parse(w)[0].normal_form)
        except Exception:  # a word the analyser cannot take (lone surrogate): as it is
            out.append(w)
    return out


LEMMA_KEYS = ("lexeme", "first")
LEXEME_CAP = 4


def lexeme_keys(words: Sequence[str], morph=None, cap: int = LEXEME_CAP) -> list[str]:
    """One key per word that an inflected form of the same word also gets, lower-cased.

    The most probable normal form (:func:`lemmatize_words`) parts what a copy's
    inflection made ambiguous: *стали* is *стать* first and *сталь* second, so a copy
    that swapped *сталью* for *стали* lemmatizes to another word.  Here the normal forms
    of **all** the dictionary parses of a word are joined (union-find over normal forms;
    a word the dictionary does not know contributes its first parse only), a union
    being skipped when the joined group would hold more than *cap* normal forms (so
    chains of homonyms do not snowball); each word's key is the smallest normal form
    of the group of its most probable parse.  Words are taken in sorted order, so the
    keys depend on the set of words only.
    """
    morph = morph or _morph()
    words = list(words)
    parent: dict[str, str] = {}
    size: dict[str, int] = {}

    def find(x: str) -> str:
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def add(x: str) -> None:
        if x not in parent:
            parent[x] = x
            size[x] = 1

    first: dict[str, str] = {}
    for w in sorted(set(words)):
        try:
            parses = morph.parse(w)
        except Exception:  # a word the analyser cannot take (lone surrogate): as it is
            parses = []
        if not parses:
            first[w] = w
            add(w)
            continue
        first[w] = parses[0].normal_form
        forms = [parses[0].normal_form] + [p.normal_form for p in parses[1:] if p.is_known]
        for f in forms:
            add(f)
        a = find(forms[0])
        for f in forms[1:]:
            b = find(f)
            if a != b and size[a] + size[b] <= cap:
                if b < a:
                    a, b = b, a
                parent[b] = a          # the root is the smallest normal form of the group
                size[a] += size[b]
    return [find(first[w]) for w in words]


def _stop_language(code: str) -> frozenset[str] | None:
    import stop_words

    if code not in stop_words.LANGUAGE_MAPPING:
        return None
    return load_stopwords(code)


def _stem_language(code: str) -> str | None:
    from .normalize import _stemmer_module

    name = _STEM_CODES.get(code)
    return name if name is not None and name in _stemmer_module().algorithms() else None


@dataclass(slots=True)
class LanguageNormalization:
    """Per-row remap: ``remap[doc_row[d], id]`` is the normalized id of token *id* in document *d*."""

    remap: npt.NDArray[np.int32]      # [rows, vocabulary]
    doc_row: npt.NDArray[np.int32]    # [documents]
    vocab: list[str]                  # normalized strings (row-independent ids)
    rows: list[dict]                  # per row: languages, stopwords, stem, lemmatize, documents
    stopwords: str | None
    stem: str | None
    lemmatize: str | None
    stopword_types: int
    lemmatized_types: int
    analysed: int                     # (word, row) pairs analysed
    timings: dict = field(default_factory=dict)

    @property
    def types_before(self) -> int:
        return int(self.remap.shape[1])

    @property
    def types_after(self) -> int:
        kept = self.remap[self.remap >= 0]
        return int(np.unique(kept).shape[0]) if kept.size else 0


def normalize_by_language(vocab: list[str], tokens: npt.NDArray[np.int32],
                          doc_offsets: npt.NDArray[np.int64], languages: Sequence[str] | None, *,
                          stopwords: str | None = None, stem: str | None = None,
                          lemmatize: str | None = None,
                          lemma_keys: str = "lexeme") -> LanguageNormalization:
    """The per-document normalization of a store's stream (see the module docstring).

    *languages* is one ISO 639-1 code per document (``""``: undetermined); it may be
    None when no option is ``auto`` (every document is then in one row).
    """
    lem = _lemma_code(lemmatize)
    if lemma_keys not in LEMMA_KEYS:
        raise ParameterError(f"lemma_keys must be one of {', '.join(LEMMA_KEYS)}, got {lemma_keys!r}")
    n_docs = int(doc_offsets.shape[0] - 1)
    if needs_languages(stopwords, stem, lemmatize):
        if languages is None or len(languages) != n_docs:
            raise ParameterError("stopwords/stem/lemmatize 'auto' need one language per document")
        langs = [str(x or "") for x in languages]
    else:
        langs = [""] * n_docs
    t0 = time.perf_counter()
    fixed_stop = load_stopwords(stopwords) if stopwords not in (None, AUTO) else None
    fixed_stem = stemmer_language(stem) if stem not in (None, AUTO) else None
    # one row per distinct (stop list, stemmer, lemmatizer)
    codes, inv = np.unique(np.asarray(langs, dtype=object).astype(str), return_inverse=True)
    row_keys: dict[tuple, int] = {}
    code_row = np.empty(len(codes), dtype=np.int32)
    rows: list[dict] = []
    stop_lists: list[frozenset[str] | None] = []
    for i, code in enumerate(codes.tolist()):
        sl = _stop_language(code) if stopwords == AUTO and code else fixed_stop
        sk = (code if sl is not None else None) if stopwords == AUTO else stopwords
        st = _stem_language(code) if stem == AUTO and code else fixed_stem
        lz = lem == "ru" or (lem == AUTO and code == "ru")
        key = (sk, st, lz)
        if key not in row_keys:
            row_keys[key] = len(rows)
            rows.append({"languages": [], "stopwords": sk, "stem": st, "lemmatize": lz})
            stop_lists.append(sl)
        code_row[i] = row_keys[key]
        rows[row_keys[key]]["languages"].append(code or "und")
    doc_row = code_row[inv].astype(np.int32) if n_docs else np.empty(0, np.int32)
    counts = np.bincount(doc_row, minlength=len(rows))
    for r, c in enumerate(counts.tolist()):
        rows[r]["documents"] = int(c)
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    used = K.used_by_row(tokens, doc_offsets, doc_row, np.int64(len(rows)), np.int64(len(vocab)))
    t_rows = time.perf_counter()
    morph = _morph() if any(r["lemmatize"] for r in rows) else None
    all_forms: list[str] = []
    row_ids: list[np.ndarray] = []
    stop_masks: list[np.ndarray] = []
    n_lemma = 0
    for r, info in enumerate(rows):
        ids = np.flatnonzero(used[r])
        words = [vocab[i] for i in ids.tolist()]
        forms = list(words)
        if info["lemmatize"]:
            cyr = np.fromiter((_CYRILLIC.search(w) is not None for w in words), dtype=bool,
                              count=len(words))
            cyr_idx = np.flatnonzero(cyr).tolist()
            lemmas = (lexeme_keys if lemma_keys == "lexeme" else lemmatize_words)(
                [words[j] for j in cyr_idx], morph)
            for j, f in zip(cyr_idx, lemmas):
                forms[j] = f
            n_lemma += len(cyr_idx)
            rest = np.flatnonzero(~cyr).tolist()
        else:
            rest = list(range(len(words)))
        if info["stem"] is not None and rest:
            stems = stem_words([words[j] for j in rest], info["stem"])
            for j, f in zip(rest, stems):
                forms[j] = f
        sl = stop_lists[r]
        if sl:
            stop_masks.append(_member_mask([_clean(w) for w in words], sl))
        else:
            stop_masks.append(np.zeros(len(words), dtype=bool))
        all_forms.extend(forms)
        row_ids.append(ids)
    codes_all, norm_vocab = _dictionary_encode(all_forms)
    remap = np.full((len(rows), len(vocab)), -1, dtype=np.int32)
    pos = 0
    n_stop = 0
    for r, ids in enumerate(row_ids):
        c = codes_all[pos:pos + ids.size].copy()
        c[stop_masks[r]] = -1
        n_stop += int(stop_masks[r].sum())
        remap[r, ids] = c
        pos += ids.size
    timings = {"rows": t_rows - t0, "analyse": time.perf_counter() - t_rows}
    return LanguageNormalization(remap, doc_row, norm_vocab, rows, stopwords, stem, lem, n_stop,
                                 n_lemma, int(pos), timings)


def normalize_tokens_rows(tokens, doc_offsets, doc_row, remap2d):
    """Rewrite the stream, document *d* through ``remap2d[doc_row[d]]`` (compiled; -1 dropped)."""
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    doc_row = np.ascontiguousarray(doc_row, dtype=np.int32)
    remap2d = np.ascontiguousarray(remap2d, dtype=np.int32)
    if tokens.size and (int(tokens.max()) >= remap2d.shape[1] or int(tokens.min()) < 0):
        raise ParameterError(f"token ids outside the remap array of {remap2d.shape[1]} entries")
    counts = K.kept_counts_rows(tokens, doc_offsets, doc_row, remap2d)
    new_offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=new_offsets[1:])
    out = np.empty(int(new_offsets[-1]), dtype=np.int32)
    K.remap_fill_rows(tokens, doc_offsets, doc_row, remap2d, new_offsets, out)
    return out, new_offsets
