"""Synthetic 1 and Synthetic 2 of the BloomSpan paper, §5: corpora whose phrase answer is known.

Both put phrases into a background of unique random 8-letter "words" (each
background word occurs exactly once in the whole corpus), each occurrence
between two background words (or at a document edge), never two phrases in the
same gap.  Background words therefore never extend a phrase into a frequent
one, which is what makes the expected answer exact.
"""

from __future__ import annotations

import numpy as np

from ..corpus.record import Record
from ..errors import ParameterError
from ..limits import check_seed
from ._synth_kernels import EMPTY, insert_new, spell_words
from .corpus import SynthCorpus

__all__ = ["SYNTHETIC1_PHRASES", "random_words", "synthetic1", "synthetic2"]

#: The three phrases of Synthetic 1 and their supports (the BloomSpan paper, §5).
SYNTHETIC1_PHRASES: tuple[tuple[str, int], ...] = (
    ("This is the first test sentence", 3),
    ("Another unique phrase for testing", 5),
    ("A third sentence", 4),
)

_WORD_LEN = 8
_POW26 = 26 ** np.arange(_WORD_LEN - 1, -1, -1, dtype=np.uint64)


def _pack(letters: np.ndarray) -> np.ndarray:
    """uint64 code of each row of 0..25 letters (base 26; 26**8 < 2**38)."""
    return letters.astype(np.uint64) @ _POW26


def _code_of(word: str) -> int | None:
    if len(word) != _WORD_LEN or not all("a" <= c <= "z" for c in word):
        return None
    return int(_pack(np.frombuffer(word.encode(), dtype=np.uint8)[None, :] - 97)[0])


def _random_codes(n: int, rng: np.random.Generator, exclude: tuple[str, ...]) -> np.ndarray:
    """*n* distinct uniform codes below 26⁸ (random 8-letter words), in draw order, none
    the code of a word in *exclude*: draws go through a compiled hash set that drops
    repeats (and the excluded words, put in first); what was dropped is drawn again."""
    banned = np.array(sorted({c for c in map(_code_of, (w.lower() for w in exclude))
                              if c is not None}), dtype=np.uint64)
    bits = max(4, int(np.ceil(np.log2(2 * (n + banned.size) + 1))))
    table = np.full(1 << bits, EMPTY, dtype=np.uint64)
    insert_new(banned, table, np.empty(banned.size, dtype=np.uint64), 0)
    out = np.empty(n, dtype=np.uint64)
    filled = 0
    while filled < n:
        draws = rng.integers(0, 26 ** _WORD_LEN, size=n - filled + 16, dtype=np.uint64)
        filled = insert_new(draws, table, out, filled)
    return out


def random_words(n: int, rng: np.random.Generator, exclude: tuple[str, ...] = ()) -> np.ndarray:
    """*n* distinct random 8-letter lowercase words as a ``uint8 [n, 8]`` array of
    letters 0..25, in random order, none equal to a word in *exclude*.

    Draws uniform codes below 26⁸ ≈ 2·10¹¹ with numpy, drops repeats (keeping the
    first draw, in draw order; a compiled hash set) and banned words, draws again for
    what was dropped, then spells the codes in base 26.
    """
    return _word_text(_random_codes(n, rng, exclude))[:, :_WORD_LEN] - np.uint8(97)


def _word_text(codes: np.ndarray) -> np.ndarray:
    """``uint8 [n, 9]``: each code spelled as 8 ASCII letters and a trailing space."""
    buf = np.empty((codes.shape[0], _WORD_LEN + 1), dtype=np.uint8)
    spell_words(codes, _WORD_LEN, buf)
    return buf


def _assemble(bg: np.ndarray, doc_starts: np.ndarray, inserts: list[list[tuple[int, int]]],
              phrase_texts: list[str], phrase_ntok: list[int], ids: list[str],
              name: str) -> tuple[list[Record], list[list[dict]]]:
    """Documents from background word rows ``bg[doc_starts[d]:doc_starts[d+1]]`` with
    phrase ``p`` inserted before background word ``g`` for each ``(g, p)`` in
    ``inserts[d]`` (distinct gaps).  Returns the records and, per document, the
    occurrences ``{"phrase", "start", "end", "token_start"}`` (character and token
    offsets into that document)."""
    flat = bg.reshape(-1)
    width = _WORD_LEN + 1
    records, occurrences = [], []
    for d in range(doc_starts.size - 1):
        a, b = int(doc_starts[d]), int(doc_starts[d + 1])
        pieces: list[str] = []
        occ: list[dict] = []
        pos = 0       # characters written so far (pieces joined with single spaces)
        tok = 0       # tokens written so far
        prev = 0      # next background word (relative) not yet written
        for g, p in sorted(inserts[d]) + [(b - a, -1)]:
            if g > prev:
                chunk = flat[(a + prev) * width:(a + g) * width - 1].tobytes().decode("ascii")
                pos += len(chunk) + (1 if pieces else 0)
                pieces.append(chunk)
                tok += g - prev
                prev = g
            if p >= 0:
                start = pos + (1 if pieces else 0)
                pieces.append(phrase_texts[p])
                pos = start + len(phrase_texts[p])
                occ.append({"phrase": p, "start": start, "end": pos, "token_start": tok})
                tok += phrase_ntok[p]
        records.append(Record(id=ids[d], text=" ".join(pieces), source=f"synth:{name}",
                              record_no=d))
        occurrences.append(occ)
    return records, occurrences


