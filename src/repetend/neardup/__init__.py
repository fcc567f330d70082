"""Near-duplicate documents: shingles, MinHash, LSH, exact verification, clusters.

The entry point is :func:`find_near_duplicates` with a :class:`NearDupConfig`;
the stages are public too (:func:`minhash_signatures`, :func:`lsh_candidates`,
:func:`verify_pairs`, :func:`clusters_from_pairs`).
"""

from __future__ import annotations

from .api import NearDupConfig, NearDupResult, find_near_duplicates
from .clusters import Clusters, clusters_from_pairs, containment_pairs
from .lsh import LSHCandidates, LSHParams, lsh_candidates, lsh_params, lsh_threshold, s_curve
from .minhash import MinHashSignatures, estimate, minhash_signatures, standard_error
from .pairs import Pairs, verify_pairs
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
    "clusters_from_pairs",
    "containment_pairs",
    "estimate",
    "find_near_duplicates",
    "lsh_candidates",
    "lsh_params",
    "lsh_threshold",
    "minhash_signatures",
    "s_curve",
    "shingle_sets",
    "standard_error",
    "token_hashes",
    "verify_pairs",
])
