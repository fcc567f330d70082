"""MinHash + LSH side by side: repetend vs datasketch vs rensa, on the same shingle sets.

Run:  .venv/bin/python benchmarks/bench_minhash.py [--quick]

For each corpus (real text nobody here wrote — the installed Python stdlib
sources and Debian's /usr/share/doc/*/copyright files — and a synthetic corpus
with planted near-copies) the shingle sets (5 word tokens, 64-bit hashes) are
built once; then, at K = 128:

* signatures/s and ns per shingle, wall clock and CPU time (all threads; on a
  shared, overloaded machine the CPU time is the stable figure): repetend
  ``minhash_signatures`` with ``scheme="minhash"`` (K hashes per shingle) and
  ``scheme="oph"`` (one-permutation rounds + classical fallback), rensa
  ``RMinHash.digest_matrix_from_flat_token_hashes`` (Rust, fed the same flat
  uint64 buffer; rensa 0.5 itself uses bucket rounds + fallback, not K hashes),
  datasketch ``MinHash.update_batch`` (fed the low 32 bits of the same hashes
  through an identity ``hashfunc``);
* estimation accuracy on the same pairs (every pair with J >= 0.3 plus as many
  random pairs): bias, mean absolute error and RMSE / sqrt(J(1-J)/K) (1.0 is
  classical MinHash's binomial error) of each signature's Jaccard estimate;
* end to end at t = 0.5 and 0.8: repetend ``find_near_duplicates`` (signatures,
  banding by sorting, exact verification), datasketch ``MinHashLSH`` (insert +
  query every document; candidates then verified exactly), rensa (its digest
  matrix banded with the same (b, r) as ours and verified exactly — signature
  quality — plus its own one-shot duplicate flags, document level);
* precision / recall of the final pairs against exact all-pairs
  (``repetend.neardup.allpairs.all_pairs`` when available, else brute force);
* peak RSS growth of each stage (psutil sampling every 2 ms).

Timings on a shared 2-core machine are noisy: read the ratios, and prefer the CPU
column (wall time includes waiting for a core; a 2-thread kernel waits for both).
"""

from __future__ import annotations

import argparse
import gc
import glob
import os
import threading
import time

import numba
import numpy as np
import psutil

from repetend.corpus.store import TokenStore
from repetend.neardup import NearDupConfig, find_near_duplicates, lsh_candidates, minhash_signatures
from repetend.neardup.pairs import verify_pairs
from repetend.neardup.shingles import ShingleSets, shingle_sets, token_hashes

K = 128


class PeakRSS:
    """Peak resident-set growth over the block, sampled by a thread."""

    def __init__(self):
        self.proc = psutil.Process()
        self.peak = 0

    def __enter__(self):
        gc.collect()
        self.base = self.proc.memory_info().rss
        self.peak = self.base
        self.stop = False

        def run():
            while not self.stop:
                self.peak = max(self.peak, self.proc.memory_info().rss)
                time.sleep(0.002)

        self.t = threading.Thread(target=run, daemon=True)
        self.t.start()
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.t.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)
        self.mb = (self.peak - self.base) / 2**20
        return False


CPU = {}  # label -> best CPU seconds of the last timed() call with that label


def timed(fn, repeat=1, label=None):
    best = None
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        c = time.process_time()
        out = fn()
        dt = time.perf_counter() - t
        dc = time.process_time() - c
        best = dt if best is None else min(best, dt)
        if label is not None:
            CPU[label] = dc if label not in CPU else min(CPU[label], dc)
    return out, best


# -- corpora -------------------------------------------------------------------------------
def read_files(paths, limit):
    texts, ids = [], []
    for p in sorted(paths)[:limit]:
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                texts.append(f.read())
            ids.append(p)
        except OSError:
            continue
    return texts, ids


