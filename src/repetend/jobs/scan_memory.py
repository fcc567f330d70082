"""``--memory-limit`` for every stage of ``scan``: what each stage does with it,
an estimate per stage from the corpus size, and the watchdog that stops a stage
that goes over it (:class:`repetend._memory.StageWatchdog`).

How each stage keeps the limit:

* ``phrases`` (mining): out of core under the limit (``phrases.outofcore``);
* ``templates``: planned from an estimate (default layer, merge-only, or
  skipped: ``phrases.find._template_plan``), then watched;
* ``dups`` with ``minhash``: in memory when twice its estimate fits in the room
  left under the limit (the same tables as without a limit, watched), else out
  of core under the limit (``neardup.outofcore``: no candidate list, containment
  among the verified pairs only); other methods run in memory: said up front,
  watched;
* ``tokenize``, ``dups tables``, ``phrase tables``, ``decisions``
  (documents.parquet), ``report``: in memory, not planned; watched.

"Watched" means: a stage whose private memory (``RssAnon``) goes over the
limit stops the scan with ``error: stage <name> exceeded --memory-limit …``
(exit code 2) and the first scan's directory is removed; with the CLI's hard
stop a stage that does not return within 10 s of the stop (a compiled kernel
still running), or reaches 1.5x the limit first, ends the process (exit 3)
after removing the partial output.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from .._memory import StageWatchdog, format_size

__all__ = ["MemoryPlanWarning", "dups_fit_in_memory", "estimate_stages", "note_estimates", "unbounded_stages",
           "watchdog"]

# Private bytes a stage adds per corpus token at its peak without a limit.
# Measured only for dups (15-16 B/token on the Go library and on a 12 k-document
# Debian slice: 24 with room) and templates (phrases.find: 40); the others are
# rough upper guesses from the per-stage peaks on that slice (docs/scale.md).
# An estimate warns (and picks MinHash in memory or out of core); the watchdog decides.
_BYTES_PER_TOKEN = {"tokenize": 24, "dups": 24, "dups tables": 8, "phrases": 16,
                    "templates": 40, "phrase tables": 8, "decisions": 8, "report": 8}
_BYTES_PER_DOC = {"tokenize": 400, "dups": 200, "dups tables": 300, "phrases": 64,
                  "templates": 64, "phrase tables": 200, "decisions": 400, "report": 400}


def dups_fit_in_memory(limit, n_tokens: int, n_docs: int) -> tuple[bool, str]:
    """Whether MinHash near-duplicates run in memory under *limit*: when twice the
    in-memory estimate fits in the room left, they do (the same tables as without
    a limit, candidates and containment included), watched; else out of core."""
    from .._memory import parse_size, rss_now

    room = max(0, int(parse_size(limit)) - rss_now()["anon"])
    need = int(_BYTES_PER_TOKEN["dups"] * n_tokens + _BYTES_PER_DOC["dups"] * n_docs)
    if 2 * need <= room:
        return True, (f"in memory: about {format_size(need)} needed, {format_size(room)} "
                      "left under --memory-limit")
    return False, (f"out of core: about {format_size(need)} needed in memory, "
                   f"{format_size(room)} left under --memory-limit")


class MemoryPlanWarning(UserWarning):
    """A stage of ``scan`` cannot keep ``--memory-limit`` by itself (it is watched)."""


def unbounded_stages(config) -> dict[str, str]:
    """Stages of a scan with *config* that run in memory whatever the limit,
    with what happens to them (the watchdog stops them over the limit)."""
    out: dict[str, str] = {}
    if config.dups is not None and config.dups.method != "minhash":
        out["dups"] = f"method {config.dups.method} runs in memory (only minhash runs out of core)"
    if config.phrases is not None or config.dups is not None:
        out["decisions"] = "documents.parquet is planned in memory"
    if config.report:
        out["report"] = "the report is built in memory"
    return out


def estimate_stages(config, n_tokens: int, n_docs: int) -> dict[str, int]:
    """Estimated peak private bytes each stage run by *config* adds in memory
    (``phrases`` and minhash ``dups`` are out of core under a limit: not listed then)."""
    limited = config.memory_limit is not None
    stages = []
    if config.dups is not None:
        if not (limited and config.dups.method == "minhash"):
            stages.append("dups")
        stages.append("dups tables")
    if config.phrases is not None:
        if not limited:
            stages.append("phrases")
        if config.phrases.templates is not None:
            stages.append("templates")
        stages.append("phrase tables")
    if config.phrases is not None or config.dups is not None:
        stages.append("decisions")
    if config.report:
        stages.append("report")
    return {s: int(_BYTES_PER_TOKEN[s] * n_tokens + _BYTES_PER_DOC[s] * n_docs) for s in stages}


def note_estimates(wd: "ScanWatchdog", estimates: dict[str, int],
                   say: Callable[[str], None]) -> None:
    """Record the estimates; say which exceed the room left under the limit."""
    wd.estimates = estimates
    if wd.limit is None:
        return
    from .._memory import rss_now

    room = max(0, wd.limit - rss_now()["anon"])
    over = {k: v for k, v in estimates.items() if v > room}
    if over:
        say("memory estimate over the " + format_size(room) + " left under --memory-limit "
            + str(wd.label) + ": " + ", ".join(f"{k} ~{format_size(v)}" for k, v in over.items())
            + " (templates are planned down; any other stage over the limit stops the scan)")


class ScanWatchdog(StageWatchdog):
    """The watchdog of one scan, with its plan and estimates for ``summary.json``."""

    unbounded: dict[str, str]
    estimates: dict[str, int]

    def summary(self) -> dict:
        r = self.report()
        return {"memory_limit": self.limit, "memory_limit_given": self.label,
                "stage_peak_anon_bytes": r["stage_peak_anon"],
                "in_memory_stages": self.unbounded if self.limit is not None else {},
                "estimate_bytes": self.estimates}


@contextmanager
def watchdog(config, remove_on_hard_exit: Path | None, hard: bool,
             say: Callable[[str], None]) -> Iterator[ScanWatchdog]:
    """The scan's watchdog; with a limit, first says (one line, before any work)
    which stages run in memory and are only watched."""
    import shutil

    def cleanup() -> None:
        if remove_on_hard_exit is not None:
            shutil.rmtree(remove_on_hard_exit, ignore_errors=True)

    limit = config.memory_limit
    wd = ScanWatchdog(limit, hard_exit=hard, on_hard_exit=cleanup)
    wd.unbounded, wd.estimates = unbounded_stages(config), {}
    if limit is not None and wd.unbounded:
        line = (f"--memory-limit {limit}: stage(s) {', '.join(wd.unbounded)} run in memory and "
                f"cannot plan for the limit ({'; '.join(wd.unbounded.values())}); a stage over "
                f"it stops the scan, writing nothing partial")
        if hard:
            import sys

            print(line, file=sys.stderr, flush=True)
        else:
            warnings.warn(line, MemoryPlanWarning, stacklevel=4)
    with wd:
        yield wd
