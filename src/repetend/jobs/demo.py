"""``repetend demo``: the web-like corpus, scanned, and held against its ground truth."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow.parquet as pq

from ..scandir import DUPS, PHRASES

__all__ = ["run_demo", "compare_with_truth"]


def run_demo(out: Path, *, pages: int = 3000, seed: int = 0,
             log: Callable[[str], None] = lambda m: None):
    """Generate ``out/corpus`` (web-like, ``pages`` pages), scan it into ``out/scan``,
    and return the scan result with lines comparing it to the planted truth."""
    from .scan import ScanConfig, scan
    from ..synth import weblike

    log(f"generating a web-like corpus of {pages} pages …")
    corpus = weblike(pages, seed=seed)
    paths = corpus.write(out / "corpus")
    command = f"repetend scan {paths['corpus']} --out {out / 'scan'}"
    res = scan([paths["corpus"]], out / "scan", ScanConfig(), command=command, log=log)
    return res, compare_with_truth(res, corpus.truth)


def _covered_char_masks(scan_dir: Path, store, tables=("occurrences",)) -> dict[int, np.ndarray]:
    """Per document (that has boilerplate) the characters inside the found spans
    of *tables*: phrase ``occurrences``, frequent ``spans``, ``template_occurrences``."""
    import pandas as pd

    occ = pd.concat([pq.read_table(scan_dir / PHRASES / f"{t}.parquet",
                                   columns=["doc_index", "start", "end"]).to_pandas()
                     for t in tables if (scan_dir / PHRASES / f"{t}.parquet").is_file()])
    masks: dict[int, np.ndarray] = {}
    for d, grp in occ.groupby("doc_index", sort=False):
        spans = store.token_spans(int(d))
        m = np.zeros(len(store.text(int(d))), dtype=bool)
        for s, e in zip(grp["start"].to_numpy(), grp["end"].to_numpy()):
            m[spans[s, 0]:spans[e - 1, 1]] = True
        masks[int(d)] = m
    return masks


def compare_with_truth(res, truth: dict) -> list[str]:
    """Lines saying how the scan's findings match what the generator planted."""
    lines = ["ground truth (planted by the generator):"]
    store = res.store
    params = res.summary["parameters"]
    id_to_index = {d: i for i, d in enumerate(store.doc_ids)}

    if res.summary["stages"]["phrases"]:
        min_docs = params["min_docs"]
        block_docs = Counter(s["block"] for d in truth["docs"] for s in d["spans"]
                             if s["block"] is not None)
        for tables, what in ((("occurrences",), "maximal-phrase occurrences"),
                             (("spans",), "frequent spans"),
                             (("spans", "template_occurrences"), "frequent spans + templates")):
            if not all((res.out / PHRASES / f"{t}.parquet").is_file() for t in tables):
                continue
            masks = _covered_char_masks(res.out, store, tables)
            planted = found = findable = findable_found = covered = 0
            for doc in truth["docs"]:
                d = id_to_index[doc["id"]]
                m = masks.get(d)
                for s in doc["spans"]:
                    if s["block"] is None:
                        continue
                    hit = int(m[s["start"]:s["end"]].sum()) if m is not None else 0
                    planted += s["end"] - s["start"]
                    found += hit
                    if block_docs[s["block"]] >= min_docs:
                        findable += s["end"] - s["start"]
                        findable_found += hit
                if m is not None:
                    covered += int(m.sum())
            lines.append(
                f"  boilerplate by {what}: {found / max(planted, 1):.1%} of the planted template "
                f"characters found ({findable_found / max(findable, 1):.1%} of those in blocks on "
                f"≥ σ = {min_docs} pages); precision {found / max(covered, 1):.1%} (marked characters "
                f"that lie in planted blocks)")

    if res.summary["stages"]["dups"]:
        t = params["threshold"]
        pairs = pq.read_table(res.out / DUPS / "pairs.parquet",
                              columns=["a_index", "b_index"]).to_pandas()
        found_pairs = {(min(a, b), max(a, b)) for a, b in zip(pairs["a_index"], pairs["b_index"])}
        clusters_path = res.out / DUPS / "clusters.parquet"
        cluster_of = {}
        if clusters_path.is_file():
            cl = pq.read_table(clusters_path, columns=["doc_index", "cluster_id"]).to_pandas()
            cluster_of = dict(zip(cl["doc_index"].tolist(), cl["cluster_id"].tolist()))
        by_kind: dict[str, list[int]] = {}
        for c in truth["copies"]:
            a, b = id_to_index[c["doc"]], id_to_index[c["source"]]
            if c["resemblance_w5"] < t:
                continue  # not a near-duplicate at this threshold by its own measure
            hit = (min(a, b), max(a, b)) in found_pairs or (
                a in cluster_of and cluster_of.get(a) == cluster_of.get(b))
            by_kind.setdefault(c["kind"], [0, 0])
            by_kind[c["kind"]][0] += int(hit)
            by_kind[c["kind"]][1] += 1
        total_hit = sum(v[0] for v in by_kind.values())
        total = sum(v[1] for v in by_kind.values())
        detail = ", ".join(f"{k} {h}/{n}" for k, (h, n) in sorted(by_kind.items()))
        lines.append(f"  near-duplicates: {total_hit}/{total} planted copies with 5-word "
                     f"resemblance ≥ {t} found ({detail})")
        below = sum(1 for c in truth["copies"] if c["resemblance_w5"] < t)
        if below:
            lines.append(f"  {below} planted copies resemble their source less than {t} "
                         f"(truncations, containment) and are not expected as pairs")
    return lines