def synthetic(rng, n_base, n_copies, length=300, vocab=20000):
    """Zipfian random documents plus copies with a share of their words replaced."""
    p = 1.0 / np.arange(1, vocab + 1)
    p /= p.sum()
    words = np.array([f"w{i}" for i in range(vocab)])
    base = [words[rng.choice(vocab, size=length, p=p)] for _ in range(n_base)]
    docs = [" ".join(b) for b in base]
    for i in range(n_copies):
        src = base[rng.integers(n_base)].copy()
        rate = rng.choice([0.005, 0.01, 0.02, 0.04, 0.08])   # J from ~0.95 down to ~0.4
        pos = rng.random(length) < rate
        src[pos] = words[rng.choice(vocab, size=int(pos.sum()), p=p)]
        docs.append(" ".join(src))
    return docs


def corpora(quick: bool):
    lim = 400 if quick else 100_000
    lib = "/root/.pyenv/versions/3.11.7/lib/python3.11"
    py = [p for p in glob.glob(f"{lib}/**/*.py", recursive=True) if "site-packages" not in p]
    out = []
    t, _ = read_files(py, 1500 if quick else 4000)
    out.append(("python-stdlib", t))
    t, _ = read_files(glob.glob("/usr/share/doc/*/copyright"), lim)
    out.append(("debian-copyright", t))
    rng = np.random.default_rng(0)
    out.append(("synthetic-planted", synthetic(rng, 1000 if quick else 5000, 500 if quick else 3000)))
    return out


# -- peers ---------------------------------------------------------------------------------
def datasketch_signatures(sets: ShingleSets):
    from datasketch import MinHash

    h32 = (sets.hashes & np.uint64(0xFFFFFFFF)).astype(np.uint64)
    out = []
    for d in range(len(sets.offsets) - 1):
        m = MinHash(num_perm=K, seed=1, hashfunc=lambda x: x)
        seg = h32[sets.offsets[d]:sets.offsets[d + 1]]
        if seg.size:
            m.update_batch(seg)
        out.append(m)
    return out


def datasketch_lsh(mins, threshold):
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=K)
    for d, m in enumerate(mins):
        lsh.insert(d, m, check_duplication=False)
    a, b = [], []
    for d, m in enumerate(mins):
        for e in lsh.query(m):
            if e > d:
                a.append(d)
                b.append(e)
    return np.array(a, np.int64), np.array(b, np.int64), lsh.b, lsh.r


_RENSA_SEED = [41]


def rensa_signatures(sets: ShingleSets):
    import rensa

    _RENSA_SEED[0] += 1  # a new seed each repeat: nothing can be reused between runs
    m = rensa.RMinHash.digest_matrix_from_flat_token_hashes(
        sets.hashes, sets.offsets.astype(np.uint64), K, _RENSA_SEED[0])
    return m


def truth_pairs(sets: ShingleSets, t: float) -> set:
    try:
        from repetend.neardup.allpairs import all_pairs

        p = all_pairs(sets, t)
        return set(zip(p.a.tolist(), p.b.tolist()))
    except ImportError:  # pragma: no cover - brute force
        n = len(sets.offsets) - 1
        a, b = np.triu_indices(n, 1)
        v = verify_pairs(sets, a, b)
        keep = v.jaccard >= t
        return set(zip(v.a[keep].tolist(), v.b[keep].tolist()))


def accuracy(sets: ShingleSets, sigs: dict) -> None:
    """Bias, MAE and RMSE / binomial error of each signature's Jaccard estimate."""
    rng = np.random.default_rng(1)
    n = len(sets.offsets) - 1
    close = truth_pairs(sets, 0.3)
    a = np.array([p[0] for p in close] + rng.integers(0, n, len(close) + 500).tolist(), dtype=np.int64)
    b = np.array([p[1] for p in close] + rng.integers(0, n, len(close) + 500).tolist(), dtype=np.int64)
    keep = (a != b) & (np.diff(sets.offsets)[a] > 0) & (np.diff(sets.offsets)[b] > 0)
    a, b = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    v = verify_pairs(sets, a, b)
    order = {(x, y): j for x, y, j in zip(v.a.tolist(), v.b.tolist(), v.jaccard.tolist())}
    j = np.array([order[(x, y)] for x, y in zip(a.tolist(), b.tolist())])
    print(f"estimates on {a.size:,} pairs ({len(close):,} with J >= 0.3): "
          f"{'bias':>8} {'MAE':>7} {'RMSE/binomial':>14}")
    se = np.sqrt(np.clip(j * (1 - j), 1e-12, None) / K)
    for lab, sig in sigs.items():
        if lab == "datasketch":
            est = np.array([sig[x].jaccard(sig[y]) for x, y in zip(a.tolist(), b.tolist())])
        elif lab == "rensa":
            est = np.mean(sig[a] == sig[b], axis=1)
        else:
            est = sig.estimate(a, b)
        err = est - j
        mid = (j > 0.05) & (j < 0.95)  # where the binomial error is not ~0
        ratio = np.sqrt(np.mean((err[mid] / se[mid]) ** 2)) if mid.any() else float("nan")
        print(f"  {lab:<16} {'':>44} {err.mean():+8.4f} {np.abs(err).mean():7.4f} {ratio:14.2f}")


