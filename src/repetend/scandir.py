"""The scan directory: the one module that knows its layout.

``repetend scan`` (:func:`repetend.jobs.scan`) writes, the report and
``clean`` read, all through the names here::

    OUT/summary.json   the command, inputs, parameters, timings, corpus figures
    OUT/store/         the token store (:mod:`repetend.corpus.store`) and its
                       inputs.json (what it was read from, for reuse)
    OUT/phrases/       a phrases result (:mod:`repetend.phrases.result`)
    OUT/dups/          a near-duplicates result (:mod:`repetend.neardup.result`)
    OUT/documents.parquet  one row per input document: its cluster, boilerplate
                       share and what ``repetend clean`` with its defaults does
                       to it (decision, reason; :mod:`repetend.clean.plan`)
    OUT/report.html    the self-contained report

Each stage's ``summary.json`` carries a *stage stamp*, ``scan_parameters``: the
parameters it ran with and a fingerprint of the corpus (documents, tokens, the
store), so a later run can reuse it and a reader can check that the parts
belong together (:meth:`ScanDir.verify`).

Every part is optional: a stage that was skipped leaves no directory and the
report says so.  Large tables are read column by column and, where they can be
long (occurrences, pairs, candidates), filtered or capped while reading.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from ._atomic import write_json
from .corpus.read_text import SCAN_DIR_MARKER
from .corpus.store import TokenStore, is_store
from .corpus.table_corpus import TableCorpus, is_corpus_table
from .errors import InputError

__all__ = ["CORPUS", "DOCUMENTS", "DUPS", "INPUTS_STAMP", "LOCK", "RUNNING", "unfinished_scan", "PHRASES", "REPORT", "STAMP_KEY", "STORE", "SUMMARY",
           "ScanDir", "clusters_file", "open_scan", "phrases_summary_file", "read_json", "read_stamp",
           "stage_mismatch", "templates_dir", "write_stamp", "writer_lock"]

SUMMARY = "summary.json"
STORE = "store"
CORPUS = "corpus"                 # a Spark scan's corpus dataset, in place of STORE
INPUTS_STAMP = "inputs.json"     # inside STORE ("_inputs.json" inside CORPUS)
PHRASES = "phrases"
DUPS = "dups"
REPORT = "report.html"
DOCUMENTS = "documents.parquet"   # the per-document decisions (repetend.clean.plan)
STAMP_KEY = "scan_parameters"    # the stage stamp inside a stage's summary.json
RUNNING = ".scan.running"         # present while a scan writes the directory: left by a kill
LOCK = SCAN_DIR_MARKER           # flock()ed by the scan writing the directory; the
                                 # directory reader skips a directory that has it


def read_json(path: Path) -> dict:
    """A JSON file of the directory ({} when it is missing)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not valid JSON: {exc}", path=str(path)) from exc


def templates_dir(root: str | Path) -> Path | None:
    """The directory under *root* (a scan directory, or a phrases result) that
    holds the template tables (``templates.parquet`` or ``.jsonl``): ``phrases/``,
    ``templates/`` or *root* itself; None when there is none."""
    from .phrases.templates import template_file

    for sub in (PHRASES, "templates", "."):
        d = Path(root) / sub
        if template_file(d, "templates") is not None:
            return d
    return None


def phrases_summary_file(root: str | Path) -> Path | None:
    """The phrases ``summary.json`` of *root* (a scan directory, or a phrases
    result itself); None when there is none."""
    for sub in (PHRASES, "."):
        f = Path(root) / sub / SUMMARY
        if f.is_file():
            return f
    return None


def clusters_file(root: str | Path) -> Path | None:
    """The clusters table of *root* — a dups output (``clusters.parquet`` or
    ``.jsonl``) or a scan directory (its ``dups/``); None when there is none."""
    for sub in (".", DUPS):
        for ext in ("parquet", "jsonl"):
            f = Path(root) / sub / f"clusters.{ext}"
            if f.is_file():
                return f
    return None


