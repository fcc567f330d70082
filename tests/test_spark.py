"""Spark engine: results equal to the local engine, fault tolerance, pre-filter exactness.

One module-scoped SparkSession (``local[2,4]``: 2 cores, a task may fail 3 times)
serves every Spark test.  The pre-filter's worker functions are also run without
Spark on Arrow batches and compared with the brute-force phrase oracle.
"""

from __future__ import annotations

import json
import os
import shutil
import string
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("pyspark")
if shutil.which("java") is None:  # pragma: no cover - depends on the machine
    pytest.skip("the Spark tests need a Java runtime (openjdk-17-jre-headless)",
                allow_module_level=True)

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import repetend  # noqa: E402
import repetend.synth  # noqa: E402
from repetend.errors import InputError, ParameterError  # noqa: E402
from repetend.neardup._uf import components as uf_components  # noqa: E402
from repetend.spark import _kernels as SK  # noqa: E402
from repetend.spark import phrases as SP  # noqa: E402
from repetend.spark.io import binary_of, pack_binary  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from naive_phrases import naive_phrases  # noqa: E402


# -- fixtures ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    from repetend.spark import local_session

    active = SparkSession.getActiveSession()   # another module's session: not this master
    if active is not None:
        active.stop()
    s = local_session("local[2,4]", "repetend-tests", shuffle_partitions=2,
                      conf={"spark.sql.adaptive.enabled": "false"})
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def _planted_corpus(seed: int, n_docs: int = 60):
    """Random documents over a small vocabulary with planted repeats: shared phrases
    (some twice in one document), edited copies, exact short duplicates, empty and
    one-word documents.  Ids are random strings (not in corpus order)."""
    rng = np.random.default_rng(seed)
    vocab = ["".join(rng.choice(list(string.ascii_lowercase), size=rng.integers(2, 7)))
             for _ in range(300)]
    phrases = [[vocab[i] for i in rng.integers(0, 300, size=rng.integers(3, 12))]
               for _ in range(6)]
    texts: list[str] = []
    for d in range(n_docs):
        kind = rng.integers(0, 10)
        if kind == 0:
            texts.append("")
        elif kind == 1:
            texts.append(vocab[int(rng.integers(0, 5))] + "!")
        elif kind == 2 and texts:
            src = texts[int(rng.integers(0, len(texts)))].split()
            for _ in range(int(rng.integers(0, 3))):
                if src:
                    src[int(rng.integers(0, len(src)))] = vocab[int(rng.integers(0, 300))]
            texts.append(" ".join(src))
        else:
            words = [vocab[i] for i in rng.integers(0, 300, size=rng.integers(5, 60))]
            for _ in range(int(rng.integers(0, 4))):
                p = phrases[int(rng.integers(0, len(phrases)))]
                at = int(rng.integers(0, len(words) + 1))
                words[at:at] = p
            texts.append(" ".join(w.capitalize() if rng.random() < 0.1 else w for w in words) + ".")
    ids = ["".join(rng.choice(list(string.ascii_letters), size=8)) for _ in range(n_docs)]
    urls = [f"https://site{int(rng.integers(0, 4))}.example/p{d}" for d in range(n_docs)]
    return ids, texts, urls


def _weblike_rows():
    c = repetend.synth.weblike(200)
    return [f"d{i:05d}" for i in range(len(c))], c.texts, c.urls


def _local_store(ids, texts, urls, order=None):
    """A local store of the documents in the Spark order (by *order*, else the
    engine's own order: the hash of id and text, ties by id)."""
    from repetend.spark.order import local_order

    if order is not None:
        perm = sorted(range(len(ids)), key=lambda i: (order[i], ids[i]))
    else:
        perm = [int(i) for i in local_order(ids, texts)]
    return repetend.TokenStore.from_texts([texts[i] for i in perm], ids=[ids[i] for i in perm],
                                          urls=[urls[i] for i in perm])


