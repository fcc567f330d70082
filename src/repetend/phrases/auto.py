"""``engine="auto"``: choose between ``bloomspan`` and ``suffix``.

The BloomSpan paper's §5 (docs/references.md) ends with a practical rule: a
strict threshold on a large corpus of natural text favours BloomSpan; a soft
threshold, a large answer, or data with dense nested repeats favours suffix
methods.  Our suffix engine
first drops every token with df < σ and every run of frequent tokens shorter
than L, so it also wins when that leaves little (Synthetic 1).  The rule, from
figures that cost one pass over the corpus and a sort of a ~0.5 M-token
sample (measurements in ``docs/phrases.md``):

1. ``bloomspan`` cannot be imported → ``suffix``.
2. The suffix engine would need more than half of the available memory
   (``SUFFIX_BYTES_PER_TOKEN`` per token) → ``bloomspan``.
3. *Survivor share* < ``SPARSE_SHARE`` — few bigram positions have both
   tokens with df ≥ σ, so the compacted text is small → ``suffix``
   (Synthetic 1: 0.001).
4. *Repeat share* ≥ ``DENSE_SHARE`` — a large part of a sample's 8-gram
   positions recur across documents: dense repeats → ``suffix``
   (Synthetic 2: 0.17–0.83; web-like text: 0.05–0.11).
5. *Repeat length* ≥ ``LONG_REPEAT`` tokens — the recurring stretches are long
   (length-weighted mean; BloomSpan grows every seed inside them, a cost
   quadratic in their length) → ``suffix`` (Synthetic 2: 220–257; web-like
   text: 45–54).
6. *Self-repeat share* ≥ ``DENSE_SHARE`` — a large part of the sample's
   8-gram positions recur within their own document (periodic text: one long
   document of "spam", whose sample is that one document, has repeat share 0)
   → ``suffix``.
7. Otherwise → ``bloomspan`` (web-like text, σ = 10 and 20: 2–4× faster).
"""

from __future__ import annotations

import os

import numpy as np
import numpy.typing as npt

__all__ = ["bloomspan_available", "choose_engine", "repeat_profile", "repeat_share",
           "self_repeat_share", "survivor_share"]

SPARSE_SHARE = 0.2
DENSE_SHARE = 0.3
LONG_REPEAT = 120
SUFFIX_BYTES_PER_TOKEN = 24
SAMPLE_TOKENS = 500_000


def bloomspan_available() -> bool:
    """Whether ``repetend.phrases.bloomspan.mine_bloomspan`` can be imported."""
    try:
        from .bloomspan import mine_bloomspan  # noqa: F401
    except ImportError:
        return False
    return True


def _available_memory() -> int:
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except ImportError:  # pragma: no cover - psutil is in the test extra
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


def _word_df(tokens: np.ndarray, doc_offsets: np.ndarray) -> np.ndarray:
    from ._suffix_kernels import token_df

    vocab = int(tokens.max()) + 1 if tokens.size else 0
    return token_df(tokens, doc_offsets, vocab)


def survivor_share(tokens: npt.ArrayLike, doc_offsets: npt.ArrayLike, min_docs: int,
                   df: npt.ArrayLike | None = None, sample_tokens: int = SAMPLE_TOKENS,
                   seed: int = 0) -> float:
    """Share of in-document bigram positions whose two tokens have df ≥ σ.

    The df is exact over the whole corpus (given, e.g. ``TokenStore.df``, or
    counted in one pass); the positions come from a sample of whole documents
    with about *sample_tokens* tokens.
    """
    tokens = np.asarray(tokens)
    doc_offsets = np.asarray(doc_offsets, np.int64)
    if tokens.size < 2:
        return 0.0
    df = _word_df(np.asarray(tokens, np.int32), doc_offsets) if df is None else np.asarray(df)
    take, lens = _sample_docs(doc_offsets, sample_tokens, seed)
    total = int(lens.sum())
    if total < 2:
        return 0.0
    first = np.cumsum(lens) - lens                      # sample index of each doc start
    pos = np.arange(total, dtype=np.int64) + np.repeat(doc_offsets[take] - first, lens)
    good = df[tokens[pos]] >= min_docs
    last = np.zeros(total, dtype=bool)                  # last token of its document
    last[np.cumsum(lens)[lens > 0] - 1] = True
    pair_ok = good[:-1] & good[1:] & ~last[:-1]
    ok_pairs = int(np.count_nonzero(pair_ok))
    pairs = int(total - np.count_nonzero(lens))
    return ok_pairs / pairs if pairs else 0.0


