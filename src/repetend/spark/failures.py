"""Spark's failures as errors a user can act on, in one line.

A Spark job that fails reaches the driver as a ``Py4JJavaError`` (or a
``PythonException``) whose text holds Java's whole chain of causes.  Two causes are
the user's to fix, and are told as such: the disk of a dataset being written is
full (an :class:`OSError` with ``ENOSPC`` and the dataset's path — or the output
directory and Spark's local directories when Spark's text names none — which the CLI
prints as it prints a full disk of the local engine), and a task lost its Python worker or
executor on every attempt — most often killed for its memory (a
:class:`repetend.errors.SparkTaskError` saying what to give the executors).  Any
other failure is left as it is.
"""

from __future__ import annotations

import errno
import re

from ..errors import SparkTaskError

__all__ = ["ROOM", "lost_worker", "translated"]

#: what a user gives the executors when a task is killed for its memory
ROOM = ("give the executors more Python memory outside their JVM heap "
        "(spark.executor.memoryOverhead on YARN or Kubernetes, larger workers on a "
        "standalone cluster; spark.executor.pyspark.memory, if set, must allow it)")

_ATTEMPTS = re.compile(r"Task \S+ in stage \S+ failed (\d+) times?")
_LOST = re.compile(r"Python worker exited unexpectedly|crashed|Lost executor|"
                   r"ExecutorLostFailure|killed")
_NO_SPACE = re.compile(r"No space left on device|Disk quota exceeded")
_WRITING = re.compile(r"writing rows to (?:file:)?(\S+?)\.?(?:\s|$)")


def lost_worker(exc: BaseException) -> int | None:
    """How many attempts Spark made when *exc* is a job whose task lost its Python
    worker (or executor) on every attempt, else None."""
    text = str(exc)
    m = _ATTEMPTS.search(text)
    if m is None or not _LOST.search(text):
        return None
    return int(m.group(1))


def translated(exc: BaseException, where=None) -> BaseException | None:
    """The error to raise instead of Spark's failure *exc* (*where*: the output
    directory, named when Spark's text names no file), or None to keep *exc*."""
    text = str(exc)
    if _NO_SPACE.search(text):
        m = _WRITING.search(text)
        if m is not None:
            return OSError(errno.ENOSPC, "No space left on device", m.group(1))
        # no dataset named: the output directory's disk, or Spark's own scratch
        # (shuffle and spill files under spark.local.dir)
        return OSError(errno.ENOSPC, "No space left on device, in this directory or in "
                       "Spark's local directories (spark.local.dir)",
                       str(where) if where is not None else None)
    attempts = lost_worker(exc)
    if attempts is not None:
        return SparkTaskError(f"a Spark task lost its Python worker in all {attempts} "
                              f"attempts (most often killed for its memory); {ROOM}")
    return None
