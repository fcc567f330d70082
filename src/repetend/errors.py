"""Errors a user can cause and fix: each names what was wrong and where."""

from __future__ import annotations

__all__ = ["DeadlineExceeded", "InputError", "ParameterError", "RepetendError", "MissingExtraError",
           "SparkTaskError"]


class RepetendError(Exception):
    """Base of every error repetend raises on purpose (the CLI prints these
    without a traceback)."""


class ParameterError(RepetendError, ValueError):
    """A parameter is outside its domain (σ < 1, threshold outside (0, 1], …)."""


class InputError(RepetendError):
    """Bad input data; names the file and, where known, the record."""

    def __init__(self, message: str, *, path: str | None = None, record: int | None = None):
        where = ""
        if path is not None:
            where = f"{path}"
            if record is not None:
                where += f", record {record}"
            where += ": "
        super().__init__(where + message)
        self.path = path
        self.record = record


class DeadlineExceeded(RepetendError, TimeoutError):
    """A call given a time budget (``timeout=``) ran out of it and stopped; it
    changed nothing (an index ``add`` stopped before writing its segment)."""


class SparkTaskError(RepetendError, RuntimeError):
    """A stage that runs in one Spark task on an executor could not finish there
    (its Python worker lost every attempt, or ran out of memory); names the stage
    and what to give the executors."""


class MissingExtraError(RepetendError, ImportError):
    """An optional dependency is not installed."""

    def __init__(self, module: str, extra: str, what: str):
        super().__init__(
            f"{what} needs the '{module}' package: pip install 'repetend[{extra}]'"
        )
        self.module = module
        self.extra = extra


def require(module: str, extra: str, what: str):
    """Import an optional dependency or raise :class:`MissingExtraError`."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError(module, extra, what) from exc
