"""Parameters of boilerplate mining: :class:`PhraseConfig` and the engine names."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from ..errors import ParameterError
from ..limits import MAX_DOCS, MAX_FILTER_BYTES, MAX_LEN, MAX_LIST
from .groups import DF_OVER, DfOver
from .templates.config import TemplateConfig

__all__ = ["ENGINES", "Engine", "PhraseConfig"]

Engine = Literal["auto", "bloomspan", "suffix"]
ENGINES = ("auto", "bloomspan", "suffix")

# The flat ``summary.json`` parameters of the template layer and the
# TemplateConfig field each one stands for (:meth:`PhraseConfig.to_params`).
_TEMPLATE_PARAMS = (("max_gap", "max_gap"), ("template_parts", "short_parts"),
                    ("template_min_span", "min_span"), ("template_prune", "prune"),
                    ("template_merge_variants", "merge_variants"), ("template_ends", "ends"))
# ... and those recorded only when on / not their default (so that the
# parameters, and the scan's reuse keys, of a run that does not use them read
# as before): the slotted span as resolved for L, whenever it is on
_TEMPLATE_OPTIONAL = (("template_slotted_span", "slotted_min_span"),
                      ("template_short_slots", "short_slots"),
                      ("template_search_whole", "search_whole"),
                      ("template_variant_evidence", "variant_evidence"))


@dataclass(slots=True)
class PhraseConfig:
    """Parameters of boilerplate mining (the BloomSpan paper, §2 and §6).

    Attributes
    ----------
    min_docs : int or None
        σ: a phrase is frequent when it occurs in at least this many documents.
        None means "chosen from the corpus" (the scan job resolves it before
        mining); :func:`~repetend.phrases.find_phrases` needs an integer.
    min_len : int
        L: report maximal frequent phrases of at least this many tokens.
    engine : {"auto", "bloomspan", "suffix"}
        Mining engine; all give the same phrases.
    seed_len, filter_bytes : int or None
        ``bloomspan`` only: seed length and counting-filter size (None: its default).
    near_full_share : float
        Documents whose boilerplate share is at least this are drop candidates.
    top_k : int
        How many index eaters (phrases by Ψ) the summary lists.
    max_drop_candidates : int
        Cap on the drop candidates listed in the summary (all are counted).
    histogram_bins : int
        Bins of the per-document share histogram over [0, 1].
    templates : TemplateConfig or None
        Also find templates with variable parts (:mod:`repetend.phrases.templates`)
        with these parameters; an extra layer that leaves the exact phrases as
        they are (needs σ ≥ 2).  None: no template layer.  ``True`` and
        ``False`` are accepted for convenience and become ``TemplateConfig()``
        and None.  Its ``short_parts`` is the layer asked for: True (the
        default) lets templates have fixed parts shorter than ``min_len``;
        False only chains the exact phrases, about a third of the mining time
        instead of 2-4 times it on natural text (``docs/templates.md``), for
        less coverage.  Under ``memory_limit`` the layer may be run merge-only
        or skipped (:func:`~repetend.phrases.run_templates`).
    memory_limit : int, str or None
        Mine out of core (``bloomspan`` in shards over the memory-mapped store,
        seeds spilled to disk) keeping private memory under this many bytes
        (``"8G"`` works too); None mines in memory.
    df_over : {"documents", "clusters"}
        What df counts: distinct documents (the default), or distinct groups of
        documents — near-duplicate clusters, a document in none alone in its
        group — given to :func:`~repetend.phrases.find_phrases` as ``groups``
        (:mod:`repetend.phrases.groups`).  σ applies to that df.
    """

    min_docs: int | None = 20
    min_len: int = 10
    engine: Engine = "auto"
    seed_len: int | None = None
    filter_bytes: int | None = None
    near_full_share: float = 0.8
    top_k: int = 20
    max_drop_candidates: int = 1000
    histogram_bins: int = 20
    templates: TemplateConfig | None = field(default_factory=TemplateConfig)
    memory_limit: int | str | None = None
    df_over: DfOver = "documents"

    def __post_init__(self) -> None:
        if isinstance(self.templates, (bool, np.bool_)):
            self.templates = TemplateConfig() if self.templates else None

    def validate(self) -> "PhraseConfig":
        """Raise :class:`~repetend.errors.ParameterError` on a value out of its
        domain, the nested :class:`TemplateConfig` included."""
        def _int(name: str, lo: int, hi: int) -> None:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ParameterError(f"{name} must be an integer, got {v!r}")
            if not lo <= v <= hi:
                raise ParameterError(f"{name} must be in {lo}..{hi}, got {v}")

        if self.min_docs is not None:
            _int("min_docs", 1, MAX_DOCS)
        _int("min_len", 1, MAX_LEN)
        _int("top_k", 0, MAX_LIST)
        _int("max_drop_candidates", 0, MAX_LIST)
        _int("histogram_bins", 1, MAX_LIST)
        if self.df_over not in DF_OVER:
            raise ParameterError(f"df_over must be one of {', '.join(DF_OVER)}, "
                                 f"got {self.df_over!r}")
        if self.engine not in ENGINES:
            raise ParameterError(f"engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        for name, hi in (("seed_len", MAX_LEN), ("filter_bytes", MAX_FILTER_BYTES)):
            if getattr(self, name) is not None:
                _int(name, 1, hi)
        if not (0.0 < float(self.near_full_share) <= 1.0):
            raise ParameterError(
                f"near_full_share must be in (0, 1], got {self.near_full_share}")
        if self.templates is not None:
            if not isinstance(self.templates, TemplateConfig):
                raise ParameterError("templates must be a TemplateConfig, True, False or None, "
                                     f"got {self.templates!r}")
            self.templates.validate()
        return self

    def to_params(self) -> dict[str, Any]:
        """The flat parameters ``summary.json`` records (and :meth:`from_params`
        reads): the fields in order, ``templates`` as True/False followed by
        ``max_gap``, ``template_parts``, ``template_min_span`` and
        ``template_prune`` (TemplateConfig's ``max_gap``, ``short_parts``,
        ``min_span``, ``prune``; its defaults when there is no layer), then
        ``template_slotted_span`` (``slotted_min_span`` as the layer resolves it
        for L: 6 by default at L = 10) when on, ``template_short_slots``
        (``short_slots``) when not its default, ``template_search_whole``
        (``search_whole``) when on, ``template_variant_evidence``
        (``variant_evidence``) when on, and ``df_over`` when it is not ``"documents"`` (so that the
        parameters of a run that does not use them read as they always did)."""
        tcfg = self.templates if self.templates is not None else TemplateConfig()
        params: dict[str, Any] = {
            "min_docs": self.min_docs, "min_len": self.min_len, "engine": self.engine,
            "seed_len": self.seed_len, "filter_bytes": self.filter_bytes,
            "near_full_share": self.near_full_share, "top_k": self.top_k,
            "max_drop_candidates": self.max_drop_candidates,
            "histogram_bins": self.histogram_bins, "templates": self.templates is not None}
        for flat, name in _TEMPLATE_PARAMS:
            params[flat] = getattr(tcfg, name)
        # the slotted span as the layer runs it (resolved for L), and only when
        # on: a run with it off reads as before the option, and a directory
        # written before it became the default is not reused as if it had it
        slotted = (tcfg.resolved_slotted_span(self.min_len) if self.templates is not None
                   else None)
        if slotted is not None:
            params["template_slotted_span"] = slotted
        if tcfg.short_slots != TemplateConfig().short_slots:
            params["template_short_slots"] = tcfg.short_slots
        if tcfg.search_whole and self.templates is not None:
            params["template_search_whole"] = True
        if tcfg.variant_evidence and self.templates is not None:
            params["template_variant_evidence"] = True
        params["memory_limit"] = self.memory_limit
        if self.df_over != "documents":
            params["df_over"] = self.df_over
        return params

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> "PhraseConfig":
        """The config of flat parameters as :meth:`to_params` gives them
        (``summary.json`` of a phrases result); unknown keys are ignored."""
        known = {k: v for k, v in params.items()
                 if k in cls.__slots__ and k != "templates"}
        templates = None
        if params.get("templates", True):
            templates = TemplateConfig(**{name: params[flat] for flat, name
                                          in _TEMPLATE_PARAMS + _TEMPLATE_OPTIONAL
                                          if flat in params})
            # template_slotted_span is the span the run used, absent when off (as
            # in every summary written before "auto" was the default): "auto"
            # where that resolves to the same for this L, else that value
            ran = params.get("template_slotted_span")
            min_len = known.get("min_len", cls.__dataclass_fields__["min_len"].default)
            auto = replace(templates, slotted_min_span="auto").resolved_slotted_span(min_len)
            templates.slotted_min_span = "auto" if auto == ran else ran
            # recorded only when on: absent, the run had them off (every summary
            # written before they were on by default)
            templates.search_whole = bool(params.get("template_search_whole", False))
            templates.variant_evidence = bool(params.get("template_variant_evidence", False))
        return cls(**known, templates=templates)
