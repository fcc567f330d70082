"""The near-duplicate entry point: one config, one call, one result.

``find_near_duplicates(store_or_sets, NearDupConfig(...))`` runs the stages of
seed 004 / seed 003 — shingles → (signatures → band buckets →) candidates →
exact verification → clusters — with one of four methods:

``minhash`` (default)
    MinHash signatures (:mod:`.minhash`), LSH banding (:mod:`.lsh`), every
    candidate verified by exact Jaccard on the full shingle sets: no false
    positive reaches the output; a pair is lost only with probability
    1 − P(J) (S-curve), or when a huge bucket was capped (counted).
``allpairs``
    Exact all-pairs with size and prefix filters (``repetend.neardup.allpairs``).
``broder``
    Broder's mod-m sampled shingles and sort-based clustering (``repetend.neardup.broder``).
``exact``
    Canonical-form checksums (``repetend.neardup.exact``): identical documents only;
    the threshold does not apply.
``simhash``
    64-bit SimHash fingerprints of the shingles (:mod:`.simhash`), all pairs within
    Hamming distance ``hamming`` by permuted tables (Manku et al. 2007), every
    candidate verified by exact Jaccard like the other methods; ``max_bucket``
    caps groups of identical fingerprints (star + chain, as for LSH buckets).

Normalization (``stopwords``, ``stem``; :mod:`.normalize`) rewrites the token
stream through a vocabulary remap before shingles are formed; with both None the
shingles are exactly those of the raw tokens.
"""

from __future__ import annotations

import resource
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from .._atomic import write_json, write_jsonl, write_parquet
from ..errors import ParameterError, RepetendError
from .clusters import Clusters, clusters_from_pairs, containment_pairs
from .lsh import check_banding, lsh_candidates, lsh_params, lsh_threshold, s_curve
from .minhash import DEFAULT_SEED, minhash_signatures
from .pairs import Pairs, verify_pairs
from .shingles import ShingleSets, shingle_sets, token_hashes

__all__ = ["NearDupConfig", "NearDupResult", "find_near_duplicates"]

Method = Literal["minhash", "allpairs", "broder", "exact", "simhash"]
METHODS = ("minhash", "allpairs", "broder", "exact", "simhash")
CANDIDATES_LIMIT = 200_000


