"""Templates with variable parts on Spark: the local layer on the widened corpus gives
the local tables (``repetend.spark.templates``; the argument in docs/spark.md)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

pytest.importorskip("pyspark")
if shutil.which("java") is None:  # pragma: no cover - depends on the machine
    pytest.skip("the Spark tests need a Java runtime", allow_module_level=True)

import repetend  # noqa: E402
import repetend.synth  # noqa: E402
from repetend.phrases.templates import TemplateConfig  # noqa: E402
from repetend.spark import templates as ST  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    from repetend.spark import local_session

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
    s = local_session("local[2,4]", "repetend-tests", shuffle_partitions=2,
                      conf={"spark.sql.adaptive.enabled": "false"})
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def _slotted_corpus(seed: int, n_docs: int = 80):
    """Random body text with planted slotted blocks: fixed parts (some shorter than
    L'), number, word and multi-token slots, heads before a block on most of its pages,
    blocks next to each other, and long random documents without any."""
    rng = np.random.default_rng(seed)
    letters = list("abcdefghijklmnopqrstuvwxyz")
    vocab = ["".join(rng.choice(letters, size=rng.integers(2, 7))) for _ in range(400)]
    names = ["alice", "bob", "carol", "dave", "erin"]
    blocks = []
    for _ in range(4):
        parts = [[vocab[i] for i in rng.integers(0, 400, size=rng.integers(1, 7))]
                 for _ in range(rng.integers(2, 5))]
        kinds = [rng.choice(["num", "word", "gap"]) for _ in range(len(parts) - 1)]
        head = [vocab[int(rng.integers(0, 400))] for _ in range(rng.integers(1, 3))]
        blocks.append((parts, kinds, head))

    def render(block):
        parts, kinds, head = block
        out = list(head) if rng.random() < 0.85 else []
        for i, p in enumerate(parts):
            out += p
            if i < len(kinds):
                k = kinds[i]
                if k == "num":
                    out.append(str(int(rng.integers(1, 3000))))
                elif k == "word":
                    out.append(names[int(rng.integers(0, len(names)))])
                else:
                    out += [vocab[int(x)] for x in rng.integers(0, 400, size=rng.integers(1, 4))]
        return out

    texts = []
    for _ in range(n_docs):
        words = [vocab[int(i)] for i in rng.integers(0, 400, size=rng.integers(0, 120))]
        for _ in range(int(rng.integers(0, 4))):
            at = int(rng.integers(0, len(words) + 1))
            words[at:at] = render(blocks[int(rng.integers(0, len(blocks)))])
        texts.append(" ".join(w.capitalize() if rng.random() < 0.05 else w for w in words))
    ids = ["".join(rng.choice(letters, size=8)) for _ in range(n_docs)]
    urls = [f"https://s{int(rng.integers(0, 3))}.example/p{d}" for d in range(n_docs)]
    return ids, texts, urls


def _local_store(ids, texts, urls):
    from repetend.spark.order import local_order

    perm = [int(i) for i in local_order(ids, texts)]
    return repetend.TokenStore.from_texts([texts[i] for i in perm], ids=[ids[i] for i in perm],
                                          urls=[urls[i] for i in perm])


def _same_templates(got, want):
    assert (got.templates is None) == (want.templates is None)
    if want.templates is None:
        return
    assert got.templates.table.equals(want.templates.table)
    assert got.templates.occurrences.equals(want.templates.occurrences)
    # the exact tables are unchanged by the template passes
    for name in ("phrases", "documents", "spans"):
        a, b = getattr(got, name), getattr(want, name)
        common = [c for c in a.column_names if c in b.column_names]
        assert a.select(common).equals(b.select(common)), name


def _check(spark, ids, texts, urls, cfg):
    from repetend.spark import find_phrases

    df = spark.createDataFrame(list(zip(ids, texts, urls)), "id string, text string, url string")
    got = find_phrases(spark, df, cfg, sketch_width=1 << 12)
    want = repetend.find_phrases(_local_store(ids, texts, urls), cfg)
    _same_templates(got, want)
    return got, want


def test_reach_bounds_the_layer():
    t = TemplateConfig()
    g = max(t.max_gap, t.word_slots, 1)
    assert ST.reach(t) == (ST.END_ROUNDS + 1) * (g + 1) + g
    assert ST.reach(TemplateConfig(ends=False, max_gap=3)) == 3


def test_templates_equal_local_on_weblike(spark):
    c = repetend.synth.weblike(80)
    ids = [f"d{i:05d}" for i in range(len(c))]
    cfg = repetend.PhraseConfig(min_docs=5, min_len=8)
    got, want = _check(spark, ids, c.texts, c.urls, cfg)
    assert want.templates.table.num_rows > 3
    assert "char_start" in got.templates.occurrences.column_names
    assert 0 < got.summary["spark"]["templates"]["kept_share"] <= 1


@pytest.mark.parametrize("seed", range(3))
def test_templates_equal_local_on_slotted_corpora(spark, seed):
    rng = np.random.default_rng(100 + seed)
    ids, texts, urls = _slotted_corpus(seed, 50)
    tcfg = TemplateConfig(max_gap=int(rng.integers(1, 5)), ends=bool(seed % 3),
                          merge_variants=bool(seed % 2), part_len=int(rng.integers(2, 5)))
    cfg = repetend.PhraseConfig(min_docs=int(rng.integers(3, 6)), min_len=int(rng.integers(5, 9)),
                                templates=tcfg)
    got, want = _check(spark, ids, texts, urls, cfg)
    if seed < 2:
        assert want.templates.table.num_rows > 0


def test_templates_over_groups_equal_local(spark):
    from repetend.spark import find_phrases

    ids, texts, urls = _slotted_corpus(7, 50)
    labels = np.random.default_rng(3).integers(0, 50, size=len(ids))
    cfg = repetend.PhraseConfig(min_docs=3, min_len=6, df_over="clusters")
    df = spark.createDataFrame(list(zip(ids, texts, urls)), "id string, text string, url string")
    got = find_phrases(spark, df, cfg, sketch_width=1 << 12, groups=labels)
    want = repetend.find_phrases(_local_store(ids, texts, urls), cfg, groups=labels)
    assert want.templates.table.num_rows > 0
    _same_templates(got, want)


def test_the_layer_compares_whole_documents_lengths():
    """A corpus holding parts of its documents (Spark's widened corpus) gives the
    layer the whole documents' lengths: the example of a template is then its
    occurrence in the shortest *original* document, as locally (the weblike parity
    test above fails without it)."""
    from repetend.corpus.store import TokenStore
    from repetend.phrases.templates.corpus import _as_corpus

    store = TokenStore.from_texts(["a b c d", "a b", "a b c"])
    c = _as_corpus(store)
    assert np.array_equal(c.length_offsets(), store.doc_offsets)
    store.original_lengths = np.array([2, 9, 5])
    c = _as_corpus(store)
    assert np.array_equal(np.diff(c.length_offsets()), [2, 9, 5])
    assert c.length_offsets() is c.length_offsets()          # computed once
    assert np.array_equal(c.doc_offsets, store.doc_offsets)  # positions stay the store's

def test_templates_equal_local_on_weblike_200(spark):
    """On 200 weblike documents the widened lengths decide an example document
    (without the padding, example_doc_id differed from the local table)."""
    c = repetend.synth.weblike(200)
    ids = [f"d{i:05d}" for i in range(len(c))]
    got, want = _check(spark, ids, c.texts, c.urls, repetend.PhraseConfig(min_docs=5, min_len=8))
    assert want.templates.table.num_rows > 3
