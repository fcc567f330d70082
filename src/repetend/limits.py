"""The bounds of the numeric parameters, in one place: the configs' ``validate()``
and the command line's option ranges (shown in ``--help``) both read them, so the
API refuses what the command line refuses.

The bounds are far above any useful value; they are there so that a hostile or
mistyped number ends in one clear error instead of an allocation that cannot
succeed, an integer overflow inside a kernel, or hours of work.
"""

from __future__ import annotations

from .errors import ParameterError

__all__ = ["MAX_DOCS", "MAX_FILTER_BYTES", "MAX_GAP", "MAX_LEN", "MAX_LIST", "MAX_NUM_PERM",
           "MAX_SECONDS", "MAX_SEED", "MAX_SHINGLE", "SERVE_MAX", "check_seed"]

MAX_DOCS = 2**31 - 1          # document counts (σ, --limit, buckets): int32 document indices
MAX_LEN = 1_000_000           # phrase, seed and template lengths, in tokens
MAX_LIST = 1_000_000          # rows a listing shows (top phrases, report tables, query matches)
MAX_SHINGLE = 1024            # shingle size k, in tokens
MAX_GAP = 1024                # templates: the longest variable part, in tokens
MAX_NUM_PERM = 8192           # MinHash signature length K (and LSH bands, rows)
MAX_SEED = 2**64 - 1          # seeds are 64-bit unsigned
MAX_FILTER_BYTES = 2**40      # bloomspan's counting filter
MAX_SECONDS = 3600.0          # the service's time budgets
# the service's per-request budgets (repetend.serve.create_app)
SERVE_MAX = {"max_body_bytes": 2**30, "max_docs": 1_000_000, "max_tokens": 10**9,
             "max_matches": 10**8, "max_answer_bytes": 2**31 - 1, "max_segments": 10_000,
             "max_depth": 500,   # deeper JSON would reach Python's recursion limit
             "query_threads": 1000, "workers": 64}


def check_seed(seed) -> int:
    """*seed* as an int, or :class:`~repetend.errors.ParameterError` unless it is an
    integer in 0..2**64-1."""
    if isinstance(seed, bool) or not isinstance(seed, int) and not hasattr(seed, "__index__"):
        raise ParameterError(f"seed must be an integer in 0..2**64-1, got {seed!r}")
    if not 0 <= int(seed) <= MAX_SEED:
        raise ParameterError(f"seed must be in 0..2**64-1, got {seed}")
    return int(seed)
