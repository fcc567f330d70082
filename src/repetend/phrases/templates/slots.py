"""Step 6: slot statistics of all patterns at once, the templates among them
(with their example surface text) and their table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from ...errors import InputError
from . import _kernels_slots as KS
from .config import TemplateConfig
from .result import SLOT, TEMPLATE_SCHEMA
from .corpus import _Corpus, _strings


# slot values held at once (about 40 bytes each while a batch is counted): the
# statistics are exact whatever the batch, only the memory is bounded
SLOT_BATCH = 1 << 22


def _slot_stats(c: _Corpus, keys: list[np.ndarray], found: list[np.ndarray],
                t_start: np.ndarray, t_end: np.ndarray, t_doc: np.ndarray, gap_id: int,
                num_id: int, top_values: int, min_span: int,
                stats: tuple[np.ndarray, np.ndarray],
                batch: int | None = None,
                slotted_min_span: int | None = None,
                min_fixed: int | np.ndarray | None = None) -> tuple[dict, dict]:
    """Occurrence and slot statistics of all kept patterns at once (a few
    compiled passes over their occurrences instead of a few per pattern).

    Returns ``(occ, slots)``.  ``occ``: per pattern ``df``, ``span`` (median),
    ``keep`` (occurs, median span ≥ min_span, or ≥ *slotted_min_span* for a
    pattern with a slot) and ``pick`` (the example
    occurrence, -1 without slots); per occurrence of a kept pattern
    (concatenated in pattern order, ``off`` the offsets: a pattern not kept has
    none) its global ``starts``/``ends``, ``docs`` and ``doc_len``.  ``slots``:
    per slot position of a kept pattern (``key``, ``pos``, in pattern order,
    ``first`` the index of a pattern's first slot, ``off`` the offsets of its
    values, one per occurrence) ``distinct``, ``empty``, the value range at the
    pattern's first occurrence (``first_ss``/``first_se``) and at its example
    occurrence (``pick_ss``/``pick_se``), and the top values as in
    ``np.unique`` + ``lexsort((uniq, -cnt))`` (``top_first``: occurrence index
    of each one's first occurrence within the slot, ``top_count``, its range
    ``top_ss``/``top_se``, grouped by slot with offsets ``top_off``).

    The values of all slots at all occurrences are never held at once: they are
    counted *batch* values at a time (slot by slot; a slot with more values is
    a batch of its own), so the memory is bounded by the occurrences, not by
    occurrences × slots.

    With *min_fixed* only the slots of patterns that can be templates (a
    variable slot, at least *min_fixed* fixed tokens with the constant slots)
    are counted whole; of the others' slots only ``first_ss``/``first_se``
    and whether they are constant (``distinct`` 1, else 2) are exact, with no
    top values, ``empty`` 0, and their pattern's ``pick`` not meaningful —
    what :func:`_templates` reads of a pattern it leaves out.  An array: the
    fewest fixed tokens of each pattern (variant evidence).  None: every
    slot counted."""
    batch = SLOT_BATCH if batch is None else int(batch)
    n_keys = len(keys)
    med, df = stats
    n_occ = np.array([x.size for x in found], dtype=np.int64)
    keep = (n_occ > 0) & (med >= min_span)
    if slotted_min_span is not None and slotted_min_span < min_span:
        # a short pattern with a slot: a template candidate like any other
        # (_templates still asks for a variable slot and min_fixed fixed tokens)
        has_slot = np.array([bool(np.any((k == gap_id) | (k == num_id) | (k < 0)))
                             for k in keys], dtype=bool)
        keep |= (n_occ > 0) & has_slot & (med >= slotted_min_span)
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
        q, off, kept, klen, t_start, t_end, t_doc, c.length_offsets())   # (for doc_len only)
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
    tokens = c.tokens
    # first, per slot, only whether it is constant (one distinct value: fixed
    # text after all) and its first value; a pattern that cannot be a
    # template (no variable slot, or fewer than *min_fixed* fixed tokens,
    # constant slots counted, as :func:`_templates` decides) is counted no
    # further: on real text those are mostly long runs of number and gap
    # slots (tables), with most of the slot values of all patterns
    const, first_ss, first_se = KS.constant_slots(tokens, q, off, sl_key, sl_pos, t_start,
                                                  t_end)
    distinct = np.where(const, 1, 2).astype(np.int64)   # 2: "at least 2" until counted
    empty = np.zeros(n_sl, dtype=np.int64)
    if min_fixed is None:
        sel = np.arange(n_sl, dtype=np.int64)
    else:
        fixed = klen - np.bincount(sl_key, minlength=n_keys)
        fixed = fixed + np.bincount(sl_key, weights=np.where(const, first_se - first_ss, 0),
                                    minlength=n_keys).astype(np.int64)
        has_var = np.bincount(sl_key, weights=~const, minlength=n_keys) > 0
        need = (np.asarray(min_fixed, dtype=np.int64) if np.ndim(min_fixed)
                else np.int64(min_fixed))
        sel = np.flatnonzero((has_var & (fixed >= need))[sl_key])
    occ_empty = np.zeros(q.size, dtype=np.bool_)  # some variable slot is empty there
    tops: list[tuple[np.ndarray, ...]] = []
    n_top = np.zeros(n_sl, dtype=np.int64)
    u_key, u_pos = sl_key[sel], sl_pos[sel]
    u_off = np.zeros(sel.size + 1, dtype=np.int64)
    np.cumsum(sl_n[sel], out=u_off[1:])
    n_u = int(sel.size)
    s0 = 0
    while s0 < n_u:
        s1 = int(np.searchsorted(u_off, u_off[s0] + max(batch, 1), side="right")) - 1
        s1 = min(max(s1, s0 + 1), n_u)
        b_off = u_off[s0:s1 + 1] - u_off[s0]
        ss, se = KS.slot_ranges(q, off, u_key[s0:s1], u_pos[s0:s1], b_off, t_start, t_end)
        h = KS.value_hashes(tokens, ss, se)
        b_dist, b_empty, b_first, b_count, b_top = KS.slot_values(h, ss, se, b_off,
                                                                  np.int64(top_values))
        del h
        b_sel = sel[s0:s1]
        distinct[b_sel], empty[b_sel] = b_dist, b_empty
        KS.mark_empty_occurrences(occ_empty, off, u_key[s0:s1], b_off, ss, se, b_dist > 1)
        g = np.repeat(b_off[:-1], np.diff(b_top)) + b_first
        tops.append((b_first, b_count, ss[g], se[g]))
        n_top[b_sel] = np.diff(b_top)
        del ss, se
        s0 = s1
    top_off = np.zeros(n_sl + 1, dtype=np.int64)
    np.cumsum(n_top, out=top_off[1:])
    cat = [np.concatenate([t[i] for t in tops]) if tops else np.zeros(0, np.int64)
           for i in range(4)]
    top_first, top_count, top_ss, top_se = cat
    pick = KS.example_picks(off, sl_key, occ_empty, doc_len, starts, np.int64(n_keys))
    pick_ss, pick_se = KS.pick_values(q, off, sl_key, sl_pos, pick, t_start, t_end)
    occ = {"off": off, "starts": starts, "ends": ends, "docs": docs, "df": df, "span": med,
           "keep": keep, "doc_len": doc_len, "pick": pick}
    slots = {"key": sl_key, "pos": sl_pos, "first": first, "off": sl_off,
             "first_ss": first_ss, "first_se": first_se, "pick_ss": pick_ss,
             "pick_se": pick_se, "distinct": distinct, "empty": empty,
             "top_first": top_first, "top_count": top_count, "top_ss": top_ss,
             "top_se": top_se, "top_off": top_off}
    return occ, slots


def _top_texts(c: _Corpus, vs: np.ndarray, ve: np.ndarray) -> list[str]:
    """The decoded text of top values (token ranges ``vs[u]:ve[u]``): the
    token ids of all of them gathered at once and looked up in the vocabulary
    in one pass."""
    lens = ve - vs
    v_off = np.zeros(lens.size + 1, dtype=np.int64)
    np.cumsum(lens, out=v_off[1:])
    ids = np.arange(int(v_off[-1]), dtype=np.int64) + np.repeat(vs - v_off[:-1], lens)
    words = _strings(c, c.tokens[ids])
    bounds = v_off.tolist()
    return [" ".join(words[bounds[i]:bounds[i + 1]]) for i in range(lens.size)]


def _templates(c: _Corpus, keys: list[np.ndarray], occ: dict, sl: dict, gap_id: int,
               num_id: int, cfg: TemplateConfig, min_fixed: np.ndarray | None = None) -> dict:
    """The kept patterns (statistics of :func:`_slot_stats`) that are
    templates — a variable slot, at least ``min_fixed`` fixed tokens (a
    constant slot is fixed text) — in pattern order, as columns: per template
    ``parts``, ``df``, ``occurrences``, ``span_tokens``, ``fixed_tokens``,
    ``text``, ``example_doc``, ``lo``/``hi`` (its occurrences in ``occ``) and
    ``n_slots``; per variable slot, template after template, ``slot_index``
    (in ``sl``) and ``kind``.  Columns, not a dict per row and per slot value:
    fewer Python objects (allocation and garbage-collector passes).
    *min_fixed*: the fewest fixed tokens of each pattern (variant evidence;
    None: ``cfg.min_fixed`` for all); a template below ``cfg.min_fixed`` (by
    variant evidence) needs at most half of its variable slots number slots."""
    tokens = c.tokens
    # Python lists once: the loop below reads them scalar by scalar
    off, first, pick_l = occ["off"].tolist(), sl["first"].tolist(), occ["pick"].tolist()
    df_l, span_l = occ["df"].tolist(), occ["span"].tolist()
    sl_distinct = sl["distinct"].tolist()
    first_ss, first_se = sl["first_ss"], sl["first_se"]
    pick_ss, pick_se = sl["pick_ss"], sl["pick_se"]
    starts, ends, docs = occ["starts"], occ["ends"], occ["docs"]
    doc_offsets = c.doc_offsets
    out: dict[str, list] = {k: [] for k in (
        "parts", "n_slots", "df", "occurrences", "span_tokens", "fixed_tokens", "text",
        "example_doc", "lo", "hi", "slot_index", "kind")}
    need_l = (np.asarray(min_fixed).tolist() if min_fixed is not None
              else [int(cfg.min_fixed)] * len(keys))
    for key in np.flatnonzero(occ["keep"]).tolist():
        s_next = first[key]
        elements: list[tuple[str, Any]] = []      # ("f", [ids]) / ("s", slot number)
        slot_idx: list[int] = []                  # the variable slots' global indices
        kinds: list[str] = []
        fixed_run: list[int] = []                 # fixed ids since the last variable slot
        for v in keys[key].tolist():
            if not (v == gap_id or v == num_id or v < 0):
                fixed_run.append(v)
                continue
            s = s_next
            s_next += 1
            if sl_distinct[s] == 1:                   # a constant: fixed text after all
                fixed_run.extend(tokens[int(first_ss[s]):int(first_se[s])].tolist())
                continue
            if fixed_run:
                elements.append(("f", fixed_run))
                fixed_run = []
            kinds.append("gap" if v == gap_id else "number" if v == num_id else "word")
            elements.append(("s", len(slot_idx)))
            slot_idx.append(s)
        if fixed_run:
            elements.append(("f", fixed_run))
        if not slot_idx:
            continue
        fixed = sum(len(v) for kind, v in elements if kind == "f")
        if fixed < need_l[key]:
            continue
        if fixed < cfg.min_fixed and 2 * kinds.count("number") > len(kinds):
            # variant evidence backs a word frame (an author's name), not a
            # number format: one fixed word among mostly number slots is a
            # time stamp or a list («Mon ▢ ▢ ▢:▢:▢ ▢», one per weekday)
            continue
        parts = [" ".join(_strings(c, v)) if kind == "f" else SLOT for kind, v in elements]
        # example: an occurrence whose slots are all non-empty, if there is one, in
        # the shortest such document (mapping tokens back to text costs its
        # length): chosen by :func:`_kernels_slots.example_picks`
        pick = pick_l[key]
        d = int(docs[pick])
        base = int(doc_offsets[d])
        slot_ranges = {i: (int(pick_ss[s]) - base, int(pick_se[s]) - base)
                       for i, s in enumerate(slot_idx)}
        text = _surface(c, d, int(starts[pick]) - base, int(ends[pick]) - base, elements,
                        slot_ranges)
        if text is None:
            text = " ".join(parts)
        out["parts"].append(parts)
        out["n_slots"].append(len(slot_idx))
        out["df"].append(df_l[key])
        out["occurrences"].append(off[key + 1] - off[key])
        out["span_tokens"].append(span_l[key])
        out["fixed_tokens"].append(fixed)
        out["text"].append(text)
        out["example_doc"].append(d)
        out["lo"].append(off[key])
        out["hi"].append(off[key + 1])
        out["slot_index"].extend(slot_idx)
        out["kind"].extend(kinds)
    return out


def _template_table(c: _Corpus, tpl: dict, sl: dict) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """``templates.parquet`` from the columns of :func:`_templates`, ordered by
    Ψ descending, then df descending, then parts (``template_id`` the rank),
    and the occurrence ranges (``lo``, ``hi`` in ``occ``) in that order.  The
    nested ``slots`` column is built from flat arrays."""
    n = len(tpl["parts"])
    df = np.array(tpl["df"], dtype=np.int64)
    span = np.array(tpl["span_tokens"], dtype=np.int64)
    psi = span * df
    psi_l, df_l, parts = psi.tolist(), tpl["df"], tpl["parts"]
    order = sorted(range(n), key=lambda i: (-psi_l[i], -df_l[i], parts[i]))
    # the slots: per variable slot its top values, most frequent first, ties by
    # value (the kernel breaks ties by hash: only slots with a tie are re-sorted)
    sel = np.array(tpl["slot_index"], dtype=np.int64)
    top_off = sl["top_off"]
    n_top = top_off[sel + 1] - top_off[sel]
    v_off = np.zeros(sel.size + 1, dtype=np.int64)
    np.cumsum(n_top, out=v_off[1:])
    u = np.arange(int(v_off[-1]), dtype=np.int64) + np.repeat(top_off[sel] - v_off[:-1], n_top)
    slot_of = np.repeat(sel, n_top)
    counts = sl["top_count"][u]
    texts = _top_texts(c, sl["top_ss"][u], sl["top_se"][u])
    tie = np.flatnonzero((counts[1:] == counts[:-1]) & (slot_of[1:] == slot_of[:-1]))
    if tie.size:
        counts_l = counts.tolist()
        bounds = v_off.tolist()
        for j in np.unique(np.searchsorted(v_off, tie, side="right") - 1).tolist():
            a, b = bounds[j], bounds[j + 1]
            seg = sorted(zip(counts_l[a:b], texts[a:b]), key=lambda v: (-v[0], v[1]))
            counts_l[a:b] = [x for x, _ in seg]
            texts[a:b] = [y for _, y in seg]
        counts = np.array(counts_l, dtype=np.int64)
    slot_t = TEMPLATE_SCHEMA.field("slots").type
    slot_struct = slot_t.value_type
    top_t = slot_struct.field("top_values").type
    top_values = pa.ListArray.from_arrays(
        pa.array(v_off.astype(np.int32)),
        pa.StructArray.from_arrays([pa.array(texts, pa.string()), pa.array(counts, pa.int64())],
                                   fields=list(top_t.value_type)), type=top_t)
    n_slots = np.array(tpl["n_slots"], dtype=np.int64)
    s_off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(n_slots, out=s_off[1:])
    slot_no = (np.arange(sel.size, dtype=np.int64) - np.repeat(s_off[:-1], n_slots))
    slots = pa.ListArray.from_arrays(
        pa.array(s_off.astype(np.int32)),
        pa.StructArray.from_arrays(
            [pa.array(slot_no.astype(np.int32)), pa.array(tpl["kind"], pa.string()),
             pa.array(sl["distinct"][sel]), pa.array(sl["empty"][sel]), top_values],
            fields=list(slot_struct)), type=slot_t)
    o = np.array(order, dtype=np.int64)
    cols = {"template_id": pa.array(np.arange(n, dtype=np.int64)),
            "parts": pa.array(parts, TEMPLATE_SCHEMA.field("parts").type).take(o),
            "n_slots": pa.array(n_slots.astype(np.int32)).take(o),
            "slots": slots.take(o),
            "df": pa.array(df[o]),
            "occurrences": pa.array(np.array(tpl["occurrences"], dtype=np.int64)[o]),
            "span_tokens": pa.array(span[o]),
            "fixed_tokens": pa.array(np.array(tpl["fixed_tokens"], dtype=np.int64)[o]),
            "psi": pa.array(psi[o]),
            "text": pa.array(tpl["text"], pa.string()).take(o),
            "example_doc_id": pa.array([c.doc_ids[tpl["example_doc"][i]] for i in order],
                                       pa.string())}
    table = pa.Table.from_arrays([cols[f] for f in TEMPLATE_SCHEMA.names], schema=TEMPLATE_SCHEMA)
    return (table, np.array(tpl["lo"], dtype=np.int64)[o], np.array(tpl["hi"], dtype=np.int64)[o])


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
