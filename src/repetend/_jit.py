"""The one numba policy of the package.

Every compiled kernel is declared with :func:`jit` (serial) or :func:`pjit`
(``parallel=True``, for loops written with ``numba.prange``).  Both cache the
compiled machine code on disk, so a process pays compilation once per kernel
and per machine, not once per run.
"""

from __future__ import annotations

import numba
import numba.core.event

from ._compile_notice import compiling

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



class _CompileWatch(numba.core.event.Listener):
    """Tells :func:`repetend._compile_notice.compiling` when one of repetend's kernels starts
    compiling (a kernel loaded from numba's on-disk cache is not compiled and
    says nothing)."""

    def on_start(self, event):
        dispatcher = (event.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if module.startswith("repetend"):
            compiling()

    def on_end(self, event):
        pass


numba.core.event.register("numba:compile", _CompileWatch())
