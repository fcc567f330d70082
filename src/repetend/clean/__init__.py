"""Cutting a corpus: the cut plan of a document (merged, tidied spans, undoable)
and the writers of each input format.  The job that cleans a corpus with what a
scan found is :func:`repetend.jobs.clean_corpus`."""

from .spans import Cut, apply_cuts, plan_cuts, undo_cuts
from .writers import make_writer, open_output

__all__ = ["Cut", "apply_cuts", "make_writer", "open_output", "plan_cuts", "undo_cuts"]
