"""Variants merge: one template where a frequent slot value split it in several.

When a slot value is itself frequent (a city or a company on ≥ σ of a
footer's pages), its occurrences are an exact part, the chain there has no gap,
and the footer comes out as several templates: one with a slot, one with the
city as fixed text, one with the company as a word slot, one with both…  This
post-pass, over the templates found and their occurrences, groups such
*variants* and reports one template: its pattern has a slot wherever a variant
has one, its occurrences are all the variants' (trimmed to the shared part), and
its df, span and slot statistics are counted again on them — the frequent
value shows in the slot's top values.

Two templates R (the one of higher Ψ) and B are variants when their patterns
align element by element, where

* a fixed token equals a fixed token, a number slot a number slot, a word or gap
  slot a word or gap slot;
* a word/gap slot of one stands for 1 … g fixed tokens of the other
  (g = ``max(max_gap, word_slots)``);
* at each end B may run on past R by at most ``FLANK`` elements (the head
  «▢ Northwind» before «Ltd.»), never R past B (trimming R would lose what it
  covers); the merged template has R's extent;
* at least one slot stands for fixed text or differs in kind, or an end runs
  on (otherwise they are not variants but the same pattern);
* the tokens that agree are at least ``AGREE`` of each one's fixed tokens and at
  least two: two templates that share one fixed part but differ elsewhere
  («Posted by ▢ on ▢. Comments are closed …» and «Reviewed by ▢ on ▢. Shipping
  is free …») are not variants.

Groups are stars around the templates in Ψ order (a template is merged into the
first one of higher Ψ it is a variant of); the merged pattern is aligned in
every member's occurrences (compiled, :mod:`._kernels_variants`), and a member
whose occurrences do not all hold it stays a template of its own.
``TemplateConfig(merge_variants=False)`` (``--template-variants`` on the CLI)
keeps the variants.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

import numpy as np
import pyarrow as pa

from . import _kernels_slots as KS
from . import _kernels_variants as KV
from .corpus import _Corpus, _strings, _vocab_array
from .result import SLOT, TEMPLATE_SCHEMA
from .slots import _surface, _top_texts

#: elements one template may run on past the other at each end
FLANK = 3
#: fixed bigrams per template the candidate search keys it by (its rarest)
INDEX_BIGRAMS = 4
#: share of each template's fixed tokens that must agree with the other's
AGREE = 0.8

_VAR, _WORD, _NUM = -1, -2, -3      # element codes: a gap, word and number slot


def _vocab_maps(c: _Corpus, parts: list[list[str]]) -> tuple[dict, np.ndarray]:
    """The token id of every word of the templates' fixed parts (its first in
    the vocabulary) and the all-digit mask of the vocabulary (as the number
    slots of step 1), looked up in compiled code; the vocabulary array and the
    mask are kept on *c* for the next pass."""
    import pyarrow.compute as pc

    from .parts import _number_mask

    va = _vocab_array(c)
    if getattr(c, "_is_num", None) is None:
        mask = np.zeros(len(va) + 2, dtype=np.uint8)
        mask[:len(va)] = _number_mask(c)
        c._is_num = mask
    need = sorted({w for ps in parts for p in ps if p != SLOT for w in p.split(" ")})
    # the vocabulary probed in the few words needed (a hash of those, not of
    # the vocabulary); each word's first position in the vocabulary
    hit = pc.index_in(va, value_set=pa.array(need, pa.string())).fill_null(-1).to_numpy()
    pos = np.flatnonzero(hit >= 0)
    word, first = np.unique(hit[pos], return_index=True)
    return {need[w]: i for w, i in zip(word.tolist(), pos[first].tolist())}, c._is_num


def _slot_kinds(table: pa.Table) -> list[list[str]]:
    """Each row's slot kinds, read from the flat ``slots.kind`` column (no
    Python objects for the slots' top values)."""
    import pyarrow.compute as pc

    slots = table.column("slots")
    kind = pc.struct_field(pc.list_flatten(slots), "kind").to_pylist()
    ends = np.cumsum(pc.list_value_length(slots).fill_null(0).to_numpy()).tolist()
    return [kind[a:b] for a, b in zip([0] + ends[:-1], ends)]


def _elements(parts: list[str], kinds: list[str], word_id: dict) -> list[Any] | None:
    """A template's pattern as a list: token id (fixed) or a slot code."""
    out: list[Any] = []
    k = 0
    for p in parts:
        if p == SLOT:
            out.append({"number": _NUM, "word": _WORD}.get(kinds[k], _VAR))
            k += 1
            continue
        for w in p.split(" "):
            i = word_id.get(w)
            if i is None:
                return None
            out.append(i)
    return out


