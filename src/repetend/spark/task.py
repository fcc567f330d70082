"""One piece of work that is not distributed, run in one Spark task on an executor.

The island mining (:mod:`repetend.spark.phrases`) and the template layer
(:mod:`repetend.spark.templates`) are one machine's work on a dataset the executors
wrote.  They run in a one-partition job rather than on the driver, so that the
driver's memory stays that of summaries and result tables.  Their inputs and their
result pass through files in a scratch directory the driver and the executors both
see (the work directory): the driver pickles the inputs (:data:`INPUTS`), the task
runs the function on them and pickles ``("ok", (value, peak))`` or
``("error", exception)`` (:data:`RESULT`), and the driver reads that back
(:func:`result`), raising the task's exception as it was.  A deterministic error is
thus not retried four times by Spark; a task whose Python worker dies is retried and
writes the same result.  A stage whose every attempt lost its worker, or that ran out
of memory, is a :class:`repetend.errors.SparkTaskError` naming the stage and what to
give the executors.

Scratch directories are named ``.<name>.tmp-<uuid>`` under the work directory and
removed when the work is done; :func:`remove_partial` removes those a killed run left.
"""

from __future__ import annotations

import pickle
import shutil
import tempfile
import uuid
from functools import partial
from pathlib import Path
from typing import Any, Callable

from ..errors import SparkTaskError
from .failures import ROOM, lost_worker

__all__ = ["INPUTS", "RESULT", "SCRATCH_NAMES", "in_one_task", "parquet_parts", "remove_partial",
           "result", "run", "scratch_dir", "write_pickle"]

#: the driver's inputs and the task's result, in the scratch directory
INPUTS = "_task-inputs.pkl"
RESULT = "_task-result.pkl"
#: the scratch directories of the scan's one-task stages (``.<name>.tmp-<uuid>``)
SCRATCH_NAMES = ("phrases-islands", "templates-widened")
#: what a user does when a one-task stage runs out of room on its executor
ONE_TASK_ROOM = ("it runs in one task on one executor and needs about what a local scan "
                 f"needs for the same stage: {ROOM}, or scan with --no-templates when it "
                 "is the template layer")


def scratch_dir(work_dir, name: str) -> Path:
    """A new scratch directory's path for *name* (one of :data:`SCRATCH_NAMES`) under
    *work_dir* (default: the driver's temporary directory); the writer creates it."""
    if name not in SCRATCH_NAMES:
        raise ValueError(f"scratch name {name!r} is not one of {SCRATCH_NAMES}")
    base = Path(work_dir) if work_dir is not None else Path(tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    return base.resolve() / f".{name}.tmp-{uuid.uuid4().hex}"


def remove_partial(work_dir) -> None:
    """Remove the scratch directories a killed run left in *work_dir*."""
    for name in SCRATCH_NAMES:
        for stale in Path(work_dir).glob(f".{name}.tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)


def parquet_parts(path) -> list[Path]:
    """The data files of the Parquet dataset Spark wrote at *path*, sorted by name
    (not ``_SUCCESS``, checksums, or this module's files)."""
    return sorted(p for p in Path(path).iterdir()
                  if p.suffix == ".parquet" and not p.name.startswith((".", "_")))


def write_pickle(path: Path, obj) -> None:
    """Pickle *obj* to *path* atomically (temp file, then rename)."""
    from .._atomic import atomic_path

    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)


def run(fn: Callable[..., Any], work: str) -> int:
    """The task's side: ``fn(Path(work), **inputs)`` on the driver's pickled inputs,
    its value and this process's peak private memory while it ran (bytes, sampled)
    written to :data:`RESULT` as ``("ok", (value, peak))``, or its exception as
    ``("error", exception)``.  Returns 1 (the task succeeds either way).  The
    process's free heap is given back after: Spark reuses its Python workers, and
    the next stage in this one would start from what this stage left."""
    import gc

    import pyarrow as pa

    from .._memory import MemoryBudget, release_free_heap

    d = Path(work)
    with open(d / INPUTS, "rb") as f:
        inputs = pickle.load(f)
    try:
        with MemoryBudget() as mb:
            value = fn(d, **inputs)
            del inputs
        payload: tuple = ("ok", (value, int(mb.report()["peak_anon"])))
    except Exception as exc:             # the driver raises it again, as it was
        try:
            pickle.dumps(exc)
        except Exception:                # pragma: no cover - an exception pickle refuses
            exc = RuntimeError(f"{type(exc).__name__}: {exc}")
        payload = ("error", exc)
    write_pickle(d / RESULT, payload)
    del payload
    gc.collect()
    pa.default_memory_pool().release_unused()
    release_free_heap()
    return 1


def result(work, description: str = "a one-task stage") -> tuple[Any, int]:
    """``(value, peak bytes)`` the task wrote in *work*, or its exception raised here
    (a :class:`MemoryError` as a :class:`repetend.errors.SparkTaskError` that says
    what to give the executors)."""
    path = Path(work) / RESULT
    if not path.is_file():
        raise RuntimeError(f"Spark: the one-task stage left no result in {work}")
    with open(path, "rb") as f:
        status, value = pickle.load(f)
    if status == "error":
        if isinstance(value, MemoryError):
            raise SparkTaskError(f"{description}: out of memory in its task on an executor; "
                                 f"{ONE_TASK_ROOM}") from value
        raise value
    return value


def in_one_task(spark, fn: Callable[..., Any], work: Path, inputs: dict,
                description: str) -> tuple[Any, int]:
    """Run ``fn(work, **inputs)`` in one Spark task on an executor; returns
    ``(value, peak bytes of the task's process)`` or raises the task's exception.
    *fn* goes to the executor with the task (a module-level function by reference);
    *work* is a directory the executors see.  A task that lost its Python worker on
    every attempt is a :class:`repetend.errors.SparkTaskError` naming *description*."""
    sc = spark.sparkContext
    write_pickle(Path(work) / INPUTS, inputs)
    sc.setJobDescription(f"repetend: {description} (one task)")
    try:
        sc.parallelize([str(work)], 1).map(partial(run, fn)).collect()
    except Exception as exc:
        attempts = lost_worker(exc)
        if attempts is None:
            raise
        raise SparkTaskError(f"{description}: its Python worker was lost in all {attempts} "
                             f"attempts (most often killed for its memory); "
                             f"{ONE_TASK_ROOM}") from exc
    finally:
        sc.setJobDescription(None)
    return result(work, description)