def _place(rng: np.random.Generator, n_docs: int, words_per_doc: int,
           supports: list[int]) -> list[list[tuple[int, int]]]:
    """For phrase p, ``supports[p]`` distinct random documents; in each document the
    phrases get distinct random gaps in ``0..words_per_doc``."""
    per_doc: list[list[int]] = [[] for _ in range(n_docs)]
    for p, s in enumerate(supports):
        for d in rng.choice(n_docs, size=s, replace=False):
            per_doc[int(d)].append(p)
    inserts: list[list[tuple[int, int]]] = []
    for phrases in per_doc:
        if len(phrases) > words_per_doc + 1:
            raise ParameterError(
                f"words_per_doc={words_per_doc} leaves too few gaps for {len(phrases)} phrases "
                "in one document; raise words_per_doc or n_docs")
        gaps = rng.choice(words_per_doc + 1, size=len(phrases), replace=False)
        inserts.append([(int(g), p) for g, p in zip(gaps, phrases)])
    return inserts


def _phrase_truth(texts, tokens, supports, occurrences, ids) -> list[dict]:
    out = []
    for p, (text, toks, s) in enumerate(zip(texts, tokens, supports)):
        occ = [{"doc": ids[d], "doc_index": d, "start": o["start"], "end": o["end"],
                "token_start": o["token_start"]}
               for d, per in enumerate(occurrences) for o in per if o["phrase"] == p]
        out.append({"text": text, "tokens": toks, "length": len(toks), "support": s,
                    "occurrences": occ})
    return out


def synthetic1(n_docs: int, words_per_doc: int = 5000, seed: int = 0) -> SynthCorpus:
    """Synthetic 1 of the BloomSpan paper, §5: a flat background with three planted phrases.

    ``n_docs × words_per_doc`` distinct random 8-letter lowercase words (no word
    repeats anywhere in the corpus, none equals a phrase word), cut in order into
    documents of ``words_per_doc`` words, joined by single spaces.  Each phrase of
    :data:`SYNTHETIC1_PHRASES` ("This is the first test sentence" support 3,
    "Another unique phrase for testing" 5, "A third sentence" 4) is inserted whole,
    with its capitalisation, into that many distinct random documents at a random
    gap between background words.

    The known answer: at σ = 3 and minimum length 3 the maximal frequent phrases are
    exactly the three phrases (tokens lower-cased), with df 3, 5 and 4; ``truth``
    lists them with every occurrence (document, character and token offsets).

    Parameters
    ----------
    n_docs : int
        Number of documents, at least 5 (the largest support).
    words_per_doc : int
        Background words per document (5000 in the paper).
    seed : int
        Seed of ``numpy.random.default_rng``; the corpus is a function of the arguments.

    Returns
    -------
    SynthCorpus

    Notes
    -----
    Generator of the BloomSpan measurements (the BloomSpan paper, §5, "Синтетика 1"); the
    paper's reference implementation is ``corpus-miner/test-gen/generate_test_dataset.py``.
    """
    n_docs, words_per_doc = int(n_docs), int(words_per_doc)
    max_support = max(s for _, s in SYNTHETIC1_PHRASES)
    if n_docs < max_support:
        raise ParameterError(f"n_docs must be at least {max_support} (the largest support), got {n_docs}")
    if words_per_doc < 2:
        raise ParameterError(f"words_per_doc must be at least 2, got {words_per_doc}")
    check_seed(seed)
    rng = np.random.default_rng(seed)
    texts = [t for t, _ in SYNTHETIC1_PHRASES]
    supports = [s for _, s in SYNTHETIC1_PHRASES]
    tokens = [t.lower().split() for t in texts]
    bg = _word_text(_random_codes(n_docs * words_per_doc, rng,
                                  exclude=tuple(w for ts in tokens for w in ts)))
    inserts = _place(rng, n_docs, words_per_doc, supports)
    ids = [f"doc-{d:06d}" for d in range(n_docs)]
    doc_starts = np.arange(n_docs + 1, dtype=np.int64) * words_per_doc
    records, occ = _assemble(bg, doc_starts, inserts, texts, [len(t) for t in tokens], ids,
                             "synthetic1")
    truth = {
        "phrases": _phrase_truth(texts, tokens, supports, occ, ids),
        # Maximal frequent phrases for each min_docs, valid for 2 <= min_len <= 3.  (At
        # min_len 1 and min_docs 5 the shared word "sentence" may become maximal too.)
        "expected": {"min_len": [2, 3],
                     "by_min_docs": {str(k): [t for t, s in zip(tokens, supports) if s >= k]
                                     for k in range(2, max_support + 1)}},
    }
    params = {"n_docs": n_docs, "words_per_doc": words_per_doc, "seed": seed}
    return SynthCorpus("synthetic1", records, truth, params)


