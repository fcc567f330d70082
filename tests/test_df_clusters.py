"""df over near-duplicate clusters end to end: ``find_phrases(groups=)``, the
template layer, ``repetend phrases --df-over clusters --clusters DIR`` and the
scan job, which runs near-duplicates first and counts each cluster once."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from naive_phrases import naive_phrases
from repetend import TokenStore
from repetend.cli import main
from repetend.errors import InputError, ParameterError
from repetend.jobs import ScanConfig, scan
from repetend.neardup import NearDupConfig
from repetend.phrases import PhraseConfig, find_phrases, groups_from_clusters
from repetend.phrases.templates import TemplateConfig

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


def _base_texts(rng, n_docs, vocab=40, max_len=40):
    """Random documents of words ``w0 … w{vocab-1}``, most holding one of two
    shared blocks (so that some phrases are frequent), none a near-duplicate of
    another (the rest is random: Jaccard of 5-shingles far under 0.8)."""
    blocks = [list(rng.integers(0, vocab, size=9)), list(rng.integers(0, vocab, size=12))]
    texts = []
    for _ in range(n_docs):
        doc = list(rng.integers(0, vocab, size=int(rng.integers(20, max_len))))
        for b in blocks:
            if rng.random() < 0.4:
                at = int(rng.integers(0, len(doc)))
                doc[at:at] = b
        texts.append(" ".join(f"w{t}" for t in doc))
    return texts


def _with_copies(rng, texts, n_copied):
    """The base texts followed by 2-5 exact copies of *n_copied* of them (ids
    unique), and the group of every document (its original's index)."""
    ids = [f"d{i}" for i in range(len(texts))]
    out_t, out_i, group = list(texts), list(ids), list(range(len(texts)))
    for i in rng.choice(len(texts), n_copied, replace=False).tolist():
        for c in range(int(rng.integers(2, 6))):
            out_t.append(texts[i])
            out_i.append(f"{ids[i]}.copy{c}")
            group.append(i)
    return ids, out_t, out_i, np.array(group)


def _table(res) -> list[tuple]:
    t = res.phrases
    return list(zip(map(tuple, t.column("tokens").to_pylist()), t.column("df").to_pylist()))


def _naive(store, sigma, L, groups=None):
    ans = naive_phrases(store.tokens, store.doc_offsets, sigma, L, groups)
    vocab = store.vocab
    return sorted((tuple(vocab[t] for t in p), df) for p, (df, _) in ans.items())


# -- the must-hold property: copies add nothing ------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_scan_over_copies_equals_phrases_of_the_base_corpus(seed, tmp_path):
    rng = np.random.default_rng(seed)
    sigma, L = int(rng.integers(3, 6)), int(rng.integers(4, 9))
    texts = _base_texts(rng, int(rng.integers(25, 45)))
    ids, all_t, all_i, group = _with_copies(rng, texts, 8)
    base = TokenStore.from_texts(texts, ids)
    full = TokenStore.from_texts(all_t, all_i)
    cfg = PhraseConfig(min_docs=sigma, min_len=L, templates=None)
    alone = find_phrases(base, cfg)
    res = scan(full, tmp_path / "scan", ScanConfig(phrases=cfg, dups=NearDupConfig(),
                                                    report=False))
    # exact copies are one cluster each (Jaccard 1), nothing else is clustered
    clusters = pq.read_table(tmp_path / "scan" / "dups" / "clusters.parquet").to_pandas()
    cid = np.full(len(all_t), -1)
    cid[clusters["doc_index"].to_numpy()] = clusters["cluster_id"].to_numpy()
    labels = groups_from_clusters(cid)
    same = labels[:, None] == labels[None, :]
    assert np.array_equal(same, group[:, None] == group[None, :])
    written = pq.read_table(tmp_path / "scan" / "phrases" / "phrases.parquet")
    assert written.column("tokens").to_pylist() == alone.phrases.column("tokens").to_pylist()
    assert written.column("df").to_pylist() == alone.phrases.column("df").to_pylist()
    assert _table(res.phrases) == _table(alone)
    assert sorted(_table(alone)) == _naive(base, sigma, L) == _naive(full, sigma, L, group)
    # occurrences and coverage are on every document, the copies included
    assert res.phrases.documents.num_rows == len(all_t)
    assert res.phrases.occurrences.num_rows >= alone.occurrences.num_rows
    summary = json.loads((tmp_path / "scan" / "summary.json").read_text())
    assert summary["parameters"]["df_over"] == "clusters"
    assert res.phrases.summary["parameters"]["groups"] == len(texts)


def test_copies_of_documents_shorter_than_a_shingle_are_one_cluster_too(tmp_path):
    """Documents of 1-4 tokens (under the 5-token shingle; MinHash matches them
    exactly) and their copies: still the phrases of the base corpus."""
    rng = np.random.default_rng(0)
    short = dict.fromkeys(" ".join(f"w{t}" for t in rng.integers(0, 6, size=int(n)))
                          for n in rng.integers(1, 5, size=60))
    texts = list(short) + [" ".join(f"w{t}" for t in rng.integers(0, 30, size=30))
                           for _ in range(10)]
    ids, all_t, all_i, group = _with_copies(rng, texts, 15)
    cfg = PhraseConfig(min_docs=3, min_len=2, templates=None)
    alone = find_phrases(TokenStore.from_texts(texts, ids), cfg)
    res = scan(TokenStore.from_texts(all_t, all_i), tmp_path / "scan",
               ScanConfig(phrases=cfg, report=False))
    assert res.phrases.summary["parameters"]["groups"] == len(texts)
    assert alone.phrases.num_rows > 0 and sorted(_table(res.phrases)) == sorted(_table(alone))


def test_scan_over_documents_counts_every_copy(tmp_path):
    rng = np.random.default_rng(11)
    texts = _base_texts(rng, 30)
    ids, all_t, all_i, group = _with_copies(rng, texts, 8)
    full = TokenStore.from_texts(all_t, all_i)
    cfg = PhraseConfig(min_docs=4, min_len=6, templates=None)
    res = scan(full, tmp_path / "scan", ScanConfig(phrases=cfg, report=False,
                                                    df_over="documents"))
    assert _table(res.phrases) == _table(find_phrases(full, cfg))
    assert "df_over" not in res.phrases.summary["parameters"]


def test_scan_without_dups_falls_back_to_documents_and_says_so(tmp_path):
    rng = np.random.default_rng(5)
    full = TokenStore.from_texts(_base_texts(rng, 30))
    cfg = PhraseConfig(min_docs=4, min_len=6, templates=None)
    said = []
    res = scan(full, tmp_path / "scan", ScanConfig(phrases=cfg, dups=None, report=False),
               log=said.append)
    assert _table(res.phrases) == _table(find_phrases(full, cfg))
    assert any("counts documents" in s for s in said)
    assert "near-duplicate stage was skipped" in res.phrases.summary["df_over_note"]
    summary = json.loads((tmp_path / "scan" / "summary.json").read_text())
    assert summary["parameters"]["df_over"] == "documents" and summary["df_over_note"]


def test_reuse_never_reuses_phrases_counted_over_something_else(tmp_path):
    rng = np.random.default_rng(2)
    texts = _base_texts(rng, 30)
    _, all_t, all_i, _ = _with_copies(rng, texts, 8)
    full = TokenStore.from_texts(all_t, all_i)
    cfg = PhraseConfig(min_docs=4, min_len=6, templates=None)
    out = tmp_path / "scan"
    said = []
    scan(full, out, ScanConfig(phrases=cfg, report=False))
    scan(full, out, ScanConfig(phrases=cfg, report=False, reuse=True), log=said.append)
    assert "reusing phrases" in said
    said.clear()
    scan(full, out, ScanConfig(phrases=cfg, report=False, reuse=True, df_over="documents"),
         log=said.append)
    assert "reusing phrases" not in said
    said.clear()
    # another clustering (a threshold that joins nothing new, but another key) is not reused
    scan(full, out, ScanConfig(phrases=cfg, report=False, reuse=True,
                               dups=NearDupConfig(threshold=0.9)), log=said.append)
    assert "reusing phrases" not in said


def test_scan_config_checks_df_over():
    with pytest.raises(ParameterError, match="--df-over"):
        ScanConfig(df_over="sites").validate()


# -- find_phrases and the template layer ----------------------------------------------------

def test_singleton_groups_give_byte_identical_tables():
    rng = np.random.default_rng(4)
    store = TokenStore.from_texts(_base_texts(rng, 60))
    a = find_phrases(store, min_docs=4, min_len=5)
    b = find_phrases(store, min_docs=4, min_len=5, df_over="clusters",
                     groups=np.arange(store.n_docs)[::-1])
    for name in ("phrases", "documents", "occurrences", "spans"):
        assert getattr(a, name).equals(getattr(b, name)), name
    assert a.templates.table.equals(b.templates.table)
    assert a.templates.occurrences.equals(b.templates.occurrences)
    assert b.summary["parameters"]["df_over"] == "clusters"
    assert b.summary["parameters"]["groups"] == store.n_docs


def test_find_phrases_checks_groups_against_df_over():
    toks = np.array([1, 2, 3, 1, 2, 3, 1, 2, 3], dtype=np.int32)
    off = np.array([0, 3, 6, 9])
    with pytest.raises(ParameterError, match="needs groups"):
        find_phrases((toks, off), min_docs=2, min_len=2, df_over="clusters")
    with pytest.raises(ParameterError, match="df_over is 'documents'"):
        find_phrases((toks, off), min_docs=2, min_len=2, groups=[0, 0, 1])
    with pytest.raises(ParameterError, match="one label per document"):
        find_phrases((toks, off), min_docs=2, min_len=2, df_over="clusters", groups=[0, 1])
    with pytest.raises(ParameterError, match="df_over must be"):
        find_phrases((toks, off), min_docs=2, min_len=2, df_over="hosts")
    res = find_phrases((toks, off), min_docs=2, min_len=2, df_over="clusters", groups=[7, 7, 9],
                       templates=None)
    assert res.phrases.column("df").to_pylist() == [2]
    assert res.occurrences.num_rows == 3           # every document keeps its occurrence
    none = find_phrases((toks, off), min_docs=3, min_len=2, df_over="clusters",
                        groups=[7, 7, 9], templates=None)
    assert none.phrases.num_rows == 0


@pytest.mark.parametrize("engine", ["bloomspan", "suffix"])
@pytest.mark.parametrize("seed", range(3))
def test_find_phrases_group_df_matches_oracle(engine, seed):
    rng = np.random.default_rng(seed)
    texts = _base_texts(rng, 40, vocab=12)
    store = TokenStore.from_texts(texts)
    labels = rng.integers(0, 15, size=store.n_docs)
    res = find_phrases(store, min_docs=3, min_len=3, engine=engine, df_over="clusters",
                       groups=labels, templates=None)
    assert sorted(_table(res)) == _naive(store, 3, 3, labels)


def test_out_of_core_over_groups_equals_in_memory(tmp_path):
    rng = np.random.default_rng(8)
    store = TokenStore.from_texts(_base_texts(rng, 50))
    store.save(tmp_path / "store")
    disk = TokenStore.open(tmp_path / "store")
    labels = rng.integers(0, 20, size=store.n_docs)
    a = find_phrases(disk, min_docs=3, min_len=4, df_over="clusters", groups=labels,
                     templates=None)
    b = find_phrases(disk, min_docs=3, min_len=4, df_over="clusters", groups=labels,
                     templates=None, memory_limit="4G")
    assert b.summary["engine_stats"].get("out_of_core")
    assert a.phrases.num_rows > 0 and a.phrases.equals(b.phrases)
    assert a.occurrences.equals(b.occurrences)


def test_template_df_counts_distinct_groups():
    from repetend.synth import weblike

    store = weblike(600, seed=3).to_store()
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 300, size=store.n_docs)
    for short_parts, sigma in ((True, 6), (False, 4)):
        res = find_phrases(store, min_docs=sigma, min_len=8, df_over="clusters", groups=labels,
                           templates=TemplateConfig(short_parts=short_parts))
        occ = res.templates.occurrences
        tid = occ.column("template_id").to_numpy()
        doc = occ.column("doc_index").to_numpy()
        df = res.templates.table.column("df").to_numpy()
        assert df.size > 0 and (df >= sigma).all()
        assert [np.unique(labels[doc[tid == i]]).size for i in range(df.size)] == df.tolist()
        assert res.templates.summary["parameters"]["groups"] == np.unique(labels).size


