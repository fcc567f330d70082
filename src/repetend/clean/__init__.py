"""Cutting a corpus: what cleaning does to each document of a scan (the one
planning code, :mod:`repetend.clean.plan`), the cut plan of a document
(merged, tidied spans, undoable) and the writers of each input format.  The
job that cleans a corpus with what a scan found is
:func:`repetend.jobs.clean_corpus`."""

from .plan import (DECISIONS, CleanConfig, CleanPlan, DocPlan, decision_counts, decisions_table,
                   plan_clean, read_decisions, write_decisions)
from .spans import Cut, apply_cuts, plan_cuts, undo_cuts
from .writers import make_writer, open_output

__all__ = ["DECISIONS", "CleanConfig", "CleanPlan", "Cut", "DocPlan", "apply_cuts", "decision_counts",
           "decisions_table", "make_writer", "open_output", "plan_clean", "plan_cuts", "read_decisions",
           "undo_cuts", "write_decisions"]