def synthetic2(n_docs: int = 1000, seed: int = 0, *, n_phrases: int = 300, max_len: int = 400,
               min_len: int = 101, shift: int = 2, support: int = 5,
               words_per_doc: int = 1000) -> SynthCorpus:
    """Synthetic 2 of the BloomSpan paper, §5: many heavily overlapping phrases, the worst case.

    A base sequence ``B`` of distinct random 8-letter words (disjoint from the
    background) is cut into ``n_phrases`` shifted windows of decreasing length:
    phrase ``i = B[i·shift : i·shift + len_i]`` with ``len_i`` falling evenly
    (rounded) from ``max_len`` to ``min_len``.  Consecutive phrases share
    ``len_i − shift`` words; since ``len_i − len_{i+1} < shift`` no phrase contains
    another.  Each phrase is inserted into ``support`` distinct random documents of
    ``words_per_doc`` unique background words (Synthetic 1's background), at distinct
    gaps.

    Every n-gram of ``B`` inside some phrase is then frequent (df = ``support`` × the
    number of phrases covering it, up to ~``max_len/shift`` of them), so a Bloom
    filter prunes nothing and all work is maximality checking — the paper's worst
    case for BloomSpan.  The known answer: for ``2 ≤ min_docs ≤ support`` and a minimum
    length of at most the shortest phrase, the maximal frequent phrases are exactly the
    ``n_phrases`` phrases, each with df = ``support`` (``truth["expected"]``).

    Parameters
    ----------
    n_docs : int
        Documents (at least ``support``).
    seed : int
        Seed of ``numpy.random.default_rng``.
    n_phrases, max_len, min_len, shift : int
        The phrase family (defaults: 300 phrases of 400 … 101 words, shift 2).
        Requires ``0 ≤ len_i − len_{i+1} < shift``, i.e.
        ``max_len − min_len`` ≤ ``(shift − 1)·(n_phrases − 1)`` (roughly).
    support : int
        Documents per phrase.
    words_per_doc : int
        Background words per document.

    Returns
    -------
    SynthCorpus
    """
    n_docs, n_phrases, max_len, min_len = int(n_docs), int(n_phrases), int(max_len), int(min_len)
    shift, support, words_per_doc = int(shift), int(support), int(words_per_doc)
    if n_phrases < 1 or shift < 1 or support < 1 or words_per_doc < 1:
        raise ParameterError("n_phrases, shift, support and words_per_doc must be at least 1")
    if not 1 <= min_len <= max_len:
        raise ParameterError(f"need 1 <= min_len <= max_len, got min_len={min_len}, max_len={max_len}")
    if n_docs < support:
        raise ParameterError(f"n_docs ({n_docs}) must be at least support ({support})")
    lengths = (np.rint(np.linspace(max_len, min_len, n_phrases)).astype(np.int64)
               if n_phrases > 1 else np.array([max_len]))
    steps = -np.diff(lengths)
    if steps.size and (steps.min() < 0 or steps.max() >= shift):
        raise ParameterError(
            f"phrase lengths fall by up to {int(steps.max())} per phrase, which must stay below "
            f"shift={shift} so that no phrase contains another; lower max_len - min_len or raise shift")
    starts = np.arange(n_phrases, dtype=np.int64) * shift
    base_len = int((starts + lengths).max())
    check_seed(seed)
    rng = np.random.default_rng(seed)
    text = _word_text(_random_codes(base_len + n_docs * words_per_doc, rng, ()))
    base = text[:base_len].tobytes().decode("ascii").split()
    bg = text[base_len:]
    tokens = [base[s:s + n] for s, n in zip(starts.tolist(), lengths.tolist())]
    texts = [" ".join(t) for t in tokens]
    supports = [support] * n_phrases
    inserts = _place(rng, n_docs, words_per_doc, supports)
    ids = [f"doc-{d:06d}" for d in range(n_docs)]
    doc_starts = np.arange(n_docs + 1, dtype=np.int64) * words_per_doc
    records, occ = _assemble(bg, doc_starts, inserts, texts, lengths.tolist(), ids, "synthetic2")
    phrases = _phrase_truth(texts, tokens, supports, occ, ids)
    for p, s in zip(phrases, starts.tolist()):
        p["base_start"] = s
    truth = {
        "base": " ".join(base),
        "phrases": phrases,
        # Maximal frequent phrases for 2 <= min_docs <= support, 1 <= min_len <= shortest.
        "expected": {"min_len": [1, int(lengths.min())],
                     "by_min_docs": {str(k): tokens for k in range(2, support + 1)}},
    }
    params = {"n_docs": n_docs, "seed": seed, "n_phrases": n_phrases, "max_len": max_len,
              "min_len": min_len, "shift": shift, "support": support,
              "words_per_doc": words_per_doc}
    return SynthCorpus("synthetic2", records, truth, params)