def repeat_share(tokens: npt.ArrayLike, doc_offsets: npt.ArrayLike, min_docs: int,
                 k: int = 8, sample_tokens: int = SAMPLE_TOKENS, seed: int = 0) -> float:
    """Share of the k-gram positions of a document sample whose k-gram recurs
    in at least ``max(2, round(σ·f))`` sampled documents (f = sampled share of
    the corpus): how much of the text sits in long repeats.

    A cheap stand-in for "dense nested repeats" (the BloomSpan paper, §5, Synthetic 2): high
    there, low on natural and web text.  With the whole corpus sampled it is
    exact for df ≥ σ.  See :func:`repeat_profile`.
    """
    return repeat_profile(tokens, doc_offsets, min_docs, k, sample_tokens, seed)[0]


def repeat_profile(tokens: npt.ArrayLike, doc_offsets: npt.ArrayLike, min_docs: int,
                   k: int = 8, sample_tokens: int = SAMPLE_TOKENS,
                   seed: int = 0) -> tuple[float, float]:
    """``(repeat share, repeat length)`` of a document sample.

    The repeat share is the share of k-gram positions whose k-gram recurs in
    at least ``max(2, round(σ·f))`` sampled documents (f = sampled share of the
    corpus).  The repeat length is the length-weighted mean length, in tokens,
    of the stretches those positions form (Σ len² / Σ len): long stretches are
    what makes BloomSpan's growth phase expensive.
    """
    tokens = np.asarray(tokens)
    doc_offsets = np.asarray(doc_offsets, np.int64)
    take, lens = _sample_docs(doc_offsets, sample_tokens, seed)
    total = int(lens.sum())
    if total < k:
        return 0.0, 0.0
    f = total / max(int(tokens.shape[0]), 1)
    thr = max(2, int(round(min_docs * f)))
    h, doc, starts = _sample_kgrams(tokens, doc_offsets, take, lens, k)
    if starts.size == 0:
        return 0.0, 0.0
    order = np.lexsort((doc, h))
    hs, ds = h[order], doc[order]
    new_pair = np.ones(hs.size, dtype=bool)
    new_pair[1:] = (hs[1:] != hs[:-1]) | (ds[1:] != ds[:-1])
    hs, cnt = np.unique(hs[new_pair], return_counts=True)
    rep = np.isin(h, hs[cnt >= thr])
    n_rep = int(np.count_nonzero(rep))
    if n_rep == 0:
        return 0.0, 0.0
    r, rd = starts[rep], doc[rep]
    brk = np.ones(n_rep, dtype=bool)
    brk[1:] = (r[1:] != r[:-1] + 1) | (rd[1:] != rd[:-1])
    run = np.bincount(np.cumsum(brk) - 1).astype(np.float64) + (k - 1)
    return n_rep / starts.size, float((run * run).sum() / run.sum())


def _sample_kgrams(tokens, doc_offsets, take, lens, k):
    """The k-grams of the sampled documents *take* (of lengths *lens*, laid end
    to end): a 64-bit hash of each, its sampled document and its start in the
    sample (only where a whole k-gram fits in its document)."""
    total = int(lens.sum())
    first = np.cumsum(lens) - lens
    pos = np.arange(total, dtype=np.int64) + np.repeat(doc_offsets[take] - first, lens)
    local = np.arange(total, dtype=np.int64) - np.repeat(first, lens)
    starts = np.flatnonzero(local <= np.repeat(lens, lens) - k)   # a whole k-gram fits
    sampled = np.asarray(tokens[pos], np.uint64)
    h = np.zeros(starts.size, np.uint64)
    mult = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        for j in range(k):
            h = (h * mult) ^ (sampled[starts + j] + np.uint64(j + 1))
    doc = np.repeat(np.arange(take.size, dtype=np.int64), lens)[starts]
    return h, doc, starts