def test_template_layer_over_copies_finds_what_the_base_has():
    """Exact copies grouped with their originals: the template layer finds the same
    templates (parts, df) as on the base corpus alone."""
    from repetend.synth import weblike

    sc = weblike(240, seed=5, dup_rate=0.0)
    texts = [r.text for r in sc.records]
    rng = np.random.default_rng(1)
    ids, all_t, all_i, group = _with_copies(rng, texts, 20)
    base, full = TokenStore.from_texts(texts, ids), TokenStore.from_texts(all_t, all_i)
    a = find_phrases(base, min_docs=6, min_len=8)
    b = find_phrases(full, min_docs=6, min_len=8, df_over="clusters", groups=group)
    assert _table(a) == _table(b)
    ta = a.templates.table.select(["parts", "df"]).to_pylist()
    tb = b.templates.table.select(["parts", "df"]).to_pylist()
    assert ta and sorted(map(str, ta)) == sorted(map(str, tb))


# -- the command line -------------------------------------------------------------------

@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    d = tmp_path_factory.mktemp("copies")
    rng = np.random.default_rng(7)
    texts = _base_texts(rng, 40)
    ids, all_t, all_i, _ = _with_copies(rng, texts, 10)
    for name, tt, ii in (("base", texts, ids), ("full", all_t, all_i)):
        with open(d / f"{name}.jsonl", "w") as f:
            for i, t in zip(ii, tt):
                f.write(json.dumps({"id": i, "text": t}) + "\n")
    r = CliRunner().invoke(main, ["dups", str(d / "full.jsonl"), "-o", str(d / "dups"), "-q"])
    assert r.exit_code == 0, r.output
    return d


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_phrases_df_over_clusters_of_a_dups_output(copies, tmp_path):
    common = ["-s", 4, "-L", 6, "--no-templates", "-q"]
    r = _run("phrases", copies / "base.jsonl", "-o", tmp_path / "base", *common)
    assert r.exit_code == 0, r.output
    r = _run("phrases", copies / "full.jsonl", "-o", tmp_path / "full", *common,
             "--df-over", "clusters", "--clusters", copies / "dups")
    assert r.exit_code == 0, r.output
    assert "df over 40 near-duplicate clusters" in r.output
    a = pq.read_table(tmp_path / "base" / "phrases.parquet").select(["tokens", "df"])
    b = pq.read_table(tmp_path / "full" / "phrases.parquet").select(["tokens", "df"])
    assert a.num_rows > 0 and a.equals(b)
    summary = json.loads((tmp_path / "full" / "summary.json").read_text())
    assert summary["parameters"]["df_over"] == "clusters"
    assert summary["parameters"]["groups"] == 40


