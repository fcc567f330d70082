"""The ``bloomspan`` phrase engine: maximal contiguous frequent phrases (the BloomSpan paper, §4).

BloomSpan throws away the Zipfian tail of rare n-grams cheaply and builds its
exact structures only for what survives:

1. exact document frequency of every token (the word-df filter);
2. one linear pass of the in-document seed n-grams into a counting filter:
   one FNV-1a hash over the n int32 tokens, uint8 counters saturating at 255
   (one row of a Count-Min sketch: it never undercounts); n-grams holding a
   word of df < σ are not counted (the word filter rejects them anyway);
3. a second, parallel pass keeping the n-grams whose tokens all have df >= σ
   and whose counter is >= min(σ, 255);
4. a sort of the survivors by n-gram and a merge into seeds with exact df;
   false positives of the filter (df < σ) are dropped;
5. seeds in Ψ order (Ψ = |P|·df, ties: longer, then lexicographic);
6. right growth of each seed by DFS directly on the token array, grouping the
   occurrences by next token, with the left-neighbour rule;
7. maximality through an inverted index token -> candidates queried with the
   candidate's rarest token, longer phrases absorbing the ones they contain;
   a coverage bitmask (1 bit per token) over the occurrences found.

Exactness
---------
The result equals the definition (and the ``suffix`` engine) for every seed
length ``n <= min_len``: the filter never undercounts (count >= df); every
frequent phrase of length >= n contains frequent n-grams; a maximal phrase M
is reached from its leftmost n-gram, and no prefix of M is dropped by the
left-neighbour rule (if all occurrences of a prefix shared a left token, so
would all occurrences of M, which would then not be maximal); a
right-maximal candidate that is not maximal has a frequent left extension,
hence a longer candidate containing it, which absorbs it.

The paper's *coverage skip* (drop a seed whose occurrences are all inside
already covered positions) is **not** exact in general: the positions of a
seed may be covered by two different phrases found earlier (``x a b`` and
``z a b``) while the maximal phrase that starts with the seed (``a b c``)
extends past them.  It is therefore off by default; ``coverage_skip=True``
reproduces the paper's behaviour.  The mask is built either way, and
``stats["seeds_covered"]`` counts the seeds it would have skipped.
"""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt

from ..errors import ParameterError
from . import _bloomspan_kernels as K
from ._raw import RawPhrases
from .groups import DocGroups, engine_labels

__all__ = ["default_filter_bytes", "default_seed_len", "mine_bloomspan"]

_MAX_FILTER = 512 << 20
_MIN_FILTER = 1 << 16
_BLOCK = 1 << 16  # positions per parallel block of the second pass (multiple of 64)


def default_filter_bytes(n_tokens: int, min_docs: int = 20) -> int:
    """Counting-filter size used when ``filter_bytes`` is None.

    One-byte counters for a mean load of ``λ = clamp(σ/8, 1/4, 8)`` n-grams per
    counter, i.e. ``n_tokens / λ`` bytes, rounded to the nearest power of two
    and kept between 64 KB, 4 bytes per token and 512 MB.  At that load an
    n-gram seen once reaches σ only through an improbable pile-up of
    collisions.  The paper sizes the filter at 8 bytes per token (capped at
    512 MB); with the batched filter passes the size hardly changes the speed
    here, the load decides the false positives (σ = 3, 10 M tokens: 19.7 % of
    positions survive with 8 MB, 5.8 % with 32 MB), and a smaller filter keeps
    the whole run under 8 bytes per token (see ``docs/bloomspan.md``).
    """
    load = min(max(int(min_docs) / 8.0, 0.25), 8.0)
    want = max(1.0, int(n_tokens) / load)
    size = 1 << int(round(np.log2(want)))
    cap = max(_MIN_FILTER, min(_MAX_FILTER, 4 * int(n_tokens)))
    while size > cap:
        size >>= 1
    return max(_MIN_FILTER, size)