def _same_neardup(got, want):
    for name in ("pairs", "candidates", "containment"):
        p, q = getattr(got, name), getattr(want, name)
        for f in ("a", "b", "jaccard", "containment_ab", "containment_ba"):
            assert np.array_equal(getattr(p, f), getattr(q, f)), (name, f)
    assert np.array_equal(got.candidate_estimate, want.candidate_estimate, equal_nan=True)
    for f in ("cluster_id", "sizes", "representative"):
        assert np.array_equal(getattr(got.clusters, f), getattr(want.clusters, f)), f
    for what in ("pairs", "clusters", "containment"):
        assert got.to_arrow(what).equals(want.to_arrow(what)), what
    lsh = dict(want.summary["lsh"])
    assert got.summary["lsh"] == lsh


def _same_phrases(got, want):
    for name in ("phrases", "occurrences", "documents", "hosts", "spans"):
        a, b = getattr(got, name), getattr(want, name)
        assert (a is None) == (b is None), name
        if a is not None:
            # every column, the character offsets (computed on the executors) included
            assert a.column_names == b.column_names, name
            assert a.equals(b), name
    for key in ("documents", "tokens", "covered_tokens", "covered_share", "document_share",
                "drop_candidates", "index_eaters", "phrases", "occurrences", "empty_documents",
                "frequent_tokens", "frequent_share", "frequent_spans"):
        assert got.summary[key] == want.summary[key], key
    assert np.array_equal(got.coverage_mask(), want.coverage_mask())


# -- near-duplicates -----------------------------------------------------------------

def test_neardup_equals_local_on_weblike(spark):
    from repetend.spark import find_near_duplicates

    ids, texts, urls = _weblike_rows()
    df = spark.createDataFrame(list(zip(ids, texts, urls)), "id string, text string, url string")
    cfg = repetend.NearDupConfig(threshold=0.5, max_bucket=4)
    got = find_near_duplicates(spark, df, cfg)
    want = repetend.find_near_duplicates(_local_store(ids, texts, urls), cfg)
    assert want.summary["verified_pairs"] > 10 and want.summary["capped_buckets"] > 0
    _same_neardup(got, want)


def test_neardup_equals_local_from_jsonl(spark, tmp_path):
    from repetend.spark import find_near_duplicates

    ids, texts, urls = _planted_corpus(1, 80)
    path = tmp_path / "docs.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i, t, u in zip(ids, texts, urls):
            f.write(json.dumps({"key": i, "body": t, "link": u}) + "\n")
    cfg = repetend.NearDupConfig(threshold=0.7, shingle=2, num_perm=32, bbits=8, scheme="oph",
                                 max_bucket=3, min_shingles=3)
    got = find_near_duplicates(spark, str(path), cfg, id_col="key", text_col="body",
                               url_col="link")
    want = repetend.find_near_duplicates(_local_store(ids, texts, urls), cfg)
    assert want.summary["lsh"]["near_empty_documents"] > 0
    assert want.summary["lsh"]["empty_documents"] > 0
    assert want.summary["verified_pairs"] > 0
    _same_neardup(got, want)


@pytest.mark.parametrize("task", ["neardup", "phrases"])
def test_result_survives_a_killed_worker(spark, tmp_path, task):
    """A Python worker dies (os._exit) in the middle of the job; Spark retries the task
    and the result is the local one."""
    from pyspark.sql import functions as F

    from repetend.spark import find_near_duplicates, find_phrases

    ids, texts, urls = _planted_corpus(2, 50)
    marker = str(tmp_path / "crashed")

    def crash_once(text, _marker=marker):
        if not os.path.exists(_marker):
            with open(_marker, "w") as f:
                f.write("x")
            os._exit(3)
        return text

    df = spark.createDataFrame(list(zip(ids, texts, urls)), "id string, text string, url string")
    df = df.withColumn("text", F.udf(crash_once, "string")(F.col("text")))
    store = _local_store(ids, texts, urls)
    if task == "neardup":
        cfg = repetend.NearDupConfig(threshold=0.6, shingle=2)
        got = find_near_duplicates(spark, df, cfg)
        _same_neardup(got, repetend.find_near_duplicates(store, cfg))
    else:
        cfg = repetend.PhraseConfig(min_docs=2, min_len=4)
        got = find_phrases(spark, df, cfg)
        want = repetend.find_phrases(store, cfg)
        assert want.n_phrases > 0
        _same_phrases(got, want)
    assert os.path.exists(marker), "the worker was never killed"