@pytest.mark.parametrize("args, message", [
    (["--df-over", "clusters"], "needs --clusters"),
    (["--clusters", "{dups}"], "only with --df-over clusters"),
    (["--df-over", "clusters", "--clusters", "{nothing}"], "no clusters.parquet"),
    (["--df-over", "clusters", "--clusters", "{missing}"], "no such directory"),
])
def test_phrases_bad_cluster_options_are_refused_before_any_work(copies, tmp_path, args,
                                                                  message):
    (tmp_path / "nothing").mkdir()
    sub = {"{dups}": str(copies / "dups"), "{nothing}": str(tmp_path / "nothing"),
           "{missing}": str(tmp_path / "missing")}
    args = [sub.get(a, a) for a in args]
    r = _run("phrases", copies / "full.jsonl", "-o", tmp_path / "out", "--store",
             tmp_path / "store", "-q", *args)
    assert r.exit_code != 0 and message in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists() and not (tmp_path / "store").exists()


def test_phrases_refuses_clusters_of_another_corpus(copies, tmp_path):
    # another number of documents
    r = _run("phrases", copies / "base.jsonl", "-o", tmp_path / "out", "--store",
             tmp_path / "store", "-q", "--df-over", "clusters", "--clusters", copies / "dups")
    assert r.exit_code != 0 and "made from another corpus" in r.output, r.output
    assert not (tmp_path / "out").exists() and not (tmp_path / "store").exists()
    # as many documents, other ids
    lines = (copies / "full.jsonl").read_text().splitlines()
    other = tmp_path / "other.jsonl"
    other.write_text("\n".join(json.dumps({"id": f"x{i}", "text": json.loads(s)["text"]})
                               for i, s in enumerate(lines)) + "\n")
    r = _run("phrases", other, "-o", tmp_path / "out", "-q", "--df-over", "clusters",
             "--clusters", copies / "dups")
    assert r.exit_code != 0 and "made from another corpus" in r.output, r.output
    assert not (tmp_path / "out").exists()


