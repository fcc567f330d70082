"""Compiled kernels of the synthetic generators (arrays and scalars only)."""

from __future__ import annotations

import numpy as np

from .._jit import jit

__all__ = ["EMPTY", "insert_new", "spell_words"]

EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)       # an empty slot; never a code (codes < 26**8)


@jit
def insert_new(draws, table, out, filled):
    """Append to ``out[filled:]``, in order, each draw not yet in the hash set *table*
    (adding it there), until *out* is full; return the new fill count.

    *table* is an open-addressing set of ``2**k`` uint64 slots (``EMPTY`` = free) kept
    across calls, with fewer members than slots.  The codes are uniform random draws,
    so their low bits folded with higher ones already make a good slot (and there is no
    multiplication to overflow when the JIT is disabled)."""
    mask = np.uint64(table.shape[0] - 1)
    fold = np.uint64(19)
    n_out = out.shape[0]
    for i in range(draws.shape[0]):
        if filled == n_out:
            break
        c = draws[i]
        h = (c ^ (c >> fold)) & mask
        while True:
            t = table[h]
            if t == EMPTY:
                table[h] = c
                out[filled] = c
                filled += 1
                break
            if t == c:
                break
            h = (h + np.uint64(1)) & mask
    return filled


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
