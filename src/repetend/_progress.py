"""Progress on stderr for every command: a tqdm bar on a terminal, one line per
stage otherwise (a log file gets no ``\\r`` updates), nothing when quiet."""

from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


def _scaled(n: float, unit: str) -> str:
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= factor:
            return f"{n / factor:.1f} {prefix}{unit}"
    return f"{n:g} {unit}"


class Progress:
    """A tqdm bar on stderr when stderr is a terminal; else, at the end, one line
    ``desc: N unit in S s``; nothing with quiet."""

    def __init__(self, desc: str, total=None, unit="it", quiet=False, stream=None):
        self.bar = None
        self.desc, self.unit, self.quiet = desc, unit, quiet
        self.stream = sys.stderr if stream is None else stream
        self.count = 0
        self.t0 = time.perf_counter()
        if not quiet and self._is_terminal():
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit=unit, unit_scale=True, leave=False,
                            dynamic_ncols=True, file=self.stream)

    def _is_terminal(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        try:
            return bool(isatty and isatty())
        except ValueError:  # a closed stream
            return False

    def update(self, n=1):
        self.count += n
        if self.bar is not None:
            self.bar.update(n)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if self.bar is not None:
            self.bar.close()
        elif not self.quiet and exc_type is None:
            seconds = time.perf_counter() - self.t0
            print(f"{self.desc}: {_scaled(self.count, self.unit)} in {seconds:.1f} s",
                  file=self.stream, flush=True)
        return False