def _islands_task_dir(root, seed):
    """A scratch directory with the islands of a random corpus in Parquet, and the
    mining task's inputs."""
    from repetend.phrases import PhraseConfig
    from repetend.spark.task import scratch_dir

    rng = np.random.default_rng(seed)
    docs = [rng.integers(0, 6, size=int(rng.integers(0, 20))) for _ in range(12)]
    tokens = np.concatenate(docs).astype(np.int32)
    offsets = np.concatenate(([0], np.cumsum([d.size for d in docs]))).astype(np.int64)
    isl, word_hash = _islands_locally(tokens, offsets, 2, 2, 2, 64)
    d = scratch_dir(root, SP.ISLANDS_NAME)
    d.mkdir()
    pq.write_table(pa.Table.from_batches(isl), d / "part-0.parquet")
    return d, {"word_hash": word_hash, "word_key": np.arange(word_hash.size, dtype=np.int64),
               "cfg": PhraseConfig(min_docs=2, min_len=3, templates=False), "labels": None}


def test_a_one_task_stage_survives_a_killed_worker(spark, tmp_path):
    """The island mining's one task: its Python worker dies (os._exit) once, Spark
    retries it, and the driver gets what the mining gives without Spark."""
    from repetend.spark.task import in_one_task

    d, inputs = _islands_task_dir(tmp_path, 3)
    marker = str(tmp_path / "crashed")

    def crash_once(work, _marker=marker, **kw):
        if not os.path.exists(_marker):
            with open(_marker, "w") as f:
                f.write("x")
            os._exit(3)
        return SP._mine_islands(work, **kw)

    got, peak = in_one_task(spark, crash_once, d, inputs, "test: mining the islands")
    assert os.path.exists(marker), "the worker was never killed"
    want = SP._mine_islands(d, **inputs)
    assert want.raw.n_phrases > 0 and peak > 0
    for name in ("occ_doc", "occ_local", "island_doc", "covered", "frequent", "span_doc",
                 "span_start", "span_end", "span_phrase"):
        assert getattr(got, name).tolist() == getattr(want, name).tolist(), name
    assert got.raw.lengths.tolist() == want.raw.lengths.tolist()
    assert got.raw.occ_starts.tolist() == want.raw.occ_starts.tolist()


def test_a_one_task_stage_whose_worker_always_dies_says_what_to_give_it(spark, tmp_path):
    """Every attempt loses its Python worker (as an executor killed for its memory
    would): one error naming the stage, the attempts and the setting, no traceback
    of Spark's."""
    from repetend.errors import SparkTaskError
    from repetend.spark.task import in_one_task

    d, inputs = _islands_task_dir(tmp_path, 5)

    def die(work, **kw):
        os._exit(9)

    with pytest.raises(SparkTaskError, match=r"^the mining: its Python worker was lost in all 4 "
                                             r"attempts .*spark\.executor\.memoryOverhead"):
        in_one_task(spark, die, d, inputs, "the mining")


def test_a_one_task_stage_raises_the_tasks_error_once(spark, tmp_path):
    """An exception in the task reaches the driver as it was, and the task ran once
    (Spark does not retry a deterministic error)."""
    from repetend.spark.task import in_one_task

    d, inputs = _islands_task_dir(tmp_path, 4)
    calls = tmp_path / "calls"

    def fail(work, _calls=str(calls), **kw):
        with open(_calls, "a") as f:
            f.write("x")
        raise ParameterError(f"no good: {sorted(kw)}")

    with pytest.raises(ParameterError, match=r"no good: \['cfg', 'labels', 'word_hash', 'word_key'\]"):
        in_one_task(spark, fail, d, inputs, "test: an error")
    assert calls.read_text() == "x"


