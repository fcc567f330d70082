"""The one-time kernel compile, said out loud (without importing numba).

The kernels are compiled on first use and cached on disk, so the first run on a
machine (or after an upgrade) spends a minute or more compiling.  The CLI calls
:func:`announce` so that the user sees one line when that happens instead of a
silent stall; :mod:`repetend._jit` reports every compile start here.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["NOTICE", "announce", "compiled"]

NOTICE = ("compiling repetend's kernels once for this machine (about 1–3 min on 2 cores; "
          "later runs reuse them; `repetend warmup` does it ahead of time) …")

_say: Callable[[str], None] | None = None
_said = False
_compiled = 0


def announce(say: Callable[[str], None] | None) -> None:
    """Have ``say(NOTICE)`` called once per process, at the first kernel compile
    (None: stay silent)."""
    global _say
    _say = say


def compiling() -> None:
    """Called by :mod:`repetend._jit` when one of the kernels starts compiling."""
    global _said, _compiled
    _compiled += 1
    if _say is not None and not _said:
        _said = True
        _say(NOTICE)


def compiled() -> int:
    """How many kernel compilations this process has started."""
    return _compiled
