"""The near-duplicate entry point: one config, one call, one result.

``find_near_duplicates(store_or_sets, NearDupConfig(...))`` runs the stages of
Broder 1997 and the MinHash/LSH article (docs/references.md) — shingles →
(signatures → band buckets →) candidates → exact verification → clusters —
with one of five methods:

``minhash`` (default)
    MinHash signatures (:mod:`.minhash`), LSH banding (:mod:`.lsh`), every
    candidate verified by exact Jaccard on the full shingle sets: no false
    positive reaches the output; a pair is lost only with probability
    1 − P(J) (S-curve), or when a huge bucket was capped (counted).  With
    ``memory_limit`` the run is out of core (:mod:`.outofcore`).
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

The parameters are a :class:`~repetend.neardup.config.NearDupConfig`, the result
a :class:`~repetend.neardup.result.NearDupResult`; :func:`minhash_summary` and
:func:`outcome_summary` build the parts of the summary that every MinHash-LSH
engine (in memory, out of core, Spark) shares.
"""

from __future__ import annotations

import resource
import time
from dataclasses import asdict, replace

import numpy as np

from ..errors import ParameterError, RepetendError
from .clusters import clusters_from_pairs, containment_pairs
from .config import NearDupConfig
from .lsh import lsh_candidates, lsh_threshold, s_curve, safe_min_shingles
from .minhash import minhash_signatures
from .pairs import Pairs, verify_pairs
from .result import NearDupResult
from .shingles import ShingleSets, shingle_sets, token_hashes
from .streamed import streamed_signatures, verify_streamed

__all__ = ["find_near_duplicates", "minhash_summary", "outcome_summary"]


def _peak_rss() -> int:
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


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


def minhash_summary(cfg: NearDupConfig, t: float, bands: int, rows: int, lsh: dict) -> dict:
    """The MinHash-LSH part of a run's summary (in memory, out of core, Spark).

    Parameters
    ----------
    cfg : NearDupConfig
        The run's config (signature length, bits, hash, scheme).
    t : float
        The resemblance threshold.
    bands, rows : int
        The banding used.
    lsh : dict
        The banding's counters (:attr:`repetend.neardup.lsh.LSHCandidates.stats`
        or their out-of-core / Spark equivalents), kept under ``"lsh"``.

    Returns
    -------
    dict
        Signature settings, banding, S-curve threshold, P(t), the S-curve on a
        grid of 0.05, the counters, and the capped buckets and pairs not
        enumerated at the top level.
    """
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


def outcome_summary(cfg: NearDupConfig, n_candidates: int, pairs: Pairs, clusters,
                    contain: Pairs, timings: dict) -> dict:
    """The result part of a run's summary: pairs, clusters, containment, time, memory.

    Parameters
    ----------
    cfg : NearDupConfig
        The run's config (its containment threshold).
    n_candidates : int
        Candidate pairs examined.
    pairs : Pairs
        The verified pairs.
    clusters : Clusters
        The clusters of *pairs*.
    contain : Pairs
        The containment pairs.
    timings : dict of str to float
        Seconds per stage, rounded to 0.1 ms in the summary.

    Returns
    -------
    dict
        Counts of candidates, pairs, clusters, documents in clusters, duplicates
        to drop, the largest cluster, containment pairs, the timings and the
        peak resident memory of the process.
    """
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
               "threshold": t, **minhash_summary(cfg, t, bands, rows, lsh),
               "out_of_core": res.stats,
               **outcome_summary(cfg, res.candidates, pairs, clusters, contain,
                                 {"total": time.perf_counter() - t0})}
    return NearDupResult(pairs, pairs, np.full(len(pairs), np.nan), clusters, contain, summary,
                         cfg, data.docs.column("doc_id"), lengths, None)


