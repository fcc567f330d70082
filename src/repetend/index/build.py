"""From documents to segment arrays, and from a batch to its candidates in the index.

The stages are those of :func:`repetend.neardup.find.find_near_duplicates`
(shingles → MinHash signatures → band keys → candidates → exact verification),
reusing its functions; what is new is that the other side of a candidate pair
lives in sorted, memory-mapped band tables of earlier segments.

Equality with one batch run
    A pair (x, y) is a candidate of ``find_near_duplicates`` iff x and y share
    a band key (or, near-empty, an identical set) and the bucket has fewer than
    ``max_bucket`` members.  Here a new document is looked up in every
    segment's band tables (all members of the matching bucket are examined,
    up to :data:`LOOKUP_LIMIT` per bucket) and the new documents among
    themselves go through :func:`~repetend.neardup.lsh.lsh_candidates` with the
    same settings.  So when no bucket of the whole corpus reaches
    ``max_bucket``, the verified pairs found incrementally are exactly those of
    one run over the whole corpus; with huge buckets the index examines *more*
    old-new pairs than the batch run's star + chain (a superset, up to the
    lookup limit).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .._arrays import sorted_unique
from ..corpus.store import TokenStore
from ..errors import ParameterError
from ..neardup import NearDupConfig, band_keys, set_fingerprints
from ..neardup.lsh import lsh_candidates, safe_min_shingles
from ..neardup.minhash import minhash_signatures
from ..neardup.pairs import Pairs, verify_pairs
from ..neardup.shingles import ShingleSets, shingle_sets, token_hashes
from . import _index_kernels as K
from .segments import SegmentData, band_tables

__all__ = ["Batch", "LOOKUP_LIMIT", "prepare_batch", "lookup", "verify_cross", "batch_pairs"]

LOOKUP_LIMIT = 10_000  # members examined per matching bucket of one segment


@dataclass(slots=True)
class Batch:
    """A batch of documents ready to be looked up or stored."""

    sets: ShingleSets
    signatures: np.ndarray
    keys: np.ndarray          # uint64 [n, bands]
    fingerprints: np.ndarray  # uint64 [n]
    banded: np.ndarray        # bool [n]: size >= effective min_shingles
    tiny: np.ndarray          # bool [n]: 1 <= size < effective min_shingles
    n_tokens: np.ndarray      # int64 [n]

    @property
    def n(self) -> int:
        return int(self.sets.offsets.shape[0] - 1)


def effective_min_shingles(cfg: NearDupConfig) -> int:
    return safe_min_shingles(int(cfg.min_shingles), float(cfg.threshold))


def prepare_batch(store: TokenStore, cfg: NearDupConfig, bands: int, rows: int) -> Batch:
    """Shingles, signatures, band keys and set fingerprints of every document of *store*."""
    tok_hash = token_hashes(store.vocab)
    sets = shingle_sets(store.tokens, store.doc_offsets, tok_hash, int(cfg.shingle))
    return prepare_sets(sets, np.diff(store.doc_offsets).astype(np.int64), cfg, bands, rows)


def prepare_sets(sets: ShingleSets, n_tokens: np.ndarray, cfg: NearDupConfig, bands: int,
                 rows: int) -> Batch:
    bits = 64 if cfg.bbits is None else int(cfg.bbits)
    sig = minhash_signatures(sets, int(cfg.num_perm), seed=cfg.seed, hash=cfg.hash, bits=bits,
                             scheme=cfg.scheme)
    return _batch_from(sets, sig.values, n_tokens, cfg, bands, rows)


def _batch_from(sets, values, n_tokens, cfg, bands, rows) -> Batch:
    n = int(sets.offsets.shape[0] - 1)
    sizes = np.diff(sets.offsets)
    eff = effective_min_shingles(cfg)
    keys = band_keys(values, np.arange(n, dtype=np.int64), bands, rows)
    fp = set_fingerprints(sets)
    return Batch(sets, values, keys, fp, sizes >= eff, (sizes >= 1) & (sizes < eff),
                 np.asarray(n_tokens, np.int64))


def postings_table(sets: ShingleSets, max_df: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Shingle postings of a segment: ``keys[1, P]`` sorted shingle hashes and
    ``rows[1, P]`` their documents, without the shingles found in more than
    ``max_df`` documents of the segment (template shingles; their count is returned)."""
    sizes = np.diff(sets.offsets)
    docs = np.repeat(np.arange(sizes.size, dtype=np.int32), sizes)
    order = np.argsort(sets.hashes, kind="stable")
    keys = np.asarray(sets.hashes)[order]
    rows = docs[order]
    if keys.size:
        starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
        df = np.diff(np.concatenate((starts, [keys.size])))
        drop = np.repeat(df > max_df, df)
        dropped = int(np.count_nonzero(df > max_df))
        keys, rows = keys[~drop], rows[~drop]
    else:
        dropped = 0
    return keys[None, :].copy(), rows[None, :].copy(), dropped


