"""Parameters of the template layer."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...errors import ParameterError
from ...limits import MAX_GAP, MAX_LEN


@dataclass(slots=True)
class TemplateConfig:
    """Parameters of the template layer.

    Attributes
    ----------
    max_gap : int
        g: longest slot between two fixed parts, in tokens (0 … g).
    part_len : int or None
        L': shortest fixed part when ``short_parts`` (default ``min(L, 4)``).
    short_parts : bool
        Mine the fixed parts again at L' (numbers masked); False chains the
        given exact phrases only (no second mining run).
    mask_numbers : bool
        With ``short_parts``: every all-digit token is a one-token slot
        (needs the vocabulary).
    min_span : int or None
        Shortest template (median occurrence span, slots included; default L).
    slotted_min_span : int, "auto" or None
        Shortest template *with at least one slot* (median occurrence span).
        ``"auto"`` (the default): L' + 2 (6 for L = 10: the shortest pattern
        that is one fixed part of L' tokens, a slot and one more fixed token)
        when the parts are mined at L' (``short_parts``) and that is below
        ``min_span``; otherwise off (:meth:`resolved_slotted_span`).  None or 0:
        off, ``min_span`` for all (the tables before this default).  A
        slot-free pattern shorter than L is a short exact phrase and stays
        out; a slotted one («© ▢ Northlab Company. All rights reserved», 6
        tokens) is counted like any other template (≥ σ documents, ≥
        ``min_fixed`` fixed tokens).
    short_slots : {"word", "number", "any"}
        With ``slotted_min_span`` on: which variable slots a template shorter
        than ``min_span`` may have.  ``"word"`` (the default): number and word
        slots (one token; a word slot's values are on ≥ σ documents each: the
        company names footers shared in wording differ in), no gap slot — a
        short pattern with a gap slot («the ▢ ⏎ ▢ be», «to ▢ must be») is
        mostly natural language recurring by chance (``docs/templates.md``,
        "Short blocks").  ``"number"``: number slots only (a year, a count, a
        version, a date in a fixed frame).  ``"any"``: every slot kind.
    min_fixed : int
        Fewest fixed tokens in a template.
    variant_evidence : bool
        Also keep a template with fewer than ``min_fixed`` fixed tokens (but
        at least one) when it is the merge of ≥ 2 word-slot variants each of
        which has ``min_fixed`` fixed tokens («Автор: ▢ ▢, ▢ ▢ ▢»: one fixed
        word once the authors are merged into word slots, two or more in each
        author's variant), and when at most half of its variable slots are
        number slots.  A pattern found directly with one fixed token («Feb ▢
        ▢:▢:▢ ▢») still goes, and so does a merged one over mostly numbers
        (time stamps «Mon ▢ ▢ ▢:▢:▢ ▢», the months merged into a word slot).
        False: ``min_fixed`` for all (the tables before this default).
    top_values : int
        Slot values listed per slot (the most frequent first).
    rounds : int
        Peeling rounds of the chain miner (1: maximal chains only).
    word_slots : int
        Candidates that differ only in a window of up to this many words are
        merged into one template with word slots there (an author's name, a
        month); 0: off.
    join_share : float
        Two patterns, one shorter than ``min_span``, that overlap or touch are
        joined when they do so in at least this share of the documents of the
        rarer one (and in ≥ σ documents); 1.0 is strictest.
    drop_nested : bool
        Drop a template whose every occurrence lies inside an occurrence of
        one same other template (a fragment of it; :mod:`.nesting`).  No
        covered token is lost.
    prune : bool
        Leave out of the gapped sequence every chain of runs (runs linked by
        stretches of ≤ g tokens) too short to hold a template: its tokens
        plus g per link fewer than ``min_span`` (:mod:`.links`).  Cheaper on
        natural text (the layer 13 % on the Debian store, 22 % on the Zipfian
        corpus), but short fragments then lose the occurrences they had in
        short chains, and joins built on them can go: off by default.
    merge_variants : bool
        Report one template where a frequent slot value (a city on ≥ σ of a
        footer's pages) split it into variants (:mod:`.variants`); False keeps
        the variants as separate templates.
    ends : bool
        Extend a template by the short fixed parts and slots at its ends that
        recur on its pages («posted by ▢ ▢» before «on ▢.▢.▢ …»; :mod:`.ends`).
    ends_share : float
        The share of a template's documents where such an end must be found
        (and in ≥ σ documents).
    search_whole : bool
        Search every established template's pattern over the whole token
        sequence, its slots open to any token of their kind and observed
        length (:mod:`.search`): the instances whose slot values hid its
        fixed parts are found too; occurrences found before take precedence.
        On by default (with ``variant_evidence`` it brings the planted
        signatures of the web-like generator from 44 % to 99.9 % in one
        template); False: the tables before this default.
    engine : {"bloomspan", "suffix", "auto"}
        How the parts are found (the same parts with any): ``bloomspan`` and
        ``auto`` count the L'-grams with bloomspan's filters (no phrase is
        grown); ``suffix`` mines the maximal phrases at L' with the suffix
        engine and scans their windows (slower; an independent path).
    """

    max_gap: int = 4
    part_len: int | None = None
    short_parts: bool = True
    mask_numbers: bool = True
    min_span: int | None = None
    slotted_min_span: int | str | None = "auto"
    short_slots: str = "word"
    min_fixed: int = 2
    variant_evidence: bool = True
    top_values: int = 5
    rounds: int = 3
    word_slots: int = 2
    join_share: float = 0.5
    engine: str = "bloomspan"
    drop_nested: bool = True
    prune: bool = False
    merge_variants: bool = True
    ends: bool = True
    ends_share: float = 0.9
    search_whole: bool = True

    def validate(self) -> "TemplateConfig":
        """Raise :class:`~repetend.errors.ParameterError` on a value out of its domain."""
        for name, lo, hi in (("max_gap", 0, MAX_GAP), ("min_fixed", 0, MAX_LEN),
                             ("top_values", 0, MAX_LEN), ("part_len", 1, MAX_LEN),
                             ("min_span", 1, MAX_LEN), ("slotted_min_span", 1, MAX_LEN),
                             ("rounds", 1, MAX_LEN),
                             ("word_slots", 0, MAX_LEN)):
            v = getattr(self, name)
            if v is None and name in ("part_len", "min_span", "slotted_min_span"):
                continue
            if name == "slotted_min_span" and (
                    (isinstance(v, str) and v == "auto")
                    or (isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v == 0)):
                continue                                  # the default, and 0: off
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ParameterError(f"templates: {name} must be an integer"
                                     + (', "auto" or None' if name == "slotted_min_span" else "")
                                     + f", got {v!r}")
            if not lo <= v <= hi:
                raise ParameterError(f"templates: {name} must be in {lo}..{hi}, got {v}")
        for name in ("short_parts", "mask_numbers", "drop_nested", "prune", "merge_variants",
                     "ends", "search_whole", "variant_evidence"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ParameterError(f"templates: {name} must be True or False, "
                                     f"got {getattr(self, name)!r}")
        if not (0.0 <= float(self.join_share) <= 1.0):
            raise ParameterError(f"templates: join_share must be in [0, 1], got {self.join_share}")
        if not (0.0 < float(self.ends_share) <= 1.0):
            raise ParameterError(f"templates: ends_share must be in (0, 1], got {self.ends_share}")
        if self.short_slots not in ("number", "word", "any"):
            raise ParameterError(f"templates: short_slots must be number, word or any, "
                                 f"got {self.short_slots!r}")
        if self.engine not in ("auto", "bloomspan", "suffix"):
            raise ParameterError(f"templates: engine must be auto, bloomspan or suffix, "
                                 f"got {self.engine!r}")
        return self

    def resolved_slotted_span(self, min_len: int) -> int | None:
        """The ``slotted_min_span`` a run at L = *min_len* uses: an integer, or
        None for off.

        ``"auto"`` is L' + 2 (L' = ``part_len``, default ``min(L, 4)``: 6 for
        L ≥ 4) when ``short_parts`` and L' + 2 < ``min_span`` (default L), and
        off otherwise: in merge-only every fixed part is an exact phrase of ≥ L
        tokens, and a value ≥ ``min_span`` keeps nothing more.  0 is off; an
        integer is used as given."""
        v = self.slotted_min_span
        if v is None or (not isinstance(v, str) and int(v) == 0):
            return None
        if isinstance(v, str):
            if not self.short_parts:
                return None
            part = int(self.part_len) if self.part_len is not None else min(int(min_len), 4)
            span = int(self.min_span) if self.min_span is not None else int(min_len)
            return part + 2 if part + 2 < span else None
        return int(v)

    def resolved(self, min_len: int) -> "TemplateConfig":
        """This config with ``slotted_min_span`` as :meth:`resolved_slotted_span`
        gives it for L = *min_len* (an integer or None; itself when unchanged)."""
        v = self.resolved_slotted_span(min_len)
        if v == self.slotted_min_span and not isinstance(self.slotted_min_span, str):
            return self
        return replace(self, slotted_min_span=v)
