"""Brute-force maximal contiguous frequent phrases: the oracle for every engine.

Obviously correct and slow (enumerates every n-gram of every length).
Returns {phrase tuple: (df, sorted list of global occurrence starts)} for the
maximal frequent phrases of length >= min_len.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np


def naive_phrases(tokens, doc_offsets, min_docs, min_len, groups=None):
    """With *groups* (one label per document) df counts distinct labels, not
    documents (df over near-duplicate clusters)."""
    tokens = [int(t) for t in np.asarray(tokens)]
    n_docs = len(doc_offsets) - 1
    group_of = list(range(n_docs)) if groups is None else [int(g) for g in groups]
    docs = [(int(doc_offsets[d]), int(doc_offsets[d + 1])) for d in range(len(doc_offsets) - 1)]
    occ = defaultdict(list)      # phrase -> global starts
    docset = defaultdict(set)    # phrase -> documents
    for d, (a, b) in enumerate(docs):
        for i in range(a, b):
            for j in range(i + 1, b + 1):
                p = tuple(tokens[i:j])
                occ[p].append(i)
                docset[p].add(group_of[d])
    frequent = {p for p, ds in docset.items() if len(ds) >= min_docs}
    extended = set()  # frequent phrases with a frequent one-token extension
    for p in frequent:
        if len(p) >= 2:
            if p[1:] in frequent:
                extended.add(p[1:])
            if p[:-1] in frequent:
                extended.add(p[:-1])
    return {p: (len(docset[p]), sorted(occ[p]))
            for p in frequent - extended if len(p) >= min_len}


def naive_coverage(tokens, doc_offsets, answer):
    """Per-position coverage (bool array) of the occurrences in *answer*."""
    mask = np.zeros(len(tokens), dtype=bool)
    for p, (_, starts) in answer.items():
        for s in starts:
            mask[s:s + len(p)] = True
    return mask


def naive_runs(cov, offsets):
    """The runs of covered positions (bool ``cov``) per document, as
    ``(document, start, end)`` with global positions, end exclusive."""
    runs = []
    for d in range(offsets.size - 1):
        p, b = int(offsets[d]), int(offsets[d + 1])
        while p < b:
            if cov[p]:
                q = p
                while q < b and cov[q]:
                    q += 1
                runs.append((d, p, q))
                p = q
            else:
                p += 1
    return runs


def as_runs(run_offsets, starts, ends):
    """``(run_offsets, starts, ends)`` of a covered-runs kernel in the form of
    :func:`naive_runs`."""
    return [(d, int(starts[i]), int(ends[i])) for d in range(run_offsets.size - 1)
            for i in range(run_offsets[d], run_offsets[d + 1])]


def block_corpus(rng, n_docs, vocab, max_len=30):
    """Random documents of up to *max_len* tokens over a small vocabulary, most
    holding one shared 8-token block, so that some n-grams are frequent.
    Returns ``(tokens int32, doc_offsets int64)``."""
    lens = rng.integers(0, max_len, size=n_docs)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    block = rng.integers(0, vocab, size=8)
    toks = []
    for n in lens:
        doc = list(rng.integers(0, vocab, size=int(n)))
        if n >= 8 and rng.random() < 0.7:
            at = int(rng.integers(0, n - 7))
            doc[at:at + 8] = list(block)
        toks += doc
    return np.array(toks, dtype=np.int32), offsets
