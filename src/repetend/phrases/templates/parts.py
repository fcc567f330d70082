"""Step 1, the parts: the covered runs of the frequent L'-grams (numbers
masked), or of the given exact phrases in merge-only mode."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import get_num_threads

from ..._arrays import even_bounds
from .._raw import RawPhrases
from . import _kernels_parts as KP
from .corpus import _Corpus, _vocab_array


def _number_mask(vocab: Sequence[str] | _Corpus) -> np.ndarray:
    """All-digit vocabulary entries; of a corpus, its vocabulary as an Arrow
    array built once (:func:`.corpus._vocab_array`) and the mask kept."""
    if isinstance(vocab, _Corpus):
        mask = getattr(vocab, "_digits", None)
        if mask is None:
            mask = vocab._digits = _number_mask_of(_vocab_array(vocab))
        return mask
    return _number_mask_of(pa.array(list(vocab), pa.string()))


def _number_mask_of(arr: pa.Array) -> np.ndarray:
    return pc.utf8_is_digit(arr).to_numpy(zero_copy_only=False).astype(np.bool_)


def _part_runs(tokens: np.ndarray, offsets: np.ndarray, min_docs: int, part_len: int,
               engine: str, vocab_size: int | None, groups=None
               ) -> tuple[tuple | None, dict, str]:
    """The covered runs of the parts: every position inside a phrase of ≥ L'
    (*part_len*) tokens with df ≥ σ, maximal or not, merged per document.

    That set is the union of the occurrences of the frequent L'-grams (see
    :mod:`repetend.phrases.frequent_spans`), so the default path counts the
    L'-grams only — as exact 64-bit keys of frequent words, counted in hash
    buckets (:func:`_packed_ngram_runs`), or, when they do not pack,
    bloomspan's seed stage (:func:`_frequent_ngrams`) — and never grows the
    maximal phrases.  ``engine="suffix"`` mines the maximal phrases with the
    suffix engine and scans their L'-windows (the same runs, slower; kept as
    an independent path).  With *groups* (a :class:`~repetend.phrases.groups.
    DocGroups`) df counts distinct groups: the suffix engine's colours, or
    bloomspan's seed stage with the groups (the packed count is per document
    and is not used then).  Returns ``(runs or None, counts, engine used)``."""
    from ..auto import bloomspan_available

    if tokens.size == 0:
        return None, {"part_phrases": 0}, "none"
    if engine == "suffix" or not bloomspan_available():
        from ..frequent_spans import frequent_spans
        from ..suffix import mine_suffix

        parts = mine_suffix(tokens, offsets, min_docs, part_len,
                            **({} if groups is None else {"groups": groups}))
        if parts.n_phrases == 0:
            return None, {"part_phrases": 0}, "suffix"
        fs = frequent_spans(tokens, offsets, parts, part_len)
        return ((np.asarray(fs.run_offsets, np.int64), np.asarray(fs.starts, np.int64),
                 np.asarray(fs.ends, np.int64)), {"part_phrases": int(parts.n_phrases)}, "suffix")
    vs = max(vocab_size or 0, int(tokens.max(initial=0)) + 1)
    packed = _packed_ngram_runs(tokens, offsets, min_docs, part_len, vs) if groups is None \
        else None
    if packed is not None:
        runs, kept = packed
        if kept == 0:
            return None, {"part_ngrams": 0}, "ngrams"
        return runs, {"part_ngrams": kept}, "ngrams"
    pos, s_start, s_end = _frequent_ngrams(tokens, offsets, min_docs, part_len, vs, groups)
    counts = {"part_ngrams": int(s_start.size)}
    if s_start.size == 0:
        return None, counts, "ngrams"
    return KP.ngram_runs(offsets, pos, s_start, s_end, np.int64(part_len)), counts, "ngrams"


def _survivors(tokens: np.ndarray, offsets: np.ndarray, min_docs: int, n: int, vocab_size: int,
               groups=None) -> tuple[np.ndarray, np.ndarray]:
    """The n-gram positions that bloomspan's filters keep (word df ≥ σ for every
    token, a one-sided counting filter): a superset of the occurrences of the
    n-grams with df ≥ σ — bloomspan's own stages (:func:`~repetend.phrases.
    bloomspan.build_filter`, :func:`~repetend.phrases.bloomspan.shard_survivors`)
    over the whole corpus.  Returns ``(pos, doc)``, positions ascending."""
    from .. import _bloomspan_kernels as B
    from ..bloomspan import build_filter, default_filter_bytes, shard_survivors

    if groups is None:
        word_ok = (B.word_df(tokens, offsets, vocab_size) >= min_docs).astype(np.uint8)
    else:
        word_ok = (B.group_word_df(tokens, offsets, groups.order, groups.label,
                                   groups.n_groups, vocab_size) >= min_docs).astype(np.uint8)
    use_filter = n >= 2
    if use_filter:
        filt, shift = build_filter(tokens, offsets, n,
                                   default_filter_bytes(int(tokens.size), min_docs), word_ok)
    else:
        filt, shift = np.zeros(1, dtype=np.uint8), 63
    pos, doc, _ = shard_survivors(tokens, offsets, n, word_ok, filt, shift, use_filter,
                                  min(min_docs, 255))
    return pos, doc


def _chunk_count() -> int:
    """Chunks of the parallel passes: a few per thread, for the balance."""
    return 4 * max(1, int(get_num_threads()))


_BUCKET_BITS = 12     # ~10^4 n-grams a bucket on 45 M tokens: its table stays in L2
_PREFILTER_BITS = 22  # 512 KiB: most n-grams that are not frequent stop there


def _packed_ngram_runs(tokens: np.ndarray, offsets: np.ndarray, min_docs: int, n: int,
                       vocab_size: int) -> tuple[tuple, int] | None:
    """Covered runs of the n-grams with df ≥ σ when an n-gram of frequent words
    packs exactly into 64 bits (dense codes of the words with df ≥ σ, n · bits
    ≤ 64: L' = 4 and < 65,536 such words) and a bucket entry (the key's mix
    below the bucket bits, then the document) fits in 64 bits too.

    Three linear passes over the corpus, no sort: the bucket sizes, a scatter
    of the occurrences into buckets by the top bits of the key's mix, then —
    after an exact distinct-document count per bucket in a small hash table —
    the runs of the n-grams found frequent.  Each pass and the count run in
    parallel over contiguous chunks of documents (of buckets for the count,
    :func:`repetend._arrays.even_bounds`); the output does not depend on the chunks.  None
    when the n-grams do not pack (then :func:`_frequent_ngrams`);
    ``((run_offsets, starts, ends), frequent n-grams)`` otherwise."""
    n_tok, n_docs = int(tokens.size), int(offsets.size - 1)
    empty = np.zeros(0, dtype=np.int64)
    if min_docs > n_docs or n_tok == 0:
        return (np.zeros(n_docs + 1, dtype=np.int64), empty, empty.copy()), 0
    from .. import _bloomspan_kernels as B

    word_ok = B.word_df(tokens, offsets, vocab_size) >= min_docs
    n_ok = int(np.count_nonzero(word_ok))
    bits = max(1, n_ok.bit_length())
    key_bits = n * bits
    doc_bits = max(1, (n_docs - 1).bit_length())
    bbits = min(key_bits, max(_BUCKET_BITS, key_bits + doc_bits - 64))
    if key_bits > 64 or bbits > 24:
        return None
    # codes of <= 16 bits (any packed 4-gram) as uint16: half the table every pass reads
    ctype = np.uint16 if bits <= 16 else np.int64
    code = np.zeros(vocab_size, dtype=ctype)
    code[word_ok] = np.arange(1, n_ok + 1, dtype=ctype)
    args = (tokens, offsets, code, np.int64(n), np.int64(bits))
    nbk = 1 << bbits
    # chunks of documents for the parallel passes; their per-chunk bucket
    # histograms (chunks × buckets) stay under 32 MB
    n_chunks = max(1, min(_chunk_count(), (1 << 22) // nbk))
    chunk_docs = even_bounds(offsets, n_chunks)
    sizes = KP.packed_bucket_sizes(*args, np.int64(bbits), chunk_docs)
    bucket_starts, fill = KP.scatter_offsets(sizes)
    del sizes
    vals = np.empty(int(bucket_starts[-1]), dtype=np.uint64)
    KP.packed_scatter(*args, np.int64(bbits), np.int64(doc_bits), chunk_docs, fill, vals)
    del fill
    mixes = KP.frequent_mixes(bucket_starts, vals, np.int64(min_docs), np.int64(key_bits - bbits),
                              np.int64(doc_bits), even_bounds(bucket_starts, _chunk_count()))
    del vals
    tab, tb, bloom = KP.mix_table(mixes, np.int64(_PREFILTER_BITS))
    runs = KP.frequent_mix_runs(*args, tab, np.int64(tb), bloom, np.int64(_PREFILTER_BITS),
                                chunk_docs)
    return runs, int(mixes.size)


def _frequent_ngrams(tokens: np.ndarray, offsets: np.ndarray, min_docs: int, n: int,
                     vocab_size: int, groups=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every n-gram with df ≥ σ and all its occurrences, exactly: the seed
    stage of :func:`repetend.phrases.bloomspan.mine_bloomspan` (word df, a
    one-sided counting filter, the survivors sorted by hash and grouped by
    content with exact df).  Returns ``(pos, s_start, s_end)``: the
    occurrences of kept n-gram s are ``pos[s_start[s]:s_end[s]]``."""
    from .. import _bloomspan_kernels as B

    empty = np.zeros(0, np.int64)
    n_tok, n_docs = int(tokens.size), int(offsets.size - 1)
    if min_docs > n_docs or n_tok == 0:
        return empty, empty, empty
    pos, doc = _survivors(tokens, offsets, min_docs, n, vocab_size, groups)
    keys = B.ngram_keys(tokens, pos, n)
    keys, pos, doc = B.radix_sort_occurrences(keys, pos, doc, 32 if n != 2 else 64)
    if groups is None:
        s_start, s_end, _ = B.group_seeds(tokens, pos, doc, keys, n, min_docs)
    else:
        s_start, s_end, _ = B.group_seeds(tokens, pos, doc, keys, n, min_docs, groups.label)
    return pos, s_start, s_end


def _given_runs(tokens: np.ndarray, offsets: np.ndarray, raw: RawPhrases, L: int,
                spans=None) -> tuple[tuple | None, dict, str]:
    """Merge-only mode: the covered runs of the given exact phrases (length ≥ L):
    their frequent spans, *spans* when the caller has them already
    (:func:`repetend.phrases.find_phrases` computes them for its coverage)."""
    from ..frequent_spans import frequent_spans

    if raw is None or raw.n_phrases == 0 or tokens.size == 0:
        return None, {"part_phrases": 0}, "given"
    fs = spans if spans is not None else frequent_spans(tokens, offsets, raw, L)
    return ((np.asarray(fs.run_offsets, np.int64), np.asarray(fs.starts, np.int64),
             np.asarray(fs.ends, np.int64)), {"part_phrases": int(raw.n_phrases)}, "given")
