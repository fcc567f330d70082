"""``engine="auto"``: choose between ``bloomspan`` and ``suffix``.

Seed 000, part 5, ends with a practical rule: a strict threshold on a large
corpus of natural text favours BloomSpan; a soft threshold, a large answer,
or data with dense nested repeats favours suffix methods.  The rule here
makes that concrete with figures that cost one pass over a sample:

1. ``bloomspan`` cannot be imported → ``suffix``.
2. The suffix engine's arrays (≈ 20 bytes per token plus the suffix sorter's
   work space, 24 B/token counted) would take more than half of the available
   memory → ``bloomspan`` (it keeps ≈ 8 B/token of filter plus the survivors).
3. Small corpus (< ``SMALL_CORPUS`` tokens) → ``suffix``: both engines take
   well under a second there and suffix has no filter passes to pay for.
4. Soft threshold (σ ≤ ``SOFT_SIGMA``) → ``suffix``: the answer is large and
   the maximality check dominates BloomSpan (seed: Gutenberg at σ = 10).
5. The *survivor share* — the share of bigram positions of a sample whose two
   tokens both pass the exact word-df filter (df ≥ σ) — is at least
   ``DENSE_SHARE`` → ``suffix``: the filter has little to cut (Synthetic 2,
   dense nested repeats).
6. Otherwise → ``bloomspan``.

The thresholds and the measurements behind them are in ``docs/phrases.md``.
"""

from __future__ import annotations

import os

import numpy as np
import numpy.typing as npt

__all__ = ["choose_engine", "survivor_share", "bloomspan_available"]

SMALL_CORPUS = 2_000_000
SOFT_SIGMA = 10
DENSE_SHARE = 0.5
SUFFIX_BYTES_PER_TOKEN = 24
SAMPLE_TOKENS = 1_000_000


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
    from ..corpus.store import _document_frequency

    vocab = int(tokens.max()) + 1 if tokens.size else 0
    return _document_frequency(tokens, doc_offsets, vocab)


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
    n_docs = doc_offsets.size - 1
    lengths = np.diff(doc_offsets)
    rng = np.random.default_rng(seed)
    order = rng.permutation(n_docs)
    take = order[: max(1, int(np.searchsorted(np.cumsum(lengths[order]), sample_tokens)) + 1)]
    take = np.sort(take)
    lens = lengths[take]
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
    if n < SMALL_CORPUS:
        info["rule"] = f"small corpus (< {SMALL_CORPUS} tokens)"
        return "suffix", info
    if min_docs <= SOFT_SIGMA:
        info["rule"] = f"soft threshold (sigma <= {SOFT_SIGMA})"
        return "suffix", info
    share = survivor_share(tokens, doc_offsets, min_docs, df=df)
    info["survivor_share"] = share
    if share >= DENSE_SHARE:
        info["rule"] = f"dense repeats (survivor share >= {DENSE_SHARE})"
        return "suffix", info
    info["rule"] = "strict threshold, large corpus, sparse repeats"
    return "bloomspan", info