def _align(R: list, B: list, g: int) -> tuple | None:
    """Align R and B (see the module docstring).  Returns ``(r0, r1, var,
    agree, changed)``: R's elements ``r0:r1`` are the part both hold, ``var``
    the set of R positions that become a slot, or None."""
    nR, nB = len(R), len(B)
    # only B may run on past R: trimming R would lose what it covers there
    starts = [(0, j) for j in range(min(FLANK, nB - 1) + 1)]
    for i0, j0 in starts:
        res = _walk(R, B, i0, j0, g)
        if res is not None:
            i1, var, agree, changed = res
            return i0, i1, var, agree, changed or i0 > 0 or j0 > 0
    return None


def _walk(R: list, B: list, i: int, j: int, g: int):
    """Greedy walk from (i, j) to an end where the rest of one is ≤ FLANK."""
    nR, nB = len(R), len(B)
    var: set[int] = set()
    agree = 0
    changed = False
    while i < nR and j < nB:
        a, b = R[i], B[j]
        if a >= 0 and b >= 0:
            if a != b:
                return None
            agree += 1
            i += 1
            j += 1
        elif a < 0 and b < 0:
            if (a == _NUM) != (b == _NUM):
                return None
            changed = changed or a != b
            i += 1
            j += 1
        elif a < 0 and a != _NUM:    # R's slot stands for fixed tokens of B
            k = _run_to(B, j, R[i + 1] if i + 1 < nR else None, g)
            if k is None:
                return None
            i += 1
            j += k
            changed = True
        elif b < 0 and b != _NUM:    # B's slot stands for fixed tokens of R
            k = _run_to(R, i, B[j + 1] if j + 1 < nB else None, g)
            if k is None:
                return None
            var.update(range(i, i + k))
            i += k
            j += 1
            changed = True
        else:                        # a number slot against fixed text
            return None
    if i < nR or nB - j > FLANK:
        return None
    if i < nR or j < nB:
        changed = True
    return i, var, agree, changed


def _run_to(S: list, j: int, nxt, g: int) -> int | None:
    """Fixed tokens of S from j a slot stands for: the fewest (1 … g) after
    which S holds *nxt* (the other side's next element), or all up to the end."""
    for k in range(1, g + 1):
        if j + k > len(S) or S[j + k - 1] < 0:
            return None
        if nxt is None:
            if j + k == len(S):
                return k
            continue
        if j + k < len(S) and (S[j + k] == nxt or (nxt < 0 and S[j + k] < 0)):
            return k
    return None


