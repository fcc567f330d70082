"""A progress bar on stderr (tqdm), or nothing when quiet: one for every command."""

from __future__ import annotations

__all__ = ["Progress"]


class Progress:
    """A tqdm bar on stderr, or nothing with quiet."""

    def __init__(self, desc: str, total=None, unit="it", quiet=False):
        self.bar = None
        if not quiet:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit=unit, unit_scale=True, leave=False,
                            dynamic_ncols=True)

    def update(self, n=1):
        if self.bar is not None:
            self.bar.update(n)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()
        return False
