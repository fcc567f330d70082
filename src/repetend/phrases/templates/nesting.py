"""The nesting filter: a template whose every occurrence lies inside an
occurrence of one same other template is a fragment of it, and is dropped.

On the Debian documentation store 889 of 3,645 templates were such fragments
(a gcloud sentence reported alone and inside each longer gcloud block that
always holds it).  Dropping them changes no covered token: every occurrence of
a dropped template lies inside an occurrence of a template that is kept
(containment is transitive, and of two templates with the same occurrences the
one first in Ψ order stays).  A template found inside *several* different
templates (a footer after a disclaimer on some pages, after a newsletter box on
others) is kept: it is the common unit.

The composite filter: a template each of whose occurrences is covered, token
for token, by occurrences of templates found on more documents is two (or more)
blocks that sit next to each other on some pages — a catalogue line right before
a signature on 20 of their 300 and 250 pages — and is dropped too. Again no
covered token changes: a covering template is on strictly more documents, so
following coverers ends at templates that are kept.
"""

from __future__ import annotations

import numpy as np

from . import _kernels_nesting as KN


def nested_templates(tid: np.ndarray, doc: np.ndarray, start: np.ndarray, end: np.ndarray,
                     n_templates: int) -> np.ndarray:
    """Which templates are fragments of another one.

    Parameters
    ----------
    tid, doc, start, end : int arrays of one length
        The occurrences: template (0 … n_templates-1, lower = first in Ψ order),
        document, token span (end exclusive); any order.
    n_templates : int

    Returns
    -------
    bool array [n_templates]
        True where every occurrence of the template lies inside an occurrence
        of one other template C (the same C for all of them) that is longer,
        or of the same span with a smaller id.
    """
    tid = np.asarray(tid, np.int64)
    doc, start, end = (np.asarray(x, np.int64) for x in (doc, start, end))
    out = np.zeros(n_templates, dtype=np.bool_)
    if tid.size == 0:
        return out
    # by (document, start); the order within one start does not matter to the kernel
    order = _by_position(doc, start)
    occ, con = KN.container_pairs(doc[order], start[order], end[order], tid[order])
    if occ.size == 0:
        return out
    t = tid[order][occ]
    key = np.sort(t * np.int64(n_templates) + con)       # (template, container) per occurrence
    bounds = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1], [True])))
    counts = np.diff(bounds)
    pair_t = key[bounds[:-1]] // n_templates
    n_occ = np.bincount(tid, minlength=n_templates)
    out[pair_t[counts == n_occ[pair_t]]] = True
    return out



def _by_position(doc: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The order of the occurrences by (document, start), stable."""
    if doc.max() < 2**31 and start.max() < 2**32 and start.min() >= 0:
        return np.argsort((doc << np.int64(32)) | start, kind="stable")
    return np.lexsort((start, doc))


def composite_templates(tid: np.ndarray, doc: np.ndarray, start: np.ndarray,
                        end: np.ndarray, df: np.ndarray) -> np.ndarray:
    """Which templates are composites: every occurrence covered by the union of
    occurrences of templates with a larger *df* (templates ``0 …
    len(df) - 1``; occurrences in any order).  Returns a bool array [len(df)]."""
    tid = np.asarray(tid, np.int64)
    doc, start, end = (np.asarray(x, np.int64) for x in (doc, start, end))
    df = np.asarray(df, np.int64)
    n_templates = df.size
    if tid.size == 0:
        return np.zeros(n_templates, dtype=np.bool_)
    order = _by_position(doc, start)
    cov = KN.covered_by_higher(doc[order], start[order], end[order], tid[order], df)
    n_occ = np.bincount(tid, minlength=n_templates)
    n_cov = np.bincount(tid[order][cov], minlength=n_templates)
    return (n_occ > 0) & (n_cov == n_occ)


def _drop(table, tid, doc, start, end, drop: np.ndarray) -> tuple:
    """*table* and the occurrence arrays without the templates *drop* marks, ids
    renumbered 0… in the same order."""
    import pyarrow as pa

    keep = ~drop[tid]
    new_id = np.cumsum(~drop) - 1
    table = table.filter(pa.array(~drop))
    table = table.set_column(table.schema.get_field_index("template_id"), "template_id",
                             pa.array(np.arange(table.num_rows, dtype=np.int64)))
    return table, (new_id[tid[keep]], doc[keep], start[keep], end[keep])


def _drop_redundant(table, tid: np.ndarray, doc: np.ndarray, start: np.ndarray,
                 end: np.ndarray) -> tuple:
    """*table* (``templates.parquet``, ids 0… in order) and the occurrence
    arrays without the fragments :func:`nested_templates` finds, then without
    the composites :func:`composite_templates` finds among the rest, ids
    renumbered 0… in the same order.  Returns ``(table, (tid, doc, start, end),
    n_fragments, n_composites)``."""
    drop = nested_templates(tid, doc, start, end, table.num_rows)
    n_nested = int(np.count_nonzero(drop))
    if n_nested:
        table, (tid, doc, start, end) = _drop(table, tid, doc, start, end, drop)
    df = table.column("df").to_numpy(zero_copy_only=False)
    drop = composite_templates(tid, doc, start, end, df)
    n_comp = int(np.count_nonzero(drop))
    if n_comp:
        table, (tid, doc, start, end) = _drop(table, tid, doc, start, end, drop)
    return table, (tid, doc, start, end), n_nested, n_comp
