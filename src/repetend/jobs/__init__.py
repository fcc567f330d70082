"""Jobs that compose the library: the main job (:func:`scan`), cleaning a corpus
with what a scan found (:func:`clean_corpus`), and the demo (:func:`run_demo`).
They sit above every library package and below the command line, which maps
its options to their configs and calls one of them."""

from .clean import CleanConfig, CleanResult, clean_corpus
from .demo import compare_with_truth, run_demo
from .scan import ScanConfig, ScanResult, choose_min_docs, scan

__all__ = ["CleanConfig", "CleanResult", "ScanConfig", "ScanResult", "choose_min_docs",
           "clean_corpus", "compare_with_truth", "run_demo", "scan"]
