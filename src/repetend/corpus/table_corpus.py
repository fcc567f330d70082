"""A scan's corpus as a Parquet dataset (written by Spark's executors), read like a
token store by the parts of repetend that run on one machine after a Spark scan.

``repetend scan --engine spark`` writes no token store: its executors write the
corpus dataset ``corpus/`` (:mod:`repetend.spark.corpus`: one row per document,
sorted by ``doc_index``, with its small figures and its text).  The cleaning
plan, the report and ``repetend clean`` need, of the store, only the document
table (ids, urls, hosts, token counts), the corpus figures and the text and
token spans of *some* documents; :class:`TableCorpus` gives exactly these, reading
the small columns once (O(documents)) and a document's text from its row group
when asked (the last row groups read are kept), never the whole text.

Everything that needs the token ids (mining, MinHash, the template layer) runs on
the executors for such a scan, so :class:`TableCorpus` has no ``tokens``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import InputError
from .store import TokenStore

__all__ = ["TableCorpus", "is_corpus_table", "CORPUS_SUMMARY"]

CORPUS_SUMMARY = "_corpus.json"
SMALL_COLUMNS = ["doc_index", "doc_id", "url", "host", "n_tokens", "n_chars", "order_key"]
_CACHED_GROUPS = 4


def _parts(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.suffix == ".parquet" and p.is_file())


def is_corpus_table(path: str | os.PathLike) -> bool:
    """Whether *path* is a corpus dataset (its summary file and part files)."""
    p = Path(path)
    return p.is_dir() and (p / CORPUS_SUMMARY).is_file()


class TableCorpus:
    """The corpus dataset at *path*, opened (see the module docstring)."""

    lang = None
    # documents are numbered by repetend.spark.order (a hash of id and text), not in
    # reading order: `clean` matches records by id and checks order_key
    numbered_by_key = True

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        if not is_corpus_table(self.path):
            raise InputError("not a corpus dataset (no _corpus.json)", path=str(self.path))
        self.summary = json.loads((self.path / CORPUS_SUMMARY).read_text(encoding="utf-8"))
        self.unit = self.summary.get("unit", "word")
        files = _parts(self.path)
        tables, starts, groups = [], [], []
        at = 0
        for f in files:
            pf = pq.ParquetFile(f)
            tables.append(pf.read(columns=SMALL_COLUMNS))
            for g in range(pf.metadata.num_row_groups):
                starts.append(at)
                groups.append((f, g))
                at += pf.metadata.row_group(g).num_rows
        small = (pa.concat_tables(tables) if tables else
                 pa.table({c: pa.array([], pa.string() if c in ("doc_id", "url", "host")
                                       else pa.int64()) for c in SMALL_COLUMNS}))
        idx = small.column("doc_index").to_numpy()
        if not np.array_equal(idx, np.arange(small.num_rows)):
            raise InputError("the corpus dataset is not sorted by doc_index 0..n-1 across its "
                             "part files (written by another tool?)", path=str(self.path))
        if small.num_rows != int(self.summary.get("documents", small.num_rows)):
            raise InputError(f"the corpus dataset has {small.num_rows} documents, its summary "
                             f"{self.summary.get('documents')}", path=str(self.path))
        self.docs = small.drop_columns(["doc_index"])
        n_tok = self.docs.column("n_tokens").to_numpy().astype(np.int64)
        self.doc_offsets = np.zeros(n_tok.size + 1, np.int64)
        np.cumsum(n_tok, out=self.doc_offsets[1:])
        self._group_start = np.asarray(starts + [at], np.int64)
        self._groups = groups
        self._cache: dict[int, pa.Array] = {}

    @classmethod
    def open(cls, path: str | os.PathLike) -> "TableCorpus":
        return cls(path)

    # -- shape -----------------------------------------------------------------
    @property
    def n_docs(self) -> int:
        return self.docs.num_rows

    @property
    def n_tokens(self) -> int:
        return int(self.doc_offsets[-1])

    # what needs only the document table, the offsets and text(): the store's own code
    doc_lengths = TokenStore.doc_lengths
    doc_ids = TokenStore.doc_ids
    has_urls = TokenStore.has_urls
    token_spans = TokenStore.token_spans
    surface = TokenStore.surface

    def order_key(self, d: int) -> int:
        return int(self.docs.column("order_key")[d].as_py())

    # -- per document ------------------------------------------------------------
    def text(self, d: int) -> str:
        if not 0 <= d < self.n_docs:
            raise IndexError(d)
        g = int(np.searchsorted(self._group_start, d, side="right") - 1)
        col = self._cache.pop(g, None)
        if col is None:
            f, rg = self._groups[g]
            col = pq.ParquetFile(f).read_row_group(rg, columns=["text"]).column("text")
            if len(self._cache) >= _CACHED_GROUPS:   # the least recently used goes
                self._cache.pop(next(iter(self._cache)))
        self._cache[g] = col
        return col[d - int(self._group_start[g])].as_py()