def default_seed_len(min_len: int) -> int:
    """Seed n-gram length used when ``seed_len`` is None: ``min(min_len, 32)``.

    Any n <= L gives the same exact answer.  Measured on Zipfian text with
    planted phrases (``benchmarks/bench_bloomspan.py``, σ = 20), n = L is the
    fastest: far fewer n-grams pass the filters (4 % of positions at n = 10
    against 63 % for the paper's bigrams), so the sort, the seeds and the DFS
    shrink 10-50x, while hashing n tokens per position costs little next to the
    cache misses of the filter.  Past 32 tokens the hashing starts to show.
    """
    return max(1, min(int(min_len), 32))


def _as_int(name: str, v, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ParameterError(f"{name} must be an integer, got {v!r}")
    v = int(v)
    if v < lo:
        raise ParameterError(f"{name} must be >= {lo}, got {v}")
    return v


def _validate(tokens, doc_offsets, vocab_size):
    tokens = np.asarray(tokens)
    doc_offsets = np.asarray(doc_offsets)
    if tokens.ndim != 1 or doc_offsets.ndim != 1:
        raise ParameterError("tokens and doc_offsets must be one-dimensional arrays")
    if tokens.size and not np.issubdtype(tokens.dtype, np.integer):
        raise ParameterError(f"tokens must hold integer ids, got dtype {tokens.dtype}")
    if doc_offsets.size and not np.issubdtype(doc_offsets.dtype, np.integer):
        raise ParameterError(f"doc_offsets must be integers, got dtype {doc_offsets.dtype}")
    if tokens.dtype != np.int32:
        if tokens.size and (tokens.min() < 0 or tokens.max() > np.iinfo(np.int32).max):
            raise ParameterError("token ids must lie in [0, 2**31)")
        tokens = tokens.astype(np.int32)
    tokens = np.ascontiguousarray(tokens)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    if doc_offsets.size == 0:
        raise ParameterError("doc_offsets must have n_docs + 1 entries (at least [0, n_tokens])")
    if doc_offsets[0] != 0 or doc_offsets[-1] != tokens.shape[0]:
        raise ParameterError(
            f"doc_offsets must start at 0 and end at len(tokens)={tokens.shape[0]}, "
            f"got {doc_offsets[0]}..{doc_offsets[-1]}")
    if doc_offsets.size - 1 >= 2**31:
        raise ParameterError("at most 2**31 - 1 documents")
    if doc_offsets.size > 1 and np.any(np.diff(doc_offsets) < 0):
        raise ParameterError("doc_offsets must be non-decreasing")
    if tokens.size and tokens.min() < 0:
        raise ParameterError("token ids must be non-negative")
    top = int(tokens.max()) + 1 if tokens.size else 0
    if vocab_size is None:
        vocab_size = top
    else:
        vocab_size = _as_int("vocab_size", vocab_size, 0)
        if vocab_size < top:
            raise ParameterError(f"vocab_size={vocab_size} but the largest token id is {top - 1}")
    return tokens, doc_offsets, max(vocab_size, 1)


class _Clock:
    """Per-stage wall and CPU seconds into ``stats`` (``seconds_*``, ``cpu_seconds_*``;
    CPU time sums the threads of the parallel stages)."""

    def __init__(self, stats: dict):
        self.stats = stats
        self.t0 = self.t = time.perf_counter()
        self.c0 = self.c = time.process_time()

    def lap(self, name: str) -> None:
        t, c = time.perf_counter(), time.process_time()
        self.stats[f"seconds_{name}"] = t - self.t
        self.stats[f"cpu_seconds_{name}"] = c - self.c
        self.t, self.c = t, c

    def total(self) -> None:
        self.stats["seconds_total"] = time.perf_counter() - self.t0
        self.stats["cpu_seconds_total"] = time.process_time() - self.c0


def _empty(stats: dict) -> RawPhrases:
    z = np.zeros(0, dtype=np.int64)
    return RawPhrases(lengths=z, df=z.copy(), occ_offsets=np.zeros(1, dtype=np.int64),
                      occ_starts=z.copy(), stats=stats)


def build_filter(tokens, doc_offsets, n: int, filter_bytes: int,
                 word_ok: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """The counting filter of the in-document n-grams: (uint8 counters, shift).

    Only n-grams whose tokens all have ``word_ok[t] != 0`` are counted (all of
    them when ``word_ok`` is None).  ``filter_bytes`` is rounded down to a power
    of two (at least 2); the counter of the n-gram at position p is
    ``filt[fnv1a(tokens[p:p+n]) >> shift]``.
    """
    if word_ok is None:
        word_ok = np.ones(int(tokens.max()) + 1 if tokens.size else 1, dtype=np.uint8)
    return count_filter_shards([(tokens, doc_offsets)], n, filter_bytes, word_ok)


# -- stages over shards of whole documents (one shard in memory, many out of core) ----

def group_word_ok(tokens, doc_offsets, vocab_size: int, min_docs: int,
                  groups: DocGroups) -> np.ndarray:
    """uint8 flag per token id: it occurs in >= σ distinct groups of *groups*."""
    wdf = K.group_word_df(tokens, doc_offsets, groups.order, groups.label,
                          groups.n_groups, vocab_size)
    return (wdf >= min_docs).astype(np.uint8)


def word_ok_shards(shards, vocab_size: int, min_docs: int, token_df=None) -> np.ndarray:
    """uint8 flag per token id: its exact document frequency is >= σ.  The df is
    summed over ``shards`` (an iterable of (tokens, doc_offsets) of whole documents)
    unless ``token_df`` gives it."""
    if token_df is None:
        wdf = np.zeros(vocab_size, dtype=np.int64)
        for t, off in shards:
            wdf += K.word_df(t, off, vocab_size)
    else:
        wdf = np.asarray(token_df)
        if wdf.ndim != 1 or wdf.shape[0] < vocab_size:
            raise ParameterError(f"token_df must have one entry per token id (>= {vocab_size}), "
                                 f"got shape {wdf.shape}")
    return (wdf >= min_docs).astype(np.uint8)


def count_filter_shards(shards, n: int, filter_bytes: int,
                        word_ok: np.ndarray) -> tuple[np.ndarray, int]:
    """One counting filter of the in-document n-grams of all ``shards`` (see
    :func:`build_filter`)."""
    size = max(2, 1 << (int(filter_bytes).bit_length() - 1))
    shift = 64 - (size.bit_length() - 1)
    filt = np.zeros(size, dtype=np.uint8)
    for t, off in shards:
        K.count_filter(t, off, n, word_ok, filt, shift)
    return filt, shift


def shard_survivors(tokens, doc_offsets, n: int, word_ok, filt, shift: int, use_filter: bool,
                    threshold: int):
    """Positions and documents (shard-local) of the n-grams that pass both filters,
    in position order, and the survivor bitmask (one bit per token)."""
    n_tok = int(tokens.shape[0])
    nb = (n_tok + _BLOCK - 1) // _BLOCK
    block_lo = np.arange(nb, dtype=np.int64) * _BLOCK
    block_doc = (np.searchsorted(doc_offsets, block_lo, side="right") - 1).astype(np.int64)
    bits = np.zeros((n_tok + 63) // 64, dtype=np.uint64)
    counts = np.zeros(nb, dtype=np.int64)
    K.mark_survivors(tokens, doc_offsets, block_doc, _BLOCK, n, word_ok, filt, shift,
                     use_filter, threshold, bits, counts)
    starts = np.zeros(nb, dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    m = int(counts.sum())
    pos = np.empty(m, dtype=np.int64)
    doc = np.empty(m, dtype=np.int32)
    K.fill_survivors(bits, doc_offsets, block_doc, _BLOCK, n_tok, starts, pos, doc)
    return pos, doc, bits


def mine_bloomspan(tokens: npt.NDArray[np.int32], doc_offsets: npt.NDArray[np.int64],
                   min_docs: int, min_len: int, *, seed_len: int | None = None,
                   filter_bytes: int | None = None, vocab_size: int | None = None,
                   coverage_skip: bool = False,
                   token_df: npt.ArrayLike | None = None,
                   groups: npt.ArrayLike | DocGroups | None = None) -> RawPhrases:
    """Maximal contiguous frequent phrases with BloomSpan.

    Parameters
    ----------
    tokens : array of int32, shape (n,)
        Token ids (non-negative), documents back to back.
    doc_offsets : array of int64, shape (n_docs + 1,)
        Document ``d`` owns ``tokens[doc_offsets[d]:doc_offsets[d + 1]]``;
        nothing crosses a document boundary.
    min_docs : int
        σ >= 1: a phrase is frequent when it occurs in at least σ documents.
    min_len : int
        L >= 1: report the maximal frequent phrases of at least L tokens
        (maximality is judged among all frequent phrases, whatever their length).
    seed_len : int, optional
        n, the seed n-gram length, 1 <= n <= L (any such n gives the same,
        exact answer). Default :func:`default_seed_len`.
    filter_bytes : int, optional
        Size of the counting filter in bytes (rounded down to a power of two).
        Default :func:`default_filter_bytes`.
    vocab_size : int, optional
        Upper bound of the token ids (default: largest id + 1).
    token_df : array of int, optional
        Document frequency of every token id, when already known (the token
        store keeps it); computed otherwise.
    coverage_skip : bool, default False
        Skip a seed whose occurrences all lie in positions already covered by
        found phrases, as the BloomSpan paper does. Faster on template-heavy corpora but
        not exact in general (see the module notes).
    groups : int array of one label per document, optional
        Count df over groups of documents (near-duplicate clusters), not
        documents: df(P) is the number of distinct labels with an occurrence of
        P (:mod:`repetend.phrases.groups`); ``token_df`` is then not used.

    Returns
    -------
    RawPhrases
        Every maximal frequent phrase of length >= L (in discovery order), its
        exact df, and the sorted global starts of all its occurrences
        (overlapping and repeated ones inside a document included).
        ``stats`` holds the filter and engine counters and per-stage seconds.

    Notes
    -----
    The BloomSpan paper (§4; docs/references.md); counting Bloom filter: Fan et al.,
    "Summary cache", IEEE/ACM ToN 2000; Count-Min sketch: Cormode &
    Muthukrishnan, J. Algorithms 2005; FNV-1a: Fowler, Noll & Vo.
    Memory: the corpus (4 B/token), the filter (about 4/σ B/token by default,
    at most 2), one bitmask (1 bit/token: survivors, then coverage), the
    word-df arrays (vocabulary-sized) and about 40 B per surviving n-gram
    occurrence while seeding; measured 5.8-6 B/token in all (corpus included)
    with the default n = L on Zipfian text at σ = 20.
    """
    min_docs = _as_int("min_docs", min_docs, 1)
    min_len = _as_int("min_len", min_len, 1)
    tokens, doc_offsets, vocab_size = _validate(tokens, doc_offsets, vocab_size)
    n = default_seed_len(min_len) if seed_len is None else _as_int("seed_len", seed_len, 1)
    if n > min_len:
        raise ParameterError(f"seed_len={n} must be <= min_len={min_len} for an exact answer")
    n_tok = int(tokens.shape[0])
    n_docs = int(doc_offsets.shape[0] - 1)
    if filter_bytes is None:
        filter_bytes = default_filter_bytes(n_tok, min_docs)
    else:
        filter_bytes = _as_int("filter_bytes", filter_bytes, 1)
    threshold = min(min_docs, 255)
    stats: dict = {"engine": "bloomspan", "tokens": n_tok, "docs": n_docs, "min_docs": min_docs,
                   "min_len": min_len, "seed_len": n, "coverage_skip": bool(coverage_skip)}
    groups, label, n_units = engine_labels(groups, n_docs)   # documents, or their groups
    if label is not None:
        stats["groups"] = n_units
    clock = _Clock(stats)
    if min_docs > n_units or n_tok == 0:
        clock.total()
        return _empty(stats)

    # 1. exact word df (over groups when given)
    if label is None:
        word_ok = word_ok_shards([(tokens, doc_offsets)], vocab_size, min_docs, token_df)
    else:
        word_ok = group_word_ok(tokens, doc_offsets, vocab_size, min_docs, groups)
    stats["word_df_survivors"] = int(word_ok.sum())
    clock.lap("word_df")

    # 2. counting filter (useless for n = 1: the word df is exact already)
    use_filter = n >= 2
    if use_filter:
        filt, shift = build_filter(tokens, doc_offsets, n, filter_bytes, word_ok)
        stats["filter_bytes"] = int(filt.shape[0])
    else:
        filt, shift = np.zeros(1, dtype=np.uint8), 63
        stats["filter_bytes"] = 0
    clock.lap("count_filter")

    # 3. second pass: survivors of both filters, as a bitmask, then (pos, doc)
    pos, doc, bits = shard_survivors(tokens, doc_offsets, n, word_ok, filt, shift, use_filter,
                                     threshold)
    del filt, word_ok
    stats["ngram_survivors"] = int(pos.shape[0])
    clock.lap("second_pass")

    # 4. sort + merge into seeds with exact df
    keys = K.ngram_keys(tokens, pos, n)
    keys, pos, doc = K.radix_sort_occurrences(keys, pos, doc, 32 if n != 2 else 64)
    if label is None:
        s_start, s_end, s_df = K.group_seeds(tokens, pos, doc, keys, n, min_docs)
    else:
        s_start, s_end, s_df = K.group_seeds(tokens, pos, doc, keys, n, min_docs, label)
    del keys
    seed_off, occ_pos, occ_doc = K.compact_seeds(pos, doc, s_start, s_end)
    del pos, doc, s_start, s_end
    n_seeds = int(s_df.shape[0])
    stats["seeds"] = n_seeds
    stats["seed_occurrences"] = int(occ_pos.shape[0])
    clock.lap("seeds")

    # 5. Ψ order: |P|·df descending (all seeds have length n), then lexicographic
    if n_seeds:
        firsts = occ_pos[seed_off[:-1]]
        cols = [tokens[firsts + j] for j in range(n - 1, -1, -1)]
        psi_order = np.lexsort(cols + [-s_df]).astype(np.int64)
    else:
        psi_order = np.zeros(0, dtype=np.int64)
    clock.lap("order")

    # 6. DFS right growth with the left-neighbour rule; coverage mask
    bits[:] = 0
    cover = bits
    grow_args = (tokens, doc_offsets, seed_off, occ_pos, occ_doc, s_df, psi_order,
                 n, min_docs, min_len, cover, bool(coverage_skip))
    c_len, c_df, c_off, c_occ, g, _ = (K.grow_seeds(*grow_args) if label is None
                                       else K.grow_seeds(*grow_args, label))
    del occ_pos, occ_doc
    stats["dfs_nodes"] = int(g[0])
    stats["pruned_left"] = int(g[1])
    stats["seeds_covered"] = int(g[2])
    stats["seeds_skipped"] = int(g[3])
    stats["chain_steps"] = int(g[4])
    stats["candidates"] = int(c_len.shape[0])
    clock.lap("grow")

    # 7. maximality: inverted index by rarest token, absorption
    firsts = c_occ[c_off[:-1]]
    keep = K.absorb(tokens, firsts, c_len, vocab_size)
    lengths, df, off, occ = K.select_phrases(c_len, c_df, c_off, c_occ, keep)
    stats["absorbed"] = int(c_len.shape[0] - lengths.shape[0])
    stats["phrases"] = int(lengths.shape[0])
    clock.lap("maximality")

    cover[:] = 0
    K.mark_occurrences(cover, off, occ, lengths, np.ones(lengths.shape[0], dtype=np.uint8))
    stats["covered_tokens"] = int(K.popcount_words(cover))
    clock.lap("coverage")
    clock.total()
    return RawPhrases(lengths=lengths, df=df, occ_offsets=off, occ_starts=occ, stats=stats)
