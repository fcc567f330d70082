"""Brute-force near-duplicate oracles: explicit Python sets, every pair compared.

Obviously correct and slow. Used by the tests of every near-duplicate method
(exact all-pairs, Broder, MinHash + LSH).

The Jaccard value is computed exactly like :func:`repetend.neardup.pairs.verify_pairs`
(float64 ``inter / union``) and compared with the threshold in float64, so
"J >= t" means the same thing in the oracle and in the fast paths.
"""

from __future__ import annotations

import numpy as np


def sets_as_python(sets) -> list[set[int]]:
    """``ShingleSets`` -> one Python set of ints per document."""
    h = np.asarray(sets.hashes)
    off = np.asarray(sets.offsets)
    return [set(int(x) for x in h[off[d]:off[d + 1]]) for d in range(off.shape[0] - 1)]


def sets_from_python(py_sets, k: int = 1):
    """A list of Python sets of non-negative ints -> ``ShingleSets`` (sorted, distinct)."""
    from repetend.neardup.shingles import ShingleSets

    parts = [np.array(sorted(s), dtype=np.uint64) for s in py_sets]
    sizes = np.array([p.size for p in parts], dtype=np.int64)
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    hashes = np.concatenate(parts) if parts else np.empty(0, np.uint64)
    return ShingleSets(hashes.astype(np.uint64), offsets, k)


def measures(sa: set, sb: set) -> tuple[float, float, float]:
    """(Jaccard, containment of a in b, containment of b in a); 0 for empty sets."""
    inter = len(sa & sb)
    union = len(sa) + len(sb) - inter
    j = float(np.float64(inter) / np.float64(union)) if union else 0.0
    cab = float(np.float64(inter) / np.float64(len(sa))) if sa else 0.0
    cba = float(np.float64(inter) / np.float64(len(sb))) if sb else 0.0
    return j, cab, cba


def naive_pairs(py_sets, threshold: float) -> dict[tuple[int, int], tuple[float, float, float]]:
    """Every pair (a, b), a < b, of non-empty sets with J >= threshold:
    ``{(a, b): (J, c_ab, c_ba)}``."""
    out = {}
    n = len(py_sets)
    for a in range(n):
        if not py_sets[a]:
            continue
        for b in range(a + 1, n):
            if not py_sets[b]:
                continue
            j, cab, cba = measures(py_sets[a], py_sets[b])
            if j >= threshold:
                out[(a, b)] = (j, cab, cba)
    return out


def naive_all_measures(py_sets) -> dict[tuple[int, int], tuple[float, float, float]]:
    """(J, c_ab, c_ba) of every pair of non-empty sets that share at least one element."""
    out = {}
    n = len(py_sets)
    for a in range(n):
        for b in range(a + 1, n):
            if py_sets[a] & py_sets[b]:
                out[(a, b)] = measures(py_sets[a], py_sets[b])
    return out


def pairs_as_dict(pairs) -> dict[tuple[int, int], tuple[float, float, float]]:
    """A ``Pairs`` result -> the oracle's dict shape."""
    return {(int(a), int(b)): (float(j), float(x), float(y))
            for a, b, j, x, y in zip(pairs.a, pairs.b, pairs.jaccard,
                                     pairs.containment_ab, pairs.containment_ba)}


def naive_exact_groups(texts, canon) -> np.ndarray:
    """Label of each text = smallest index whose canonical form is equal."""
    first: dict[str, int] = {}
    out = np.empty(len(texts), dtype=np.int64)
    for i, t in enumerate(texts):
        c = canon(t)
        out[i] = first.setdefault(c, i)
    return out


def naive_broder(py_sets, doc_n_tokens, max_bucket=None, moduli=(10, 20, 40), bounds=(100, 1000)):
    """Broder's sampled estimates by explicit pairwise comparison (seed 004).

    Each document's modulus m comes from its word count; a pair is compared on
    the coarser modulus M = max(m_a, m_b): V_M = {h in S : h % M == 0}. Hashes
    that are own samples of more than ``max_bucket`` documents are ignored.
    Returns ``{(a, b): (common, J_est, c_ab_est, c_ba_est)}`` for pairs with >= 1
    common sample.
    """
    def mod_of(n):
        r = sum(1 for b in bounds if n >= b)
        return moduli[r]

    mods = [mod_of(int(n)) for n in doc_n_tokens]
    skip = set()
    if max_bucket is not None:
        owners: dict[int, int] = {}
        for d, s in enumerate(py_sets):
            for h in s:
                if h % mods[d] == 0:
                    owners[h] = owners.get(h, 0) + 1
        skip = {h for h, c in owners.items() if c > max_bucket}
    out = {}
    for a in range(len(py_sets)):
        for b in range(a + 1, len(py_sets)):
            m = max(mods[a], mods[b])
            va = {h for h in py_sets[a] if h % m == 0}
            vb = {h for h in py_sets[b] if h % m == 0}
            c = len((va & vb) - skip)
            if c:
                out[(a, b)] = (c, c / (len(va) + len(vb) - c), c / len(va), c / len(vb))
    return out
