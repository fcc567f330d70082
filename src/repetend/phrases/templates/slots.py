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
                t_start: np.ndarray, t_end: np.ndarray, t_doc: np.ndarray, gap_id: int,
                num_id: int, top_values: int, min_span: int,
                stats: tuple[np.ndarray, np.ndarray]) -> tuple[dict, dict]:
    """Occurrence and slot statistics of all kept patterns at once (a few
    compiled passes over their occurrences instead of a few per pattern).

    Returns ``(occ, slots)``.  ``occ``: per pattern ``df``, ``span`` (median),
    ``keep`` (occurs, median span ≥ min_span) and ``pick`` (the example
    occurrence, -1 without slots); per occurrence of a kept pattern
    (concatenated in pattern order, ``off`` the offsets: a pattern not kept has
    none) its global ``starts``/``ends``, ``docs`` and ``doc_len``.  ``slots``:
    per slot position of a kept pattern (``key``, ``pos``, in pattern order,
    ``first`` the index of a pattern's first slot) the value ranges ``ss``/``se``
    of its occurrences (offsets ``off``), ``distinct``, ``empty``, and the top
    values as in ``np.unique`` + ``lexsort((uniq, -cnt))`` (``top_first``:
    occurrence index of each one's first occurrence within the slot,
    ``top_count``, ``top_text`` the decoded value of a variable slot's entry,
    grouped by slot with offsets ``top_off``)."""
    n_keys = len(keys)
    med, df = stats
    n_occ = np.array([x.size for x in found], dtype=np.int64)
    keep = (n_occ > 0) & (med >= min_span)
    kept = np.flatnonzero(keep)
    kept_l = kept.tolist()
    # only the kept patterns' occurrences (a quarter of all on real text)
    n_occ = np.where(keep, n_occ, 0)
    off = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum(n_occ, out=off[1:])
    q = np.concatenate([found[i] for i in kept_l]).astype(np.int64, copy=False) if kept_l \
        else np.zeros(0, np.int64)
    klen = np.array([k.size for k in keys], dtype=np.int64)
    starts, ends, docs, doc_len = KS.kept_occurrences(
        q, off, kept, klen, t_start, t_end, t_doc, np.asarray(c.doc_offsets, np.int64))
    # the slot positions of the kept patterns
    kk = [keys[i] for i in kept_l]
    k_off = np.zeros(len(kk) + 1, dtype=np.int64)
    np.cumsum(klen[kept], out=k_off[1:])
    sl_key, sl_pos = KS.slot_positions(
        np.concatenate(kk).astype(np.int32, copy=False) if kk else np.zeros(0, np.int32),
        k_off, kept, np.int32(gap_id), np.int32(num_id))
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
    variable = distinct > 1
    pick = KS.example_picks(off, sl_key, sl_off, ss, se, variable, doc_len, starts,
                            np.int64(n_keys))
    occ = {"off": off, "starts": starts, "ends": ends, "docs": docs, "df": df, "span": med,
           "keep": keep, "doc_len": doc_len, "pick": pick}
    slots = {"key": sl_key, "pos": sl_pos, "first": first, "off": sl_off, "ss": ss, "se": se,
             "distinct": distinct, "empty": empty, "top_first": top_first,
             "top_count": top_count, "top_off": top_off,
             "top_text": _top_texts(c, ss, se, sl_off, variable, top_first, top_off)}
    return occ, slots


def _top_texts(c: _Corpus, ss: np.ndarray, se: np.ndarray, sl_off: np.ndarray,
               variable: np.ndarray, top_first: np.ndarray, top_off: np.ndarray
               ) -> list[str | None]:
    """The decoded text of every top value of a variable slot (None for the
    entries of a constant slot, never shown): the token ids of all of them
    gathered at once, each vocabulary string looked up once."""
    n_top = np.diff(top_off)
    slot_of = np.repeat(np.arange(n_top.size, dtype=np.int64), n_top)
    use = variable[slot_of]
    g = sl_off[slot_of[use]] + top_first[use]
    vs, ve = ss[g], se[g]
    lens = ve - vs
    v_off = np.zeros(lens.size + 1, dtype=np.int64)
    np.cumsum(lens, out=v_off[1:])
    ids = np.arange(int(v_off[-1]), dtype=np.int64) + np.repeat(vs - v_off[:-1], lens)
    words = _strings(c, c.tokens[ids])
    bounds = v_off.tolist()
    texts = [" ".join(words[bounds[i]:bounds[i + 1]]) for i in range(lens.size)]
    out: list[str | None] = [None] * int(top_off[-1])
    for u, x in zip(np.flatnonzero(use).tolist(), texts):
        out[u] = x
    return out


