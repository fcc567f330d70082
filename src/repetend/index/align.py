"""Shared fragments (the plagiarism view) and known boilerplate phrases in a text.

Shared fragments
    The shingling article (plagiarism; docs/references.md): once a document is
    found similar, show *which* fragments were taken and from where.  Both texts are tokenized (the index's
    tokenizer) and every window of ``k`` tokens is hashed (the shingle formula).
    A maximal common run (i, j, t) is a pair of positions whose tokens before
    differ (or one is the first) and whose next t tokens agree, t as long as
    possible.  Every such run of at least k tokens is found
    (:func:`._index_kernels.common_runs`): window i of the query is looked up
    among the windows of the other text, those of them preceded by the same
    token as position i are skipped as one block, the others are extended token
    by token, so a run is exact, never a hash artefact, and none is left out
    however repetitive the texts (no cap on occurrences or runs).  Of the runs
    with the same query span only the one with the smallest start in the other
    text is kept.  Runs are then chosen greedily, longest first, ties by query
    start and then by start in the other text, skipping any that overlaps in
    the query a run chosen before; the chosen runs are mapped to character
    offsets in both original texts
    (:func:`repetend.corpus.tokenizer.token_spans`).

Known phrases
    The maximal frequent phrases of a scan (``SCAN/phrases``) are kept as token
    hash sequences; a text holds a phrase where the hash of its first p tokens
    (p = shortest phrase) matches a window of the text and all its tokens
    agree (:func:`._index_kernels.phrase_hits`).  The shingling article's spam use: a base
    of known template shingles checked on every incoming text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..corpus.tokenizer import hash_strings, token_spans, tokenize_batch
from ..errors import InputError, ParameterError
from . import _index_kernels as K

__all__ = ["Tokens", "tokens_of", "common_runs", "shared_fragments", "KnownPhrases",
           "load_phrases"]

# windows of the other text with one hash tried one by one; a larger group is
# ordered by the token before each window, so those that cannot start a maximal
# run are skipped in one step (a speed setting: the runs found are the same)
_GROUP = 16
_NP_SORT = 400  # from this many tokens the other text's windows are sorted by numpy
_NO_U64 = np.empty(0, np.uint64)
_NO_I64 = np.empty(0, np.int64)


@dataclass(slots=True)
class Tokens:
    """A text's token hashes and their character spans in the original text."""

    text: str
    hashes: np.ndarray
    spans: np.ndarray | None = None

    def char_spans(self, unit: str, lang: str | None) -> np.ndarray:
        if self.spans is None:
            self.spans = token_spans(self.text, unit=unit, lang=lang)
        return self.spans


def tokens_of(text: str, unit: str = "word", lang: str | None = None) -> Tokens:
    tb = tokenize_batch([text], unit=unit, lang=lang)
    return Tokens(text, np.ascontiguousarray(tb.hashes, np.uint64))


