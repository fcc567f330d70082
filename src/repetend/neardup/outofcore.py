"""MinHash-LSH near-duplicates out of core: corpora larger than RAM, bounded memory.

The token array stays memory-mapped; the private memory of a run is bounded
by ``memory_limit``.  Four passes, each over on-disk runs:

1. **signatures per shard**: a shard of whole documents is shingled
   (:func:`repetend.neardup.shingles.shingle_sets`) and signed
   (:func:`repetend.neardup.minhash.minhash_signatures`, threaded); its band
   keys (:func:`repetend.neardup.lsh.band_keys`) are *spilled* as
   (band, key, document) records to ``n_parts`` partition files chosen by a
   hash of the key -- an external distribution sort: every bucket lies in
   one partition.  A near-empty document (fewer than ``min_shingles``
   shingles) is one record of band -1 keyed by the fingerprint of its whole
   set.  The shard's sorted shingle sets are appended to ``shingles.bin``
   (read back by stage 4); signatures are dropped with the shard; only the
   set sizes (8 bytes per document) are kept;
2. **buckets per partition**: a partition is read back and sorted by
   (band, key, document); its buckets give candidate pairs exactly as
   :func:`repetend.neardup.lsh.lsh_candidates` (same cap rule, same
   near-empty grouping by set fingerprint: the band -1 buckets), emitted in
   groups of at most ``pair_batch`` pairs (a bucket dearer than that a slice
   at a time: rows of its pair triangle, or of its star + chain when capped)
   and spilled again to ``n_parts`` pair files
   by range of the first document;
3. **candidates per pair file**: read back, deduplicated (by a sort),
   sorted by (a, b) -- the files are ranges of ``a``, so the stream is
   globally sorted; a file with more keys than a batch is first split by
   range of the key (a, b), cut at a histogram of its keys;
4. **verification** in chunks of consecutive candidates against the shingle
   sets of stage 1, memory-mapped from ``shingles.bin`` (page cache, not
   private memory) and intersected exactly
   (:func:`repetend.neardup.pairs.verify_pairs`); the pairs with J >= the
   threshold are appended to files in a second temporary directory and
   returned memory-mapped (the files are unlinked at once and live as long
   as the arrays).

The verified pairs equal the in-memory
:func:`repetend.neardup.find.find_near_duplicates` (method ``minhash``, no
normalization) pair for pair.  Temporary files live in fresh directories
under ``workdir`` and are removed at the end, also on error or interrupt;
:meth:`OutOfCorePairs.to_parquet` replaces its target atomically.
"""

from __future__ import annotations

import itertools
import math
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from .._arrays import sorted_unique
from .._atomic import write_parquet
from .._spill import append_partitioned, cost_cuts, hash_partition
from .._memory import MemoryBudget, parse_size
from ..errors import ParameterError
from . import _lsh_kernels as LK
from . import _minhash_kernels as MK
from .config import NearDupConfig
from .lsh import _collect, _emit, check_banding, lsh_params, safe_min_shingles
from .minhash import DEFAULT_SEED, minhash_signatures
from .pairs import Pairs, verify_pairs
from .shingles import ShingleSets, shingle_sets, token_hashes

__all__ = ["OutOfCorePairs", "near_duplicates_ooc", "near_duplicates_store", "store_token_hashes"]

_REC_BYTES = 18          # band int16 + key uint64 + doc int64 on disk
_SORT_BYTES_PER_REC = 64  # loaded records, lexsort, gathered copies
_PAIR_BYTES = 48          # a, b, key, the sort's copy (pairs emitted and deduplicated)
# per verified candidate: a, b, intersections, the three float columns, the selection
_VERIFY_PAIR_BYTES = 160
_MAX_PARTS = 4096