def _verified(sets, a, b, t: float, timings: dict, say):
    """Candidate pairs (a[i], b[i]) with their exact Jaccard, and those at least *t*."""
    tv = time.perf_counter()
    say(f"verifying {len(a):,} candidates exactly")
    candidates = verify_pairs(sets, a, b)
    timings["verify"] = time.perf_counter() - tv
    return candidates, candidates.select(candidates.jaccard >= t)


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
    The shingling articles and the MinHash/LSH article for the stages; Broder
    (1997) for resemblance and containment; Indyk & Motwani (1998) and
    Rajaraman & Ullman (MMDS ch. 3) for banding; Li & König (2010) for b-bit
    signatures.  Verification is exact, so the output has no
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
    sets = None
    streamed = None
    normalizing = bool(cfg.stopwords or cfg.stem or cfg.lemmatize)
    if isinstance(data, ShingleSets):
        if normalizing:
            raise ParameterError("stopwords/stem/lemmatize need a TokenStore (ShingleSets are already formed)")
        sets = data
        lengths = sets.sizes.astype(np.int64)
        doc_ids = None
        n_tokens = None
    elif hasattr(data, "tokens") and hasattr(data, "doc_offsets"):
        store = data
        tokens, offsets = store.tokens, store.doc_offsets
        # an opened store's vocabulary stays its Arrow column unless normalization reads
        # the strings: the shingles hash the column's UTF-8 bytes (no Python strings)
        source = getattr(store, "vocab_source", None)
        vocab = store.vocab if normalizing or source is None else source()
        lengths = store.doc_lengths.astype(np.int64)
        n_tokens = lengths
        if normalizing:
            from .normalize import normalize_tokens, normalize_vocabulary
            from .normalize_lang import per_language

            say(f"normalizing {len(vocab):,} vocabulary entries (stopwords={cfg.stopwords}, stem={cfg.stem}"
                + (f", lemmatize={cfg.lemmatize})" if cfg.lemmatize else ")"))
            if per_language(cfg.stopwords, cfg.stem, cfg.lemmatize):
                from ..corpus.lang import store_languages
                from .normalize_lang import needs_languages, normalize_by_language, normalize_tokens_rows

                langs = (store_languages(store, say)
                         if needs_languages(cfg.stopwords, cfg.stem, cfg.lemmatize) else None)
                norm = normalize_by_language(vocab, tokens, offsets, langs,
                                             stopwords=cfg.stopwords, stem=cfg.stem,
                                             lemmatize=cfg.lemmatize, lemma_keys=cfg.lemma_keys)
                tokens, offsets = normalize_tokens_rows(tokens, offsets, norm.doc_row, norm.remap)
            else:
                norm = normalize_vocabulary(vocab, stopwords=cfg.stopwords, stem=cfg.stem)
                tokens, offsets = normalize_tokens(tokens, offsets, norm.remap)
            vocab = norm.vocab
            n_tokens = np.diff(offsets)
            timings["normalize"] = time.perf_counter() - t0
        say(f"shingling {store.n_docs:,} documents (k = {cfg.shingle})")
        tok_hash = token_hashes(vocab)
        stream = (tokens, offsets, tok_hash)
        if cfg.method == "minhash":
            # streamed (:mod:`.streamed`): shingled and signed a chunk of documents
            # at a time, the candidates verified on their documents' sets rebuilt;
            # the same values as with all the sets held
            say(f"MinHash signatures (K = {cfg.num_perm}), a chunk of documents at a time")
            streamed = streamed_signatures(
                tokens, offsets, tok_hash, int(cfg.shingle), int(cfg.num_perm), seed=cfg.seed,
                hash=cfg.hash, bits=64 if cfg.bbits is None else int(cfg.bbits),
                scheme=cfg.scheme,
                fingerprint_below=safe_min_shingles(int(cfg.min_shingles), float(cfg.threshold)))
        else:
            sets = shingle_sets(tokens, offsets, tok_hash, int(cfg.shingle))
        doc_ids = store.docs.column("doc_id")
    else:
        raise ParameterError(f"expected a TokenStore or ShingleSets, got {type(data).__name__}")
    timings["shingles"] = time.perf_counter() - t0 - timings.get("normalize", 0.0)
    if streamed is not None:
        timings["shingles"] -= streamed.timings["signatures"]   # signed while shingling
        n = int(streamed.sizes.shape[0])
        sizes = streamed.sizes
        k_used, n_shingles = int(cfg.shingle), streamed.shingles
    else:
        n = int(sets.offsets.shape[0] - 1)
        sizes = sets.sizes.astype(np.int64)
        k_used, n_shingles = int(sets.k), int(sets.hashes.shape[0])
    t = float(cfg.threshold)
    summary: dict = {"method": cfg.method, "parameters": asdict(cfg), "documents": n,
                     "shingle_k": k_used, "shingles": n_shingles,
                     "threshold": t}
    if norm is not None:
        summary["normalization"] = {
            "stopwords": norm.stopwords, "stem": norm.stem,
            "vocabulary": norm.types_before, "normalized_vocabulary": norm.types_after,
            "stopword_types": norm.stopword_types,
            "tokens_before": int(store.n_tokens), "tokens_after": int(n_tokens.sum()),
        }
        if hasattr(norm, "rows"):   # per-language (normalize_lang)
            summary["normalization"].update(lemmatize=norm.lemmatize, rows=norm.rows,
                                            lemmatized_types=norm.lemmatized_types,
                                            analysed_pairs=norm.analysed)
    sig = None
    tc = time.perf_counter()
    if cfg.method == "minhash":
        bands, rows = cfg.banding()
        bits = 64 if cfg.bbits is None else int(cfg.bbits)
        if streamed is not None:
            sig = streamed.signatures
            timings["signatures"] = streamed.timings["signatures"]
        else:
            say(f"MinHash signatures (K = {cfg.num_perm}) of {sets.hashes.shape[0]:,} shingles")
            sig = minhash_signatures(sets, int(cfg.num_perm), seed=cfg.seed, hash=cfg.hash,
                                     bits=bits, scheme=cfg.scheme)
            timings["signatures"] = time.perf_counter() - tc
        tl = time.perf_counter()
        say(f"LSH: {bands} bands x {rows} rows")
        cand = lsh_candidates(sig, sizes, bands, rows, max_bucket=cfg.max_bucket,
                              min_shingles=int(cfg.min_shingles), sets=sets, threshold=t,
                              fingerprints=None if streamed is None else streamed.fingerprints)
        timings["lsh"] = time.perf_counter() - tl
        if streamed is not None:
            tv = time.perf_counter()
            say(f"verifying {len(cand.a):,} candidates exactly (their documents shingled again)")
            candidates = verify_streamed(*stream, int(cfg.shingle), cand.a, cand.b)
            pairs = candidates.select(candidates.jaccard >= t)
            timings["verify"] = time.perf_counter() - tv
        else:
            candidates, pairs = _verified(sets, cand.a, cand.b, t, timings, say)
        summary.update(minhash_summary(cfg, t, bands, rows, cand.stats),
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
        candidates, pairs = _verified(sets, hc.a, hc.b, t, timings, say)
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
    summary.update(outcome_summary(cfg, len(candidates), pairs, clusters, contain, timings))
    summary.setdefault("capped_buckets", 0)
    return NearDupResult(pairs, candidates, estimate, clusters, contain, summary, cfg,
                         doc_ids, lengths, sig)
