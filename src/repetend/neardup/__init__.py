"""Near-duplicate documents: shingles, MinHash, LSH, exact verification, clusters.

The entry point is :func:`find_near_duplicates` (:mod:`.find`) with a
:class:`NearDupConfig` (:mod:`.config`), returning a :class:`NearDupResult`
(:mod:`.result`, which owns the format of a dups directory); the stages are
public too (:func:`minhash_signatures`, :func:`lsh_candidates`,
:func:`verify_pairs`, :func:`clusters_from_pairs`).

The per-document steps other engines run on their own partitions (Spark, the
index) are public here as well: :func:`band_keys`, :func:`set_fingerprints`
and :func:`bucket_pairs` (:mod:`.lsh`), :func:`storage_dtype` (:mod:`.minhash`),
and the summary builders :func:`minhash_summary` and :func:`outcome_summary`
(:mod:`.find`).
"""

from __future__ import annotations

from .clusters import Clusters, clusters_from_pairs, containment_pairs
from .config import NearDupConfig
from .find import find_near_duplicates, minhash_summary, outcome_summary
from .lsh import (LSHCandidates, LSHParams, band_keys, banding_params, bucket_pairs,
                  check_jaccard_threshold, lsh_candidates, lsh_params, lsh_threshold, s_curve,
                  set_fingerprints)
from .minhash import (MinHashSignatures, estimate, minhash_signatures, standard_error,
                      storage_dtype)
from .pairs import Pairs, verify_pairs
from .result import NearDupResult
from .shingles import ShingleSets, shingle_sets, token_hashes

__all__ = sorted([
    "Clusters",
    "LSHCandidates",
    "LSHParams",
    "MinHashSignatures",
    "NearDupConfig",
    "NearDupResult",
    "Pairs",
    "ShingleSets",
    "band_keys",
    "banding_params",
    "bucket_pairs",
    "check_jaccard_threshold",
    "clusters_from_pairs",
    "containment_pairs",
    "estimate",
    "find_near_duplicates",
    "lsh_candidates",
    "lsh_params",
    "lsh_threshold",
    "minhash_signatures",
    "minhash_summary",
    "outcome_summary",
    "s_curve",
    "set_fingerprints",
    "shingle_sets",
    "standard_error",
    "storage_dtype",
    "token_hashes",
    "verify_pairs",
])