def test_connected_components_equal_union_find(spark):
    from repetend.spark import connected_components

    rng = np.random.default_rng(5)
    for n, m in ((80, 60),):
        a = rng.integers(0, n, size=m)
        b = rng.integers(0, n, size=m)
        # a long path too: the worst case for label propagation
        a = np.concatenate([a, np.arange(n, n + 25)])
        b = np.concatenate([b, np.arange(n + 1, n + 26)])
        edges = spark.createDataFrame([(int(x), int(y)) for x, y in zip(a, b)], "a long, b long")
        labels, rounds = connected_components(edges)
        got = {int(r["node"]): int(r["label"]) for r in labels.collect()}
        want = uf_components(n + 26, a.astype(np.int64), b.astype(np.int64))
        nodes = {int(x) for x in a} | {int(y) for y in b}
        nodes = {v for v in nodes if any((a == v) & (b != v)) or any((b == v) & (a != v))}
        assert got == {v: int(want[v]) for v in nodes}
        assert rounds >= 1


# -- phrases ---------------------------------------------------------------------------

def test_phrases_equal_local_on_weblike(spark):
    from repetend.spark import find_phrases

    ids, texts, urls = _weblike_rows()
    df = spark.createDataFrame(list(zip(ids, texts, urls)), "id string, text string, url string")
    store = _local_store(ids, texts, urls)
    cfg = repetend.PhraseConfig(min_docs=5, min_len=8)
    got = find_phrases(spark, df, cfg, sketch_width=1 << 12)
    want = repetend.find_phrases(store, cfg)
    assert want.n_phrases > 5
    _same_phrases(got, want)
    kept = got.summary["spark"]["kept_share"]
    assert 0 < kept < 1


def test_phrases_over_groups_equal_local(spark):
    """df over groups of documents (near-duplicate clusters): the pre-filters count
    documents (one-sided), the driver mines with the groups; the same tables."""
    from repetend.spark import find_phrases

    ids, texts, urls = _weblike_rows()
    df = spark.createDataFrame(list(zip(ids, texts, urls)), "id string, text string, url string")
    store = _local_store(ids, texts, urls)
    labels = np.random.default_rng(1).integers(0, 60, size=len(ids))
    cfg = repetend.PhraseConfig(min_docs=4, min_len=8, df_over="clusters", templates=None)
    got = find_phrases(spark, df, cfg, sketch_width=1 << 12, groups=labels)
    want = repetend.find_phrases(store, cfg, groups=labels)
    assert want.n_phrases > 5
    assert want.summary["parameters"]["groups"] == got.summary["parameters"]["groups"]
    _same_phrases(got, want)
    with pytest.raises(ParameterError, match="needs groups"):
        find_phrases(spark, df, cfg)


def test_phrases_equal_local_from_parquet_with_order(spark, tmp_path):
    """Random corpora with planted repeats, read from Parquet, ordered by a column; a
    two-counter sketch (collisions everywhere) and a small store batch size."""
    from repetend.spark import find_phrases

    ids, texts, urls = _planted_corpus(3, 70)
    order = list(np.random.default_rng(0).permutation(len(ids)))
    pq.write_table(pa.table({"id": ids, "text": texts, "url": urls, "ord": order}),
                   tmp_path / "docs.parquet")
    perm = sorted(range(len(ids)), key=lambda i: order[i])
    records = [repetend.Record(id=ids[i], text=texts[i], url=urls[i], source="m", record_no=j)
               for j, i in enumerate(perm)]
    store = repetend.build_store(records, batch_chars=400)   # several store batches
    for cfg, k in ((repetend.PhraseConfig(min_docs=2, min_len=3), None),
                   (repetend.PhraseConfig(min_docs=3, min_len=5, engine="suffix"), 2)):
        got = find_phrases(spark, str(tmp_path / "docs.parquet"), cfg, order_col="ord", k=k,
                           sketch_width=2, sketch_depth=1)
        want = repetend.find_phrases(store, cfg)
        assert want.n_phrases > 0
        _same_phrases(got, want)


# -- errors ----------------------------------------------------------------------------

