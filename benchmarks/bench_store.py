"""Token store build: ``repetend tokenize`` end to end (JSONL -> store on disk).

    .venv/bin/python benchmarks/bench_store.py [--sizes 100,400] [--batches 2,8,32] [--workdir /tmp/x]

Writes JSONL corpora of ``--sizes`` MB (mixed Russian/English documents of
about 8 KiB, made as in ``bench_tokenizer.py``), then for every corpus size and
batch size (``--batches``, millions of characters per batch) builds a store on
disk in a fresh child process, exactly as ``repetend tokenize`` does
(``read_corpus`` -> ``build_store(out=...)``), and reports wall and CPU
seconds, MB/s of JSONL input and the child's peak RSS (``wait4``), minus the RSS
of a child that only imports repetend and reads nothing.  The claim checked:
peak memory grows with the batch size, not with the corpus size.  One row runs
the real CLI (``python -m repetend.cli tokenize``, default batch).

It also times the vocabulary stage alone on the first corpus's token hashes:
the compiled hash map (``_Vocabulary.ids_for``) against the former sorted-array
map (``np.unique`` + ``searchsorted`` + ``np.insert`` per batch), same batches.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CHILD = r"""
import json, resource, sys, time
from repetend.corpus.readers import read_corpus
from repetend.corpus.store import build_store
from repetend.corpus.tokenizer import tokenize_batch
tokenize_batch(["warm up, Привет"])  # numba cache load is not the build
mode, src, out, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
t, c = time.perf_counter(), time.process_time()
if mode == "build":
    s = build_store(read_corpus([src]), out=out, batch_chars=batch)
    n = s.summary["tokens"]; v = s.summary["vocabulary"]
else:
    n = v = 0
print(json.dumps({"wall": time.perf_counter() - t, "cpu": time.process_time() - c,
                  "tokens": n, "vocab": v}))