@dataclass(slots=True)
class NearDupConfig:
    """Parameters of a near-duplicate search (shared by the local and Spark paths).

    ``bands``/``rows`` None → chosen by :func:`repetend.neardup.lsh.lsh_params`
    (P(threshold) >= ``min_recall``).  ``bbits`` None → full 64-bit signature
    values.  ``containment`` is the threshold of the containment pairs reported
    apart (max containment >= it, Jaccard < ``threshold``).

    ``stopwords`` (a language such as ``ru``/``english`` or a word-list file) and
    ``stem`` (a Snowball language) normalize the tokens before shingling
    (:mod:`repetend.neardup.normalize`).  ``hamming`` is the SimHash distance k,
    ``simhash_blocks`` the table design's block count (None: chosen for k and the
    corpus size), ``simhash_weights`` ``binary`` (1 per distinct shingle) or
    ``count`` (occurrences in the document).
    """

    method: Method = "minhash"
    threshold: float = 0.8
    shingle: int = 5
    num_perm: int = 128
    bands: int | None = None
    rows: int | None = None
    hash: Literal["splitmix64", "crc32"] = "splitmix64"
    scheme: Literal["minhash", "oph"] = "oph"
    bbits: int | None = None
    seed: int = DEFAULT_SEED
    max_bucket: int | None = 200
    min_shingles: int = 3
    containment: float = 0.8
    min_recall: float = 0.98
    exact_hash: Literal["xxh64", "crc32"] = "xxh64"
    stopwords: str | None = None
    stem: str | None = None
    hamming: int = 3
    simhash_blocks: int | None = None
    simhash_weights: Literal["binary", "count"] = "binary"
    memory_limit: int | str | None = None   # minhash out of core under this much private memory

    def validate(self) -> "NearDupConfig":
        if self.method not in METHODS:
            raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if not 0.0 < float(self.threshold) <= 1.0:
            raise ParameterError(f"threshold must be in (0, 1], got {self.threshold}")
        if not 0.0 < float(self.containment) <= 1.0:
            raise ParameterError(f"containment threshold must be in (0, 1], got {self.containment}")
        if int(self.shingle) < 1:
            raise ParameterError(f"shingle size k must be >= 1, got {self.shingle}")
        if int(self.num_perm) < 1:
            raise ParameterError(f"num_perm must be >= 1, got {self.num_perm}")
        if self.bbits is not None and not 1 <= int(self.bbits) <= 64:
            raise ParameterError(f"bbits must be in 1..64, got {self.bbits}")
        if self.hash not in ("splitmix64", "crc32"):
            raise ParameterError(f"hash must be 'splitmix64' or 'crc32', got {self.hash!r}")
        if self.scheme not in ("minhash", "oph"):
            raise ParameterError(f"scheme must be 'minhash' or 'oph', got {self.scheme!r}")
        if self.exact_hash not in ("xxh64", "crc32"):
            raise ParameterError(f"exact_hash must be 'xxh64' or 'crc32', got {self.exact_hash!r}")
        if self.max_bucket is not None and self.max_bucket != 0 and int(self.max_bucket) < 3:
            raise ParameterError(f"max_bucket must be None, 0 or >= 3, got {self.max_bucket}")
        if int(self.min_shingles) < 1:
            raise ParameterError(f"min_shingles must be >= 1, got {self.min_shingles}")
        if not 0.0 <= float(self.min_recall) <= 1.0:
            raise ParameterError(f"min_recall must be in [0, 1], got {self.min_recall}")
        check_banding(int(self.num_perm), self.bands, self.rows)
        for name in ("stopwords", "stem"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v.strip()):
                raise ParameterError(f"{name} must be a non-empty string or None, got {v!r}")
        if self.method == "exact" and (self.stopwords or self.stem):
            raise ParameterError("method 'exact' checksums the verbatim text: stopwords/stem do not apply")
        if not 0 <= int(self.hamming) <= 32:
            raise ParameterError(f"hamming must be in 0..32, got {self.hamming}")
        if self.simhash_blocks is not None and not int(self.hamming) + 1 <= int(self.simhash_blocks) <= 64:
            raise ParameterError(f"simhash_blocks must be in {int(self.hamming) + 1}..64, got {self.simhash_blocks}")
        if self.simhash_weights not in ("binary", "count"):
            raise ParameterError(f"simhash_weights must be 'binary' or 'count', got {self.simhash_weights!r}")
        return self

    def banding(self) -> tuple[int, int]:
        """(bands, rows): the user's, completed, or the chooser's."""
        b, r = check_banding(int(self.num_perm), self.bands, self.rows)
        if b is None:
            p = lsh_params(self.threshold, self.num_perm, min_recall=self.min_recall)
            b, r = p.bands, p.rows
        return int(b), int(r)


def _peak_rss() -> int:
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


