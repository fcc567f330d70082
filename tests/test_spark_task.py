"""A one-task Spark stage's two sides without Spark (``repetend.spark.task``): the
task's value, its exception and its MemoryError as the driver gets them, and the
driver's reading of a Spark job whose task lost its worker on every attempt."""

from __future__ import annotations

import pickle

import pytest

from repetend.errors import SparkTaskError
from repetend.spark.failures import lost_worker, translated
from repetend.spark.task import INPUTS, RESULT, result, run, scratch_dir


def _task_dir(tmp_path, inputs):
    d = scratch_dir(tmp_path, "phrases-islands")
    d.mkdir()
    with open(d / INPUTS, "wb") as f:
        pickle.dump(inputs, f)
    return d


def _add(work, *, a, b):
    return {"sum": a + b, "where": work.name}


def _exhaust(work, *, a, b):
    raise MemoryError(f"{a} {b}")


def _refuse(work, *, a, b):
    raise KeyError(f"no {a}")


def test_the_driver_gets_the_tasks_value_and_its_peak(tmp_path):
    d = _task_dir(tmp_path, {"a": 2, "b": 3})
    assert run(_add, str(d)) == 1
    value, peak = result(d)
    assert value == {"sum": 5, "where": d.name}
    assert peak > 0


def test_the_driver_raises_the_tasks_exception_as_it_was(tmp_path):
    d = _task_dir(tmp_path, {"a": "x", "b": 0})
    assert run(_refuse, str(d)) == 1            # the task succeeds: Spark retries nothing
    with pytest.raises(KeyError, match="no x"):
        result(d, "a stage")
    (d / RESULT).unlink()
    with pytest.raises(RuntimeError, match="left no result"):
        result(d)


def test_a_task_out_of_memory_says_what_to_give_the_executors(tmp_path):
    d = _task_dir(tmp_path, {"a": 1, "b": 2})
    assert run(_exhaust, str(d)) == 1
    with pytest.raises(SparkTaskError, match=r"^the template layer: out of memory .*"
                                             r"spark\.executor\.memoryOverhead.*--no-templates"):
        result(d, "the template layer")


@pytest.mark.parametrize("text, attempts", [
    ("An error occurred while calling o123.collect.\n: org.apache.spark.SparkException: Job "
     "aborted due to stage failure: Task 0 in stage 7.0 failed 4 times, most recent failure: "
     "Lost task 0.3 in stage 7.0 (TID 31) (10.0.0.5 executor driver): org.apache.spark."
     "SparkException: Python worker exited unexpectedly (crashed)", 4),
    ("Job aborted due to stage failure: Task 0 in stage 2.0 failed 1 time, most recent "
     "failure: Lost task 0.0 in stage 2.0 (TID 2) (host executor 1): ExecutorLostFailure "
     "(executor 1 exited caused by one of the running tasks) Reason: Container killed by "
     "YARN for exceeding memory limits", 1),
    # a task that failed for another reason, and an error that is not a job failure
    ("Job aborted due to stage failure: Task 0 in stage 3.0 failed 4 times, most recent "
     "failure: Lost task 0.3 in stage 3.0: java.io.IOException: No space left on device", None),
    ("An error occurred while calling o55.parquet: path already exists", None),
])
def test_a_lost_worker_is_told_from_other_failures(text, attempts):
    assert lost_worker(RuntimeError(text)) == attempts


# the text of the Py4JJavaError a Spark scan into a full 2 MB tmpfs raised (causes kept,
# stack frames cut), 2026-12-08
_FULL = ("An error occurred while calling o243.parquet.\n: org.apache.spark.SparkException: "
         "[TASK_WRITE_FAILED] Task failed while writing rows to file:/mnt/tiny/scan/.corpus.tmp-"
         "28640. SQLSTATE: 58030\n\tat org.apache.spark.sql.errors.QueryExecutionErrors$."
         "taskFailedWhileWritingRowsError(QueryExecutionErrors.scala:774)\nCaused by: org.apache."
         "parquet.util.AutoCloseables$ParquetCloseResourceException: Unable to close resource\n"
         "Caused by: org.apache.hadoop.fs.FSError: java.io.IOException: No space left on device\n"
         "Caused by: java.io.IOException: No space left on device\n\t... 41 more")


def test_a_full_disk_on_the_cluster_is_the_local_engines_full_disk(tmp_path):
    import errno

    told = translated(RuntimeError(_FULL), where=tmp_path)
    assert isinstance(told, OSError) and told.errno == errno.ENOSPC
    assert told.filename == "/mnt/tiny/scan/.corpus.tmp-28640"
    # a Python worker's own write or Spark's shuffle (no dataset named): the output
    # directory, and Spark's local directories named too
    told = translated(RuntimeError("PythonException: OSError: [Errno 28] No space left on "
                                   "device"), where=tmp_path)
    assert told.errno == errno.ENOSPC and told.filename == str(tmp_path)
    assert "spark.local.dir" in told.strerror


def test_a_lost_worker_is_told_and_other_failures_are_kept():
    lost = ("Job aborted due to stage failure: Task 3 in stage 9.0 failed 4 times, most "
            "recent failure: Lost task 3.3 in stage 9.0 (TID 77): org.apache.spark.Spark"
            "Exception: Python worker exited unexpectedly (crashed)")
    told = translated(RuntimeError(lost))
    assert isinstance(told, SparkTaskError)
    assert "in all 4 attempts" in str(told) and "spark.executor.memoryOverhead" in str(told)
    assert translated(RuntimeError("[PATH_NOT_FOUND] Path does not exist: file:/x")) is None
    assert translated(SparkTaskError("the template layer: its Python worker was lost")) is None
