"""The hash functions every kernel shares (compiled).

One definition each, so that shingles, MinHash, LSH band keys and the index
agree bit for bit: SplitMix64's output function (Steele, Lea & Flood 2014) and
FNV-1a 64 (Fowler, Noll & Vo).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

__all__ = ["FNV_OFFSET", "FNV_PRIME", "splitmix64"]

GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(0x100000001B3)


@jit
def splitmix64(x):
    """SplitMix64 output function: ``mix(x + 0x9E3779B97F4A7C15)``."""
    z = x + GAMMA
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))