def merge_variants(c: _Corpus, table: pa.Table, tid: np.ndarray, od: np.ndarray,
                   gs: np.ndarray, ge: np.ndarray, max_gap: int, word_slots: int,
                   top_values: int, groups=None):
    """Merge the variants of :class:`TemplateResult` columns (module docstring).

    *table* is in Ψ order, ``template_id`` its row; the occurrences ``tid, od,
    gs, ge`` (template, document, global start and end) sorted by (template,
    document, start).  Returns ``(table, (tid, od, gs, ge), n_merged)`` in the
    same form (Ψ order again, ids renumbered); unchanged when nothing merges."""
    n = table.num_rows
    if n < 2 or c.vocab is None:
        return table, (tid, od, gs, ge), 0
    parts = table.column("parts").to_pylist()
    kinds = _slot_kinds(table)
    fixed = table.column("fixed_tokens").to_numpy()
    word_id, is_num = _vocab_maps(c, parts)
    els = [_elements(parts[i], kinds[i], word_id) for i in range(n)]
    # fixed elements of each pattern: the tokens that agree are at most the
    # fewer of the two, so a pair below the AGREE bounds is never aligned
    n_fix = [sum(1 for v in e if v >= 0) if e is not None else 0 for e in els]
    g = max(int(max_gap), int(word_slots), 1)
    # candidate roots of each template: those holding one of its fixed bigrams
    # among their INDEX_BIGRAMS rarest (over the templates); a variant agrees
    # on ≥ 80 % of the fixed tokens, so it misses those only when they all
    # touch where it differs: a pair not checked stays two templates
    bigrams = [sorted({(a, b) for a, b in zip(e, e[1:]) if a >= 0 and b >= 0})
               if e is not None else [] for e in els]
    freq: dict[tuple, int] = {}
    for bg in bigrams:
        for x in bg:
            freq[x] = freq.get(x, 0) + 1
    index: dict[tuple, list[int]] = {}
    for i, bg in enumerate(bigrams):
        for x in sorted(bg, key=lambda x: (freq[x], x))[:INDEX_BIGRAMS]:
            index.setdefault(x, []).append(i)
    # Python lists: the loop reads them scalar by scalar
    root_of = list(range(n))
    fixed = fixed.tolist()
    plan: dict[int, list] = {}           # root -> [(member, alignment)]
    for b in range(1, n):
        eb = els[b]
        if eb is None:
            continue
        cand: set[int] = set()
        for x in bigrams[b]:
            rs = index.get(x)
            if rs is None:
                continue
            # each list ascends (templates indexed in order): those before b
            for r in rs[:bisect_left(rs, b)]:
                if root_of[r] == r:
                    cand.add(r)
        for r in sorted(cand):
            most = min(n_fix[r], n_fix[b])
            if most < 2 or most < AGREE * fixed[r] or most < AGREE * fixed[b]:
                continue                 # agree <= most fails the test below
            al = _align(els[r], eb, g)
            if al is None or not al[4]:
                continue
            agree = al[3]
            if agree < 2 or agree < AGREE * fixed[r] or agree < AGREE * fixed[b]:
                continue
            root_of[b] = r
            plan.setdefault(r, []).append((b, al))
            break
    if not plan:
        return table, (tid, od, gs, ge), 0
    occ_lo = np.searchsorted(tid, np.arange(n + 1), side="left")
    new_rows: dict[int, dict] = {}
    new_occ: dict[int, tuple] = {}
    gone: set[int] = set()
    for r, members in plan.items():
        eR = els[r]
        r0 = max(al[0] for _, al in members)
        r1 = min(al[1] for _, al in members)
        var = set().union(*[al[2] for _, al in members])
        kinds_r = iter(kinds[r])
        slot_kind = []
        pat, kind_of, elements, run = [], [], [], []
        prev_var = False
        for i, v in enumerate(eR):
            k_here = next(kinds_r) if v < 0 else None
            if i < r0 or i >= r1:
                continue
            if v >= 0 and i not in var:
                pat.append(v)
                run.append(v)
                prev_var = False
                continue
            if i in var and prev_var:
                continue                 # the same slot goes on
            prev_var = i in var
            if run:
                elements.append(("f", run))
                run = []
            pat.append(-1)
            kind_of.append(_NUM if v == _NUM else _VAR)   # word and gap: 0 … g tokens
            slot_kind.append(k_here if k_here is not None else "gap")
            elements.append(("s", len(kind_of) - 1))
        if run:
            elements.append(("f", run))
        pat_a = np.array(pat, dtype=np.int32)
        slot_of = np.cumsum(pat_a < 0) - 1
        lo = np.array([1 if k == _NUM else 0 for k in kind_of], dtype=np.int64)
        hi = np.array([1 if k == _NUM else g for k in kind_of], dtype=np.int64)
        group = [r] + [b for b, _ in members]
        got_s, got_e, got_ss, got_se, got_d, kept = [], [], [], [], [], []
        for t in group:
            a, z = int(occ_lo[t]), int(occ_lo[t + 1])
            s_, e_, ss, se, ok = KV.align_core(c.tokens, is_num, pat_a,
                                               slot_of.astype(np.int64), lo, hi,
                                               np.ascontiguousarray(gs[a:z], np.int64),
                                               np.ascontiguousarray(ge[a:z], np.int64),
                                               np.int64(FLANK * g))
            if not ok.all():
                if t == r:
                    break
                continue
            kept.append(t)
            got_s.append(s_), got_e.append(e_), got_ss.append(ss), got_se.append(se)
            got_d.append(od[a:z])
        if len(kept) < 2 or kept[0] != r:
            continue
        S, E = np.concatenate(got_s), np.concatenate(got_e)
        D = np.concatenate(got_d).astype(np.int64)
        SS, SE = np.concatenate(got_ss), np.concatenate(got_se)
        o = np.lexsort((E, S))
        S, E, D, SS, SE = S[o], E[o], D[o], SS[o], SE[o]
        u = np.ones(S.size, dtype=bool)
        u[1:] = (S[1:] != S[:-1]) | (E[1:] != E[:-1])
        S, E, D, SS, SE = S[u], E[u], D[u], SS[u], SE[u]
        new_rows[r] = _row(c, table, r, S, E, D, SS, SE, elements, slot_kind, top_values,
                           groups)
        new_occ[r] = (D, S, E)
        gone.update(kept[1:])
    if not new_rows:
        return table, (tid, od, gs, ge), 0
    return _rebuild(c, table, tid, od, gs, ge, new_rows, new_occ, gone) + (len(gone),)