def test_input_errors(spark):
    from repetend.spark import find_near_duplicates, find_phrases

    df = spark.createDataFrame([("a", "x y z"), ("a", "x y")], "id string, body string")
    with pytest.raises(InputError, match="'text' is missing; columns: id, body"):
        find_phrases(spark, df)
    with pytest.raises(InputError, match="id 'a' occurs 2 times"):
        find_near_duplicates(spark, df, text_col="body")
    with pytest.raises(ParameterError, match="minhash"):
        find_near_duplicates(spark, df, repetend.NearDupConfig(method="allpairs"), text_col="body")
    with pytest.raises(ParameterError, match="k must be"):
        find_phrases(spark, df, repetend.PhraseConfig(min_len=3), text_col="body", k=4)
    with pytest.raises(InputError, match="Parquet"):
        find_phrases(spark, "corpus.csv")


def test_missing_pyspark_names_the_extra():
    code = ("import sys; sys.modules['pyspark'] = None\n"
            "from repetend.errors import MissingExtraError\n"
            "try:\n    import repetend.spark\nexcept MissingExtraError as e:\n"
            "    print('extra=' + e.extra)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "extra=spark" in out.stdout, out.stderr


# -- the pre-filter without Spark --------------------------------------------------------

class _Bc:
    def __init__(self, value):
        self.value = value


def _prefilter_locally(tokens, doc_offsets, sigma, k, depth, width, batches=2):
    """The Spark pre-filter's worker functions chained in one process, as Spark would
    (rows split into *batches* Arrow batches, shuffles replaced by numpy), and the
    reduced corpus of the islands (None when there are none)."""
    isl, word_hash = _islands_locally(tokens, doc_offsets, sigma, k, depth, width, batches)
    word_key = np.arange(word_hash.size, dtype=np.int64)
    if not isl:
        return None
    return SP._reduced_corpus(pa.Table.from_batches(isl), word_hash, word_key)


def _islands_locally(tokens, doc_offsets, sigma, k, depth, width, batches=2):
    """The islands' batches the executors would write, and the frequent words' hashes."""
    n = doc_offsets.size - 1
    h = tokens.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(7)  # token hashes
    cut = np.linspace(0, n, batches + 1).astype(int)
    rbs = [pa.RecordBatch.from_arrays(
        [pa.array(np.arange(a, b, dtype=np.int64)),
         pack_binary(h[doc_offsets[a]:doc_offsets[b]], doc_offsets[a:b + 1] - doc_offsets[a])],
        names=["doc_index", "tokens"]) for a, b in zip(cut[:-1], cut[1:])]
    ws = pa.Table.from_batches(list(SP._word_stat_batches(iter(rbs)))) if h.size else None
    stats: dict = {}
    if ws is not None:
        for hh, df, fd in zip(ws.column("hash").to_pylist(), ws.column("df").to_pylist(),
                              ws.column("first_doc").to_pylist()):
            d0, f0 = stats.get(hh, (0, n))
            stats[hh] = (d0 + df, min(f0, fd))
    freq = {hh: v for hh, v in stats.items() if v[0] >= sigma}
    word_hash = np.sort(np.array(list(freq), dtype=np.int64).view(np.uint64))
    words = _Bc(word_hash)
    tables = [np.frombuffer(b.column(0)[0].as_py(), np.uint32)
              for rb in rbs   # one sketch per partition, merged like Spark's treeReduce
              for b in SP._sketch_batches(iter([rb]), words_bc=words, k=k, depth=depth,
                                          width=width)]
    table = tables[0]
    for t in tables[1:]:
        table = SP._saturating_sum(table, t)
    table = table.reshape(depth, width)
    surv: dict = {}
    for b in SP._survivor_batches(iter(rbs), words_bc=words, sketch_bc=_Bc(table), k=k,
                                  min_docs=sigma):
        for hh, c in zip(b.column(0).to_pylist(), b.column(1).to_pylist()):
            surv[hh] = surv.get(hh, 0) + c
    grams = np.sort(np.array([hh for hh, c in surv.items() if c >= sigma],
                             dtype=np.int64).view(np.uint64))
    isl = [b for b in SP._island_batches(iter(rbs), words_bc=words, grams_bc=_Bc(grams), k=k)]
    return isl, word_hash


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 5), min_size=0, max_size=14), min_size=1, max_size=9),
       st.integers(1, 3), st.integers(1, 4), st.data())