def _templates(c: _Corpus, keys: list[np.ndarray], occ: dict, sl: dict, gap_id: int,
               num_id: int, cfg: TemplateConfig) -> list[dict]:
    """The table rows of the kept patterns (statistics of :func:`_slot_stats`)
    that are templates, in pattern order: a variable slot, at least
    ``min_fixed`` fixed tokens (a constant slot is fixed text)."""
    tokens = c.tokens
    # Python lists once: the loop below reads them scalar by scalar
    off, first, pick_l = occ["off"].tolist(), sl["first"].tolist(), occ["pick"].tolist()
    df_l, span_l = occ["df"].tolist(), occ["span"].tolist()
    sl_off, sl_distinct, sl_empty = sl["off"].tolist(), sl["distinct"].tolist(), \
        sl["empty"].tolist()
    top_text, top_count, top_off = sl["top_text"], sl["top_count"].tolist(), \
        sl["top_off"].tolist()
    sl_ss, sl_se = sl["ss"], sl["se"]
    starts, ends, docs = occ["starts"], occ["ends"], occ["docs"]
    doc_offsets = c.doc_offsets
    rows = []
    for key in np.flatnonzero(occ["keep"]).tolist():
        s_next = first[key]
        elements: list[tuple[str, Any]] = []      # ("f", [ids]) / ("s", slot index)
        slots: list[dict] = []
        slot_idx: list[int] = []                  # the variable slots' global indices
        fixed_run: list[int] = []                 # fixed ids since the last variable slot
        for v in keys[key].tolist():
            if not (v == gap_id or v == num_id or v < 0):
                fixed_run.append(v)
                continue
            s = s_next
            s_next += 1
            distinct = sl_distinct[s]
            if distinct == 1:                         # a constant: fixed text after all
                a = sl_off[s]
                fixed_run.extend(tokens[int(sl_ss[a]):int(sl_se[a])].tolist())
                continue
            if fixed_run:
                elements.append(("f", fixed_run))
                fixed_run = []
            u0, u1 = top_off[s], top_off[s + 1]
            values = [{"value": x, "count": n} for x, n in zip(top_text[u0:u1], top_count[u0:u1])]
            values.sort(key=_value_order)
            slots.append({"slot": len(slots),
                          "kind": "gap" if v == gap_id else "number" if v == num_id else "word",
                          "distinct": distinct, "empty": sl_empty[s], "top_values": values})
            slot_idx.append(s)
            elements.append(("s", len(slots) - 1))
        if fixed_run:
            elements.append(("f", fixed_run))
        if not slots:
            continue
        fixed = sum(len(v) for kind, v in elements if kind == "f")
        if fixed < cfg.min_fixed:
            continue
        parts = [" ".join(_strings(c, v)) if kind == "f" else SLOT for kind, v in elements]
        # example: an occurrence whose slots are all non-empty, if there is one, in
        # the shortest such document (mapping tokens back to text costs its
        # length): chosen by :func:`_kernels_slots.example_picks`
        pick = pick_l[key]
        x = pick - off[key]
        d = int(docs[pick])
        base = int(doc_offsets[d])
        slot_ranges = {i: (int(sl_ss[sl_off[s] + x]) - base, int(sl_se[sl_off[s] + x]) - base)
                       for i, s in enumerate(slot_idx)}
        text = _surface(c, d, int(starts[pick]) - base, int(ends[pick]) - base, elements,
                        slot_ranges)
        if text is None:
            text = " ".join(parts)
        df, span = df_l[key], span_l[key]
        rows.append({"parts": parts, "n_slots": len(slots), "slots": slots, "df": df,
                     "occurrences": off[key + 1] - off[key], "span_tokens": span,
                     "fixed_tokens": fixed, "psi": span * df, "text": text,
                     "_example_doc": d, "_occ": (off[key], off[key + 1])})
    return rows


def _value_order(v: dict) -> tuple[int, str]:
    return -v["count"], v["value"]


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