def test_phrases_keeps_the_store_once_the_clusters_are_checked(copies, tmp_path):
    r = _run("phrases", copies / "full.jsonl", "-o", tmp_path / "out", "--store",
             tmp_path / "store", "-q", "-s", 4, "-L", 6, "--no-templates",
             "--df-over", "clusters", "--clusters", copies / "dups")
    assert r.exit_code == 0, r.output
    assert TokenStore.open(tmp_path / "store").n_docs == len(
        (copies / "full.jsonl").read_text().splitlines())


def test_scan_cli_df_over_and_its_summary(copies, tmp_path):
    r = _run("scan", copies / "full.jsonl", "-o", tmp_path / "s", "--min-docs", 4, "--min-len",
             6, "--no-report", "--no-templates")
    assert r.exit_code == 0, r.output
    assert "df over 40 clusters" in r.output
    r = _run("scan", copies / "full.jsonl", "-o", tmp_path / "s2", "--min-docs", 4,
             "--min-len", 6, "--no-report", "--no-templates", "--df-over", "documents")
    assert r.exit_code == 0, r.output
    assert "df over documents" in r.output
    # a scan directory is a --clusters source too
    r = _run("phrases", copies / "full.jsonl", "-o", tmp_path / "p", "-s", 4, "-L", 6, "-q",
             "--no-templates", "--df-over", "clusters", "--clusters", tmp_path / "s")
    assert r.exit_code == 0, r.output
    a = pq.read_table(tmp_path / "p" / "phrases.parquet").select(["tokens", "df"])
    b = pq.read_table(tmp_path / "s" / "phrases" / "phrases.parquet").select(["tokens", "df"])
    assert a.equals(b)


def test_cluster_groups_reads_jsonl_dups_output(copies, tmp_path):
    from repetend.jobs.clusters import cluster_groups

    r = _run("dups", copies / "full.jsonl", "-o", tmp_path / "dj", "-q", "--format", "jsonl")
    if r.exit_code != 0:
        pytest.skip(f"dups has no jsonl output here: {r.output}")
    store = TokenStore.from_texts([json.loads(s)["text"] for s in
                                   (copies / "full.jsonl").read_text().splitlines()],
                                  [json.loads(s)["id"] for s in
                                   (copies / "full.jsonl").read_text().splitlines()])
    g = cluster_groups(tmp_path / "dj", store)
    assert np.unique(g).size == 40
    with pytest.raises(InputError, match="another corpus"):
        cluster_groups(tmp_path / "dj", TokenStore.from_texts(["a b c"] * 3))