@dataclass(slots=True)
class NearDupResult:
    """Verified pairs, candidates with their true Jaccard, clusters, containment, summary.

    ``candidates`` holds every candidate the method examined with its exact
    resemblance and containments, and ``candidate_estimate`` the MinHash
    estimate of each (NaN for methods without signatures) — what the report
    needs to put real pairs on the S-curve and draw the chord picture.
    """

    pairs: Pairs
    candidates: Pairs
    candidate_estimate: npt.NDArray[np.float64]
    clusters: Clusters
    containment: Pairs
    summary: dict
    config: NearDupConfig
    doc_ids: object = None   # pyarrow string column of the store, a list, or None
    lengths: npt.NDArray[np.int64] | None = None
    signatures: object = field(default=None, repr=False)

    def _ids(self, idx: np.ndarray):
        """Document ids of indices *idx* as an Arrow array (the index as text without ids)."""
        import pyarrow as pa

        idx = np.asarray(idx, dtype=np.int64)
        if self.doc_ids is None:
            return pa.array(idx, pa.int64()).cast(pa.string())
        ids = self.doc_ids
        if isinstance(ids, (pa.Array, pa.ChunkedArray)):
            out = ids.take(pa.array(idx, pa.int64()))
            return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out
        return pa.array([ids[int(i)] for i in idx], pa.string())

    def _pairs_table(self, p: Pairs):
        import pyarrow as pa

        return pa.table({
            "a": self._ids(p.a),
            "b": self._ids(p.b),
            "a_index": pa.array(p.a, pa.int64()),
            "b_index": pa.array(p.b, pa.int64()),
            "jaccard": pa.array(p.jaccard, pa.float64()),
            "containment_ab": pa.array(p.containment_ab, pa.float64()),
            "containment_ba": pa.array(p.containment_ba, pa.float64()),
            "method": pa.array([self.config.method] * len(p), pa.string()),
        })

    def to_arrow(self, what: Literal["pairs", "clusters", "containment", "candidates"] = "pairs",
                 *, candidates_limit: int | None = None):
        """One result table as a pyarrow Table (schemas in ``docs/neardup.md``)."""
        import pyarrow as pa

        if what == "pairs":
            return self._pairs_table(self.pairs)
        if what == "containment":
            return self._pairs_table(self.containment)
        if what == "clusters":
            c = self.clusters
            docs = np.flatnonzero(c.cluster_id >= 0)
            cid = c.cluster_id[docs]
            return pa.table({
                "doc_index": pa.array(docs, pa.int64()),
                "doc_id": self._ids(docs),
                "cluster_id": pa.array(cid, pa.int64()),
                "cluster_size": pa.array(c.sizes[cid], pa.int64()),
                "is_representative": pa.array(c.is_representative()[docs], pa.bool_()),
            })
        if what == "candidates":
            p = self.candidates
            idx = np.arange(len(p))
            if candidates_limit is not None and len(p) > candidates_limit:
                rng = np.random.default_rng(0)
                idx = np.sort(rng.choice(len(p), size=candidates_limit, replace=False))
            return pa.table({
                "a_index": pa.array(p.a[idx], pa.int64()),
                "b_index": pa.array(p.b[idx], pa.int64()),
                "jaccard": pa.array(p.jaccard[idx], pa.float64()),
                "estimate": pa.array(self.candidate_estimate[idx], pa.float64()),
            })
        raise ParameterError(f"unknown table {what!r}: pairs, clusters, containment or candidates")

    def to_pandas(self, what: Literal["pairs", "clusters", "containment", "candidates"] = "pairs"):
        """One result table as a pandas DataFrame (needs pandas)."""
        from ..errors import require

        require("pandas", "pandas", "NearDupResult.to_pandas")
        return self.to_arrow(what).to_pandas()

    def write(self, directory: str | Path, format: Literal["parquet", "jsonl"] = "parquet",
              candidates_limit: int = CANDIDATES_LIMIT) -> dict[str, Path]:
        """Write ``pairs``, ``clusters``, ``containment``, ``candidates`` and
        ``summary.json`` into *directory*, each file atomically.  At most
        ``candidates_limit`` candidate rows are written (a uniform sample with a
        fixed seed when there are more; the summary says so)."""
        if format not in ("parquet", "jsonl"):
            raise ParameterError(f"format must be parquet or jsonl, got {format!r}")
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        written: dict[str, Path] = {}
        for name in ("pairs", "clusters", "containment", "candidates"):
            table = self.to_arrow(name, candidates_limit=candidates_limit)
            target = d / f"{name}.{format}"
            if format == "parquet":
                write_parquet(target, table)
            else:
                write_jsonl(target, table)
            written[name] = target
        summary = dict(self.summary)
        summary["candidates_written"] = min(len(self.candidates), int(candidates_limit))
        summary["candidates_sampled"] = len(self.candidates) > int(candidates_limit)
        write_json(d / "summary.json", summary)
        written["summary"] = d / "summary.json"
        return written


def _lazy(module: str, name: str, method: str):
    import importlib

    try:
        mod = importlib.import_module(f"repetend.neardup.{module}")
        return getattr(mod, name)
    except (ImportError, AttributeError) as exc:
        raise RepetendError(
            f"method {method!r} needs repetend.neardup.{module}.{name}, which is not available "
            f"in this installation ({exc})") from exc


def _with_estimates(sig, p: Pairs) -> np.ndarray:
    if sig is None or len(p) == 0:
        return np.full(len(p), np.nan)
    return sig.estimate(p.a, p.b)