def common_runs(a: np.ndarray, b: np.ndarray, w: int,
                min_len: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All maximal common runs of at least ``min_len`` (default and floor: ``w``)
    tokens of the token-hash sequences *a* and *b*, found through windows of ``w``
    tokens; one per (start in a, length), with its smallest start in b.

    Returns int64 arrays (a_start, b_start, length), a_start ascending.
    """
    a = np.ascontiguousarray(a, np.uint64)
    b = np.ascontiguousarray(b, np.uint64)
    w = int(w)
    if w < 1:
        raise ParameterError(f"window length w must be >= 1, got {w}")
    if a.shape[0] < w or b.shape[0] < w:
        e = np.empty(0, np.int64)
        return e, e.copy(), e.copy()
    kmin = w if min_len is None else max(int(min_len), w)
    if b.shape[0] >= _NP_SORT:
        wb = K.window_hashes(b, w)
        return K.shared_runs(a, b, w, kmin, _GROUP, wb, np.argsort(wb))
    return K.shared_runs(a, b, w, kmin, _GROUP, _NO_U64, _NO_I64)


def shared_fragments(a: Tokens, b: Tokens, k: int, *, unit: str = "word",
                     lang: str | None = None, min_tokens: int | None = None,
                     limit: int = 20) -> list[dict]:
    """Maximal common token runs of *a* and *b*, disjoint in *a*, longest first.

    Each fragment: ``tokens`` (length), ``query_start``/``query_end`` and
    ``doc_start``/``doc_end`` (character offsets in the two original texts),
    ``query_token``/``doc_token`` (token positions) and ``text`` (surface form
    in *a*).  Runs shorter than ``min_tokens`` (default: k, or the shorter text
    when it has fewer tokens; never below that) are not reported.  Selection is
    exact: of all maximal common runs (:func:`common_runs`) the longest is taken
    first (ties: smaller query start, then smaller start in *b*), then the
    longest not overlapping it in *a*, and so on, up to ``limit`` fragments.
    """
    na, nb = a.hashes.shape[0], b.hashes.shape[0]
    if na == 0 or nb == 0:
        return []
    w = max(1, min(int(k), na, nb))
    ra, rb, rl = common_runs(a.hashes, b.hashes, w, min_tokens)
    if ra.size == 0:
        return []
    pri = np.lexsort((rb, ra, -rl))
    keep = K.greedy_disjoint(ra, rl, pri.astype(np.int64), na)
    idx = pri[keep[pri]][: int(limit)]
    sa = a.char_spans(unit, lang)
    sb = b.char_spans(unit, lang)
    out = []
    for i in idx.tolist():
        qa, qb, n = int(ra[i]), int(rb[i]), int(rl[i])
        cs, ce = int(sa[qa, 0]), int(sa[qa + n - 1, 1])
        out.append({"tokens": n, "query_token": qa, "doc_token": qb,
                    "query_start": cs, "query_end": ce,
                    "doc_start": int(sb[qb, 0]), "doc_end": int(sb[qb + n - 1, 1]),
                    "text": a.text[cs:ce]})
    return out


@dataclass(slots=True)
class KnownPhrases:
    """Known boilerplate phrases as token-hash sequences with a lookup table."""

    table: pa.Table          # phrase_id, text, df, length
    tokens: np.ndarray       # uint64, phrases back to back
    offsets: np.ndarray      # int64 [n + 1]
    keys: np.ndarray         # uint64 sorted hash of each phrase's first p tokens
    key_ids: np.ndarray      # int64 phrase of each key
    p: int

    @property
    def n(self) -> int:
        return int(self.offsets.shape[0] - 1)

    @classmethod
    def from_token_lists(cls, token_lists: list[list[str]], texts: list[str],
                         df: np.ndarray) -> "KnownPhrases":
        lens = np.fromiter((len(t) for t in token_lists), dtype=np.int64, count=len(token_lists))
        keepm = lens > 0
        if not keepm.all():
            idx = np.flatnonzero(keepm)
            token_lists = [token_lists[i] for i in idx]
            texts = [texts[i] for i in idx]
            df, lens = np.asarray(df)[idx], lens[idx]
        offsets = np.zeros(lens.size + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        flat = [t for tl in token_lists for t in tl]
        toks = hash_strings(flat) if flat else np.empty(0, np.uint64)
        p = int(lens.min()) if lens.size else 1
        first = K.first_windows(toks, offsets, p) if lens.size else np.empty(0, np.uint64)
        order = np.argsort(first, kind="stable")
        table = pa.table({"phrase_id": pa.array(np.arange(lens.size, dtype=np.int64)),
                          "text": pa.array(texts, pa.string()),
                          "df": pa.array(np.asarray(df, np.int64)),
                          "length": pa.array(lens)})
        return cls(table, toks, offsets, first[order], order.astype(np.int64), p)

    def save(self, d: Path) -> None:
        d.mkdir(parents=True, exist_ok=True)
        pq.write_table(self.table, d / "phrases.parquet", compression="zstd")
        for name in ("tokens", "offsets", "keys", "key_ids"):
            np.save(d / f"{name}.npy", getattr(self, name))
        (d / "p.txt").write_text(str(self.p), encoding="utf-8")

    @classmethod
    def open(cls, d: Path) -> "KnownPhrases":
        arr = {n: np.load(d / f"{n}.npy") for n in ("tokens", "offsets", "keys", "key_ids")}
        return cls(pq.read_table(d / "phrases.parquet"), p=int((d / "p.txt").read_text()), **arr)

    def find(self, t: Tokens, unit: str, lang: str | None, limit: int = 200) -> tuple[list[dict], float]:
        """Occurrences of known phrases in *t* and the share of its tokens they cover."""
        n = t.hashes.shape[0]
        if self.n == 0 or n < self.p:
            return [], 0.0
        wq = K.window_hashes(t.hashes, self.p)
        pid, start = K.phrase_hits(t.hashes, wq, self.keys, self.key_ids, self.offsets,
                                   self.tokens, 100_000)
        if pid.size == 0:
            return [], 0.0
        lens = self.offsets[pid + 1] - self.offsets[pid]
        cover = np.zeros(n + 1, dtype=np.int64)
        np.add.at(cover, start, 1)
        np.add.at(cover, start + lens, -1)
        share = float(np.count_nonzero(np.cumsum(cover)[:n] > 0)) / n
        spans = t.char_spans(unit, lang)
        texts = self.table.column("text")
        dfs = self.table.column("df")
        order = np.lexsort((start, -lens))[: int(limit)]
        out = []
        for i in order.tolist():
            p, s, m = int(pid[i]), int(start[i]), int(lens[i])
            cs, ce = int(spans[s, 0]), int(spans[s + m - 1, 1])
            out.append({"phrase_id": p, "phrase": texts[p].as_py(), "df": int(dfs[p].as_py()),
                        "tokens": m, "token_start": s, "token_end": s + m, "start": cs, "end": ce,
                        "char_start": cs, "char_end": ce})
        return out, share


def load_phrases(path: str | Path) -> KnownPhrases:
    """Known phrases from a phrases result directory (``SCAN/phrases`` or the scan dir)."""
    p = Path(path)
    if (p / "phrases" / "phrases.parquet").is_file():
        p = p / "phrases"
    f = p / "phrases.parquet"
    if not f.is_file():
        raise InputError("no phrases.parquet here (give SCAN_DIR/phrases or a scan directory)",
                         path=str(path))
    t = pq.read_table(f)
    missing = [c for c in ("tokens", "text", "df") if c not in t.column_names]
    if missing:
        raise InputError(f"phrases.parquet lacks column(s) {', '.join(missing)}; it has "
                         f"{', '.join(t.column_names)}", path=str(f))
    return KnownPhrases.from_token_lists(t.column("tokens").to_pylist(),
                                         t.column("text").to_pylist(),
                                         t.column("df").to_numpy())