def self_repeat_share(tokens: npt.ArrayLike, doc_offsets: npt.ArrayLike, k: int = 8,
                      sample_tokens: int = SAMPLE_TOKENS, seed: int = 0) -> float:
    """Share of the k-gram positions of a document sample whose k-gram occurs
    again in the *same* document: repeats within documents, which the repeat
    share (across sampled documents) does not see — a sample of one long
    periodic document (``spam`` × 500 k) has repeat share 0 and this share 1.
    Natural text: a few per cent."""
    tokens = np.asarray(tokens)
    doc_offsets = np.asarray(doc_offsets, np.int64)
    take, lens = _sample_docs(doc_offsets, sample_tokens, seed)
    total = int(lens.sum())
    if total < k:
        return 0.0
    h, doc, starts = _sample_kgrams(tokens, doc_offsets, take, lens, k)
    if starts.size == 0:
        return 0.0
    order = np.lexsort((h, doc))
    hs, ds = h[order], doc[order]
    same = (hs[1:] == hs[:-1]) & (ds[1:] == ds[:-1])
    again = np.zeros(hs.size, dtype=bool)       # the k-gram has a twin in its document
    again[1:] |= same
    again[:-1] |= same
    return float(np.count_nonzero(again)) / hs.size


def _sample_docs(doc_offsets: np.ndarray, sample_tokens: int, seed: int):
    n_docs = doc_offsets.size - 1
    lengths = np.diff(doc_offsets)
    order = np.random.default_rng(seed).permutation(n_docs)
    take = order[: max(1, int(np.searchsorted(np.cumsum(lengths[order]), sample_tokens)) + 1)]
    take = np.sort(take)
    return take, lengths[take]


def choose_engine(tokens: npt.ArrayLike, doc_offsets: npt.ArrayLike, min_docs: int,
                  min_len: int, df: npt.ArrayLike | None = None) -> tuple[str, dict]:
    """The engine ``auto`` runs, and why: ``(name, {"rule": …, figures…})``."""
    n = int(np.asarray(tokens).shape[0])
    info: dict = {"tokens": n, "min_docs": int(min_docs)}
    if not bloomspan_available():
        info["rule"] = "bloomspan not importable"
        return "suffix", info
    need = SUFFIX_BYTES_PER_TOKEN * n
    avail = _available_memory()
    info.update(suffix_bytes=need, available_bytes=avail)
    if need > avail // 2:
        info["rule"] = "suffix arrays would exceed half the available memory"
        return "bloomspan", info
    share = survivor_share(tokens, doc_offsets, min_docs, df=df)
    info["survivor_share"] = share
    if share < SPARSE_SHARE:
        info["rule"] = f"sparse: survivor share {share:.3f} < {SPARSE_SHARE}"
        return "suffix", info
    rep, rep_len = repeat_profile(tokens, doc_offsets, min_docs)
    info.update(repeat_share=rep, repeat_length=rep_len)
    if rep >= DENSE_SHARE:
        info["rule"] = f"dense repeats: repeat share {rep:.3f} >= {DENSE_SHARE}"
        return "suffix", info
    if rep_len >= LONG_REPEAT:
        info["rule"] = f"long repeats: repeat length {rep_len:.0f} >= {LONG_REPEAT} tokens"
        return "suffix", info
    self_rep = self_repeat_share(tokens, doc_offsets)
    info["self_repeat_share"] = self_rep
    if self_rep >= DENSE_SHARE:
        info["rule"] = (f"repeats within documents: self-repeat share {self_rep:.3f} "
                        f">= {DENSE_SHARE}")
        return "suffix", info
    info["rule"] = (f"survivor share {share:.3f} >= {SPARSE_SHARE}, repeat share {rep:.3f} "
                    f"< {DENSE_SHARE}, repeat length {rep_len:.0f} < {LONG_REPEAT}, "
                    f"self-repeat share {self_rep:.3f} < {DENSE_SHARE}")
    return "bloomspan", info
