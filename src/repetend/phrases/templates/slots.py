"""Step 6: slot statistics of all patterns at once, and one table row per
template with its example surface text."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import InputError
from . import _kernels_slots as KS
from .config import TemplateConfig
from .result import SLOT
from .corpus import _Corpus, _strings


def _slot_stats(c: _Corpus, keys: list[np.ndarray], found: list[np.ndarray],
                t_start: np.ndarray, t_end: np.ndarray, gap_id: int, num_id: int,
                top_values: int, min_span: int, stats: tuple[np.ndarray, np.ndarray]
                ) -> tuple[dict, dict]:
    """Occurrence and slot statistics of all patterns at once (a few sorts over
    all occurrences instead of a few per pattern).

    Returns ``(occ, slots)``.  ``occ``: per occurrence (concatenated in pattern
    order, ``off`` the offsets) its global ``starts``/``ends`` and ``docs``; per
    pattern ``df``, ``span`` (median) and ``keep`` (occurs, median span ≥
    min_span).  ``slots``: per slot position of a kept pattern (``key``, ``pos``,
    in pattern order, ``first`` the index of a pattern's first slot) the value
    ranges ``ss``/``se`` of its occurrences (offsets ``off``), ``distinct``,
    ``empty``, and the top values as in ``np.unique`` + ``lexsort((uniq, -cnt))``
    (``top_first``: occurrence index of each one's first occurrence within the
    slot, ``top_count``, grouped by slot with offsets ``top_off``)."""
    n_keys = len(keys)
    klen = np.array([k.size for k in keys], dtype=np.int64)
    n_occ = np.array([x.size for x in found], dtype=np.int64)
    off = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum(n_occ, out=off[1:])
    q = np.concatenate(found).astype(np.int64, copy=False)
    key = np.repeat(np.arange(n_keys, dtype=np.int64), n_occ)
    starts = t_start[q]
    ends = t_end[q + klen[key] - 1]
    docs = np.searchsorted(c.doc_offsets, starts, side="right") - 1
    has = n_occ > 0
    med, df = stats
    keep = has & (med >= min_span)
    occ = {"off": off, "starts": starts.astype(np.int64, copy=False),
           "ends": ends.astype(np.int64, copy=False), "docs": docs, "df": df, "span": med,
           "keep": keep, "doc_len": np.diff(c.doc_offsets)[docs]}
    # the slot positions of the kept patterns
    sl_key_l, sl_pos_l = [], []
    for i in np.flatnonzero(keep).tolist():
        k = keys[i]
        js = np.flatnonzero((k == gap_id) | (k == num_id) | (k < 0))
        sl_key_l.append(np.full(js.size, i, np.int64))
        sl_pos_l.append(js.astype(np.int64))
    sl_key = np.concatenate(sl_key_l) if sl_key_l else np.zeros(0, np.int64)
    sl_pos = np.concatenate(sl_pos_l) if sl_pos_l else np.zeros(0, np.int64)
    n_sl = sl_key.size
    first = np.full(n_keys + 1, n_sl, dtype=np.int64)
    if n_sl:
        bnd = np.flatnonzero(np.concatenate(([True], sl_key[1:] != sl_key[:-1])))
        first[sl_key[bnd]] = bnd
    sl_n = n_occ[sl_key]
    sl_off = np.zeros(n_sl + 1, dtype=np.int64)
    np.cumsum(sl_n, out=sl_off[1:])
    ss, se = KS.slot_ranges(q, off, sl_key, sl_pos, sl_off, t_start, t_end)
    h = KS.value_hashes(c.tokens, ss, se)
    distinct, empty, top_first, top_count, top_off = KS.slot_values(h, ss, se, sl_off,
                                                                   np.int64(top_values))
    slots = {"key": sl_key, "pos": sl_pos, "first": first, "off": sl_off, "ss": ss, "se": se,
             "distinct": distinct, "empty": empty, "top_first": top_first,
             "top_count": top_count, "top_off": top_off}
    return occ, slots


def _template(c: _Corpus, inner: np.ndarray, key: int, occ: dict, sl: dict, gap_id: int,
              num_id: int, cfg: TemplateConfig) -> dict | None:
    """One candidate (gapped-sequence content *inner*, pattern *key* of the
    statistics of :func:`_slot_stats`) → a table row, or None when it is not a
    template."""
    tokens = c.tokens
    lo, hi = int(occ["off"][key]), int(occ["off"][key + 1])
    starts, ends, docs = occ["starts"][lo:hi], occ["ends"][lo:hi], occ["docs"][lo:hi]
    df = int(occ["df"][key])
    span_med = int(occ["span"][key])
    s_next = int(sl["first"][key])
    elements: list[tuple[str, Any]] = []      # ("f", [ids]) / ("s", slot index)
    slots: list[dict] = []
    slot_arrays: list[tuple[np.ndarray, np.ndarray]] = []
    fixed_run: list[int] = []                 # fixed ids since the last variable slot
    sl_off, sl_ss, sl_se, sl_distinct = sl["off"], sl["ss"], sl["se"], sl["distinct"]
    for v in inner.tolist():
        if not (v == gap_id or v == num_id or v < 0):
            fixed_run.append(v)
            continue
        skind = "gap" if v == gap_id else "number" if v == num_id else "word"
        s = s_next
        s_next += 1
        a, b = int(sl_off[s]), int(sl_off[s + 1])
        ss, se = sl_ss[a:b], sl_se[a:b]
        distinct = int(sl_distinct[s])
        if distinct == 1:                             # a constant: fixed text after all
            fixed_run.extend(tokens[int(ss[0]):int(se[0])].tolist())
            continue
        if fixed_run:
            elements.append(("f", fixed_run))
            fixed_run = []
        values = []
        for u in range(int(sl["top_off"][s]), int(sl["top_off"][s + 1])):
            i = int(sl["top_first"][u])
            values.append({"value": " ".join(_strings(c, tokens[int(ss[i]):int(se[i])])),
                           "count": int(sl["top_count"][u])})
        values.sort(key=lambda v: (-v["count"], v["value"]))
        slots.append({"slot": len(slots), "kind": skind, "distinct": distinct,
                      "empty": int(sl["empty"][s]), "top_values": values})
        slot_arrays.append((ss, se))
        elements.append(("s", len(slots) - 1))
    if fixed_run:
        elements.append(("f", fixed_run))
    if not slots:
        return None
    fixed = sum(len(v) for kind, v in elements if kind == "f")
    if fixed < cfg.min_fixed:
        return None
    parts = [" ".join(_strings(c, v)) if kind == "f" else SLOT
             for kind, v in elements]
    # example: an occurrence whose slots are all non-empty, if there is one
    nonempty = np.ones(starts.size, dtype=bool)
    for ss, se in slot_arrays:
        nonempty &= se > ss
    # (in the shortest such document: mapping tokens back to text costs its length)
    doc_len = occ["doc_len"][lo:hi]
    order = np.lexsort((starts, doc_len, ~nonempty))
    pick = int(order[0])
    d = int(docs[pick])
    base = int(c.doc_offsets[d])
    slot_ranges = {i: (int(ss[pick]) - base, int(se[pick]) - base)
                   for i, (ss, se) in enumerate(slot_arrays)}
    text = _surface(c, d, int(starts[pick]) - base, int(ends[pick]) - base, elements,
                    slot_ranges)
    if text is None:
        text = " ".join(parts)
    return {"parts": parts, "n_slots": len(slots), "slots": slots, "df": df,
            "occurrences": int(starts.size), "span_tokens": span_med, "fixed_tokens": fixed,
            "psi": span_med * df, "text": text, "_example_doc": d, "_occ": (lo, hi)}


def _surface(c: _Corpus, d: int, ls: int, le: int, elements: list, slot_ranges: dict
             ) -> str | None:
    """Surface text of tokens ``ls:le`` of document *d* with the variable slots
    (local token ranges in *slot_ranges*) shown as ``▢``; None when the
    store cannot map tokens back."""
    store = c.store
    if store is None:
        return None
    if d not in c.texts:
        try:
            c.texts[d] = (store.token_spans(d), store.text(d))
        except (NotImplementedError, InputError, AttributeError, OSError):
            c.texts[d] = None
    if c.texts[d] is None:
        return None
    spans, text = c.texts[d]
    out, pos = [], int(spans[ls, 0])
    for kind, val in elements:
        if kind != "s":
            continue
        a, b = slot_ranges[val]
        if b > a:
            ca, cb = int(spans[a, 0]), int(spans[b - 1, 1])
            out.append(text[pos:ca])
            out.append(SLOT)
            pos = cb
        else:
            ca = int(spans[a, 0]) if a < spans.shape[0] else int(spans[le - 1, 1])
            out.append(text[pos:ca])
            out.append(SLOT + " ")
            pos = ca
    out.append(text[pos:int(spans[le - 1, 1])])
    return "".join(out)
