"""Templates searched whole: each established template's pattern matched over
the whole token sequence, its slots open to any token of their kind.

A template is found through its fixed parts of L′ tokens on ≥ σ pages; an
instance whose slot values make those parts rare (an author's name in the
4-gram that holds «Posted by») is never in the gapped sequence, so a signature
on 1,000 pages may be found on 430 of them (``docs/templates.md``,
"Signatures").  Once a template is established (≥ σ documents, after variants
and ends), this pass looks for its pattern everywhere:

* the pattern is the template's fixed tokens and its slots, each slot with its
  kind — a *number* slot one all-digit token, a *word* slot tokens that are
  not all-digit, a *gap* slot any tokens — and the length range observed over
  the template's occurrences (at most ``max(max_gap, word_slots)``);
* one compiled scan (:mod:`._kernels_search`): the positions of every
  template's first fixed token are indexed at once (one pass over the token
  array, CSR by template), and at each of them the template is matched as a
  regular expression with lazy slots would (``.{lo,hi}?``: the first slot
  lengths, shortest first and the latest revised first, under which
  everything matches), inside one document;
* precedence: the occurrences already found come first; then the matches in
  the table's order (Ψ descending), within a template by position: a match
  that shares a token with one taken before is dropped, so body text that
  holds one fixed word of a template is never swallowed and two templates that
  share a fixed part stay two;
* every template that gained occurrences is counted again on all of them (df,
  span, slots and their top values, as :mod:`.variants` does), and the table is
  in Ψ order again.

Not searched: a template whose first or last element is a slot of more than
one observed length (where it starts or ends would be a guess), and one with
a gap slot — matched anywhere, such a slot between common fixed words takes in
body text («the ▢ of the ▢ the ▢ ▢ the» on the Debian store: 288 of 1,977
occurrences added there, all prose; ``docs/templates.md``, "Searched whole").
The pass is on by default (``TemplateConfig(search_whole=False)``,
``--no-template-search-whole`` turn it off): with variant evidence it finds
the planted signatures whose authors are rare (``docs/templates.md``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from . import _kernels_search as KSr
from .ends import _pattern
from .variants import _elements, _rebuild, _row, _slot_kinds, _vocab_maps

#: slot kind codes of the kernels
KIND_CODE = {"gap": 0, "word": 1, "number": 2}


def compile_patterns(els: list, kinds: list, lo: list, hi: list):
    """Kernel arrays of the patterns: ``els[t]`` element codes (a token id ≥ 0
    or a slot < 0; None: not searched), ``kinds[t]`` slot kind names,
    ``lo[t]``/``hi[t]`` slot length ranges.  Returns ``(pat_off, pats,
    slot_of, slot_elem, slot_off, kind, lo, hi, lead, head)``: ``lead`` the
    length of the slots before the first fixed token (``head``, -1 for a
    pattern not searched)."""
    pats, slot_of, slot_elem, kind, lo_a, hi_a, lead, head = [], [], [], [], [], [], [], []
    pat_off, slot_off = [0], [0]
    for t, el in enumerate(els):
        first, ld = -1, 0
        for i, v in enumerate(el or ()):
            if v >= 0:
                pats.append(v)
                slot_of.append(-1)
                if first < 0:
                    first = v
                continue
            k = len(kind) - slot_off[-1]
            pats.append(-1)
            slot_of.append(k)
            slot_elem.append(i)
            kind.append(KIND_CODE[kinds[t][k]])
            lo_a.append(lo[t][k])
            hi_a.append(hi[t][k])
            if first < 0:
                ld += lo[t][k]
        pat_off.append(len(pats))
        slot_off.append(len(kind))
        lead.append(ld)
        head.append(first)
    i64 = lambda x: np.array(x, dtype=np.int64)   # noqa: E731
    return (i64(pat_off), np.array(pats, dtype=np.int32), i64(slot_of), i64(slot_elem),
            i64(slot_off), i64(kind), i64(lo_a), i64(hi_a), i64(lead), i64(head))


def _taken(n_tok: int, ts: np.ndarray, te: np.ndarray) -> np.ndarray:
    """1 on every token inside one of the intervals ``[ts, te)``, else 0
    (uint8, one byte per token): the intervals merged into disjoint runs
    first, so that +1 / -1 at the runs' ends summed in place in int8 is 0 or 1
    (no int32/int64 array of the corpus' length)."""
    mark = np.zeros(n_tok + 1, dtype=np.int8)
    if ts.size:
        o = np.argsort(ts, kind="stable")
        s_, reach = ts[o], np.maximum.accumulate(te[o])
        new = np.ones(s_.size, dtype=bool)
        new[1:] = s_[1:] > reach[:-1]            # a run starts past all before it
        first = np.flatnonzero(new)
        last = np.r_[first[1:] - 1, s_.size - 1]
        starts, ends = s_[first], reach[last]
        keep = ends > starts
        mark[starts[keep]] = 1                   # distinct: the runs are disjoint
        mark[ends[keep]] = -1                    # and not adjacent
        np.cumsum(mark, out=mark)
    return mark[:n_tok].view(np.uint8)


def new_matches(tokens, is_num, doc_offsets, compiled, taken_s, taken_e):
    """The matches of the compiled patterns (:func:`compile_patterns`) kept
    after the intervals ``taken_s/taken_e`` (global token ranges already
    taken), in the precedence of the module docstring: ``(tpl, start, end)``
    sorted by template, then start."""
    pat_off, pats, slot_of, slot_elem, slot_off, kind, lo, hi, lead, head = compiled
    tokens = np.ascontiguousarray(tokens)
    doc_offsets = np.asarray(doc_offsets, np.int64)
    n_tok = int(tokens.size)
    taken = _taken(n_tok, np.asarray(taken_s, np.int64), np.asarray(taken_e, np.int64))
    # the positions of every head token, once: CSR by token, then by template
    searched = np.flatnonzero(head >= 0)
    heads = np.unique(head[searched])
    if heads.size:
        # a mask over the vocabulary (is_num has one entry per token id), not np.isin
        is_head = np.zeros(max(int(np.asarray(is_num).size), int(heads[-1]) + 1), dtype=bool)
        is_head[heads] = True
        pos = np.flatnonzero(is_head[tokens])
    else:
        pos = np.zeros(0, np.int64)
    pos_tok = tokens[pos]
    o = np.argsort(pos_tok, kind="stable")
    pos, pos_tok = pos[o], pos_tok[o]
    del o
    tok_lo = np.searchsorted(pos_tok, heads, side="left")
    tok_hi = np.searchsorted(pos_tok, heads, side="right")
    del pos_tok
    # each position's document, once (not per template sharing a head)
    pos = pos.astype(np.int64, copy=False)
    pos_d = np.searchsorted(doc_offsets, pos, side="right") - 1
    n_t = head.size
    # the candidates of template t in cand[cand_off[t]:cand_off[t + 1]], filled in
    # place (no list of per-template arrays concatenated: 8 B per candidate less)
    h_of = np.searchsorted(heads, head)          # exact for every searched template
    n_cand = np.zeros(n_t, dtype=np.int64)
    n_cand[searched] = tok_hi[h_of[searched]] - tok_lo[h_of[searched]]
    cand_off = np.zeros(n_t + 1, dtype=np.int64)
    np.cumsum(n_cand, out=cand_off[1:])
    cand = np.empty(int(cand_off[-1]), dtype=np.int64)
    cand_end = np.empty(int(cand_off[-1]), dtype=np.int64)
    for t in range(n_t):
        if head[t] < 0:
            continue
        h = int(h_of[t])
        a, z = int(tok_lo[h]), int(tok_hi[h])
        d = pos_d[a:z]
        p = cand[cand_off[t]:cand_off[t + 1]]
        np.subtract(pos[a:z], lead[t], out=p)
        p[p < doc_offsets[d]] = -1
        cand_end[cand_off[t]:cand_off[t + 1]] = doc_offsets[d + 1]
    del pos, pos_d
    return KSr.search_all(tokens, np.asarray(is_num, np.uint8), taken, pats, pat_off, slot_of,
                          slot_elem, kind, lo, hi, slot_off, cand, cand_end, cand_off)


def _slots(c, is_num, el, kinds, lo, hi, S, E):
    """Slot ranges ``(ss, se, ok)`` of occurrences ``[S, E)`` under slot
    bounds *lo*/*hi* and *kinds*."""
    comp = compile_patterns([el], [kinds], [lo], [hi])
    _, pats, slot_of, slot_elem, _, kind, lo_a, hi_a, _, _ = comp
    return KSr.slot_ranges(c.tokens, is_num, pats, slot_of, slot_elem, kind, lo_a, hi_a,
                           np.ascontiguousarray(S, np.int64), np.ascontiguousarray(E, np.int64))


def search_whole(c, table: pa.Table, tid, od, gs, ge, max_gap: int, word_slots: int,
                 top_values: int, groups=None, gap_slots: bool = False):
    """The pass of the module docstring over the template columns, in and out
    as :func:`.variants.merge_variants` (occurrences sorted by template,
    document, start).  Returns ``(table, (tid, od, gs, ge), counts)``:
    ``counts`` the templates searched, those that gained occurrences and the
    occurrences added.  A template with a gap slot is searched only with
    *gap_slots* (module docstring)."""
    n = table.num_rows
    counts = {"searched_templates": 0, "templates_grown": 0, "occurrences_added": 0}
    if n == 0 or c.vocab is None:
        return table, (tid, od, gs, ge), counts
    g = max(int(max_gap), int(word_slots), 1)
    parts = table.column("parts").to_pylist()
    kinds = _slot_kinds(table)
    word_id, is_num = _vocab_maps(c, parts)
    occ_lo = np.searchsorted(tid, np.arange(n + 1), side="left")
    els, los, his, old = [], [], [], {}
    for t in range(n):
        el = _elements(parts[t], kinds[t], word_id)
        a, z = int(occ_lo[t]), int(occ_lo[t + 1])
        rng = None
        if (el is not None and z > a and any(v >= 0 for v in el)
                and (gap_slots or "gap" not in kinds[t])):
            # its own occurrences, slots as gaps of 0 … g (numbers one token):
            # the slot ranges there and the length range of each slot
            k_any = ["number" if k == "number" else "gap" for k in kinds[t]]
            lo0 = [1 if k == "number" else 0 for k in kinds[t]]
            hi0 = [1 if k == "number" else g for k in kinds[t]]
            ss, se, ok = _slots(c, is_num, el, k_any, lo0, hi0, gs[a:z], ge[a:z])
            if ok.all():
                ln = se - ss
                lo_k = ln.min(axis=0).tolist() if ln.shape[1] else []
                hi_k = ln.max(axis=0).tolist() if ln.shape[1] else []
                # where it starts and ends is no guess: no slot of several
                # lengths at either end
                if not ((el[0] < 0 and lo_k[0] != hi_k[0])
                        or (el[-1] < 0 and lo_k[-1] != hi_k[-1])):
                    rng = (lo_k, hi_k)
                    old[t] = (ss, se)
        els.append(el if rng is not None else None)
        los.append(rng[0] if rng is not None else [])
        his.append(rng[1] if rng is not None else [])
    counts["searched_templates"] = len(old)
    if not old:
        return table, (tid, od, gs, ge), counts
    compiled = compile_patterns(els, kinds, los, his)
    nt, ns, ne = new_matches(c.tokens, is_num, c.doc_offsets, compiled,
                             np.asarray(gs, np.int64), np.asarray(ge, np.int64))
    if nt.size == 0:
        return table, (tid, od, gs, ge), counts
    doc_offsets = np.asarray(c.doc_offsets, np.int64)
    nd = np.searchsorted(doc_offsets, ns, side="right") - 1
    new_rows, new_occ = {}, {}
    bounds = np.flatnonzero(np.concatenate(([True], nt[1:] != nt[:-1], [True])))
    for j in range(bounds.size - 1):
        x, y = int(bounds[j]), int(bounds[j + 1])
        t = int(nt[x])
        a, z = int(occ_lo[t]), int(occ_lo[t + 1])
        ss_new, se_new, ok = _slots(c, is_num, els[t], kinds[t], los[t], his[t],
                                    ns[x:y], ne[x:y])
        ss_old, se_old = old[t]
        S = np.concatenate((np.asarray(gs[a:z], np.int64), ns[x:y]))
        E = np.concatenate((np.asarray(ge[a:z], np.int64), ne[x:y]))
        D = np.concatenate((np.asarray(od[a:z], np.int64), nd[x:y]))
        o = np.lexsort((S, D))
        S, E, D = S[o], E[o], D[o]
        SS = np.concatenate((ss_old, ss_new))[o]
        SE = np.concatenate((se_old, se_new))[o]
        elements = _pattern(els[t], kinds[t], g)[4]
        new_rows[t] = _row(c, table, t, S, E, D, SS, SE, elements, list(kinds[t]),
                           top_values, groups)
        new_occ[t] = (D, S, E)
        counts["occurrences_added"] += y - x
    counts["templates_grown"] = len(new_rows)
    table2, occ2 = _rebuild(c, table, tid, od, gs, ge, new_rows, new_occ, set())
    return table2, occ2, counts