def test_prefilter_keeps_every_maximal_phrase(docs, sigma, min_len, data):
    """Mining the reduced corpus gives the naive answer on the full corpus: same phrases,
    same df, every occurrence at the same place; whatever the sketch size."""
    k = data.draw(st.integers(1, min_len))
    width = data.draw(st.sampled_from([1, 3, 64]))
    tokens = np.array([t for d in docs for t in d], dtype=np.int32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    want = naive_phrases(tokens, offsets, sigma, min_len)
    red = _prefilter_locally(tokens, offsets, sigma, k, 2, width)
    if red is None:
        assert want == {}
        return
    toks_r, off_r, island_doc, posmap, n_real = red
    got_r = naive_phrases(toks_r, off_r, sigma, min_len)
    got = {}
    sep = toks_r >= n_real
    # map reduced phrases back: token ids → original tokens, positions → original positions
    ids_to_tok = {}
    for p in range(toks_r.size):
        if not sep[p]:
            d = int(island_doc[np.searchsorted(off_r, p, side="right") - 1])
            ids_to_tok[int(toks_r[p])] = int(tokens[offsets[d] + posmap[p]])
    for phrase, (df, starts) in got_r.items():
        assert all(t < n_real for t in phrase), "a separator inside a phrase"
        orig = tuple(ids_to_tok[t] for t in phrase)
        mapped = []
        for s in starts:
            d = int(island_doc[np.searchsorted(off_r, s, side="right") - 1])
            mapped.append(int(offsets[d] + posmap[s]))
        got[orig] = (df, sorted(mapped))
    assert got == want


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.integers(0, 5), min_size=0, max_size=14), min_size=1, max_size=9),
       st.integers(1, 3), st.integers(1, 4), st.data())
def test_island_mining_task_equals_the_local_engine(tmp_path_factory, docs, sigma, min_len, data):
    """The island mining as its Spark task runs it (islands in Parquet files, rows in
    any order; :func:`repetend.spark.task.run`), mapped back to the original
    documents: the local engine's phrases, occurrences, per-document coverage and
    frequent spans on the whole corpus."""
    from repetend.phrases import PhraseConfig
    from repetend.spark.task import INPUTS, result, run, scratch_dir

    k = data.draw(st.integers(1, min_len))
    tokens = np.array([t for d in docs for t in d], dtype=np.int32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    if tokens.size == 0:
        return
    cfg = PhraseConfig(min_docs=sigma, min_len=min_len, templates=False)
    want = repetend.find_phrases((tokens, offsets), cfg)
    isl, word_hash = _islands_locally(tokens, offsets, sigma, k, 2, 64)
    d = scratch_dir(tmp_path_factory.mktemp("isl"), SP.ISLANDS_NAME)
    d.mkdir()
    rows = pa.Table.from_batches(isl) if isl else None
    if rows is not None:           # rows shuffled over up to three files, as Spark may write them
        rows = rows.take(pa.array(np.random.default_rng(len(docs)).permutation(rows.num_rows)))
        cut = np.linspace(0, rows.num_rows, 4).astype(int)
        for i, (a, b) in enumerate(zip(cut[:-1], cut[1:])):
            pq.write_table(rows.slice(a, b - a), d / f"part-{i}.parquet")
    # the local store's ids are the token values here: each frequent word's own token
    h = tokens.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(7)
    token_of = dict(zip(h.tolist(), tokens.tolist()))
    word_key = np.array([token_of[int(x)] for x in word_hash], np.int64)
    with open(d / INPUTS, "wb") as f:
        import pickle

        pickle.dump({"word_hash": word_hash, "word_key": word_key, "cfg": cfg, "labels": None}, f)
    assert run(SP._mine_islands, str(d)) == 1
    m, _ = result(d)
    assert m.raw.lengths.tolist() == want.raw.lengths.tolist()
    assert m.raw.df.tolist() == want.raw.df.tolist()
    assert m.raw.occ_offsets.tolist() == want.raw.occ_offsets.tolist()
    assert (offsets[m.occ_doc] + m.occ_local).tolist() == want.raw.occ_starts.tolist()
    n = len(docs)
    covered, frequent = np.zeros(n, np.int64), np.zeros(n, np.int64)
    covered[m.island_doc] = m.covered
    frequent[m.island_doc] = m.frequent
    assert covered.tolist() == want.documents.column("covered_tokens").to_pylist()
    assert frequent.tolist() == want.documents.column("frequent_tokens").to_pylist()
    ws = want.spans
    assert sorted(zip(m.span_doc.tolist(), m.span_start.tolist(), m.span_end.tolist(),
                      m.span_phrase.tolist())) == sorted(zip(
        *(ws.column(c).to_pylist() for c in ("doc_index", "start", "end", "phrase_id"))))
    assert m.kept == (0 if rows is None else binary_of(rows.column("positions"), np.int32)[0].size)
    assert m.island_doc.tolist() == ([] if rows is None else sorted(rows.column("doc_index").to_pylist()))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=50), st.integers(1, 3), st.integers(1, 17))
