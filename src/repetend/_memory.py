"""Memory budgets for the out-of-core paths: parse ``"8G"``, measure resident memory.

Resident memory is read from ``/proc/self/status`` (Linux):

* ``RssAnon``: private memory the process allocated (numpy arrays, numba
  buffers) -- what a budget must bound;
* ``RssFile``: pages of memory-mapped files (the token store) that happen to
  be resident.  They are clean page cache the kernel drops under pressure, so
  they are reported but not charged to the budget;
* ``VmHWM``: the kernel's peak of the two together over the process lifetime.

:class:`MemoryBudget` samples these in a background thread while it is active
and keeps the peaks (``peak_anon``, ``peak_rss``).
"""

from __future__ import annotations

import mmap
import re
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

import numpy as _np

from .errors import ParameterError, RepetendError

__all__ = ["MemoryBudget", "MemoryLimitExceeded", "StageWatchdog", "drop_read_pages", "format_size",
           "parse_size", "release_free_heap", "rss_now", "substage"]

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10,
          "M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20,
          "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30,
          "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*$")


def parse_size(value: int | float | str | None) -> int | None:
    """Bytes of a size given as an int or a string such as ``"8G"``, ``"512MB"``,
    ``"1.5GiB"`` (binary units: K = 1024).  ``None`` stays ``None`` (no limit)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ParameterError(f"memory size must be a number of bytes or '8G', got {value!r}")
    if isinstance(value, (int, float)):
        if value <= 0:
            raise ParameterError(f"memory size must be positive, got {value!r}")
        return int(value)
    m = _SIZE.match(str(value))
    if not m or m.group(2).upper() not in _UNITS:
        raise ParameterError(f"cannot read memory size {value!r} (examples: 800M, 8G, 1.5GiB)")
    n = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    if n <= 0:
        raise ParameterError(f"memory size must be positive, got {value!r}")
    return n


def format_size(n: int | float) -> str:
    """``1536 -> '1.5K'``, binary units."""
    n = float(n)
    for u in ("B", "K", "M", "G", "T"):
        if abs(n) < 1024 or u == "T":
            return f"{n:.0f}{u}" if u == "B" else f"{n:.1f}{u}"
        n /= 1024
    return f"{n:.1f}T"


def rss_now() -> dict:
    """Current ``anon``, ``file``, ``rss`` and lifetime peak ``hwm`` in bytes
    (zeros where ``/proc`` is unavailable)."""
    out = {"anon": 0, "file": 0, "rss": 0, "hwm": 0}
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(("RssAnon:", "RssFile:", "VmRSS:", "VmHWM:", "RssShmem:")):
                    k, v = line.split(":", 1)
                    kb = int(v.split()[0]) * 1024
                    key = {"RssAnon": "anon", "RssFile": "file", "VmRSS": "rss",
                           "VmHWM": "hwm", "RssShmem": "shmem"}[k]
                    out[key] = kb
    except OSError:  # pragma: no cover - non-Linux
        import resource
        out["hwm"] = out["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return out


class MemoryBudget:
    """A memory limit and a sampler of the resident memory while it is active.

    Parameters
    ----------
    limit : int or str or None
        Bytes (or ``"8G"``) the private memory of a run may use; None = no limit.
    interval : float
        Seconds between samples of ``/proc/self/status``.

    Use as a context manager; ``report()`` gives the limit and the peaks.  The
    sampled peaks can miss a spike shorter than ``interval``; ``hwm`` (the
    kernel's exact peak of anon + file pages) bounds them from above.
    """

    def __init__(self, limit: int | str | None = None, interval: float = 0.02):
        self.limit = parse_size(limit)
        self.interval = float(interval)
        self.base = rss_now()
        self.peak_anon = self.base["anon"]
        self.peak_rss = self.base["rss"]
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- sampling ------------------------------------------------------------
    def sample(self) -> dict:
        r = rss_now()
        self.peak_anon = max(self.peak_anon, r["anon"])
        self.peak_rss = max(self.peak_rss, r["rss"])
        return r

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self) -> "MemoryBudget":
        self.base = rss_now()
        self.peak_anon = self.base["anon"]
        self.peak_rss = self.base["rss"]
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="repetend-rss", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()

    # -- planning ------------------------------------------------------------
    def working_bytes(self, default: int) -> int:
        """Bytes a run may allocate: the limit less what the process already
        holds privately (the interpreter, numba, imported modules); ``default``
        without a limit."""
        if self.limit is None:
            return int(default)
        return max(1, self.limit - self.base["anon"])

    def report(self) -> dict:
        r = rss_now()
        return {"memory_limit": self.limit, "base_anon": self.base["anon"],
                "peak_anon": self.peak_anon, "peak_rss": max(self.peak_rss, r["rss"]),
                "hwm": r["hwm"],
                "within_limit": None if self.limit is None else self.peak_anon <= self.limit}


# -- the per-stage watchdog ------------------------------------------------------------

class MemoryLimitExceeded(RepetendError, MemoryError):
    """A stage's private memory went over ``--memory-limit``; the run stopped
    and wrote nothing partial (``stage``, ``limit``, ``peak`` in bytes)."""

    def __init__(self, stage: str, limit: int, peak: int, label: str | None = None):
        shown = label if label is not None else format_size(limit)
        super().__init__(
            f"stage {stage} exceeded --memory-limit {shown} (peak {format_size(peak)} of "
            f"private memory); the scan stopped and wrote nothing partial: raise "
            f"--memory-limit, or skip the stage")
        self.stage, self.limit, self.peak = stage, int(limit), int(peak)


class _WatchdogStop(BaseException):
    """Raised asynchronously in the watched thread (a BaseException, like
    KeyboardInterrupt, so that no ``except Exception`` swallows it)."""


_ACTIVE: list["StageWatchdog"] = []


@contextmanager
def substage(name: str) -> Iterator[None]:
    """Name a part of the current stage (``"templates"`` inside ``"phrases"``) for
    the active :class:`StageWatchdog`, if any (a no-op without one)."""
    if not _ACTIVE:
        yield
        return
    with _ACTIVE[-1].stage(name):
        yield


class StageWatchdog:
    """Stop a run whose private memory goes over *limit*, naming the stage.

    ``with StageWatchdog(limit) as wd: with wd.stage("dups"): ...``.  A sampler
    thread reads ``RssAnon`` every *interval* seconds; the first sample over
    the limit raises :class:`_WatchdogStop` in the watched thread (at its next
    Python bytecode, so after a running compiled kernel returns), which the
    stage turns into :class:`MemoryLimitExceeded`.  With ``hard_exit`` (the CLI)
    a stage that is still running *grace* seconds after the stop was asked, or
    whose memory reaches ``hard_factor`` × limit first, ends the process:
    *on_hard_exit* (remove partial output) runs, the message goes to stderr,
    exit code 3 -- a run never takes the machine down.

    Without a limit it only measures: ``peaks`` holds each stage's peak
    private memory (bytes), reported by :meth:`report`.
    """

    def __init__(self, limit: int | str | None, *, label: str | None = None,
                 interval: float = 0.02, hard_exit: bool = False, grace: float = 10.0,
                 hard_factor: float = 1.5, on_hard_exit: Callable[[], None] | None = None):
        self.limit = parse_size(limit)
        self.label = label if label is not None else (None if limit is None else str(limit))
        self.interval = float(interval)
        self.hard_exit, self.grace, self.hard_factor = bool(hard_exit), float(grace), hard_factor
        self.on_hard_exit = on_hard_exit
        self.peaks: dict[str, int] = {}
        self.tripped: tuple[str, int] | None = None
        self._stack: list[str] = []
        self._tid = threading.get_ident()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._tripped_at = 0.0

    # -- stages ------------------------------------------------------------------
    @property
    def current(self) -> str | None:
        return self._stack[-1] if self._stack else None

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self._stack.append(name)
        self.peaks[name] = max(self.peaks.get(name, 0), rss_now()["anon"])
        try:
            yield
            self._check()
        except _WatchdogStop:
            self._raise()
        except BaseException:
            if self.tripped is not None:   # an error caused by the stop (or while it was due)
                self._raise()
            raise
        finally:
            self._stack.pop()

    def _check(self) -> None:
        r = self.sample()
        if self.limit is not None and self.tripped is None and r > self.limit:
            self.tripped = (self.current or "?", r)
        if self.tripped is not None:
            self._raise()

    def _raise(self):
        stage, peak = self.tripped or (self.current or "?", rss_now()["anon"])
        self.tripped = (stage, peak)
        raise MemoryLimitExceeded(stage, self.limit or 0, max(peak, self.peaks.get(stage, 0)),
                                  self.label) from None

    # -- sampling ----------------------------------------------------------------
    def sample(self) -> int:
        a = rss_now()["anon"]
        for name in self._stack:
            if a > self.peaks.get(name, 0):
                self.peaks[name] = a
        return a

    def _run(self) -> None:
        import ctypes

        while not self._stop.wait(self.interval):
            a = self.sample()
            if self.limit is None or not self._stack:
                continue
            if self.tripped is None and a > self.limit:
                self.tripped = (self.current or "?", a)
                self._tripped_at = time.monotonic()
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._tid),
                                                           ctypes.py_object(_WatchdogStop))
            elif self.tripped is not None:
                stage, peak = self.tripped
                self.tripped = (stage, max(peak, a))
                if self.hard_exit and (time.monotonic() - self._tripped_at > self.grace
                                       or a > self.hard_factor * self.limit):
                    self._die()

    def _die(self) -> None:  # pragma: no cover - ends the process (tested in a subprocess)
        import os
        import sys

        stage, peak = self.tripped or ("?", 0)
        try:
            if self.on_hard_exit is not None:
                self.on_hard_exit()
        finally:
            msg = MemoryLimitExceeded(stage, self.limit or 0, peak, self.label)
            sys.stderr.write(f"error: {msg} (stopped hard: the stage did not return)\n")
            sys.stderr.flush()
            os._exit(3)

    def __enter__(self) -> "StageWatchdog":
        self._tid = threading.get_ident()
        self._stop.clear()
        _ACTIVE.append(self)
        self._thread = threading.Thread(target=self._run, name="repetend-watchdog", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        import ctypes

        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        # a stop asked in the last instant and not yet delivered: cancelled
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._tid), None)
        if self in _ACTIVE:
            _ACTIVE.remove(self)

    def report(self) -> dict:
        return {"memory_limit": self.limit,
                "stage_peak_anon": {k: int(v) for k, v in self.peaks.items()},
                "within_limit": None if self.limit is None else self.tripped is None}


# -- dropping consumed pages of read-only memory maps -----------------------------
# Dropping pages of a read-only memory-mapped array that a pass has consumed.
#
# A pass that reads a memory-mapped array once from front to back (shingling the
# token stream of a store) leaves every page it touched resident until the process
# ends; those clean file pages count in the process's resident set and its peak
# (``VmHWM``).  :func:`drop_read_pages` tells the kernel (``madvise(MADV_DONTNEED)``)
# that a range will not be needed soon: the pages leave the resident set and are
# read back from the page cache if touched again.  Only arrays backed by a
# *read-only* file mapping (``np.memmap`` mode ``"r"``) are advised, where this
# changes no value; for any other array it does nothing.

_PAGE = mmap.PAGESIZE


def _read_only_mapping(arr: _np.ndarray):
    base = arr
    while base is not None:
        if isinstance(base, _np.memmap):
            mm = getattr(base, "_mmap", None)
            return mm if base.mode == "r" and isinstance(mm, mmap.mmap) else None
        base = getattr(base, "base", None)
    return None


def drop_read_pages(arr: _np.ndarray, start: int, stop: int) -> None:
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
    mm_addr = _np.frombuffer(mm, dtype=_np.uint8, count=1).ctypes.data
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


def release_free_heap() -> None:
    """Give the C heap's free pages back to the system (glibc ``malloc_trim``).

    glibc raises its mmap threshold after large frees and serves the next ones from
    the heap, which then keeps the pages: freed arrays stay private memory of the
    process that every later stage adds to (the near-duplicate stream's rebuilt sets
    and chunks, a reused Spark worker's last one-task stage).  No-op where glibc is
    absent."""
    global _TRIM
    if _TRIM is None:
        try:
            import ctypes

            _TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _TRIM = False
    if _TRIM:
        _TRIM(0)


_TRIM = None