def _minhash_summary(cfg: NearDupConfig, t: float, bands: int, rows: int, lsh: dict) -> dict:
    """The MinHash-LSH part of a run's summary (in memory, out of core, Spark)."""
    grid = np.round(np.arange(1, 21) * 0.05, 2)
    return {
        "num_perm": int(cfg.num_perm), "bits": 64 if cfg.bbits is None else int(cfg.bbits),
        "hash": cfg.hash, "scheme": cfg.scheme, "bands": bands, "rows": rows,
        "lsh_threshold": lsh_threshold(bands, rows),
        "p_at_threshold": s_curve(t, bands, rows),
        "s_curve": [[float(x), float(p)] for x, p in zip(grid, s_curve(grid, bands, rows))],
        "lsh": lsh,
        "capped_buckets": int(lsh.get("capped_buckets", 0)),
        "pairs_not_enumerated": int(lsh.get("pairs_not_enumerated", 0)),
    }


def _outcome_summary(cfg: NearDupConfig, n_candidates: int, pairs: Pairs, clusters,
                     contain: Pairs, timings: dict) -> dict:
    """The result part of a run's summary: pairs, clusters, containment, time, memory."""
    return {
        "candidates": int(n_candidates),
        "verified_pairs": len(pairs),
        "clusters": clusters.n_clusters,
        "documents_in_clusters": clusters.documents_in_clusters,
        "duplicates_to_drop": clusters.duplicates,
        "largest_cluster": int(clusters.sizes.max()) if clusters.n_clusters else 0,
        "containment_pairs": len(contain),
        "containment_threshold": float(cfg.containment),
        "timings_s": {k: round(v, 4) for k, v in timings.items()},
        "peak_rss_bytes": _peak_rss(),
    }


def _out_of_core(data, cfg: NearDupConfig, say) -> NearDupResult:
    """MinHash + LSH out of core (:mod:`repetend.neardup.outofcore`): signatures per
    shard of the memory-mapped store, band keys spilled and sorted on disk, candidates
    verified in chunks; the same pairs as in memory. Containment pairs are looked for
    among the verified pairs only, and the candidates are not kept."""
    from .outofcore import near_duplicates_store

    if not (hasattr(data, "tokens") and hasattr(data, "doc_offsets")):
        raise ParameterError("memory_limit needs a TokenStore (the corpus is read from disk)")
    if cfg.method != "minhash":
        raise ParameterError(f"memory_limit works with method 'minhash', got {cfg.method!r}")
    t0 = time.perf_counter()
    say(f"MinHash + LSH out of core (memory limit {cfg.memory_limit})")
    res = near_duplicates_store(data.path if getattr(data, "path", None) else data,
                                replace(cfg, memory_limit=None), memory_limit=cfg.memory_limit)
    n = int(data.n_docs)
    lengths = data.doc_lengths.astype(np.int64)
    pairs = res.pairs.sorted()
    t = float(cfg.threshold)
    clusters = clusters_from_pairs(n, pairs.a, pairs.b, lengths)
    contain = containment_pairs(pairs, t, float(cfg.containment)).sorted()
    bands, rows = cfg.banding()
    st = res.stats
    # the keys of the in-memory summary (the CLI, the report and scan read them)
    lsh = {key: st.get(key, 0) for key in ("buckets_with_pairs", "capped_buckets",
                                           "pairs_not_enumerated", "largest_bucket",
                                           "near_empty_documents", "banded_documents",
                                           "empty_documents", "raw_pairs")}
    lsh.update(max_bucket=st.get("max_bucket"), min_shingles=st.get("min_shingles"),
               candidates=int(res.candidates))
    summary = {"method": cfg.method, "parameters": asdict(cfg), "documents": n,
               "shingle_k": int(cfg.shingle), "shingles": int(st.get("shingles", 0)),
               "threshold": t, **_minhash_summary(cfg, t, bands, rows, lsh),
               "out_of_core": res.stats,
               **_outcome_summary(cfg, res.candidates, pairs, clusters, contain,
                                  {"total": time.perf_counter() - t0})}
    return NearDupResult(pairs, pairs, np.full(len(pairs), np.nan), clusters, contain, summary,
                         cfg, data.docs.column("doc_id"), lengths, None)


