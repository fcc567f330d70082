"""Character offsets of token ranges: ``text[char_start:char_end]`` of a reported
occurrence is its surface text in the original document (Python string indices).

:func:`char_offsets` takes rows ``(doc_index, start, end)`` in token positions
(``end`` exclusive, within the document) and gives their character offsets. The
documents with rows are re-scanned from the store's UTF-8 text in one compiled
call per chunk of about ``chunk_tokens`` tokens (memory: 24 bytes per token of a
chunk), the same scanner that made the tokens; a document that may not be NFC or
holds a context-dependent lower case takes :func:`repetend.corpus.tokenizer.token_spans`'
slow path, code tokens take Pygments' spans.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from . import _tokenizer_kernels as K
from .unicode_table import tables

__all__ = ["char_offsets"]


def _doc_spans(store, docs: np.ndarray, counts: np.ndarray, offsets: np.ndarray):
    """Start and end character (relative to its document) of every token of *docs*,
    document k's at ``offsets[k]:offsets[k + 1]``."""
    total = int(offsets[-1])
    starts = np.empty(total, dtype=np.int64)
    ends = np.empty(total, dtype=np.int64)
    if store.unit == "code":
        flagged = np.ones(docs.shape[0], dtype=bool)
    else:
        T = tables()
        kunit = K.UNIT_WORD if store.unit == "word" else K.UNIT_CHAR
        t_off = np.asarray(store.text_offsets)
        buf = np.asarray(store.text_blob)
        got, flag = K.scan_docs_chars(buf, t_off[docs], t_off[docs + 1], kunit, T.flags, T.lflags,
                                      T.lower, T.ccc, T.compose_keys, offsets, starts, ends,
                                      np.empty(total, dtype=np.uint64))
        flagged = flag != 0
        bad = np.flatnonzero((got != counts) & ~flagged)
        if bad.size:
            d = int(docs[bad[0]])
            raise InputError(f"document {d}: {int(got[bad[0]])} tokens on re-tokenization, "
                             f"{int(counts[bad[0]])} in the store (made by another tokenizer?)",
                             path=str(store.path) if store.path else None)
    for k in np.flatnonzero(flagged):
        sp = store.token_spans(int(docs[k]))
        starts[offsets[k]:offsets[k + 1]] = sp[:, 0]
        ends[offsets[k]:offsets[k + 1]] = sp[:, 1]
    return starts, ends


def char_offsets(store, doc_index: npt.ArrayLike, start: npt.ArrayLike, end: npt.ArrayLike, *,
                 chunk_tokens: int = 8_000_000) -> tuple[np.ndarray, np.ndarray]:
    """``(char_start, char_end)`` (int64) of token ranges ``[start, end)`` of
    documents *doc_index* of *store* (a :class:`~repetend.corpus.store.TokenStore`):
    the first character of token ``start`` and one past the last of token
    ``end - 1`` in the original text."""
    doc = np.asarray(doc_index, dtype=np.int64)
    s = np.asarray(start, dtype=np.int64)
    e = np.asarray(end, dtype=np.int64)
    cs = np.zeros(doc.shape[0], dtype=np.int64)
    ce = np.zeros(doc.shape[0], dtype=np.int64)
    if doc.size == 0:
        return cs, ce
    n_tok = np.diff(np.asarray(store.doc_offsets, dtype=np.int64))
    if doc.min() < 0 or doc.max() >= n_tok.shape[0] or (s < 0).any() or (e <= s).any() \
            or (e > n_tok[doc]).any():
        raise InputError("token ranges out of their documents' bounds",
                         path=str(store.path) if store.path else None)
    order = np.argsort(doc, kind="stable")
    docs, first = np.unique(doc[order], return_index=True)
    bounds = np.append(first, order.shape[0])
    i = 0
    while i < docs.shape[0]:
        # a chunk of documents holding about chunk_tokens tokens (at least one document)
        room = np.cumsum(n_tok[docs[i:]])
        j = i + max(1, int(np.searchsorted(room, chunk_tokens, side="right")))
        chunk = docs[i:j]
        counts = n_tok[chunk]
        offsets = np.zeros(chunk.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        starts, ends = _doc_spans(store, chunk, counts, offsets)
        rows = order[bounds[i]:bounds[j]]
        k = np.searchsorted(chunk, doc[rows])
        cs[rows] = starts[offsets[k] + s[rows]]
        ce[rows] = ends[offsets[k] + e[rows] - 1]
        i = j
    return cs, ce