def stage_mismatch(corpus: dict, have: dict, read_from: dict | None = None) -> str | None:
    """Why a stage stamped with *corpus* (its ``scan_parameters["corpus"]``) does not
    belong with a store of *have* (``documents``, ``tokens``) read from the input
    files *read_from* (its ``inputs.json``, when known); None when it does, or
    when the stamp holds nothing to compare."""
    made = {k: corpus.get(k) for k in ("documents", "tokens") if corpus.get(k) is not None}
    if any(made[k] != have[k] for k in made):
        return (f"was made from another corpus ({made.get('documents')} documents, "
                f"{made.get('tokens')} tokens) than the token store "
                f"({have['documents']} documents, {have['tokens']} tokens)")
    if read_from is not None and corpus.get("inputs") not in (None, read_from):
        return ("was made from other input files than the token store "
                "(their paths, sizes or modification times differ)")
    return None


def unfinished_scan(root: str | Path) -> str | None:
    """Why the scan directory *root* is not a finished scan, or None: a scan that
    writes into it marks it :data:`RUNNING` until its last stage is written, so a
    run that was killed (SIGKILL, out of memory, power) leaves the mark behind,
    with whatever stages it had finished (near-duplicates without phrases, say):
    cleaning from that would write another corpus than a whole scan's."""
    p = Path(root)
    if not (p / RUNNING).exists():
        return None
    try:
        fd = os.open(p / LOCK, os.O_RDWR)
    except OSError:
        fd = None
    if fd is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "?"
            return (f"a repetend scan (pid {holder}) is still writing into this directory; "
                    "wait for it to finish")
        finally:
            os.close(fd)
    return ("the scan that wrote this directory did not finish (killed mid-run): run "
            "`repetend scan` into it again (--reuse keeps the stages it finished)")


