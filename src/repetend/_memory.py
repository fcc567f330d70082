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

import re
import threading

from .errors import ParameterError

__all__ = ["MemoryBudget", "parse_size", "rss_now", "format_size"]

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
