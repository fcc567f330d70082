"""Compiled kernels of the synthetic generators (arrays and scalars only)."""

from __future__ import annotations

import numpy as np

from .._jit import jit

__all__ = ["first_occurrences", "spell_words"]

_EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)      # never a code: codes are below 26**8


@jit
def first_occurrences(codes, table_bits):
    """``keep[i]`` is True iff ``codes[i]`` does not occur in ``codes[:i]``
    (an open-addressing hash set of ``2**table_bits`` slots; needs fewer codes than slots).

    The codes are uniform random draws, so their low bits (folded with higher ones) are
    already a good slot; no multiplication, hence no overflow with the JIT disabled."""
    n = codes.shape[0]
    size = np.int64(1) << table_bits
    mask = np.uint64(size - 1)
    fold = np.uint64(19)
    table = np.full(size, _EMPTY, dtype=np.uint64)
    keep = np.empty(n, dtype=np.bool_)
    for i in range(n):
        c = codes[i]
        h = (c ^ (c >> fold)) & mask
        while True:
            t = table[h]
            if t == _EMPTY:
                table[h] = c
                keep[i] = True
                break
            if t == c:
                keep[i] = False
                break
            h = (h + np.uint64(1)) & mask
    return keep


@jit
def spell_words(codes, width, out):
    """Row ``i`` of ``out`` (uint8 ``[n, width + 1]``) := code ``i`` in base 26 as
    ``width`` lowercase ASCII letters, then a space."""
    n = codes.shape[0]
    base = np.uint64(26)
    for i in range(n):
        c = codes[i]
        for j in range(width - 1, -1, -1):
            out[i, j] = np.uint8(97 + c % base)
            c //= base
        out[i, width] = 32
