"""Compiled kernels run over document ranges on plain threads (the MinHash
signatures and the shingle windows of :mod:`repetend.neardup`)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
import numpy.typing as npt

from .._arrays import even_bounds


def _work_bounds(offsets: np.ndarray, per_doc: int) -> npt.NDArray[np.int64]:
    """Document bounds of about 8 tasks per thread of about equal work
    (shingles + ``per_doc`` per document), so threads stay balanced on skewed sizes."""
    n = offsets.shape[0] - 1
    tasks = max(1, min(n, 8 * numba.get_num_threads()))
    work = (offsets[1:] - offsets[0]) + per_doc * np.arange(1, n + 1, dtype=np.int64)
    return np.unique(even_bounds(np.concatenate(([0], work)), tasks))


_PARALLEL_MIN_WORK = 1 << 17  # below this many shingles one thread signs everything


def _run_ranges(kernel, args: tuple, offsets: np.ndarray, per_doc: int) -> None:
    """Run ``kernel(*args, d0, d1)`` over document ranges of about equal work on
    ``numba.get_num_threads()`` threads (the kernels release the GIL).

    Plain threads that block on a join, not a ``prange`` team: on a busy machine
    the OpenMP workers spin while they wait for a descheduled peer, which cost
    up to 8x the CPU time of one thread here (benchmarks/bench_minhash.py).
    Ranges are handed out one at a time, so a slow thread does not hold back the rest.
    """
    n = offsets.shape[0] - 1
    threads = numba.get_num_threads()
    if threads <= 1 or n < 2 or int(offsets[-1] - offsets[0]) < _PARALLEL_MIN_WORK:
        kernel(*args, 0, n)
        return
    bounds = _work_bounds(offsets, per_doc)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for f in [pool.submit(_call, kernel, args, int(bounds[t]), int(bounds[t + 1]))
                  for t in range(bounds.shape[0] - 1)]:
            f.result()


def _call(kernel, args: tuple, d0: int, d1: int) -> None:
    with np.errstate(over="ignore"):  # numpy's error state is per thread (matters with JIT off)
        kernel(*args, d0, d1)