def segment_data(batch: Batch, docs: pa.Table, text: np.ndarray, text_offsets: np.ndarray,
                 postings_max_df: int | None = None) -> SegmentData:
    """The arrays of a new segment holding *batch* (with shingle postings when
    ``postings_max_df`` is given)."""
    banded = np.flatnonzero(batch.banded).astype(np.int64)
    bk, br = band_tables(batch.keys, banded)
    tiny = np.flatnonzero(batch.tiny).astype(np.int64)
    tk, tr = band_tables(batch.fingerprints[:, None], tiny)
    if postings_max_df is not None:
        pk, pr, _ = postings_table(batch.sets, int(postings_max_df))
    else:
        pk, pr = np.empty((1, 0), np.uint64), np.empty((1, 0), np.int32)
    return SegmentData(np.ascontiguousarray(batch.sets.hashes, np.uint64),
                       np.ascontiguousarray(batch.sets.offsets, np.int64),
                       np.ascontiguousarray(batch.signatures), bk, br, tk, tr, docs,
                       np.ascontiguousarray(text, np.uint8),
                       np.ascontiguousarray(text_offsets, np.int64), pk, pr)


def lookup_postings(segments, batch: Batch, max_df: int, min_shared: int, *, check=None):
    """(batch doc, global doc) pairs sharing at least ``min_shared`` shingles (template
    shingles excluded), from the segments' shingle postings.  *check* (optional) is
    called before each segment (it raises to stop: a deadline)."""
    stats = {"truncated_buckets": 0, "largest_bucket": 0}
    h = np.ascontiguousarray(batch.sets.hashes, np.uint64)[:, None]
    owner = np.repeat(np.arange(batch.n, dtype=np.int64), np.diff(batch.sets.offsets))
    valid = np.ones(h.shape[0], dtype=np.bool_)
    keys_all = []
    for seg in segments:
        if check is not None:
            check()
        d = seg.data
        if d.post_keys.shape[1] == 0:
            continue
        si, r = _ranges(d.post_keys, d.post_rows, h, valid, int(max_df), stats)
        if si.size:
            keys_all.append((owner[si], r + seg.base))
    if not keys_all:
        z = np.empty(0, np.int64)
        return z, z.copy()
    q = np.concatenate([k[0] for k in keys_all])
    g = np.concatenate([k[1] for k in keys_all])
    total = int(g.max() + 1)
    key, counts = np.unique(q * np.int64(total) + g, return_counts=True)
    key = key[counts >= int(min_shared)]
    return key // total, key % total


_PROBE = ("The quick brown fox jumps over the lazy dog, 12 times; доставка бесплатно при "
          "заказе от 3000 рублей. 東京タワー the quick brown fox")


def hashing_check(cfg: NearDupConfig, unit: str, lang: str | None, bands: int, rows: int) -> str:
    """A checksum of what tokenizer, shingles, MinHash and banding make of a fixed
    text.  Stored in the manifest and compared on open: an index is only valid with
    the hash functions that built it (a change in any of them would silently stop
    old and new documents from matching)."""
    import zlib

    from ..corpus.tokenizer import tokenize_batch

    tb = tokenize_batch([_PROBE, _PROBE[:40]], unit=unit, lang=lang)
    h = np.ascontiguousarray(tb.hashes, np.uint64)
    sets = shingle_sets(np.arange(h.size, dtype=np.int32), tb.doc_offsets, h, int(cfg.shingle))
    b = prepare_sets(sets, np.diff(tb.doc_offsets), cfg, bands, rows)
    c = 0
    for arr in (h, sets.hashes, np.ascontiguousarray(b.signatures), b.keys, b.fingerprints):
        c = zlib.crc32(np.ascontiguousarray(arr).tobytes(), c)
    return f"{c:08x}"


def _ranges(table_keys, table_rows, qkeys, qvalid, cap, stats):
    nq, nb = qkeys.shape
    lo = np.empty((nq, nb), dtype=np.int64)
    hi = np.empty((nq, nb), dtype=np.int64)
    if table_keys.shape[1] == 0 or nq == 0:
        z = np.empty(0, np.int64)
        return z, z.copy()
    K.table_ranges(table_keys, np.ascontiguousarray(qkeys), qvalid, lo, hi)
    m = hi - lo
    stats["truncated_buckets"] += int(np.count_nonzero(m > cap))
    stats["largest_bucket"] = max(stats["largest_bucket"], int(m.max()) if m.size else 0)
    counts = K.range_counts(lo, hi, np.int64(cap))
    off = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    q = np.empty(int(off[-1]), dtype=np.int64)
    r = np.empty(int(off[-1]), dtype=np.int64)
    K.range_fill(table_rows, lo, hi, np.int64(cap), off, q, r)
    return q, r


