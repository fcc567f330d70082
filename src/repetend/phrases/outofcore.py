"""BloomSpan out of core: maximal frequent phrases of a corpus larger than RAM.

The token array stays on disk (the memory-mapped ``tokens.npy`` of a token
store); the private memory of the run is bounded by ``memory_limit``:

1. **word df**, shard by shard (a shard is a run of whole documents, so the
   per-shard document frequencies add up exactly);
2. **counting filter**, shard by shard into one shared filter (counting is
   order-free, the counters equal the in-memory ones);
3. **survivors**, shard by shard (parallel kernel over blocks): their
   positions and documents are *spilled* to ``n_parts`` partition files on
   disk, chosen by a hash of the n-gram key (an external distribution sort:
   every occurrence of a seed lands in one partition, in ascending position
   order);
4. **seeds and DFS per partition**: a partition is read back, radix-sorted,
   merged into seeds with exact df and grown to the right by the DFS, which
   reads the token memmap; partitions are processed on ``threads`` threads
   (the kernels release the GIL), each within its share of the budget;
5. **global order and maximality**: the candidates of all partitions are put
   in the in-memory Ψ order (seed df descending, seed n-gram ascending,
   discovery order inside a seed), then absorbed and selected exactly as in
   :func:`repetend.phrases.bloomspan.mine_bloomspan`.

The result equals the in-memory engine's (same phrases, same order, same
occurrences) for ``coverage_skip=False`` (the only exact mode; the heuristic
skip depends on a global visiting order and is refused here).  Candidates and
phrases themselves are held in memory: they are the output.

Temporary files live in a fresh directory under ``workdir`` and are removed
when the run ends, also on error or interrupt; nothing is written anywhere
else, so an interrupted run simply starts again.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numba
import numpy as np
import numpy.typing as npt

from .._spill import append_partitioned, cuts_by_cumulative, hash_partition
from .._memory import MemoryBudget, parse_size
from ..errors import ParameterError
from . import _bloomspan_kernels as K
from ._raw import RawPhrases
from .bloomspan import (_BLOCK, _Clock, _as_int, _empty, _validate, count_filter_shards,
                        default_filter_bytes, default_seed_len, group_word_ok, shard_survivors,
                        word_ok_shards)
from .groups import DocGroups, engine_labels

__all__ = ["mine_bloomspan_ooc", "mine_bloomspan_store", "plan_shards"]

# private bytes per token of a shard in the survivor pass (bitmask 1/8, and per
# survivor: pos 8 + doc 4 + key 8 + partition 8 + argsort 8 + gathered copies 12)
_SHARD_BYTES_PER_TOKEN = 48
# private bytes per occurrence while a partition is seeded and grown (pos, doc,
# key, radix ping-pong buffers, compacted seeds, DFS scratch)
_PART_BYTES_PER_OCC = 96
_MAX_PARTS = 4096


def plan_shards(doc_offsets: np.ndarray, shard_tokens: int) -> np.ndarray:
    """Document cuts ``[0, ..., n_docs]`` so that every shard of whole documents
    holds at most ``shard_tokens`` tokens (a longer document is a shard alone)."""
    return cuts_by_cumulative(np.asarray(doc_offsets, dtype=np.int64), shard_tokens)


def _gather_csr(off: np.ndarray, vals: np.ndarray, order: np.ndarray):
    """CSR rows ``order`` of (off, vals) as a new CSR."""
    lens = np.diff(off)[order]
    new_off = np.zeros(order.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=new_off[1:])
    idx = np.repeat(off[:-1][order] - new_off[:-1], lens) + np.arange(int(new_off[-1]), dtype=np.int64)
    return new_off, vals[idx]


def _seed_partition(tokens, doc_offsets, pos, doc, n, min_docs, min_len, cover, label=None):
    """Seeds and DFS candidates of one partition (kernels only; releases the GIL);
    with ``label`` (the group of every document) df counts distinct groups."""
    keys = K.ngram_keys(tokens, pos, n)
    keys, pos, doc = K.radix_sort_occurrences(keys, pos, doc, 32 if n != 2 else 64)
    grp = () if label is None else (label,)
    s_start, s_end, s_df = K.group_seeds(tokens, pos, doc, keys, n, min_docs, *grp)
    del keys
    seed_off, occ_pos, occ_doc = K.compact_seeds(pos, doc, s_start, s_end)
    del pos, doc, s_start, s_end
    ns = int(s_df.shape[0])
    n_occ = int(occ_pos.shape[0])
    if ns:
        firsts = occ_pos[seed_off[:-1]]
        cols = [tokens[firsts + j] for j in range(n - 1, -1, -1)]
        order = np.lexsort(cols + [-s_df]).astype(np.int64)
    else:
        order = np.zeros(0, dtype=np.int64)
    c_len, c_df, c_off, c_occ, g, c_seed = K.grow_seeds(
        tokens, doc_offsets, seed_off, occ_pos, occ_doc, s_df, order,
        n, min_docs, min_len, cover, False, *grp)
    return c_len, c_df, c_off, c_occ, s_df[c_seed], g, ns, n_occ


def mine_bloomspan_ooc(tokens: npt.NDArray[np.int32], doc_offsets: npt.NDArray[np.int64],
                       min_docs: int, min_len: int, *, memory_limit: int | str,
                       seed_len: int | None = None, filter_bytes: int | None = None,
                       vocab_size: int | None = None, token_df: npt.ArrayLike | None = None,
                       workdir: str | os.PathLike | None = None, threads: int | None = None,
                       shard_tokens: int | None = None, n_parts: int | None = None,
                       groups: npt.ArrayLike | DocGroups | None = None) -> RawPhrases:
    """Maximal frequent phrases with BloomSpan under a memory budget (module docs).

    Parameters
    ----------
    tokens : int32 array (typically ``np.memmap``/``np.load(mmap_mode="r")``)
        The corpus; read shard by shard and by the DFS, never copied.
    doc_offsets : int64 array, shape (n_docs + 1,)
        Document bounds (held in memory: 8 bytes per document).
    min_docs, min_len, seed_len, vocab_size, token_df
        As :func:`repetend.phrases.bloomspan.mine_bloomspan`.
    memory_limit : int or str
        Budget of private memory in bytes or ``"8G"``: the filter, vocabulary
        arrays, document offsets and one coverage bit per token are fixed;
        shards and partitions are sized to fit the rest.
    filter_bytes : int, optional
        Counting-filter size; default :func:`default_filter_bytes`, reduced to
        a quarter of the budget if larger (a smaller filter only lets more
        false positives through, which the exact df drops).
    workdir : path, optional
        Where the spill directory is created (default: the system temp dir).
    threads : int, optional
        Partitions processed at once (default ``numba.get_num_threads()``);
        the survivor pass uses numba's threads.
    shard_tokens, n_parts : int, optional
        Override the planned shard size / partition count (tests force spilling).
    groups : int array of one label per document, optional
        Count df over groups of documents (near-duplicate clusters), as
        :func:`repetend.phrases.bloomspan.mine_bloomspan` does; ``token_df``
        is then not used (the group df of the tokens is counted in a pass over
        the documents group by group).

    Returns
    -------
    RawPhrases
        Identical to the in-memory result; ``stats`` adds ``shards``,
        ``partitions``, ``spilled_bytes``, ``memory_limit``, ``peak_anon``
        (sampled private resident memory), ``peak_rss`` and ``hwm``.

    Notes
    -----
    The BloomSpan paper (§4-5: BloomSpan and its scaling to 3.07 B tokens); external
    distribution sort: Knuth, TAOCP vol. 3, 5.4; Vitter, "External memory
    algorithms and data structures", ACM Comput. Surv. 2001.
    """
    limit = parse_size(memory_limit)
    if limit is None:
        raise ParameterError("memory_limit is required for the out-of-core engine")
    min_docs = _as_int("min_docs", min_docs, 1)
    min_len = _as_int("min_len", min_len, 1)
    tokens, doc_offsets, vocab_size = _validate(tokens, doc_offsets, vocab_size)
    n = default_seed_len(min_len) if seed_len is None else _as_int("seed_len", seed_len, 1)
    if n > min_len:
        raise ParameterError(f"seed_len={n} must be <= min_len={min_len} for an exact answer")
    n_tok = int(tokens.shape[0])
    n_docs = int(doc_offsets.shape[0] - 1)
    threads = max(1, int(threads or numba.get_num_threads()))
    budget = MemoryBudget(limit)
    work = budget.working_bytes(limit)
    if filter_bytes is None:
        filter_bytes = min(default_filter_bytes(n_tok, min_docs), max(1 << 16, work // 4))
    else:
        filter_bytes = _as_int("filter_bytes", filter_bytes, 1)
    filter_bytes = max(2, 1 << (int(filter_bytes).bit_length() - 1)) if n >= 2 else 0
    groups, label, n_units = engine_labels(groups, n_docs)   # documents, or their groups
    # with groups: the labels (4 B/doc), the visiting order (8 B/doc) and one
    # stamp per group for each partition thread (8 B/group)
    fixed = (filter_bytes + 25 * vocab_size + 8 * (n_docs + 1) + (n_tok + 63) // 64 * 8
             + (0 if label is None else 12 * n_docs + 8 * n_units * threads))
    avail = work - fixed
    if avail < (1 << 20):
        raise ParameterError(
            f"memory_limit={limit} bytes is too small for this corpus: the filter, "
            f"vocabulary, document offsets and coverage bitmask alone need {fixed} bytes "
            f"besides the {budget.base['anon']} the process holds; give at least "
            f"{budget.base['anon'] + fixed + (1 << 24)} bytes")
    if shard_tokens is None:
        shard_tokens = max(_BLOCK, avail // _SHARD_BYTES_PER_TOKEN)
    shard_tokens = _as_int("shard_tokens", shard_tokens, 1)
    if n_parts is None:
        n_parts = math.ceil(n_tok * _PART_BYTES_PER_OCC * threads / avail)
    n_parts = min(_MAX_PARTS, max(1, _as_int("n_parts", n_parts, 1)))
    pbits = (n_parts - 1).bit_length()
    n_parts = 1 << pbits

    stats: dict = {"engine": "bloomspan", "out_of_core": True, "tokens": n_tok, "docs": n_docs,
                   "min_docs": min_docs, "min_len": min_len, "seed_len": n, "coverage_skip": False,
                   "memory_limit": limit, "threads": threads}
    if label is not None:
        stats["groups"] = n_units
    clock = _Clock(stats)
    if min_docs > n_units or n_tok == 0:
        clock.total()
        return _empty(stats)

    cuts = plan_shards(doc_offsets, shard_tokens)
    stats["shards"] = int(cuts.shape[0] - 1)
    stats["partitions"] = n_parts

    def shard(i):
        d0, d1 = int(cuts[i]), int(cuts[i + 1])
        lo, hi = int(doc_offsets[d0]), int(doc_offsets[d1])
        return d0, lo, tokens[lo:hi], doc_offsets[d0:d1 + 1] - lo

    def shards():
        return (shard(i)[2:] for i in range(cuts.shape[0] - 1))

    root = Path(workdir) if workdir is not None else Path(tempfile.gettempdir())
    root.mkdir(parents=True, exist_ok=True)
    spill = Path(tempfile.mkdtemp(prefix=".repetend-bloomspan-", dir=root))
    try:
        with budget:
            # 1. word df, shard by shard
            if label is None:
                word_ok = word_ok_shards(shards(), vocab_size, min_docs, token_df)
            else:
                word_ok = group_word_ok(tokens, doc_offsets, vocab_size, min_docs, groups)
            stats["word_df_survivors"] = int(word_ok.sum())
            clock.lap("word_df")

            # 2. counting filter, shard by shard, one shared filter
            use_filter = n >= 2
            if use_filter:
                filt, shift = count_filter_shards(shards(), n, filter_bytes, word_ok)
            else:
                filt, shift = np.zeros(1, dtype=np.uint8), 63
            stats["filter_bytes"] = int(filter_bytes)
            clock.lap("count_filter")

            # 3. survivors per shard, spilled to partitions by n-gram key
            threshold = min(min_docs, 255)
            n_surv = 0
            part_counts = np.zeros(n_parts, dtype=np.int64)
            for i in range(cuts.shape[0] - 1):
                d0, lo, t, off = shard(i)
                if t.shape[0] == 0:
                    continue
                pos, doc, _ = shard_survivors(t, off, n, word_ok, filt, shift, use_filter,
                                              threshold)
                m = int(pos.shape[0])
                part = hash_partition(K.ngram_keys(t, pos, n), pbits)
                pos += lo
                doc += np.int32(d0)
                part_counts += append_partitioned(spill, "", {"pos": pos, "doc": doc}, part,
                                                  n_parts)
                del part
                n_surv += m
                del pos, doc
            del filt, word_ok
            stats["ngram_survivors"] = n_surv
            stats["spilled_bytes"] = 12 * n_surv
            stats["largest_partition"] = int(part_counts.max())
            clock.lap("second_pass")

            # 4. seeds + DFS per partition, on `threads` threads.  The coverage mask
            # is shared: concurrent partitions may lose each other's bits, which only
            # changes the informational ``seeds_covered`` count (the skip is off, and
            # the final coverage is recomputed from the phrases below).
            cover = np.zeros((n_tok + 63) // 64, dtype=np.uint64)

            def run(j):
                if part_counts[j] == 0:
                    return None
                pos = np.fromfile(spill / f"{j}.pos", dtype=np.int64)
                doc = np.fromfile(spill / f"{j}.doc", dtype=np.int32)
                out = _seed_partition(tokens, doc_offsets, pos, doc, n, min_docs, min_len, cover,
                                      label)
                (spill / f"{j}.pos").unlink()
                (spill / f"{j}.doc").unlink()
                return out

            parts = []
            if threads > 1 and n_parts > 1:
                with ThreadPoolExecutor(max_workers=threads) as pool:
                    parts = list(pool.map(run, range(n_parts)))
            else:
                parts = [run(j) for j in range(n_parts)]
            parts = [p for p in parts if p is not None]
            g = sum((p[5] for p in parts), np.zeros(5, dtype=np.int64))
            stats["seeds"] = int(sum(p[6] for p in parts))
            stats["seed_occurrences"] = int(sum(p[7] for p in parts))
            stats["dfs_nodes"] = int(g[0])
            stats["pruned_left"] = int(g[1])
            stats["seeds_covered"] = int(g[2])
            stats["seeds_skipped"] = 0
            stats["chain_steps"] = int(g[4])
            clock.lap("grow")

            # 5. candidates in the in-memory Ψ order, then maximality
            if parts:
                c_len = np.concatenate([p[0] for p in parts])
                c_df = np.concatenate([p[1] for p in parts])
                base = np.cumsum([0] + [int(p[2][-1]) for p in parts[:-1]])
                c_off = np.concatenate([[0]] + [p[2][1:] + b for p, b in zip(parts, base)]
                                       ).astype(np.int64)
                c_occ = np.concatenate([p[3] for p in parts])
                c_sdf = np.concatenate([p[4] for p in parts])
            else:
                z = np.zeros(0, dtype=np.int64)
                c_len, c_df, c_occ, c_sdf = z, z.copy(), z.copy(), z.copy()
                c_off = np.zeros(1, dtype=np.int64)
            del parts
            nc = int(c_len.shape[0])
            stats["candidates"] = nc
            if nc:
                firsts = c_occ[c_off[:-1]]
                cols = [np.asarray(tokens[firsts + j]) for j in range(n - 1, -1, -1)]
                order = np.lexsort([np.arange(nc)] + cols + [-c_sdf]).astype(np.int64)
                c_len, c_df = c_len[order], c_df[order]
                c_off, c_occ = _gather_csr(c_off, c_occ, order)
            firsts = c_occ[c_off[:-1]]
            keep = K.absorb(tokens, firsts, c_len, vocab_size)
            lengths, df, off, occ = K.select_phrases(c_len, c_df, c_off, c_occ, keep)
            stats["absorbed"] = int(nc - lengths.shape[0])
            stats["phrases"] = int(lengths.shape[0])
            clock.lap("maximality")

            cover[:] = 0
            K.mark_occurrences(cover, off, occ, lengths, np.ones(lengths.shape[0], dtype=np.uint8))
            stats["covered_tokens"] = int(K.popcount_words(cover))
            del cover
            clock.lap("coverage")
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    clock.total()
    rep = budget.report()
    stats.update(peak_anon=rep["peak_anon"], peak_rss=rep["peak_rss"], hwm=rep["hwm"],
                 base_anon=rep["base_anon"], within_limit=rep["within_limit"])
    return RawPhrases(lengths=lengths, df=df, occ_offsets=off, occ_starts=occ, stats=stats)


def mine_bloomspan_store(store, min_docs: int, min_len: int, *, memory_limit: int | str,
                         **kwargs) -> RawPhrases:
    """:func:`mine_bloomspan_ooc` on a token store, memory-mapped, with the
    store's token df.

    ``store`` is a store directory (only ``tokens.npy``, ``doc_offsets.npy``
    and the df column of ``vocab.parquet`` are read: the vocabulary strings
    are not loaded) or an open :class:`repetend.corpus.store.TokenStore`.
    """
    from ..corpus.store import TokenStore, open_store_arrays
    if isinstance(store, TokenStore):
        tokens, offsets, df = store.tokens, store.doc_offsets, store.df
    else:
        tokens, offsets, df = open_store_arrays(store)
    kwargs.setdefault("token_df", df)
    kwargs.setdefault("vocab_size", max(int(df.shape[0]), 1))
    return mine_bloomspan_ooc(tokens, offsets, min_docs, min_len,
                              memory_limit=memory_limit, **kwargs)