@dataclass(slots=True)
class OutOfCorePairs:
    """Verified near-duplicate pairs (J >= threshold, sorted by (a, b)) and run stats."""

    pairs: Pairs
    candidates: int
    stats: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.pairs)

    def to_arrow(self):
        import pyarrow as pa
        p = self.pairs
        return pa.table({"a": p.a, "b": p.b, "jaccard": p.jaccard,
                         "containment_ab": p.containment_ab, "containment_ba": p.containment_ba})

    def to_pandas(self):
        return self.to_arrow().to_pandas()

    def to_parquet(self, path: str | os.PathLike) -> Path:
        """Write the pairs to ``path`` atomically (temporary file + rename)."""
        write_parquet(path, self.to_arrow())
        return Path(path)


_PAIR_FIELDS = ("a", "b", "jaccard", "containment_ab", "containment_ba")


_SPLIT_BINS = 1 << 14


def _split_pair_file(spill: Path, j: int, count: int, nn, q_div: int, max_keys: int) -> list[Path]:
    """The pair file ``p{j}.key`` (keys ``a * nn + b`` of the first documents
    ``j * q_div ..``) as files of at most ``max_keys`` keys each (or of one key
    repeated), in key order, so the stream stays globally sorted: on a corpus dense
    in near-duplicates one range of documents can hold more candidate pairs than
    the budget can sort at once."""
    lo = int(j) * int(q_div) * int(nn)
    return _split_keys(spill / f"p{j}.key", int(count), lo, lo + int(q_div) * int(nn),
                       max(1, int(max_keys)))


