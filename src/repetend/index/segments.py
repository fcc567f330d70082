"""Immutable index segments: what one batch of documents leaves on disk.

A segment directory holds (``m`` banded documents, ``t`` near-empty ones)::

    meta.json            n_docs, banded, tiny
    shingles.npy         uint64   sorted distinct shingle hashes, documents back to back
    shingle_offsets.npy  int64    [n_docs + 1]
    signatures.npy       uint*    [n_docs, num_perm]  MinHash values (64 or b bits)
    band_keys.npy        uint64   [bands, m]  band keys, each row sorted
    band_rows.npy        int32    [bands, m]  the segment-local document of each key
    tiny_keys.npy        uint64   [1, t]     whole-set fingerprints of near-empty documents, sorted
    tiny_rows.npy        int32    [1, t]
    post_keys.npy        uint64   [1, P]     shingle postings (optional, ``postings=True``):
    post_rows.npy        int32    [1, P]     sorted shingle hashes and their documents
    docs.parquet         doc_id, url, host, n_tokens
    text.bin             original texts, UTF-8, back to back
    text_offsets.npy     int64    [n_docs + 1]

Band tables are sorted arrays, not hash maps: a lookup is a binary search per
band (``np.searchsorted`` semantics, :func:`._index_kernels.table_ranges`) on
memory-mapped rows, so opening an index costs no parsing and a segment larger
than RAM still answers.  Empty documents are in no table (as in
:func:`repetend.neardup.lsh.lsh_candidates`); near-empty ones (fewer shingles
than the effective ``min_shingles``) are matched by exact set identity through
the tiny table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .._atomic import atomic_dir
from ..errors import InputError
from ..neardup.shingles import ShingleSets
from .format import test_pause

__all__ = ["Segment", "SegmentData", "write_segment", "open_segment", "band_tables"]

_ARRAYS = ("shingles", "shingle_offsets", "signatures", "band_keys", "band_rows", "tiny_keys",
           "tiny_rows", "text_offsets", "post_keys", "post_rows")
_OPTIONAL = ("post_keys", "post_rows")  # segments written without postings may lack them


@dataclass(slots=True)
class SegmentData:
    """The arrays of a segment (in memory while writing, memory-mapped when opened)."""

    shingles: np.ndarray
    shingle_offsets: np.ndarray
    signatures: np.ndarray
    band_keys: np.ndarray
    band_rows: np.ndarray
    tiny_keys: np.ndarray
    tiny_rows: np.ndarray
    docs: pa.Table
    text: np.ndarray
    text_offsets: np.ndarray
    post_keys: np.ndarray = field(default_factory=lambda: np.empty((1, 0), np.uint64))
    post_rows: np.ndarray = field(default_factory=lambda: np.empty((1, 0), np.int32))

    @property
    def n_docs(self) -> int:
        return int(self.shingle_offsets.shape[0] - 1)

    @property
    def sets(self) -> ShingleSets:
        return ShingleSets(self.shingles, self.shingle_offsets, 0)

    def text_of(self, d: int) -> str:
        a, b = int(self.text_offsets[d]), int(self.text_offsets[d + 1])
        return bytes(self.text[a:b]).decode("utf-8", "surrogatepass")


@dataclass(slots=True)
class Segment:
    name: str
    path: Path
    data: SegmentData
    base: int = 0           # global index of the segment's first document


def band_tables(keys: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted band tables from per-document band keys ``keys[n, bands]`` of the
    documents ``docs`` (rows of ``keys`` to include)."""
    nb = keys.shape[1]
    m = docs.shape[0]
    out_k = np.empty((nb, m), dtype=np.uint64)
    out_r = np.empty((nb, m), dtype=np.int32)
    for j in range(nb):  # one vectorised sort per band
        col = keys[docs, j]
        order = np.argsort(col, kind="stable")
        out_k[j] = col[order]
        out_r[j] = docs[order]
    return out_k, out_r


def write_segment(target: Path, data: SegmentData) -> None:
    """Write *data* as the segment directory *target* (atomically: temporary
    sibling, fsync'd files, rename)."""
    with atomic_dir(target) as tmp:
        for name in _ARRAYS:
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(getattr(data, name)))
        np.ascontiguousarray(data.text, dtype=np.uint8).tofile(tmp / "text.bin")
        pq.write_table(data.docs, tmp / "docs.parquet", compression="zstd")
        meta = {"n_docs": data.n_docs, "banded": int(data.band_keys.shape[1]),
                "tiny": int(data.tiny_keys.shape[1])}
        (tmp / "meta.json").write_text(json.dumps(meta) + "\n", encoding="utf-8")
        for f in tmp.iterdir():
            with open(f, "rb") as fh:
                import os

                os.fsync(fh.fileno())
        test_pause("segment")


def _load(path: Path) -> np.ndarray:
    try:
        return np.load(path, mmap_mode="r")
    except ValueError:  # an empty array cannot be memory-mapped
        return np.load(path)


def open_segment(path: Path, name: str, n_docs: int) -> SegmentData:
    """Memory-map a segment; checks that it holds the documents the manifest says."""
    if not (path / "meta.json").is_file():
        raise FileNotFoundError(str(path))
    try:
        arrays = {n: _load(path / f"{n}.npy") for n in _ARRAYS
                  if n not in _OPTIONAL or (path / f"{n}.npy").is_file()}
        blob_path = path / "text.bin"
        text = (np.memmap(blob_path, dtype=np.uint8, mode="r") if blob_path.stat().st_size
                else np.empty(0, np.uint8))
        # one chunk per column: take() on a many-chunk column would copy it on every lookup
        docs = pq.read_table(path / "docs.parquet").combine_chunks()
    except (ValueError, EOFError, pa.ArrowInvalid) as exc:
        raise InputError(f"damaged index segment {name} ({exc}); rebuild the index "
                         "(repetend index build … --overwrite)", path=str(path)) from exc
    data = SegmentData(docs=docs, text=text, **arrays)
    if data.n_docs != int(n_docs) or data.docs.num_rows != int(n_docs):
        raise InputError(f"segment {name} holds {data.n_docs} documents, the manifest says "
                         f"{n_docs}", path=str(path))
    return data
