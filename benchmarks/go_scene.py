"""The seed 003 scene on the Go standard library, side by side with the seed's figures.

Usage::

    apt-get install -y golang-1.19-src        # or golang-src; any GOROOT works
    .venv/bin/python benchmarks/go_scene.py [GOROOT/src] [--min-shingles N] [--brute]

Files: every ``*.go`` file under GOROOT/src except ``*_test.go`` and anything
under a ``testdata/`` directory; then "tiny" files (fewer than ``--min-shingles``
distinct 5-token shingles, default 50) are dropped -- the seed says only "not
counting tests and very small ones". Tokens: Go tokens from Pygments' GoLexer,
comments and whitespace dropped (``TokenStore.from_texts(..., unit="code")``).
Shingles: 5 tokens. MinHash: K = 48, splitmix64 with 48 seeds
(:mod:`repetend.neardup.minhash`), LSH 12 × 4 and 16 × 3
(:mod:`repetend.neardup.lsh`). The exact truth (every pair with J >= 0.5)
comes from :func:`repetend.neardup.allpairs.all_pairs`, checked against a
compiled brute force over all size-compatible pairs.

Figures differ from the seed because (1) the Go version differs: Debian
bookworm ships Go 1.19, the seed used a Go with ``math/rand/v2`` and
``bytes/iter.go`` (>= 1.23); (2) Pygments' Go lexer is not ``go/scanner`` (it
splits some literals and operators differently, and no automatic semicolons);
(3) our shingle hashes are 64-bit (the seed's listing folds shingles with
CRC-32 first) and the MinHash seeds differ, so per-pair estimates differ;
(4) the tiny-file rule is ours.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

from repetend.corpus.store import TokenStore
from repetend.neardup.allpairs import all_pairs_join
from repetend.neardup.broder import broder
from repetend.neardup.pairs import intersection_sizes
from repetend.neardup.shingles import shingle_sets, token_hashes

SEED = {
    "files": 3093, "pairs": 4_781_778, "cand_12x4": 1848, "true_05": 1537, "found_12x4": 1384,
    "reader": (601, 578, 495, 0.724, 0.792), "cand_16x3": 3133, "recall_16x3": 0.99,
    "six_pairs": 9591, "six_cand": 59, "six_true": 59, "gofmt": 0.994,
    "avg_shingles": 2255, "total_shingles": 7_000_000, "cand_1x48": 388_000,
}
SIX = ["bytes", "strings", "math/rand", "math/rand/v2", "go/types", "cmd/compile/internal/types2"]


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def find_goroot() -> Path:
    for cand in sorted(Path("/usr/share").glob("go-*/src")) + sorted(Path("/usr/lib").glob("go-*/src")):
        if (cand / "bytes").is_dir():
            return cand
    sys.exit("no Go source tree found: apt-get install -y golang-1.19-src (or pass GOROOT/src)")


def go_version(root: Path) -> str:
    v = root.parent / "VERSION"
    if v.exists():
        return v.read_text().split()[0].removeprefix("go")
    try:
        import subprocess

        owner = subprocess.run(["dpkg", "-S", str(root / "bytes" / "reader.go")], capture_output=True,
                               text=True).stdout.split(":")[0]
        ver = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", owner], capture_output=True,
                             text=True).stdout
        return ver.split(":")[-1].split("-")[0] or root.parent.name
    except (OSError, IndexError):
        return root.parent.name


def go_files(root: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "testdata")
        for f in sorted(filenames):
            if f.endswith(".go") and not f.endswith("_test.go"):
                out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return sorted(out)


def minhash_and_lsh(sets, K=48):
    from repetend.neardup.lsh import lsh_candidates
    from repetend.neardup.minhash import minhash_signatures

    sig = minhash_signatures(sets, K)

    def cands(b, r):
        c = lsh_candidates(sig, sets.sizes, b, r, max_bucket=None)
        return c.a, c.b

    return sig, cands


def pair_keys(a, b, n):
    return np.asarray(a, np.int64) * n + np.asarray(b, np.int64)


def brute_force(sets, t):
    """Every size-compatible pair (|small| >= t |large|), exact intersections in one
    compiled parallel call (the seed listing's "honest enumeration with a size filter")."""
    sizes = sets.sizes
    order = np.argsort(sizes, kind="stable")
    order = order[sizes[order] > 0]
    s = sizes[order]
    lo = np.searchsorted(s, np.ceil(t * s - 1e-9), side="left")   # partners j in [lo_i, i)
    cnt = np.maximum(np.arange(s.size) - lo, 0)
    i_idx = np.repeat(np.arange(s.size), cnt)
    j_idx = np.repeat(lo, cnt) + (np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    a, b = order[i_idx], order[j_idx]
    inter = intersection_sizes(sets, a, b)
    keep = inter / (sizes[a] + sizes[b] - inter) >= t
    return np.minimum(a, b)[keep], np.maximum(a, b)[keep], int(a.size)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", type=Path)
    ap.add_argument("--min-shingles", type=int, default=50)
    ap.add_argument("--brute", action="store_true",
                    help="also time the brute force at t=0.5 (about a minute or two)")
    ap.add_argument("--cache", type=Path, default=None,
                    help="token store directory to reuse (default /tmp/repetend-go-<version>)")
    args = ap.parse_args()
    root = args.root or find_goroot()
    version = go_version(root)
    print(f"Go source tree: {root} (Go {version})")

    t0 = time.perf_counter()
    names = go_files(root)
    texts = [(root / p).read_text(encoding="utf-8", errors="replace") for p in names]
    cache = args.cache or Path(f"/tmp/repetend-go-{version}")
    store = None
    if (cache / "meta.json").exists():
        store = TokenStore.open(cache)
        if store.doc_ids != names:
            store = None
    if store is None:
        store = TokenStore.from_texts(texts, ids=names, unit="code", lang="go")
        store.save(cache)
    t_tok = time.perf_counter() - t0
    sets_all = shingle_sets(store.tokens, store.doc_offsets, token_hashes(store.vocab), 5)
    keep = np.flatnonzero(sets_all.sizes >= args.min_shingles)
    # re-shingle only the kept files (same hashes; a ShingleSets over the subset)
    parts = [sets_all.of(int(d)) for d in keep]
    from repetend.neardup.shingles import ShingleSets

    off = np.zeros(keep.size + 1, np.int64)
    np.cumsum([p.size for p in parts], out=off[1:])
    sets = ShingleSets(np.concatenate(parts), off, 5)
    files = [names[int(d)] for d in keep]
    n = len(files)
    idx = {f: i for i, f in enumerate(files)}
    n_pairs = n * (n - 1) // 2
    print(f"read + tokenized {len(names)} non-test files ({store.n_tokens:,} Go tokens, "
          f"cache {cache}) in {t_tok:.1f} s; "
          f"dropped {len(names) - n} with < {args.min_shingles} shingles")

    def row(what, ours, seed):
        print(f"  {what:<46} {ours!s:>14}   {seed!s:>14}")

    print(f"\n  {'':<46} {'ours':>14}   {'seed 003':>14}")
    row("files", n, SEED["files"])
    row("pairs", f"{n_pairs:,}", f"{SEED['pairs']:,}")
    row("shingles in all files", f"{int(sets.sizes.sum()):,}", "~7 000 000")
    row("mean shingles per file", round(float(sets.sizes.mean())), SEED["avg_shingles"])

    # exact truth with all_pairs
    t0 = time.perf_counter()
    res = all_pairs_join(sets, 0.5)
    t_ap = time.perf_counter() - t0
    truth = res.pairs
    tkeys = set(pair_keys(truth.a, truth.b, n).tolist())
    row("pairs with J >= 0.5 (exact, all_pairs)", len(truth), SEED["true_05"])

    sig, cands = minhash_and_lsh(sets)
    for b, r, seed_c, seed_f in ((12, 4, SEED["cand_12x4"], SEED["found_12x4"]),
                                 (16, 3, SEED["cand_16x3"], f"{SEED['recall_16x3']:.0%}"),
                                 (48, 1, f"{SEED['cand_1x48']:,}", "")):
        ca, cb = cands(b, r)
        found = len(tkeys & set(pair_keys(ca, cb, n).tolist()))
        row(f"LSH {b}x{r}: candidates", f"{len(ca):,}", seed_c)
        row(f"LSH {b}x{r}: pairs >= 0.5 found", f"{found} ({found / max(len(truth), 1):.1%})", seed_f)
        expected = float(np.sum(1 - (1 - truth.jaccard ** r) ** b))   # S-curve P(s) summed
        row(f"LSH {b}x{r}: expected by the S-curve", f"{expected:.0f}", "")

    # the spread of "found" over other MinHash seeds (pairs of one family miss together, so
    # the spread is wider than independent pairs would give)
    from repetend.neardup.minhash import minhash_signatures

    spread = []
    for sd in range(1, 6):
        v = minhash_signatures(sets, 48, seed=sd * 7919 + 1).values
        eq = v[truth.a] == v[truth.b]
        spread.append(int(eq.reshape(-1, 12, 4).all(axis=2).any(axis=1).sum()))
    row("LSH 12x4: found with 5 other MinHash seeds", f"{min(spread)}..{max(spread)}", "")
    a, bb = idx.get("bytes/reader.go"), idx.get("strings/reader.go")
    if a is not None and bb is not None:
        sa, sb = sets.of(a), sets.of(bb)
        common = int(np.intersect1d(sa, sb).size)
        j = common / (sa.size + sb.size - common)
        est = sig.jaccard(a, bb)
        sd = np.sqrt(j * (1 - j) / 48)
        print("  bytes/reader.go ~ strings/reader.go:")
        row("  shingles (bytes, strings), common", f"{sa.size}, {sb.size}, {common}",
            "601, 578, 495")
        row("  exact J / MinHash K=48 estimate", f"{j:.3f} / {est:.3f}", "0.724 / 0.792")
        row("  standard error sqrt(J(1-J)/K)", f"{sd:.3f}", "0.065")
    a, bb = idx.get("cmd/gofmt/internal.go"), idx.get("go/format/internal.go")
    if a is not None and bb is not None:
        sa, sb = sets.of(a), sets.of(bb)
        c = int(np.intersect1d(sa, sb).size)
        row("cmd/gofmt/internal.go ~ go/format/internal.go J", f"{c / (sa.size + sb.size - c):.3f}",
            SEED["gofmt"])
    gen = sum(1 for f in files if f.startswith("go/types/") and "Code generated" in
              texts[names.index(f)][:300] and "cmd/compile/internal/types2" in texts[names.index(f)][:300])
    row("go/types files generated from types2", gen, 39)

    # the six directories (direct children only)
    six = [i for i, f in enumerate(files) if os.path.dirname(f) in SIX]
    present = sorted({os.path.dirname(files[i]) for i in six})
    sub = np.array(six, dtype=np.int64)
    sub_set = set(sub.tolist())
    m = sub.size
    true6 = {k for k in zip(truth.a.tolist(), truth.b.tolist()) if k[0] in sub_set and k[1] in sub_set}
    ca, cb = cands(12, 4)
    cand6 = {k for k in zip(ca.tolist(), cb.tolist()) if k[0] in sub_set and k[1] in sub_set}
    print(f"  six directories present: {', '.join(present)}")
    row("six dirs: files / pairs", f"{m} / {m * (m - 1) // 2:,}", f"? / {SEED['six_pairs']:,}")
    row("six dirs: 12x4 candidates / true pairs >= 0.5", f"{len(cand6)} / {len(true6)}",
        f"{SEED['six_cand']} / {SEED['six_true']}")
    row("six dirs: true pairs among candidates", len(true6 & cand6), SEED["six_true"])

    # Broder (seed 004) on the same shingles, for comparison
    t0 = time.perf_counter()
    br = broder(sets, np.asarray(store.doc_lengths)[keep], 0.5)
    t_br = time.perf_counter() - t0
    found = len(tkeys & set(pair_keys(br.pairs.a, br.pairs.b, n).tolist()))
    row("Broder mod-m (10/20/40), t=0.5: pairs found", f"{found} ({found / max(len(truth), 1):.1%})", "-")
    truth8 = all_pairs_join(sets, 0.8).pairs
    for slack in (0.0, 0.1):
        br8 = broder(sets, np.asarray(store.doc_lengths)[keep], 0.8, slack=slack)
        row(f"Broder t=0.8 (seed 004), slack {slack}: found / true",
            f"{len(br8.pairs)} / {len(truth8)}", "-")
        row(f"  pairs checked exactly; files without samples",
            f"{br8.n_passed_samples:,}; {br8.n_unsampled_docs}", "-")

    print("\nexact all-pairs speed (AllPairs + PPJoin, compiled, warm; wall and CPU time, "
          "the machine is shared):")
    for t in (0.9, 0.8, 0.5, 0.3):
        t0, c0 = time.perf_counter(), time.process_time()
        r = all_pairs_join(sets, t)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        print(f"  t={t:<4} {dt * 1e3:7.0f} ms wall {dc * 1e3:7.0f} ms CPU  pairs {len(r.pairs):5d}  "
              f"verified candidates {r.n_candidates:6,}  index entries {r.n_index_entries:,}")
    print(f"  (first call at t=0.5: {t_ap * 1e3:.0f} ms; Broder at t=0.5: {t_br * 1e3:.0f} ms)")
    if args.brute:
        t0, c0 = time.perf_counter(), time.process_time()
        ba, bb_, checked = brute_force(sets, 0.5)
        dt_b, dc_b = time.perf_counter() - t0, time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        r = all_pairs_join(sets, 0.5)
        dt_a, dc_a = time.perf_counter() - t0, time.process_time() - c0
        same = set(pair_keys(ba, bb_, n).tolist()) == set(pair_keys(r.pairs.a, r.pairs.b, n).tolist())
        print(f"  brute force t=0.5 (size filter only, {checked:,} exact intersections, parallel): "
              f"{dt_b:.1f} s wall / {dc_b:.1f} s CPU")
        print(f"  all_pairs  t=0.5: {dt_a:.2f} s wall / {dc_a:.2f} s CPU -> "
              f"{dt_b / dt_a:.0f}x wall, {dc_b / max(dc_a, 1e-9):.0f}x CPU; same pairs: {same}")
        print(f"  CPU per shingle: all_pairs {dc_a / sets.hashes.size * 1e9:.0f} ns, "
              f"brute force {dc_b / sets.hashes.size * 1e9:.0f} ns")
    print(f"peak RSS {rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
