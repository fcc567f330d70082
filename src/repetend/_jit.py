"""The one numba policy of the package.

Every compiled kernel is declared with :func:`jit` (serial) or :func:`pjit`
(``parallel=True``, for loops written with ``numba.prange``).  Both cache the
compiled machine code on disk, so a process pays compilation once per kernel
and per machine, not once per run.
"""

from __future__ import annotations

import numba

__all__ = ["jit", "pjit", "prange"]

prange = numba.prange


def jit(fn=None, **kwargs):
    """``numba.njit(cache=True, nogil=True)`` with the package defaults."""
    opts = {"cache": True, "nogil": True, **kwargs}
    if fn is None:
        return lambda f: numba.njit(**opts)(f)
    return numba.njit(**opts)(fn)


def pjit(fn=None, **kwargs):
    """Like :func:`jit` with ``parallel=True``: use ``prange`` in the kernel."""
    return jit(fn, parallel=True, **kwargs)
