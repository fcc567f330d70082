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
    if doc.max() < 2**31 and start.max() < 2**32 and start.min() >= 0:
        order = np.argsort((doc << np.int64(32)) | start, kind="stable")
    else:
        order = np.lexsort((start, doc))
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



def _drop_nested(table, tid: np.ndarray, doc: np.ndarray, start: np.ndarray,
                 end: np.ndarray) -> tuple:
    """*table* (``templates.parquet``, ids 0… in order) and the occurrence
    arrays without the fragments :func:`nested_templates` finds, ids renumbered
    0… in the same order.  Returns ``(table, (tid, doc, start, end), n_dropped)``."""
    import pyarrow as pa

    drop = nested_templates(tid, doc, start, end, table.num_rows)
    n_drop = int(np.count_nonzero(drop))
    if n_drop == 0:
        return table, (tid, doc, start, end), 0
    keep = ~drop[tid]
    new_id = np.cumsum(~drop) - 1
    table = table.filter(pa.array(~drop))
    table = table.set_column(table.schema.get_field_index("template_id"), "template_id",
                             pa.array(np.arange(table.num_rows, dtype=np.int64)))
    return table, (new_id[tid[keep]], doc[keep], start[keep], end[keep]), n_drop
