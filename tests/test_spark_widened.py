"""The templates' widened corpus as the driver lays it out from the executors' dataset
(``repetend.spark.templates._read_widened``, ``repetend.spark._kernels.widened_index``),
against a document-by-document construction, and the driver heap a Spark session asks
for.  No Spark runs: the dataset is written here with pyarrow, rows shuffled over
several files."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from repetend.spark._kernels import widened_index
from repetend.spark.io import pack_binary
from repetend.spark.task import INPUTS, RESULT, remove_partial, scratch_dir
from repetend.spark.templates import KEPT_NAME, _read_widened


def _corpus(rng):
    """Random kept documents: {doc_index: (text, kept positions, their spans)}, and
    the hashes of the words (word "w<j>" has hash 1000 + 7 j)."""
    docs = {}
    for d in sorted(rng.choice(200, size=int(rng.integers(0, 25)), replace=False).tolist()):
        n = int(rng.integers(1, 60))
        words = [f"w{int(x)}" for x in rng.integers(0, 30, size=n)]
        text = " ".join(words)
        ends = np.cumsum([len(w) + 1 for w in words]) - 1
        spans = np.stack([ends - [len(w) for w in words], ends], axis=1)
        keep = np.flatnonzero(rng.random(n) < rng.uniform(0.2, 1.0))
        if keep.size == 0:
            keep = np.array([int(rng.integers(0, n))])
        docs[d] = (text, words, keep, spans[keep])
    return docs


def _dataset(docs, path, rng, n_files):
    rows = []
    for d, (text, words, keep, sp) in docs.items():
        brk = np.flatnonzero(np.diff(keep) != 1) + 1
        starts = np.concatenate(([0], brk))
        ends = np.concatenate((brk, [keep.size]))
        rows.append(dict(doc_index=d, n_kept=int(keep.size), n_runs=int(starts.size),
                         positions=keep.astype(np.int32),
                         tokens=np.array([1000 + 7 * int(words[p][1:]) for p in keep], np.uint64),
                         spans=sp.reshape(-1).astype(np.int32),
                         piece_at=sp[starts, 0].astype(np.int64),
                         pieces=[text[int(a):int(b)] for a, b in zip(sp[starts, 0], sp[ends - 1, 1])]))
    order = rng.permutation(len(rows))
    path.mkdir()
    for f, part in enumerate(np.array_split(order, n_files)):
        sel = [rows[i] for i in part]

        def packed(key, dtype, per=1):
            vals = [r[key] for r in sel]
            off = np.zeros(len(vals) + 1, np.int64)
            np.cumsum([v.size // per for v in vals], out=off[1:])
            flat = np.concatenate(vals).astype(dtype) if vals else np.zeros(0, dtype)
            return pack_binary(flat, off * per)

        tb = pa.table({
            "doc_index": pa.array([r["doc_index"] for r in sel], pa.int64()),
            "n_kept": pa.array([r["n_kept"] for r in sel], pa.int64()),
            "n_runs": pa.array([r["n_runs"] for r in sel], pa.int64()),
            "positions": packed("positions", np.int32),
            "tokens": packed("tokens", np.uint64),
            "spans": packed("spans", np.int32, 2),
            "strings": pa.array([[] for _ in sel], pa.list_(pa.string())),
            "piece_at": packed("piece_at", np.int64),
            "pieces": pa.array([r["pieces"] for r in sel], pa.list_(pa.string())),
        })
        pq.write_table(tb, path / f"part-{f:05d}.parquet", row_group_size=3)
    (path / "_SUCCESS").write_text("")


def _reference(docs, ids, n_vocab):
    """Document by document: a separator before every run but the first, one after
    each document, numbered in document order (gaps first, then documents)."""
    toks, pmap, spans, offsets = [], [], [], [0]
    n_gaps = sum(int(np.count_nonzero(np.diff(keep) != 1)) for _, _, keep, _ in docs.values())
    g = 0
    for r, (d, (text, words, keep, sp)) in enumerate(sorted(docs.items())):
        for j, p in enumerate(keep):
            if j and p != keep[j - 1] + 1:
                toks.append(n_vocab + g)
                pmap.append(-1)
                spans.append((0, 0))
                g += 1
            toks.append(ids[words[p]])
            pmap.append(int(p))
            spans.append(tuple(int(x) for x in sp[j]))
        toks.append(n_vocab + n_gaps + r)
        pmap.append(-1)
        spans.append((0, 0))
        offsets.append(len(toks))
    return (np.array(toks, np.int64), np.array(pmap, np.int64),
            np.array(spans, np.int64).reshape(-1, 2), np.array(offsets, np.int64), n_gaps)


@pytest.mark.parametrize("seed", range(12))
def test_widened_corpus_equals_document_by_document(tmp_path, seed):
    rng = np.random.default_rng(seed)
    docs = _corpus(rng)
    path = scratch_dir(tmp_path, KEPT_NAME)
    _dataset(docs, path, rng, n_files=int(rng.integers(1, 4)))
    # ids: a random injective map of the 30 words; the vocabulary is larger
    n_vocab = 50
    perm = rng.permutation(n_vocab)[:30]
    ids = {f"w{j}": int(perm[j]) for j in range(30)}
    vh = np.array([1000 + 7 * j for j in range(30)], np.uint64)
    vid = perm.astype(np.int64)
    wide = _read_widened(path, vh, vid, n_vocab)
    toks, pmap, spans, offsets, n_gaps = _reference(docs, ids, n_vocab)
    assert wide.kdoc.tolist() == sorted(docs)
    assert wide.n_gaps == n_gaps
    assert wide.n_kept == sum(k.size for _, _, k, _ in docs.values())
    assert wide.tokens.tolist() == toks.tolist()
    assert wide.posmap.tolist() == pmap.tolist()
    assert wide.offsets.tolist() == offsets.tolist()
    # the spans and the text of every kept token, read back from the dataset (in a
    # random order of documents: the row-group cache evicts)
    for r in rng.permutation(wide.kdoc.size).tolist():
        d = int(wide.kdoc[r])
        text = docs[d][0]
        seg = slice(int(offsets[r]), int(offsets[r + 1]))
        real = pmap[seg] >= 0
        assert wide.rows.spans(r).tolist() == spans[seg][real].tolist()
        piece_text = wide.rows.text(r)
        for a, b in spans[seg][real].tolist():
            assert piece_text[slice(a, b)] == text[a:b]
    # every position of every kept document: its widened index, or -1 when dropped
    rows, local, want = [], [], []
    for r, d in enumerate(wide.kdoc.tolist()):
        seg = pmap[offsets[r]:offsets[r + 1]].tolist()
        for p in range(len(docs[d][1])):
            rows.append(r)
            local.append(p)
            want.append(int(offsets[r]) + seg.index(p) if p in seg else -1)
    got = widened_index(wide.posmap, wide.offsets, np.array(rows, np.int64), np.array(local, np.int64))
    assert got.tolist() == want


def test_remove_partial_removes_only_scratch_datasets(tmp_path):
    for name in ("templates-widened", "phrases-islands"):
        d = scratch_dir(tmp_path, name)
        assert d.parent == tmp_path.resolve() and d.name.startswith(f".{name}.tmp-")
        d.mkdir()
        (d / "part-0.parquet").write_text("x")
    (tmp_path / "corpus").mkdir()
    (tmp_path / ".corpus.tmp-12").mkdir()       # the corpus dataset's: not this function's
    remove_partial(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".corpus.tmp-12", "corpus"]
    with pytest.raises(ValueError, match="not one of"):
        scratch_dir(tmp_path, "elsewhere")


@pytest.mark.parametrize("ram_gb, heap", [(4, "2g"), (24, "6g"), (64, "16g"), (512, "16g")])
def test_driver_memory_is_a_quarter_of_the_machine_between_2_and_16_gb(monkeypatch, ram_gb, heap):
    from repetend.spark import io

    monkeypatch.delenv("SPARK_DRIVER_MEMORY", raising=False)
    page = 4096
    monkeypatch.setattr(io.os, "sysconf", lambda name: page if name == "SC_PAGE_SIZE"
                        else ram_gb * (1 << 30) // page)
    assert io.driver_memory() == heap
    monkeypatch.setenv("SPARK_DRIVER_MEMORY", "3g")
    assert io.driver_memory() == "3g"


# -- the layer's task (run in-process here: what a Spark task runs) ----------------

def _task_dir(tmp_path, seed):
    """A widened dataset, its kept vocabulary and the driver's inputs, as
    ``find_templates`` leaves them for the task; returns (dir, inputs, documents)."""
    import pickle

    from repetend.phrases import PhraseConfig, RawPhrases
    from repetend.phrases.templates import TemplateConfig

    rng = np.random.default_rng(seed)
    docs = {}
    # documents with a block "w1 … w5 ▢ w6 … w10" (one varying word) amid random
    # words, each kept whole but for the second word of a long enough random head
    for d in sorted(rng.choice(200, size=30, replace=False).tolist()):
        head = int(rng.integers(0, 8))
        words = ([f"w{int(x)}" for x in rng.integers(11, 30, size=head)]
                 + [f"w{j}" for j in range(1, 6)] + [f"w{int(rng.integers(11, 30))}"]
                 + [f"w{j}" for j in range(6, 11)]
                 + [f"w{int(x)}" for x in rng.integers(11, 30, size=int(rng.integers(0, 8)))])
        n = len(words)
        text = " ".join(words)
        ends = np.cumsum([len(w) + 1 for w in words]) - 1
        spans = np.stack([ends - [len(w) for w in words], ends], axis=1)
        keep = np.delete(np.arange(n), 1) if head >= 3 else np.arange(n)
        docs[d] = (text, words, keep, spans[keep])
    path = scratch_dir(tmp_path, KEPT_NAME)
    _dataset(docs, path, rng, n_files=2)
    n_vocab = 40
    perm = rng.permutation(n_vocab)[:30]
    pq.write_table(pa.table({"hash": pa.array([1000 + 7 * j for j in range(30)], pa.int64()),
                             "rank": pa.array(perm.astype(np.int64)),
                             "word": pa.array([f"w{j}" for j in range(30)])}),
                   (path / "_vocab").mkdir() or path / "_vocab" / "part-0.parquet")
    lengths = np.array([len(docs[d][1]) if d in docs else 3 for d in range(200)], np.int64)
    doc_offsets = np.concatenate(([0], np.cumsum(lengths)))
    inputs = {"n_vocab": n_vocab, "cfg": PhraseConfig(min_docs=2, min_len=4, templates=TemplateConfig()),
              "raw": RawPhrases(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(1, np.int64),
                                np.zeros(0, np.int64)),
              "doc_offsets": doc_offsets, "doc_ids": pa.array([f"d{i}" for i in range(200)]),
              "n_tokens": int(doc_offsets[-1]), "frequent_tokens": 0, "groups": None,
              "figures": {"layer": "executor task"}}
    with open(path / INPUTS, "wb") as f:
        pickle.dump(inputs, f)
    return path, inputs, docs


@pytest.mark.parametrize("seed", range(3))
def test_layer_task_gives_what_the_layer_gives(tmp_path, seed):
    from repetend.spark.task import result, run
    from repetend.spark.templates import _layer, _layer_in_task, _read_vocab

    path, inputs, _ = _task_dir(tmp_path, seed)
    assert run(_layer_in_task, str(path)) == 1
    (res, plan, figures), peak = result(path)
    assert peak > 0
    vh, vid, words = _read_vocab(path / "_vocab")
    want, want_plan, want_figures = _layer(_read_widened(path, vh, vid, inputs["n_vocab"]), vid,
                                           words, **{**inputs, "figures": {"layer": "executor task"}})
    assert plan == want_plan
    assert figures == want_figures
    assert res.table.num_rows > 0
    assert res.table.equals(want.table) and res.occurrences.equals(want.occurrences)


def test_layer_task_hands_its_error_to_the_driver(tmp_path):
    import pickle

    from repetend.phrases import RawPhrases
    from repetend.spark.task import result, run
    from repetend.spark.templates import _layer_in_task

    path, inputs, docs = _task_dir(tmp_path, 5)
    dropped = next(d for d in range(200) if d not in docs)      # not in the widened corpus
    inputs["raw"] = RawPhrases(np.array([2], np.int64), np.array([2], np.int64),
                               np.array([0, 1], np.int64),
                               np.array([int(inputs["doc_offsets"][dropped])], np.int64))
    with open(path / INPUTS, "wb") as f:
        pickle.dump(inputs, f)
    assert run(_layer_in_task, str(path)) == 1  # the task itself succeeds: Spark retries nothing
    with pytest.raises(RuntimeError, match="outside the widened corpus"):
        result(path)
    (path / RESULT).unlink()
    with pytest.raises(RuntimeError, match="left no result"):
        result(path)