def find_near_duplicates(data, config: NearDupConfig | None = None, *, progress=None,
                         **overrides) -> NearDupResult:
    """Find near-duplicate documents: verified pairs, clusters, containment pairs.

    Parameters
    ----------
    data : TokenStore or ShingleSets
        A token store (shingled here with ``config.shingle``) or ready shingle sets
        (their own k is used; method ``exact`` needs a store).
    config : NearDupConfig, optional
        Parameters; keyword ``overrides`` replace single fields.
    progress : callable, optional
        Called with a short message at the start of each stage.

    Returns
    -------
    NearDupResult

    Notes
    -----
    Seeds 001/003/004; Broder (1997) for resemblance and containment; Indyk &
    Motwani (1998) and Rajaraman & Ullman (MMDS ch. 3) for banding; Li & König
    (2010) for b-bit signatures.  Verification is exact, so the output has no
    false positives; MinHash-LSH recall at resemblance s is P(s) (S-curve).
    """
    cfg = replace(config or NearDupConfig(), **overrides).validate()
    say = progress if progress is not None else (lambda msg: None)
    if cfg.memory_limit is not None:
        return _out_of_core(data, cfg, say)
    if cfg.method == "simhash":   # before any work: warns when k cannot reach the threshold
        from .simhash import check_threshold
        check_threshold(float(cfg.threshold), int(cfg.hamming))
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    store = None
    norm = None
    stream = None
    normalizing = bool(cfg.stopwords or cfg.stem)
    if isinstance(data, ShingleSets):
        if normalizing:
            raise ParameterError("stopwords/stem need a TokenStore (ShingleSets are already formed)")
        sets = data
        lengths = sets.sizes.astype(np.int64)
        doc_ids = None
        n_tokens = None
    elif hasattr(data, "tokens") and hasattr(data, "doc_offsets"):
        store = data
        tokens, offsets, vocab = store.tokens, store.doc_offsets, store.vocab
        lengths = store.doc_lengths.astype(np.int64)
        n_tokens = lengths
        if normalizing:
            from .normalize import normalize_tokens, normalize_vocabulary

            say(f"normalizing {len(vocab):,} vocabulary entries (stopwords={cfg.stopwords}, stem={cfg.stem})")
            norm = normalize_vocabulary(vocab, stopwords=cfg.stopwords, stem=cfg.stem)
            tokens, offsets = normalize_tokens(tokens, offsets, norm.remap)
            vocab = norm.vocab
            n_tokens = np.diff(offsets)
            timings["normalize"] = time.perf_counter() - t0
        say(f"shingling {store.n_docs:,} documents (k = {cfg.shingle})")
        tok_hash = token_hashes(vocab)
        sets = shingle_sets(tokens, offsets, tok_hash, int(cfg.shingle))
        stream = (tokens, offsets, tok_hash)
        doc_ids = store.docs.column("doc_id")
    else:
        raise ParameterError(f"expected a TokenStore or ShingleSets, got {type(data).__name__}")
    timings["shingles"] = time.perf_counter() - t0 - timings.get("normalize", 0.0)
    n = int(sets.offsets.shape[0] - 1)
    sizes = sets.sizes.astype(np.int64)
    t = float(cfg.threshold)
    summary: dict = {"method": cfg.method, "parameters": asdict(cfg), "documents": n,
                     "shingle_k": int(sets.k), "shingles": int(sets.hashes.shape[0]),
                     "threshold": t}
    if norm is not None:
        summary["normalization"] = {
            "stopwords": norm.stopwords, "stem": norm.stem,
            "vocabulary": norm.types_before, "normalized_vocabulary": norm.types_after,
            "stopword_types": norm.stopword_types,
            "tokens_before": int(store.n_tokens), "tokens_after": int(n_tokens.sum()),
        }
    sig = None
    tc = time.perf_counter()
    if cfg.method == "minhash":
        bands, rows = cfg.banding()
        bits = 64 if cfg.bbits is None else int(cfg.bbits)
        say(f"MinHash signatures (K = {cfg.num_perm}) of {sets.hashes.shape[0]:,} shingles")
        sig = minhash_signatures(sets, int(cfg.num_perm), seed=cfg.seed, hash=cfg.hash, bits=bits,
                                 scheme=cfg.scheme)
        timings["signatures"] = time.perf_counter() - tc
        tl = time.perf_counter()
        say(f"LSH: {bands} bands x {rows} rows")
        cand = lsh_candidates(sig, sizes, bands, rows, max_bucket=cfg.max_bucket,
                              min_shingles=int(cfg.min_shingles), sets=sets, threshold=t)
        timings["lsh"] = time.perf_counter() - tl
        tv = time.perf_counter()
        say(f"verifying {len(cand):,} candidates exactly")
        candidates = verify_pairs(sets, cand.a, cand.b)
        timings["verify"] = time.perf_counter() - tv
        pairs = candidates.select(candidates.jaccard >= t)
        summary.update(_minhash_summary(cfg, t, bands, rows, cand.stats),
                       signature_bytes=sig.nbytes)
    elif cfg.method == "allpairs":
        all_pairs = _lazy("allpairs", "all_pairs", "allpairs")
        say("exact all-pairs join")
        candidates = all_pairs(sets, t)
        pairs = candidates.select(candidates.jaccard >= t)
        timings["pairs"] = time.perf_counter() - tc
    elif cfg.method == "simhash":
        from .simhash import hamming_candidates, simhash_fingerprints

        say(f"SimHash fingerprints ({cfg.simhash_weights} weights)")
        if cfg.simhash_weights == "count":
            if stream is None:
                raise ParameterError("simhash_weights='count' needs a TokenStore (shingle counts)")
            fps = simhash_fingerprints(weights="count", tokens=stream[0], doc_offsets=stream[1],
                                       tok_hash=stream[2], k=int(sets.k))
        else:
            fps = simhash_fingerprints(sets, weights="binary")
        timings["signatures"] = time.perf_counter() - tc
        tl = time.perf_counter()
        say(f"Hamming <= {cfg.hamming} pairs by permuted tables")
        hc = hamming_candidates(fps, int(cfg.hamming), valid=sizes > 0, blocks=cfg.simhash_blocks,
                                max_group=cfg.max_bucket, sizes=sizes)
        timings["tables"] = time.perf_counter() - tl
        tv = time.perf_counter()
        say(f"verifying {len(hc):,} candidates exactly")
        candidates = verify_pairs(sets, hc.a, hc.b)
        timings["verify"] = time.perf_counter() - tv
        pairs = candidates.select(candidates.jaccard >= t)
        summary.update({"hamming": int(cfg.hamming), "simhash": hc.stats,
                        "simhash_weights": cfg.simhash_weights, "fingerprint_bytes": int(fps.nbytes),
                        "capped_buckets": hc.stats["capped_groups"],
                        "pairs_not_enumerated": hc.stats["pairs_not_enumerated"]})
    elif cfg.method == "broder":
        broder_pairs = _lazy("broder", "broder_pairs", "broder")
        if n_tokens is None:
            raise ParameterError("method 'broder' needs a TokenStore (document lengths in words)")
        say("Broder sampled shingles")
        candidates = broder_pairs(sets, n_tokens, t, verify=True)
        pairs = candidates.select(candidates.jaccard >= t)
        timings["pairs"] = time.perf_counter() - tc
    else:  # exact
        if store is None:
            raise ParameterError("method 'exact' needs a TokenStore (it checksums the text)")
        groups = _lazy("exact", "exact_duplicate_groups", "exact")
        label = np.asarray(groups(store, hash=cfg.exact_hash), dtype=np.int64)
        if label.shape[0] != n:
            raise RepetendError(f"exact_duplicate_groups returned {label.shape[0]} labels for {n} documents")
        dup = np.flatnonzero(label != np.arange(n))
        candidates = verify_pairs(sets, label[dup], dup)
        pairs = candidates
        timings["pairs"] = time.perf_counter() - tc
    pairs = pairs.sorted()
    tk = time.perf_counter()
    clusters = clusters_from_pairs(n, pairs.a, pairs.b, lengths)
    contain = containment_pairs(candidates, t, float(cfg.containment)).sorted()
    timings["clusters"] = time.perf_counter() - tk
    estimate = _with_estimates(sig, candidates)
    timings["total"] = time.perf_counter() - t0
    summary.update(_outcome_summary(cfg, len(candidates), pairs, clusters, contain, timings))
    summary.setdefault("capped_buckets", 0)
    return NearDupResult(pairs, candidates, estimate, clusters, contain, summary, cfg,
                         doc_ids, lengths, sig)
