"""Dropping pages of a read-only memory-mapped array that a pass has consumed.

A pass that reads a memory-mapped array once from front to back (shingling the
token stream of a store) leaves every page it touched resident until the process
ends; those clean file pages count in the process's resident set and its peak
(``VmHWM``).  :func:`drop_read_pages` tells the kernel (``madvise(MADV_DONTNEED)``)
that a range will not be needed soon: the pages leave the resident set and are
read back from the page cache if touched again.  Only arrays backed by a
*read-only* file mapping (``np.memmap`` mode ``"r"``) are advised, where this
changes no value; for any other array it does nothing.
"""

from __future__ import annotations

import mmap

import numpy as np

__all__ = ["drop_read_pages"]

_PAGE = mmap.PAGESIZE


def _read_only_mapping(arr: np.ndarray):
    base = arr
    while base is not None:
        if isinstance(base, np.memmap):
            mm = getattr(base, "_mmap", None)
            return mm if base.mode == "r" and isinstance(mm, mmap.mmap) else None
        base = getattr(base, "base", None)
    return None


def drop_read_pages(arr: np.ndarray, start: int, stop: int) -> None:
    """Drop the whole pages of elements ``arr[start:stop]`` of a 1-d contiguous array
    backed by a read-only file mapping from the resident set (the page holding
    ``stop`` stays: the next pass may read it).  No-op for other arrays, on
    platforms without ``madvise``, or when the range holds no whole page."""
    if stop <= start or arr.ndim != 1 or not arr.flags.c_contiguous:
        return
    if not hasattr(mmap, "MADV_DONTNEED"):
        return
    mm = _read_only_mapping(arr)
    if mm is None:
        return
    mm_addr = np.frombuffer(mm, dtype=np.uint8, count=1).ctypes.data
    addr = arr.ctypes.data
    lo = addr - mm_addr + int(start) * arr.itemsize
    hi = addr - mm_addr + int(stop) * arr.itemsize
    lo -= lo % _PAGE
    hi -= hi % _PAGE
    lo = max(lo, 0)
    hi = min(hi, len(mm) - len(mm) % _PAGE)
    if hi > lo:
        try:
            mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
        except (OSError, ValueError):   # advice only: the values are the file's either way
            pass