def pr(found: set, truth: set) -> str:
    tp = len(found & truth)
    prec = tp / len(found) if found else 1.0
    rec = tp / len(truth) if truth else 1.0
    return f"P={prec:.3f} R={rec:.4f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller corpora")
    args = ap.parse_args()
    import rensa  # fail early when a peer is missing

    # warm every kernel (numba cache) on a tiny corpus with copies and near-empty documents
    tiny = ShingleSets(np.array([1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 7, 7], dtype=np.uint64),
                       np.array([0, 5, 10, 11, 12]), 5)
    for scheme in ("minhash", "oph"):
        find_near_duplicates(tiny, NearDupConfig(scheme=scheme, max_bucket=3))
    print(f"K = {K}; threads: numba {os.environ.get('NUMBA_NUM_THREADS', 'default')}, "
          f"{os.cpu_count()} CPUs\n")
    for name, texts in corpora(args.quick):
        store = TokenStore.from_texts(texts)
        sets = shingle_sets(store.tokens, store.doc_offsets, token_hashes(store.vocab), 5)
        n, S = len(texts), int(sets.hashes.size)
        print(f"== {name}: {n:,} documents, {store.n_tokens:,} tokens, {S:,} distinct shingles")
        CPU.clear()
        with PeakRSS() as m_ours:
            ours, t_ours = timed(lambda: minhash_signatures(sets, K, scheme="minhash"), repeat=3, label="c")
        with PeakRSS() as m_oph:
            oph, t_oph = timed(lambda: minhash_signatures(sets, K, scheme="oph"), repeat=5, label="o")
        numba.set_num_threads(1)
        try:
            _, t_oph1 = timed(lambda: minhash_signatures(sets, K, scheme="oph"), repeat=5, label="o1")
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        with PeakRSS() as m_rensa:
            rmat, t_rensa = timed(lambda: rensa_signatures(sets), repeat=5, label="r")
        with PeakRSS() as m_ds:
            dmins, t_ds = timed(lambda: datasketch_signatures(sets), label="d")
        print(f"signatures        {'wall s':>8} {'docs/s':>11} {'ns/shingle':>11} {'CPU ns/sh':>10} {'peak MB':>8} "
              f"{'speed vs rensa (wall, CPU)':>27}")
        for lab, t, mm, c in (("repetend minhash", t_ours, m_ours, "c"), ("repetend oph", t_oph, m_oph, "o"),
                              ("  oph, 1 thread", t_oph1, m_oph, "o1"),
                              ("rensa", t_rensa, m_rensa, "r"), ("datasketch", t_ds, m_ds, "d")):
            print(f"  {lab:<16} {t:8.3f} {n / t:11,.0f} {t / max(S, 1) * 1e9:11.2f} "
                  f"{CPU[c] / max(S, 1) * 1e9:10.2f} {mm.mb:8.1f} {t_rensa / t:13.2f}x {CPU['r'] / CPU[c]:12.2f}x")
        rvals = np.array(rmat.to_rows(), dtype=np.uint32)
        accuracy(sets, {"repetend minhash": ours, "repetend oph": oph, "rensa": rvals, "datasketch": dmins})
        for t in (0.5, 0.8):
            truth = truth_pairs(sets, t)
            with PeakRSS() as mo:
                res, e_ours = timed(lambda: find_near_duplicates(sets, NearDupConfig(threshold=t,
                                                                                     scheme="minhash")))
            found = set(zip(res.pairs.a.tolist(), res.pairs.b.tolist()))
            b, r = res.summary["bands"], res.summary["rows"]
            print(f"t={t}: {len(truth):,} true pairs; repetend bands {b} x rows {r}, "
                  f"{res.summary['candidates']:,} candidates")
            print(f"  repetend minhash end-to-end {e_ours:8.3f} s  peak {mo.mb:7.1f} MB  {pr(found, truth)}"
                  f"  (capped buckets {res.summary['capped_buckets']}; "
                  f"sig {res.summary['timings_s']['signatures']:.3f} s, lsh {res.summary['timings_s']['lsh']:.3f} s, "
                  f"verify {res.summary['timings_s']['verify']:.3f} s)")
            from repetend.neardup import lsh_params

            dsp = lsh_params(t, K, min_recall=None)
            res3, e3 = timed(lambda: find_near_duplicates(
                sets, NearDupConfig(threshold=t, bands=dsp.bands, rows=dsp.rows)))
            f3 = set(zip(res3.pairs.a.tolist(), res3.pairs.b.tolist()))
            print(f"  repetend with datasketch's banding {dsp.bands}x{dsp.rows}: {e3:7.3f} s  "
                  f"{res3.summary['candidates']:,} candidates  {pr(f3, truth)}   <- the cost of P(t) >= 0.98: "
                  f"{res.summary['candidates'] / max(res3.summary['candidates'], 1):.1f}x candidates")
            res2, e_oph = timed(lambda: find_near_duplicates(sets, NearDupConfig(threshold=t, scheme="oph")))
            f2 = set(zip(res2.pairs.a.tolist(), res2.pairs.b.tolist()))
            print(f"  repetend oph  end-to-end {e_oph:8.3f} s  {pr(f2, truth)}  (sig {res2.summary['timings_s']['signatures']:.3f} s, "
                  f"{res2.summary['candidates']:,} candidates)")

            def ds_run():
                a, bb, db, dr = datasketch_lsh(dmins, t)
                return verify_pairs(sets, a, bb), db, dr, len(a)

            with PeakRSS() as md:
                (v, db, dr, nc), e_ds = timed(ds_run)
            e_ds += t_ds
            fd = set(zip(v.a[v.jaccard >= t].tolist(), v.b[v.jaccard >= t].tolist()))
            raw = set(zip(v.a.tolist(), v.b.tolist()))
            print(f"  datasketch    end-to-end {e_ds:8.3f} s  peak {md.mb:7.1f} MB  {pr(fd, truth)}"
                  f"  (its bands {db} x rows {dr}, {nc:,} candidates, raw {pr(raw, truth)})"
                  f"  {e_ds / e_ours:.1f}x ours")

            def rensa_run():
                c = lsh_candidates(rvals, sets.sizes, b, r, min_shingles=3, sets=sets)
                return verify_pairs(sets, c.a, c.b)

            vr, e_r = timed(rensa_run)
            fr = set(zip(vr.a[vr.jaccard >= t].tolist(), vr.b[vr.jaccard >= t].tolist()))
            print(f"  rensa sigs + repetend banding {b}x{r} + verify: {e_r + t_rensa:7.3f} s  {pr(fr, truth)}")
            nb = b if K % b == 0 else 16
            lsh = rensa.RMinHashLSH(t, K, nb)
            flags, e_f = timed(lambda: np.array(lsh.query_duplicate_flags_matrix_one_shot(rmat)))
            tdocs = {d for p in truth for d in p}
            fdocs = set(np.flatnonzero(flags).tolist())
            ours_docs = {d for p in found for d in p}
            print(f"  rensa one-shot flags ({nb} bands): {e_f + t_rensa:7.3f} s, documents {pr(fdocs, tdocs)}"
                  f"  | repetend documents {pr(ours_docs, tdocs)}")
        print()


if __name__ == "__main__":
    main()