def _row(c: _Corpus, table: pa.Table, r: int, S, E, D, SS, SE, elements, slot_kind,
         top_values: int, groups) -> dict:
    """The merged template's row, counted on its occurrences."""
    n_sl = SS.shape[1]
    off = np.arange(n_sl + 1, dtype=np.int64) * S.size
    ss = np.ascontiguousarray(SS.T).ravel()
    se = np.ascontiguousarray(SE.T).ravel()
    h = KS.value_hashes(c.tokens, ss, se)
    distinct, empty, first, count, top = KS.slot_values(h, ss, se, off, np.int64(top_values))
    g = np.repeat(off[:-1], np.diff(top)) + first
    texts = _top_texts(c, ss[g], se[g])
    slots = []
    for k in range(n_sl):
        vals = sorted(zip(count[top[k]:top[k + 1]].tolist(), texts[top[k]:top[k + 1]]),
                      key=lambda v: (-v[0], v[1]))
        slots.append({"slot": k, "kind": slot_kind[k], "distinct": int(distinct[k]),
                      "empty": int(empty[k]),
                      "top_values": [{"value": t, "count": n} for n, t in vals]})
    spans = np.sort(E - S)
    span = int(spans[spans.size // 2])
    df = int(np.unique(groups.label[D] if groups is not None else D).size)
    parts = [" ".join(_strings(c, v)) if kind == "f" else SLOT for kind, v in elements]
    # the example: the first occurrence, in the shortest document, with no empty slot
    full = np.flatnonzero((SE > SS).all(axis=1)) if n_sl else np.arange(S.size)
    pool = full if full.size else np.arange(S.size)
    len_off = c.length_offsets()                             # whole documents' lengths
    dl = len_off[D[pool] + 1] - len_off[D[pool]]             # not a diff of every document
    pick = int(pool[int(np.argmin(dl))])
    d = int(D[pick])
    base = int(c.doc_offsets[d])
    text = _surface(c, d, int(S[pick]) - base, int(E[pick]) - base, elements,
                    {k: (int(SS[pick, k]) - base, int(SE[pick, k]) - base) for k in range(n_sl)})
    return {"parts": parts, "n_slots": n_sl, "slots": slots, "df": df,
            "occurrences": int(S.size), "span_tokens": span,
            "fixed_tokens": sum(len(v) for kind, v in elements if kind == "f"),
            "psi": span * df, "text": text if text is not None else " ".join(parts),
            "example_doc_id": c.doc_ids[d]}


def _rebuild(c, table, tid, od, gs, ge, new_rows, new_occ, gone, extra=()):
    """The table with new rows in place of theirs, members out and *extra*
    rows (``(row, (docs, starts, ends))``) added, in Ψ order again; the
    occurrences renumbered and sorted by (template, document, start)."""
    n_rows = table.num_rows
    keep = [i for i in range(n_rows) if i not in gone]
    # the rows that stay as they are are taken from the table (no Python
    # objects for their slots); only the new ones are built from dicts
    added = [new_rows[i] for i in keep if i in new_rows] + [r for r, _ in extra]
    psi, df = table.column("psi").to_pylist(), table.column("df").to_pylist()
    parts = table.column("parts").to_pylist()
    src, sort_key, j = [], [], n_rows
    for i in keep:
        if i in new_rows:
            r = new_rows[i]
            src.append(j)
            j += 1
            sort_key.append((-r["psi"], -r["df"], r["parts"]))
        else:
            src.append(i)
            sort_key.append((-psi[i], -df[i], parts[i]))
    for r, _ in extra:
        src.append(j)
        j += 1
        sort_key.append((-r["psi"], -r["df"], r["parts"]))
    n_out = len(src)
    order = sorted(range(n_out), key=sort_key.__getitem__)
    rank_of = np.empty(n_out, dtype=np.int64)
    rank_of[np.array(order, dtype=np.int64)] = np.arange(n_out, dtype=np.int64)
    new_id = np.full(n_rows, -1, dtype=np.int64)
    new_id[np.array(keep, dtype=np.int64)] = rank_of[:len(keep)]
    both = pa.concat_tables([table, pa.Table.from_pylist(
        [{**r, "template_id": 0} for r in added], schema=TEMPLATE_SCHEMA)])
    t2 = both.take(pa.array(np.array(src, dtype=np.int64)[np.array(order, dtype=np.int64)]
                            if n_out else np.zeros(0, np.int64)))
    t2 = t2.set_column(0, TEMPLATE_SCHEMA.field(0),
                       pa.array(np.arange(n_out, dtype=np.int64))).combine_chunks()
    drop = np.isin(tid, np.array(sorted(set(gone) | set(new_rows)), dtype=np.int64))
    T = [new_id[tid[~drop]]]
    Dd, Ss, Ee = [od[~drop].astype(np.int64)], [gs[~drop]], [ge[~drop]]
    occs = [(new_id[r], occ) for r, occ in new_occ.items()] + \
           [(rank_of[len(keep) + j], occ) for j, (_, occ) in enumerate(extra)]
    for rid, (D, S, E) in occs:
        T.append(np.full(S.size, rid, dtype=np.int64))
        Dd.append(D), Ss.append(S), Ee.append(E)
    T, Dd, Ss, Ee = (np.concatenate(x) for x in (T, Dd, Ss, Ee))
    o = np.lexsort((Ss, Dd, T))
    return t2, (T[o], Dd[o], Ss[o], Ee[o])