"""


CLI = "import sys; from repetend.cli import main; sys.argv[0] = 'repetend'; main()"


def write_corpus(path: Path, mb: float) -> int:
    sys.path.insert(0, str(HERE))
    from bench_tokenizer import corpus  # noqa: PLC0415

    base = corpus(min(mb, 50), 8)  # a 50 MB pool of documents, repeated with new ids
    n = 0
    i = 0
    with open(path, "w", encoding="utf-8") as fh:
        while n < mb * 1e6:
            d = base[i % len(base)]
            line = json.dumps({"id": f"d{i}", "text": d, "url": f"https://h{i % 97}.example/{i}"},
                              ensure_ascii=False) + "\n"
            fh.write(line)
            n += len(line.encode())
            i += 1
    return path.stat().st_size


def run_child(args: list[str], parse: bool = True) -> tuple[dict, float]:
    """Run the child; its result and its peak RSS in MB (from wait4)."""
    p = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise SystemExit(f"child failed: {args}")
    return (json.loads(out) if parse and out.strip() else {}), ru.ru_maxrss / 1024


def old_ids_for(state: dict, h: np.ndarray) -> np.ndarray:
    """The former vocabulary step (sorted hashes; strings left out: same for both)."""
    sh, si = state["h"], state["i"]
    uniq, inverse = np.unique(h, return_inverse=True)
    pos = np.searchsorted(sh, uniq)
    pos_c = np.minimum(pos, max(sh.size - 1, 0))
    found = (sh[pos_c] == uniq) if sh.size else np.zeros(uniq.size, bool)
    ids = np.empty(uniq.size, dtype=np.int32)
    ids[found] = si[pos_c[found]]
    new = np.flatnonzero(~found)
    if new.size:
        new_ids = np.arange(state["n"], state["n"] + new.size, dtype=np.int32)
        state["n"] += new.size
        ids[new] = new_ids
        ins = np.searchsorted(sh, uniq[new])
        state["h"] = np.insert(sh, ins, uniq[new])
        state["i"] = np.insert(si, ins, new_ids)
    return ids[inverse.reshape(-1)]


def vocab_stage(path: Path, batch_chars: int) -> None:
    from repetend.corpus.readers import read_corpus  # noqa: PLC0415
    from repetend.corpus.store import _batches, _Vocabulary  # noqa: PLC0415
    from repetend.corpus.tokenizer import tokenize_batch  # noqa: PLC0415

    hashes = [tokenize_batch([r.text for r in b]).hashes
              for b in _batches(read_corpus([path]), batch_chars)]
    n_tok = sum(h.size for h in hashes)

    class _B:  # only hashes: the strings of new ids are the same work for both
        def __init__(self, h):
            self.hashes = h

        def strings(self, idx):
            return [""] * len(idx)

    voc = _Vocabulary()
    voc.ids_for(_B(hashes[0][:10]))  # compile / load the kernel
    voc = _Vocabulary()
    t = time.process_time()
    new = [voc.ids_for(_B(h)) for h in hashes]
    t_new = time.process_time() - t
    state = {"h": np.empty(0, np.uint64), "i": np.empty(0, np.int32), "n": 0}
    t = time.process_time()
    old = [old_ids_for(state, h) for h in hashes]
    t_old = time.process_time() - t
    # the old map numbered a batch's new tokens in hash order, the new one in
    # first-seen order: the same partition of the tokens, other numbers
    pairs = np.unique(np.concatenate(new).astype(np.int64) << 32 | np.concatenate(old))
    assert pairs.size == len(voc) == state["n"], "the two maps disagree"
    print(f"\nvocabulary stage on {n_tok / 1e6:.1f} M tokens ({len(hashes)} batches of "
          f"{batch_chars / 1e6:g} M chars, vocabulary {len(voc):,}), CPU s:")
    print(f"  hash map (compiled, kept across batches)   {t_new:7.3f}  "
          f"{t_new * 1e9 / n_tok:6.1f} ns/token")
    print(f"  sorted arrays (np.unique + np.insert)      {t_old:7.3f}  "
          f"{t_old * 1e9 / n_tok:6.1f} ns/token   -> {t_old / t_new:.1f}x")


def vocab_stage_large(n_tokens: int = 10_000_000, n_distinct: int = 2_000_000,
                      batch: int = 1_000_000) -> None:
    """The same comparison on a synthetic Zipf stream with a large vocabulary
    (the JSONL corpus above repeats its documents, so its vocabulary is small)."""
    from repetend.corpus.store import _Vocabulary  # noqa: PLC0415

    rng = np.random.default_rng(0)
    keys = rng.integers(0, 2**63, size=n_distinct, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    ranks = np.minimum(rng.zipf(1.1, size=n_tokens), n_distinct) - 1
    hashes = [keys[ranks[a:a + batch]] for a in range(0, n_tokens, batch)]

    class _B:
        def __init__(self, h):
            self.hashes = h

        def strings(self, idx):
            return [""] * len(idx)

    voc = _Vocabulary()
    voc.ids_for(_B(hashes[0][:10]))
    voc = _Vocabulary()
    t = time.process_time()
    new = [voc.ids_for(_B(h)) for h in hashes]
    t_new = time.process_time() - t
    state = {"h": np.empty(0, np.uint64), "i": np.empty(0, np.int32), "n": 0}
    t = time.process_time()
    old = [old_ids_for(state, h) for h in hashes]
    t_old = time.process_time() - t
    pairs = np.unique(np.concatenate(new).astype(np.int64) << 32 | np.concatenate(old))
    assert pairs.size == len(voc) == state["n"], "the two maps disagree"
    print(f"synthetic Zipf(1.1) stream, {n_tokens / 1e6:.0f} M tokens in batches of "
          f"{batch / 1e6:g} M, vocabulary {len(voc):,}, CPU s:")
    print(f"  hash map                                   {t_new:7.3f}  "
          f"{t_new * 1e9 / n_tokens:6.1f} ns/token, table {voc.keys.nbytes + voc.vals.nbytes >> 20} MB")
    print(f"  sorted arrays                              {t_old:7.3f}  "
          f"{t_old * 1e9 / n_tokens:6.1f} ns/token   -> {t_old / t_new:.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,400", help="corpus sizes, MB of JSONL")
    ap.add_argument("--batches", default="2,8,32", help="batch sizes, M characters")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--no-cli", action="store_true", help="skip the real CLI row")
    args = ap.parse_args()
    sizes = [float(x) for x in args.sizes.split(",")]
    batches = [int(float(x) * 1e6) for x in args.batches.split(",")]
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench_store_"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        files = {}
        for mb in sizes:
            f = work / f"corpus_{mb:g}.jsonl"
            if not f.exists():
                write_corpus(f, mb)
            files[mb] = f
        _, base_rss = run_child(["-c", CHILD, "none", "-", "-", "0"])
        print(f"child baseline RSS (imports, numba kernels loaded): {base_rss:.0f} MB; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(f"{'corpus MB':>9s} {'batch Mch':>9s} {'wall s':>7s} {'cpu s':>7s} {'MB/s':>6s} "
              f"{'cpuMB/s':>7s} {'ns/tok':>6s} {'tokens':>12s} {'vocab':>9s} {'peak RSS':>8s} "
              f"{'- base':>7s}")
        for b in batches:
            for mb in sizes:
                f = files[mb]
                size = f.stat().st_size / 1e6
                out = work / "store"
                r, rss = run_child(["-c", CHILD, "build", str(f), str(out), str(b)])
                shutil.rmtree(out, ignore_errors=True)
                print(f"{size:9.0f} {b / 1e6:9g} {r['wall']:7.2f} {r['cpu']:7.2f} "
                      f"{size / r['wall']:6.1f} {size / r['cpu']:7.1f} "
                      f"{r['cpu'] * 1e9 / max(r['tokens'], 1):6.1f} {r['tokens']:12,d} "
                      f"{r['vocab']:9,d} {rss:8.0f} {rss - base_rss:7.0f}")
        if not args.no_cli:
            f = files[sizes[0]]
            out = work / "store"
            t = time.perf_counter()
            _, rss = run_child(["-c", CLI, "tokenize", str(f), "-o", str(out), "-q"], parse=False)
            dt = time.perf_counter() - t
            shutil.rmtree(out, ignore_errors=True)
            size = f.stat().st_size / 1e6
            print(f"real CLI `repetend tokenize` on {size:.0f} MB (default batch, process start "
                  f"and imports included): {dt:.2f} s wall, {size / dt:.1f} MB/s, peak RSS "
                  f"{rss:.0f} MB")
        vocab_stage(files[sizes[0]], 8_000_000)
        vocab_stage_large()
        print("figures from one run on a shared machine: compare rows, not runs")
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