def test_count_min_sketch_never_undercounts(values, depth, width):
    h = np.array(values, dtype=np.uint64)
    table = np.zeros((depth, width), dtype=np.uint32)
    SK.cms_add(h, table)
    est = np.empty(h.size, dtype=np.uint32)
    SK.cms_query(h, table, est)
    uniq, counts = np.unique(h, return_counts=True)
    true = dict(zip(uniq.tolist(), counts.tolist()))
    assert all(int(e) >= true[int(v)] for v, e in zip(h.tolist(), est.tolist()))
    if width >= 17 and depth >= 1 and h.size <= 1:
        assert all(int(e) == true[int(v)] for v, e in zip(h.tolist(), est.tolist()))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 4), max_size=12), min_size=1, max_size=5),
       st.integers(1, 4), st.data())
def test_window_kernels_equal_python(docs, k, data):
    from repetend.neardup._shingle_kernels import splitmix64

    h = np.array([t for d in docs for t in d], dtype=np.uint64) * np.uint64(1000003)
    off = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=off[1:])
    ok = np.array(data.draw(st.lists(st.booleans(), min_size=h.size, max_size=h.size)), dtype=bool)
    counts = SK.kgram_counts(off, k)
    woff = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=woff[1:])
    wh = np.empty(int(woff[-1]), np.uint64)
    valid = np.empty(int(woff[-1]), np.bool_)
    SK.kgram_hashes(h, off, np.int64(k), ok, woff, wh, valid)
    freq = np.array(data.draw(st.lists(st.booleans(), min_size=wh.size, max_size=wh.size)),
                    dtype=bool)
    keep = np.zeros(h.size, np.bool_)
    SK.island_mask(off, np.int64(k), woff, freq, keep)
    want_keep = np.zeros(h.size, bool)
    for d in range(len(docs)):
        a, n = int(off[d]), len(docs[d])
        assert counts[d] == max(n - k + 1, 0)
        for i in range(max(n - k + 1, 0)):
            x = np.uint64(k)
            for j in range(a + i, a + i + k):
                x = splitmix64(x ^ h[j])
            assert wh[woff[d] + i] == x
            assert valid[woff[d] + i] == bool(ok[a + i:a + i + k].all())
            if freq[woff[d] + i]:
                want_keep[a + i:a + i + k] = True
    assert np.array_equal(keep, want_keep)


def test_binary_packing_round_trip():
    rng = np.random.default_rng(0)
    vals = rng.integers(0, 2**63, size=40, dtype=np.int64).view(np.uint64)
    off = np.array([0, 0, 3, 3, 40], dtype=np.int64)
    arr = pack_binary(vals, off)
    got, goff = binary_of(arr.slice(1), np.uint64)
    assert np.array_equal(goff, off[1:] - off[1])
    assert np.array_equal(got, vals)