def _split_keys(path: Path, count: int, k_lo: int, k_hi: int, max_keys: int) -> list[Path]:
    """Split a file of ``count`` int64 keys in [k_lo, k_hi) by key range, cut at a
    histogram of the keys (one pass to count, one to write), not at equal widths:
    the pairs of a group of copies crowd into a few documents (the centre of a
    capped bucket's star is the first document of a pair in every band).  A range
    still too full is split again, narrower."""
    if count <= max_keys or k_hi - k_lo <= 1:
        return [path]
    width = -(-(k_hi - k_lo) // _SPLIT_BINS)
    nb = -(-(k_hi - k_lo) // width)
    src = np.memmap(path, dtype=np.int64, mode="r", shape=(count,))
    hist = np.zeros(nb, dtype=np.int64)
    for s0 in range(0, count, max_keys):
        hist += np.bincount((np.asarray(src[s0:s0 + max_keys]) - k_lo) // width, minlength=nb)
    bounds = cost_cuts(hist, max_keys)
    if bounds.shape[0] == 2:          # one bin holds them all: the same file, narrower
        del src
        b0 = int(np.flatnonzero(hist)[0])
        return _split_keys(path, count, k_lo + b0 * width, min(k_lo + (b0 + 1) * width, k_hi),
                           max_keys)
    stem = path.name[:-len(".key")]
    outs = [path.with_name(f"{stem}.{i}.key") for i in range(bounds.shape[0] - 1)]
    for s0 in range(0, count, max_keys):
        blk = np.asarray(src[s0:s0 + max_keys])
        sub = np.searchsorted(bounds, (blk - k_lo) // width, side="right") - 1
        order = np.argsort(sub, kind="stable")
        cnt = np.bincount(sub, minlength=len(outs))
        bnd = np.concatenate(([0], np.cumsum(cnt)))
        blk = blk[order]
        del sub, order
        for i in np.flatnonzero(cnt):
            with open(outs[i], "ab") as fh:
                blk[bnd[i]:bnd[i + 1]].tofile(fh)
    del src
    path.unlink()
    got: list[Path] = []
    for i, out in enumerate(outs):
        c = int(hist[bounds[i]:bounds[i + 1]].sum())
        if c:
            got += _split_keys(out, c, k_lo + int(bounds[i]) * width,
                               min(k_lo + int(bounds[i + 1]) * width, k_hi), max_keys)
    return got


def _map_pairs(res: Path, n_found: int) -> Pairs:
    """The verified pairs spilled to ``res``, memory-mapped (file-backed pages, not
    private memory); the files are unlinked at once and live as long as the arrays."""
    if n_found == 0:
        return Pairs.empty()
    cols = []
    for name in _PAIR_FIELDS:
        dt = np.int64 if name in ("a", "b") else np.float64
        cols.append(np.memmap(res / f"{name}.bin", dtype=dt, mode="r", shape=(n_found,)))
    return Pairs(*cols)


def _bucket_rows(members: np.ndarray, cap: int):
    """All pairs of one bucket (``a < b``), as ``bucket_pairs`` below the cap emits
    them, in batches of consecutive rows of the pair triangle with at most about
    ``cap`` pairs each (a row alone when it is longer).  Only the two yielded
    arrays stay alive while the caller spills them."""
    mem = np.sort(np.asarray(members, dtype=np.int64))   # then x < y: no min / max
    m = int(mem.shape[0])
    row = m - 1 - np.arange(m, dtype=np.int64)       # pairs (u, v > u) of row u
    for u0, u1 in itertools.pairwise(cost_cuts(row, cap).tolist()):
        cnt = row[u0:u1]
        tot = int(cnt.sum())
        if tot == 0:
            continue
        v = np.arange(tot, dtype=np.int64)
        v -= np.repeat(np.cumsum(cnt) - cnt - np.arange(u0 + 1, u1 + 1), cnt)
        y = mem[v]
        del v
        x = np.repeat(mem[u0:u1], cnt)
        yield x, y
        del x, y


def _bucket_star_chain(members: np.ndarray, sizes: np.ndarray, cap: int):
    """The ``2m - 3`` pairs ``bucket_pairs`` emits for a capped bucket (members
    ordered by set size, stably: a star from the first, a chain between
    neighbours), ``a < b``, in slices of at most ``cap`` pairs."""
    mem = np.asarray(members, dtype=np.int64)
    key = mem[np.argsort(sizes[mem], kind="stable")]
    m = int(key.shape[0])
    first = key[:1]
    for t0 in range(1, m, cap):                     # star: (first, key[t])
        x = key[t0:t0 + cap]
        yield np.minimum(first, x), np.maximum(first, x)
    for t0 in range(2, m, cap):                     # chain: (key[t - 1], key[t])
        x, y = key[t0 - 1:t0 - 1 + cap], key[t0:t0 + cap]
        n_ = min(x.shape[0], y.shape[0])
        yield np.minimum(x[:n_], y[:n_]), np.maximum(x[:n_], y[:n_])


def near_duplicates_ooc(tokens: npt.NDArray[np.int32], doc_offsets: npt.NDArray[np.int64],
                        tok_hash: npt.NDArray[np.uint64], *, memory_limit: int | str,
                        threshold: float = 0.8, shingle: int = 5, num_perm: int = 128,
                        bands: int | None = None, rows: int | None = None,
                        hash: str = "splitmix64", scheme: str = "minhash", bits: int = 64,
                        seed: int = DEFAULT_SEED, max_bucket: int | None = 200,
                        min_shingles: int = 3, min_recall: float = 0.98,
                        workdir: str | os.PathLike | None = None,
                        shard_docs: int | None = None, n_parts: int | None = None,
                        pair_batch: int | None = None) -> OutOfCorePairs:
    """MinHash-LSH near-duplicate pairs under a memory budget (module docs).

    Parameters
    ----------
    tokens, doc_offsets : arrays
        The corpus (``tokens`` typically memory-mapped; never copied whole).
    tok_hash : uint64 array
        Stable hash of every token id (:func:`repetend.neardup.shingles.token_hashes`).
    memory_limit : int or str
        Budget of private memory (bytes or ``"8G"``).  Fixed: 40 bytes per
        document (offsets, set sizes, shingle offsets, planning) and 8 per
        vocabulary entry; the shards, partitions, pair batches and
        verification chunks are sized to the rest.
    threshold, shingle, num_perm, bands, rows, hash, scheme, bits, seed, max_bucket,
    min_shingles, min_recall
        As :class:`repetend.neardup.config.NearDupConfig` (``bits`` = ``bbits`` or 64).
    workdir : path, optional
        Where the spill directory is created (default: the system temp dir).
    shard_docs, n_parts, pair_batch : int, optional
        Override the planned shard size (documents), partition count and
        candidate pairs emitted, sorted or verified at a time (tests).

    Returns
    -------
    OutOfCorePairs
        The verified pairs with J >= threshold and ``stats`` (shards,
        partitions, spilled bytes, candidates, per-stage seconds, ``peak_anon``,
        ``peak_rss``, ``hwm``).

    Notes
    -----
    Broder (1997); Indyk & Motwani (1998) and Rajaraman & Ullman (MMDS ch. 3)
    for banding; external distribution sort: Vitter, ACM Comput. Surv. 2001.
    """
    limit = parse_size(memory_limit)
    if limit is None:
        raise ParameterError("memory_limit is required for the out-of-core path")
    if not 0.0 < float(threshold) <= 1.0:
        raise ParameterError(f"threshold must be in (0, 1], got {threshold}")
    if int(shingle) < 1:
        raise ParameterError(f"shingle size k must be >= 1, got {shingle}")
    if max_bucket is not None and max_bucket != 0 and int(max_bucket) < 3:
        raise ParameterError(f"max_bucket must be None, 0 or >= 3, got {max_bucket}")
    tokens = np.asarray(tokens)
    if tokens.dtype != np.int32:
        raise ParameterError(f"tokens must be int32 (a token store), got {tokens.dtype}")
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    tok_hash = np.ascontiguousarray(tok_hash, dtype=np.uint64)
    if doc_offsets.size == 0 or doc_offsets[0] != 0 or doc_offsets[-1] != tokens.shape[0]:
        raise ParameterError("doc_offsets must run from 0 to len(tokens)")
    num_perm = int(num_perm)
    bands, rows = check_banding(num_perm, bands, rows)
    if bands is None or rows is None:
        p = lsh_params(float(threshold), num_perm, min_recall=float(min_recall))
        bands, rows = p.bands, p.rows
    n = int(doc_offsets.shape[0] - 1)
    k = int(shingle)
    t_thr = float(threshold)
    cap = 0 if max_bucket is None else int(max_bucket)
    tiny_limit = safe_min_shingles(int(min_shingles), t_thr)

    budget = MemoryBudget(limit)
    work = budget.working_bytes(limit)
    fixed = 40 * (n + 1) + 8 * tok_hash.shape[0]
    avail = work - fixed
    if avail < (1 << 22):
        raise ParameterError(
            f"memory_limit={limit} bytes is too small: {n} documents need {fixed} bytes of "
            f"offsets, sizes and fingerprints besides the {budget.base['anon']} the process "
            f"holds; give at least {budget.base['anon'] + fixed + (1 << 25)} bytes")
    if shard_docs is None:
        cost = 24 * np.diff(doc_offsets) + 8 * num_perm + 48 * bands + 64
        cuts = cost_cuts(cost, avail // 2)
        del cost
    else:
        cuts = np.unique(np.concatenate([np.arange(0, n, max(1, int(shard_docs))), [n]])
                         ).astype(np.int64)
        if cuts[0] != 0:
            cuts = np.concatenate([[0], cuts])
    if n_parts is None:
        n_parts = math.ceil(max(n, 1) * bands * _SORT_BYTES_PER_REC / avail)
    n_parts = min(_MAX_PARTS, max(1, int(n_parts)))
    pbits = (n_parts - 1).bit_length()
    n_parts = 1 << pbits

    stats: dict = {"documents": n, "tokens": int(tokens.shape[0]), "shingle_k": k,
                   "num_perm": num_perm, "bands": int(bands), "rows": int(rows),
                   "threshold": t_thr, "max_bucket": cap or None, "min_shingles": tiny_limit,
                   "memory_limit": limit, "shards": int(cuts.shape[0] - 1),
                   "partitions": n_parts, "buckets_with_pairs": 0, "capped_buckets": 0,
                   "pairs_not_enumerated": 0, "largest_bucket": 0}
    timings: dict = {}
    root = Path(workdir) if workdir is not None else Path(tempfile.gettempdir())
    root.mkdir(parents=True, exist_ok=True)
    spill = Path(tempfile.mkdtemp(prefix=".repetend-neardup-", dir=root))
    res = None
    n_found = 0
    try:
        res = Path(tempfile.mkdtemp(prefix=".repetend-pairs-", dir=root))
        with budget:
            # 1. signatures and band keys per shard
            t0 = time.perf_counter()
            sizes = np.zeros(n, dtype=np.int64)
            rec_counts = np.zeros(n_parts, dtype=np.int64)
            tiny_records = 0
            shingles_total = 0
            for i in range(cuts.shape[0] - 1):
                d0, d1 = int(cuts[i]), int(cuts[i + 1])
                lo, hi = int(doc_offsets[d0]), int(doc_offsets[d1])
                off = doc_offsets[d0:d1 + 1] - lo
                sets = shingle_sets(tokens[lo:hi], off, tok_hash, k)
                ssz = np.diff(sets.offsets)
                sizes[d0:d1] = ssz
                shingles_total += int(sets.hashes.shape[0])
                with open(spill / "shingles.bin", "ab") as fh:   # read back by stage 4
                    sets.hashes.tofile(fh)
                # near-empty documents: spilled as records of band -1 keyed by the
                # fingerprint of the whole set, so that stage 2 makes one bucket per
                # identical set (as lsh_candidates) without holding them all at once
                tiny = np.flatnonzero((ssz >= 1) & (ssz < tiny_limit)).astype(np.int64)
                if tiny.size:
                    fp = np.zeros(d1 - d0, dtype=np.uint64)
                    with np.errstate(over="ignore"):
                        MK.set_fingerprints(sets.hashes, sets.offsets, fp)
                    part = hash_partition(fp[tiny], pbits)
                    rec_counts += append_partitioned(
                        spill, "b", {"band": np.full(tiny.size, -1, np.int16), "key": fp[tiny],
                                     "doc": tiny + d0}, part, n_parts)
                    tiny_records += int(tiny.size)
                    del fp, part
                del tiny
                banded = np.flatnonzero(ssz >= tiny_limit).astype(np.int64)
                if banded.size == 0:
                    continue
                sig = minhash_signatures(sets, num_perm, seed=seed, hash=hash, bits=bits,
                                         scheme=scheme).values
                del sets
                keys = np.empty((banded.size, int(bands)), dtype=np.uint64)
                with np.errstate(over="ignore"):
                    LK.band_keys(sig, banded, int(bands), int(rows), keys)
                del sig
                key = keys.reshape(-1)
                band = np.tile(np.arange(int(bands), dtype=np.int16), banded.size)
                doc = np.repeat(banded + d0, int(bands))
                del keys
                part = hash_partition(key, pbits)
                rec_counts += append_partitioned(spill, "b", {"band": band, "key": key, "doc": doc},
                                                 part, n_parts)
                del key, band, doc, part
            stats["shingles"] = shingles_total
            stats["band_records"] = int(rec_counts.sum()) - tiny_records
            stats["spilled_bytes"] = _REC_BYTES * int(rec_counts.sum()) + 8 * shingles_total
            stats["largest_partition"] = int(rec_counts.max())
            timings["signatures"] = time.perf_counter() - t0

            # 2. buckets per partition -> candidate pairs, spilled by range of a
            t0 = time.perf_counter()
            q_div = max(1, -(-max(n, 1) // n_parts))
            pair_counts = np.zeros(n_parts, dtype=np.int64)
            nn = np.int64(max(n, 1))
            raw_pairs = 0
            pair_cap = (max(1, int(pair_batch)) if pair_batch
                        else max(1 << 12, avail // (2 * _PAIR_BYTES)))

            def spill_pairs(got):
                nonlocal raw_pairs
                if got is None:
                    return
                a, b = got
                raw_pairs += int(a.size)
                pk = sorted_unique(a * nn + b)
                pair_counts[:] += append_partitioned(spill, "p", {"key": pk}, pk // nn // q_div,
                                                     n_parts)

            def emit_buckets(members, starts):
                # buckets in groups whose candidate pairs fit the budget: below the cap
                # a bucket of m documents emits m(m-1)/2 pairs, far more than its m records
                per = LK.bucket_pair_counts(starts, np.int64(cap))
                for g0, g1 in itertools.pairwise(cost_cuts(per, pair_cap).tolist()):
                    m = int(starts[g1] - starts[g0])
                    if g1 - g0 == 1 and per[g0] > pair_cap:
                        # one bucket dearer than the batch: its pairs a slice at a time
                        # (3,000 copies of a document are 4.5 M pairs uncapped)
                        stats["buckets_with_pairs"] += 1
                        stats["largest_bucket"] = max(stats["largest_bucket"], m)
                        bucket = members[starts[g0]:starts[g1]]
                        if cap and m >= cap:
                            stats["capped_buckets"] += 1
                            stats["pairs_not_enumerated"] += m * (m - 1) // 2 - (2 * m - 3)
                            slices = _bucket_star_chain(bucket, sizes, pair_cap)
                        else:
                            slices = _bucket_rows(bucket, pair_cap)
                        for got in slices:
                            spill_pairs(got)
                        continue
                    mem: list = []
                    ln: list = []
                    _collect(members, starts[g0:g1 + 1], mem, ln)
                    spill_pairs(_emit(mem, ln, sizes, cap, stats))
                    del mem, ln

            for j in range(n_parts):
                if rec_counts[j] == 0:
                    continue
                band = np.fromfile(spill / f"b{j}.band", dtype=np.int16)
                key = np.fromfile(spill / f"b{j}.key", dtype=np.uint64)
                doc = np.fromfile(spill / f"b{j}.doc", dtype=np.int64)
                for ext in ("band", "key", "doc"):
                    (spill / f"b{j}.{ext}").unlink()
                order = np.lexsort((doc, key, band))
                band, key, doc = band[order], key[order], doc[order]
                del order
                cut = np.flatnonzero((key[1:] != key[:-1]) | (band[1:] != band[:-1])) + 1
                starts = np.concatenate(([0], cut, [key.shape[0]])).astype(np.int64)
                del band, key, cut
                emit_buckets(doc, starts)
                del doc, starts
            stats["near_empty_documents"] = tiny_records
            stats["banded_documents"] = int(np.count_nonzero(sizes >= tiny_limit))
            stats["empty_documents"] = int(np.count_nonzero(sizes == 0))
            stats["raw_pairs"] = raw_pairs
            timings["lsh"] = time.perf_counter() - t0

            # 3 + 4. candidates per pair file (ranges of a), verified against the shingle
            # sets spilled by stage 1 (memory-mapped: page cache, not private memory)
            t0 = time.perf_counter()
            soff = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(sizes, out=soff[1:])
            hashes = (np.memmap(spill / "shingles.bin", dtype=np.uint64, mode="r",
                                shape=(shingles_total,)) if shingles_total
                      else np.zeros(0, dtype=np.uint64))
            sets = ShingleSets(hashes, soff, k)
            chunk = (max(1, int(pair_batch)) if pair_batch
                     else max(1 << 12, avail // (2 * _VERIFY_PAIR_BYTES)))
            n_cand = 0
            verify_chunks = 0
            for j in range(n_parts):
                if pair_counts[j] == 0:
                    continue
                for path in _split_pair_file(spill, j, pair_counts[j], nn, q_div, pair_cap):
                    pk = sorted_unique(np.fromfile(path, dtype=np.int64))
                    path.unlink()
                    n_cand += int(pk.size)
                    for c0 in range(0, pk.shape[0], chunk):
                        ck = pk[c0:c0 + chunk]
                        got = verify_pairs(sets, ck // nn, ck % nn)
                        got = got.select(got.jaccard >= t_thr)
                        verify_chunks += 1
                        for name in _PAIR_FIELDS:
                            with open(res / f"{name}.bin", "ab") as fh:
                                getattr(got, name).tofile(fh)
                        n_found += len(got)
                        del ck, got
                    del pk
            del sets, hashes
            stats["verify_chunks"] = verify_chunks
            timings["verify"] = time.perf_counter() - t0
        pairs = _map_pairs(res, n_found)
    finally:
        shutil.rmtree(spill, ignore_errors=True)
        if res is not None:
            shutil.rmtree(res, ignore_errors=True)
    stats["candidates"] = n_cand
    stats["verified_pairs"] = n_found
    stats["timings_s"] = {key: round(v, 4) for key, v in timings.items()}
    rep = budget.report()
    stats.update(peak_anon=rep["peak_anon"], peak_rss=rep["peak_rss"], hwm=rep["hwm"],
                 base_anon=rep["base_anon"], within_limit=rep["within_limit"])
    return OutOfCorePairs(pairs, n_cand, stats)


def store_token_hashes(path: str | os.PathLike) -> npt.NDArray[np.uint64]:
    """:func:`repetend.neardup.shingles.token_hashes` of a store's vocabulary,
    computed from the Arrow column (no Python string per token)."""
    import pyarrow as pa

    from ..corpus.store import open_store_vocab
    from . import _shingle_kernels as SK
    col = open_store_vocab(path)
    col = col.combine_chunks().cast(pa.large_string())
    if col.null_count:
        raise ParameterError(f"{path}: vocabulary has null tokens")
    bufs = col.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64, count=len(col) + 1, offset=col.offset * 8)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    with np.errstate(over="ignore"):
        return SK.fnv1a64_spans(data, np.ascontiguousarray(offsets))


def near_duplicates_store(store, config=None, *, memory_limit: int | str,
                          workdir: str | os.PathLike | None = None, **kwargs) -> OutOfCorePairs:
    """:func:`near_duplicates_ooc` on a token store with the fields of a
    :class:`repetend.neardup.config.NearDupConfig` (method ``minhash``, no stop
    words / stemming).

    ``store`` is a store directory (tokens memory-mapped, token hashes computed
    from the Arrow vocabulary column) or an open
    :class:`repetend.corpus.store.TokenStore`.
    """
    from ..corpus.store import TokenStore
    cfg = (config or NearDupConfig()).validate()
    if cfg.method != "minhash":
        raise ParameterError(f"the out-of-core path supports method 'minhash', got {cfg.method!r}")
    if cfg.stopwords or cfg.stem or cfg.lemmatize:
        raise ParameterError("the out-of-core path does not normalize tokens (stopwords/stem)")
    if isinstance(store, TokenStore):
        tokens, offsets, tok_hash = store.tokens, store.doc_offsets, token_hashes(store.vocab)
    else:
        from ..corpus.store import open_store_arrays
        tokens, offsets, _ = open_store_arrays(store)
        tok_hash = store_token_hashes(store)
    bands, rows = cfg.banding()
    return near_duplicates_ooc(
        tokens, offsets, tok_hash, memory_limit=memory_limit,
        threshold=cfg.threshold, shingle=cfg.shingle, num_perm=cfg.num_perm, bands=bands,
        rows=rows, hash=cfg.hash, scheme=cfg.scheme,
        bits=64 if cfg.bbits is None else int(cfg.bbits), seed=cfg.seed,
        max_bucket=cfg.max_bucket, min_shingles=cfg.min_shingles, workdir=workdir, **kwargs)