@contextlib.contextmanager
def writer_lock(root: str | Path) -> Iterator[None]:
    """Hold the scan directory *root* for one writer (``flock`` on its ``.scan.lock``,
    released by the kernel when the process ends, killed or not).  A second scan
    into the same directory stops at once with an error naming the holder, rather
    than interleave its files with the first one's."""
    p = Path(root)
    fd = os.open(p / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "?"
            raise InputError(f"another repetend scan (pid {holder}) is writing into this "
                             "directory; wait for it to finish or choose another --out",
                             path=str(p)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        os.close(fd)   # closing the descriptor releases the lock


def read_stamp(stage_dir: Path) -> dict | None:
    """The stage stamp of a stage directory (None: no stamp, or unreadable)."""
    try:
        return json.loads((Path(stage_dir) / SUMMARY).read_text(encoding="utf-8")).get(STAMP_KEY)
    except (OSError, ValueError, AttributeError):
        return None


def write_stamp(stage_dir: Path, params: dict, **extra) -> None:
    """Record the scan parameters a stage ran with (and *extra* keys the job
    computed for it) in its ``summary.json``."""
    path = Path(stage_dir) / SUMMARY
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data.update(extra)
    data[STAMP_KEY] = params
    write_json(path, data)


def _table(path: Path, columns: list[str] | None = None) -> pa.Table | None:
    if not path.is_file():
        return None
    try:
        if columns is not None:
            have = set(pq.read_schema(path).names)
            columns = [c for c in columns if c in have]
        return pq.read_table(path, columns=columns)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"cannot read Parquet: {exc}", path=str(path)) from exc


@dataclass
class ScanDir:
    """The parts of a scan directory, loaded lazily where they can be big."""

    root: Path
    summary: dict = field(default_factory=dict)
    phrases_summary: dict | None = None
    dups_summary: dict | None = None
    store: Any = None
    store_problem: str | None = None

    @property
    def has_phrases(self) -> bool:
        return (self.root / PHRASES / "phrases.parquet").is_file()

    @property
    def has_dups(self) -> bool:
        return (self.root / DUPS).is_dir() and (
            (self.root / DUPS / "pairs.parquet").is_file()
            or (self.root / DUPS / "clusters.parquet").is_file())

    def verify(self) -> list[str]:
        """What does not belong together: each stage whose stamp names another
        corpus than the directory's token store (documents, tokens, or the input
        files the store was read from), one line each (empty: the parts agree, or
        they carry no stamps to check)."""
        problems = []
        if self.store is None:
            return problems
        have = {"documents": self.store.n_docs, "tokens": self.store.n_tokens}
        for stage, summary in ((PHRASES, self.phrases_summary), (DUPS, self.dups_summary)):
            corpus = ((summary or {}).get(STAMP_KEY) or {}).get("corpus") or {}
            problem = stage_mismatch(corpus, have, self._read_from())
            if problem:
                problems.append(f"{stage}/ {problem}")
        return problems

    def _read_from(self) -> dict | None:
        """The input files of the store, when this scan tokenized them into its
        own ``store/`` (a store given as the input has its own, older stamp)."""
        here = self.store_path().resolve()
        for own in (self.root / STORE, self.root / CORPUS):
            if here == own.resolve():
                return read_json(inputs_stamp_file(own)) or None
        return None

    def table(self, rel: str, columns: list[str] | None = None) -> pa.Table | None:
        return _table(self.root / rel, columns)

    def parquet_file(self, rel: str) -> pq.ParquetFile | None:
        p = self.root / rel
        return pq.ParquetFile(p) if p.is_file() else None

    def store_path(self) -> Path:
        """The scan's token store or corpus dataset: the one its summary names, or,
        when the directory was moved, its own copy (``store/`` or ``corpus/``)."""
        s = self.summary.get("store")
        own = [d for d in (self.root / STORE, self.root / CORPUS) if d.exists()]
        if s:
            p = Path(s)
            if not p.is_absolute():
                cand = self.root / p
                p = cand if cand.exists() or not p.exists() else p
            if p.exists() or not own:
                return p
            if (self.root / p.name) in own:   # moved: its own copy of that kind
                return self.root / p.name
        return own[0] if own else self.root / STORE


def inputs_stamp_file(store_dir: Path) -> Path:
    """Where a store or corpus dataset records the inputs it was read from (in a
    corpus dataset, a name Parquet readers skip)."""
    store_dir = Path(store_dir)
    return store_dir / (("_" + INPUTS_STAMP) if is_corpus_table(store_dir) else INPUTS_STAMP)


def open_scan(scan_dir: str | Path, *, need_store: bool = False, verify: bool = False) -> ScanDir:
    """Open a scan directory; the token store is opened when it exists
    (required with ``need_store``).  With ``verify``, parts made from another
    corpus than the store (an interrupted scan over an older one) are refused
    (:meth:`ScanDir.verify`)."""
    root = Path(scan_dir)
    if not root.is_dir():
        raise InputError("no such scan directory", path=str(root))
    scan = ScanDir(root=root, summary=read_json(root / SUMMARY))
    if (root / PHRASES).is_dir():
        scan.phrases_summary = read_json(root / PHRASES / SUMMARY)
    if (root / DUPS).is_dir():
        scan.dups_summary = read_json(root / DUPS / SUMMARY)
    sp = scan.store_path()
    if is_store(sp):
        scan.store = TokenStore.open(sp)
    elif is_corpus_table(sp):   # a Spark scan's corpus dataset (repetend.spark.corpus)
        scan.store = TableCorpus.open(sp)
    else:
        scan.store_problem = f"no token store at {sp}"
        if need_store:
            raise InputError("the scan has no token store (needed for the document texts)",
                             path=str(sp))
    if not scan.summary and not scan.has_phrases and not scan.has_dups:
        raise InputError("not a repetend scan directory (no summary.json, phrases/ or dups/)",
                         path=str(root))
    problems = scan.verify() if verify else []
    if problems:
        raise InputError("the scan directory mixes two runs: " + "; ".join(problems)
                         + "; run `repetend scan` into it again", path=str(root))
    return scan