def lookup(segments, batch: Batch, cap: int = LOOKUP_LIMIT, *,
           check=None) -> tuple[np.ndarray, np.ndarray, dict]:
    """Candidate pairs (batch document, global index document) from every segment's
    band and tiny tables; distinct, sorted.  *check* (optional) is called before
    each segment (it raises to stop: a deadline)."""
    stats = {"truncated_buckets": 0, "largest_bucket": 0}
    qs, gs = [], []
    for seg in segments:
        if check is not None:
            check()
        d = seg.data
        for tk, tr, qk, qv in ((d.band_keys, d.band_rows, batch.keys, batch.banded),
                               (d.tiny_keys, d.tiny_rows, batch.fingerprints[:, None], batch.tiny)):
            q, r = _ranges(tk, tr, qk, qv, cap, stats)
            if q.size:
                qs.append(q)
                gs.append(r + seg.base)
    if not qs:
        z = np.empty(0, np.int64)
        return z, z.copy(), stats
    q = np.concatenate(qs)
    g = np.concatenate(gs)
    total = int(max(g.max() + 1, 1))
    key = sorted_unique(q * np.int64(total) + g)
    return key // total, key % total, stats


def _locate(segments, g: np.ndarray):
    bases = np.array([s.base for s in segments], dtype=np.int64)
    si = np.searchsorted(bases, g, side="right") - 1
    return si, g - bases[si]


def gather(segments, g: np.ndarray) -> ShingleSets:
    """The shingle sets of global documents *g* (distinct, sorted) as one ShingleSets."""
    si, local = _locate(segments, g)
    sizes = np.empty(g.size, dtype=np.int64)
    for s in np.unique(si):
        m = si == s
        off = segments[s].data.shingle_offsets
        sizes[m] = off[local[m] + 1] - off[local[m]]
    out_off = np.zeros(g.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=out_off[1:])
    out = np.empty(int(out_off[-1]), dtype=np.uint64)
    for s in np.unique(si):
        m = np.flatnonzero(si == s)
        d = segments[s].data
        K.gather_sets(d.shingles, d.shingle_offsets, np.ascontiguousarray(local[m]),
                      np.ascontiguousarray(out_off[m]), out)
    return ShingleSets(out, out_off, 0)


def verify_cross(segments, batch: Batch, q: np.ndarray, g: np.ndarray) -> Pairs:
    """Exact verification of (batch doc q, index doc g) pairs.

    Returns :class:`Pairs` with ``a`` = batch document, ``b`` = global index
    document, ``containment_ab`` = share of the batch document inside the
    index document, ``containment_ba`` the other way round (not sorted a < b).
    """
    if q.size == 0:
        return Pairs.empty()
    uniq, pos = np.unique(g, return_inverse=True)
    old = gather(segments, uniq)
    nb = batch.n
    hashes = np.concatenate([batch.sets.hashes, old.hashes])
    offsets = np.concatenate([batch.sets.offsets, old.offsets[1:] + batch.sets.offsets[-1]])
    both = ShingleSets(hashes, offsets, batch.sets.k)
    p = verify_pairs(both, q, pos.reshape(-1) + nb)  # a = batch doc < b = nb + position
    return Pairs(p.a, uniq[p.b - nb], p.jaccard, p.containment_ab, p.containment_ba)


def batch_pairs(batch: Batch, cfg: NearDupConfig, bands: int, rows: int) -> tuple[Pairs, dict]:
    """Verified candidates among the documents of one batch, exactly as
    :func:`~repetend.neardup.find.find_near_duplicates` finds them."""
    sizes = batch.sets.sizes.astype(np.int64)
    if cfg.max_bucket is not None and cfg.max_bucket != 0 and int(cfg.max_bucket) < 3:
        raise ParameterError(f"max_bucket must be None, 0 or >= 3, got {cfg.max_bucket}")
    cand = lsh_candidates(batch.signatures, sizes, bands, rows, max_bucket=cfg.max_bucket,
                          min_shingles=int(cfg.min_shingles), sets=batch.sets,
                          threshold=float(cfg.threshold))
    return verify_pairs(batch.sets, cand.a, cand.b), cand.stats
