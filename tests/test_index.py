"""The persistent index: incremental pairs equal one batch run, exact verification,
shared fragments and phrase hits against brute-force oracles, format versioning,
merge, snapshots, CLI."""

from __future__ import annotations

import json
import threading

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from repetend.corpus.store import TokenStore
from repetend.errors import InputError, ParameterError
from repetend.index import NearDupIndex, load_phrases, shared_fragments, tokens_of
from repetend.index import _index_kernels as K
import repetend.index.align as align_mod
from repetend.index.align import Tokens
from repetend.index.align import common_runs as align_runs
from repetend.neardup import NearDupConfig, find_near_duplicates


# -- corpora and oracles ----------------------------------------------------------------

def corpus(seed: int, n: int = 120, vocab: int = 400, copy_rate: float = 0.45) -> list[str]:
    """Random documents (some empty or very short) and edited copies of earlier ones."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(vocab)]
    texts: list[str] = []
    for i in range(n):
        if texts and rng.random() < copy_rate:
            src = texts[int(rng.integers(0, len(texts)))].split()
            for _ in range(int(rng.integers(0, 3))):
                if src:
                    src[int(rng.integers(0, len(src)))] = f"e{i}"
            if src and rng.random() < 0.3:
                src = src[: max(1, int(len(src) * rng.uniform(0.5, 1.0)))]
            texts.append(" ".join(src))
        else:
            m = int(rng.choice([0, 1, 2, 4, 8, 20, 40, 60]))
            texts.append(" ".join(rng.choice(words, m)))
    return texts


def shingles(text: str, k: int) -> set:
    t = text.lower().split()
    if not t:
        return set()
    if len(t) < k:
        return {tuple(t)}
    return {tuple(t[i:i + k]) for i in range(len(t) - k + 1)}


def jaccard(a: set, b: set) -> float:
    u = len(a | b)
    return len(a & b) / u if u else 0.0


def pair_set(table: pa.Table) -> set:
    return set(zip(table.column("a_index").to_pylist(), table.column("b_index").to_pylist()))


def incremental_pairs(tmp_path, texts, cuts, cfg, merge_after=()):
    idx = NearDupIndex.build(texts[:cuts[0]], tmp_path / "idx", cfg)
    found = pair_set(idx.last_add.pairs)
    cont = pair_set(idx.last_add.containment)
    bounds = list(cuts) + [len(texts)]
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        if i in merge_after:
            idx.merge()
        r = idx.add(texts[a:b])
        found |= pair_set(r.pairs)
        cont |= pair_set(r.containment)
    return idx, found, cont


CONFIGS = [
    NearDupConfig(threshold=0.8),
    NearDupConfig(threshold=0.5, shingle=3, num_perm=64),
    NearDupConfig(threshold=0.7, shingle=2, bbits=8, scheme="oph", num_perm=32),
    NearDupConfig(threshold=0.9, shingle=4, hash="crc32", min_shingles=1),
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"t{c.threshold}-k{c.shingle}-{c.scheme}")
@pytest.mark.parametrize("seed", [0, 1])
def test_incremental_equals_one_run(tmp_path, cfg, seed):
    texts = corpus(seed)
    whole = find_near_duplicates(TokenStore.from_texts(texts), cfg)
    assert whole.summary["capped_buckets"] == 0  # below the cap: equality is exact
    want = set(zip(whole.pairs.a.tolist(), whole.pairs.b.tolist()))
    want_c = set(zip(whole.containment.a.tolist(), whole.containment.b.tolist()))
    assert want  # the corpus has duplicates, else the test could not fail
    idx, found, cont = incremental_pairs(tmp_path, texts, [len(texts) // 2], cfg)
    assert found == want
    assert cont == want_c
    assert idx.n_docs == len(texts) and idx.n_segments == 2


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 10_000), cut_a=st.integers(1, 59), cut_b=st.integers(60, 119),
       merge=st.booleans())
def test_incremental_three_batches_random(tmp_path_factory, seed, cut_a, cut_b, merge):
    tmp = tmp_path_factory.mktemp("inc")
    cfg = NearDupConfig(threshold=0.6, shingle=3, num_perm=64)
    texts = corpus(seed)
    whole = find_near_duplicates(TokenStore.from_texts(texts), cfg)
    want = set(zip(whole.pairs.a.tolist(), whole.pairs.b.tolist()))
    _, found, _ = incremental_pairs(tmp, texts, [cut_a, cut_b], cfg,
                                    merge_after=(1,) if merge else ())
    assert found == want


def test_add_reports_exact_measures_and_ids(tmp_path):
    texts = corpus(5)
    k = 5
    idx = NearDupIndex.build(texts[:60], tmp_path / "i", NearDupConfig(threshold=0.7),
                             ids=[f"a{i}" for i in range(60)])
    r = idx.add(texts[60:], ids=[f"b{i}" for i in range(60)], urls=[None] * 60)
    assert r.pairs.num_rows
    py = [shingles(t, k) for t in texts]
    for row in r.pairs.to_pylist() + r.containment.to_pylist():
        a, b = row["a_index"], row["b_index"]
        assert a < b and b >= 60
        assert row["a_is_new"] == (a >= 60)
        sa, sb = py[a], py[b]
        assert row["jaccard"] == pytest.approx(jaccard(sa, sb))
        assert row["containment_ab"] == pytest.approx(len(sa & sb) / len(sa))
        assert row["containment_ba"] == pytest.approx(len(sa & sb) / len(sb))
        assert row["a"] == (f"a{a}" if a < 60 else f"b{a - 60}")
        assert row["b"] == f"b{b - 60}"
    assert all(row["jaccard"] >= 0.7 for row in r.pairs.to_pylist())
    assert idx.doc_ids([0, 60]) == ["a0", "b0"]
    assert idx.text(61) == texts[61]


def test_query_no_false_positive_and_copies_found(tmp_path):
    texts = corpus(7, n=150)
    idx = NearDupIndex.build(texts, tmp_path / "i", NearDupConfig(threshold=0.6, shingle=3))
    k = 3
    py = [shingles(t, k) for t in texts]
    probes = [texts[i] for i in range(0, 150, 7) if len(texts[i].split()) >= 3]
    res = idx.query(probes, limit=1000)
    assert len(res.documents) == len(probes)
    for text, d in zip(probes, res.documents):
        s = shingles(text, k)
        got = {m["doc_index"] for m in d["near_duplicates"]}
        for m in d["near_duplicates"]:
            assert m["jaccard"] == pytest.approx(jaccard(s, py[m["doc_index"]]))
            assert m["jaccard"] >= 0.6
        # identical documents have identical signatures: never missed
        assert {i for i, t in enumerate(py) if t == s} <= got
        for m in d["contained_in"]:
            assert m["jaccard"] < 0.6 and m["containment_query_in_doc"] >= 0.8


def test_query_recall_matches_s_curve(tmp_path):
    """Planted pairs at J ~ 0.9 with K=128: recall at least P(0.85) minus slack."""
    rng = np.random.default_rng(3)
    words = [f"v{i}" for i in range(5000)]
    base = [list(rng.choice(words, 100)) for _ in range(200)]
    idx = NearDupIndex.build([" ".join(b) for b in base], tmp_path / "i",
                             NearDupConfig(threshold=0.8, shingle=1))
    hits = 0
    for i, b in enumerate(base):
        c = list(b)
        c[int(rng.integers(0, 100))] = "zz"
        hits += i in {m["doc_index"] for m in idx.query(" ".join(c), fragments=False)
                      .documents[0]["near_duplicates"]}
    assert hits >= 0.95 * len(base)


# -- shared fragments -----------------------------------------------------------------

def naive_runs(a: list, b: list, k: int) -> set:
    """Every maximal common run (i, j, t >= k) by an O(n·m) table of common
    prefix lengths: lcp[i][j] = lcp[i+1][j+1] + 1 where a[i] == b[j]."""
    n, m = len(a), len(b)
    lcp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            if a[i] == b[j]:
                lcp[i][j] = lcp[i + 1][j + 1] + 1
    return {(i, j, lcp[i][j]) for i in range(n) for j in range(m)
            if lcp[i][j] >= max(k, 1) and (i == 0 or j == 0 or a[i - 1] != b[j - 1])}


def naive_fragments(a: list, b: list, k: int) -> list[tuple]:
    """The documented selection: all maximal runs of >= k tokens ordered by
    (longer first, smaller start in a, smaller start in b); a run is chosen when
    its span in a overlaps none chosen before.  Returns (i, j, t) in choice order."""
    used: set = set()
    out = []
    for i, j, t in sorted(naive_runs(a, b, k), key=lambda r: (-r[2], r[0], r[1])):
        span = set(range(i, i + t))
        if not span & used:
            out.append((i, j, t))
            used |= span
    return out


def dedup_runs(runs: set) -> set:
    """One run per (start in a, length): the smallest start in b."""
    best: dict = {}
    for i, j, t in runs:
        if (i, t) not in best or j < best[(i, t)]:
            best[(i, t)] = j
    return {(i, j, t) for (i, t), j in best.items()}


token_lists = st.one_of(
    st.lists(st.integers(0, 4), max_size=30),                          # small alphabet
    st.lists(st.integers(0, 1), max_size=40),                          # binary
    st.builds(lambda p, r, c: (p * r)[:c],                             # periodic
              st.lists(st.integers(0, 2), min_size=1, max_size=4), st.integers(1, 15),
              st.integers(0, 40)))


@settings(max_examples=300, deadline=None)
@given(a=token_lists, b=token_lists, k=st.integers(1, 4))
def test_common_runs_vs_naive(a, b, k):
    ra, rb, rl = align_runs(np.array(a, np.uint64), np.array(b, np.uint64), k)
    got = list(zip(ra.tolist(), rb.tolist(), rl.tolist()))
    assert len(got) == len(set(got))
    assert set(got) == dedup_runs(naive_runs(a, b, k))


def _tokens(ids: list) -> "Tokens":
    return tokens_of(" ".join(f"w{x}" for x in ids))


@pytest.mark.parametrize("group", [1, 16])
@settings(max_examples=200, deadline=None)
@given(a=token_lists, b=token_lists, k=st.integers(1, 5))
def test_shared_fragments_vs_naive(group, a, b, k):
    # group 1: every window group takes the path that skips by the token before
    align_mod._GROUP = group
    try:
        frags = shared_fragments(_tokens(a), _tokens(b), k, limit=10**6)
    finally:
        align_mod._GROUP = 16
    got = [(f["query_token"], f["doc_token"], f["tokens"]) for f in frags]
    w = max(1, min(k, len(a), len(b)))
    want = naive_fragments(a, b, w) if a and b else []
    assert got == want
    if want:
        assert frags[0]["tokens"] == max(t for _, _, t in naive_runs(a, b, w))


def test_shared_fragments_many_occurrences():
    """The longest run starts where its first window occurs many times in the
    other text (the old search tried 16 occurrences and reported 2 tokens)."""
    a = [0, 1, 2, 3, 4, 5]
    b = [0, 1, 9] * 40 + [0, 1, 2, 3, 4, 5]
    frags = shared_fragments(_tokens(a), _tokens(b), 2)
    assert [(f["query_token"], f["doc_token"], f["tokens"]) for f in frags] == [(0, 120, 6)]
    # periodic texts: the whole shorter text is the longest fragment
    a = [0, 1, 2] * 200
    b = [7] + [0, 1, 2] * 300
    frags = shared_fragments(_tokens(a), _tokens(b), 5)
    assert frags[0]["tokens"] == 600 and frags[0]["doc_token"] == 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(1, 6)), max_size=15), st.integers(1, 30))
def test_greedy_disjoint_vs_python(runs, n):
    starts = np.array([min(s, n - 1) for s, _ in runs], dtype=np.int64)
    lens = np.array([min(m, n - min(s, n - 1)) for s, m in runs], dtype=np.int64)
    order = np.lexsort((starts, -lens)).astype(np.int64)
    keep = K.greedy_disjoint(starts, lens, order, n)
    used = set()
    want = np.zeros(len(runs), bool)
    for r in order.tolist():
        span = set(range(int(starts[r]), int(starts[r] + lens[r])))
        if not span & used:
            want[r] = True
            used |= span
    assert (keep == want).all()


def test_shared_fragments_offsets_and_text():
    src = ("Intro line. The QUICK brown fox, jumps over the lazy dog; "
           "and then some filler words here, and the Rain in Spain stays mainly in the plain!")
    query = ("Completely different start, the quick Brown fox jumps over THE lazy dog and more "
             "words, then: the rain in spain stays mainly in the plain.")
    qa, qb = tokens_of(query), tokens_of(src)
    frags = shared_fragments(qa, qb, 4)
    assert len(frags) == 2
    for f in frags:
        qtext = query[f["query_start"]:f["query_end"]]
        dtext = src[f["doc_start"]:f["doc_end"]]
        assert qtext == f["text"]
        assert qtext.lower().replace(",", "").replace(";", "").split() == \
            dtext.lower().replace(",", "").replace(";", "").split()
        assert len(qtext.split()) == f["tokens"]
    assert {f["tokens"] for f in frags} == {10, 9}  # "... lazy dog[;] and" and "the rain ... plain"
    assert shared_fragments(tokens_of(""), qb, 4) == []


def test_query_fragments_point_into_both_texts(tmp_path):
    rng = np.random.default_rng(11)
    words = [f"q{i}" for i in range(3000)]
    docs = [" ".join(rng.choice(words, 80)) for _ in range(30)]
    idx = NearDupIndex.build(docs, tmp_path / "i", NearDupConfig(threshold=0.5, containment=0.3))
    # a new text: most of doc 4 with an inserted sentence in the middle
    w = docs[4].split()
    new = " ".join(w[:40] + ["Inserted", "SENTENCE", "here"] + w[40:])
    d = idx.query(new).documents[0]
    m = next(x for x in d["near_duplicates"] if x["doc_index"] == 4)
    frags = sorted(m["fragments"], key=lambda f: f["query_start"])
    assert [f["tokens"] for f in frags] == [40, 40]
    for f in frags:
        assert new[f["query_start"]:f["query_end"]] == docs[4][f["doc_start"]:f["doc_end"]]


# -- known phrases ----------------------------------------------------------------------

def write_phrases(d, phrases: list[list[str]]):
    d.mkdir(parents=True)
    pq.write_table(pa.table({"phrase_id": pa.array(range(len(phrases)), pa.int64()),
                             "tokens": pa.array(phrases, pa.list_(pa.string())),
                             "text": pa.array([" ".join(p) for p in phrases]),
                             "df": pa.array([3 + i for i in range(len(phrases))], pa.int64())}),
                   d / "phrases.parquet")
    return d


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcd"), min_size=2, max_size=5), min_size=1, max_size=6),
       st.lists(st.sampled_from("abcde"), max_size=40))
def test_phrase_hits_vs_naive(tmp_path_factory, phrases, text):
    d = write_phrases(tmp_path_factory.mktemp("ph") / "phrases", phrases)
    known = load_phrases(d)
    found, share = known.find(tokens_of(" ".join(text)), "word", None, limit=10_000)
    got = {(f["phrase_id"], f["token_start"]) for f in found}
    assert all(f["token_end"] - f["token_start"] == len(phrases[f["phrase_id"]])
               and (f["char_start"], f["char_end"]) == (f["start"], f["end"]) for f in found)
    want = {(pid, i) for pid, p in enumerate(phrases) for i in range(len(text) - len(p) + 1)
            if text[i:i + len(p)] == p}
    assert got == want
    covered = {i for pid, s in want for i in range(s, s + len(phrases[pid]))}
    assert share == pytest.approx(len(covered) / len(text) if text else 0.0)


def test_query_reports_known_phrases_with_offsets(tmp_path):
    write_phrases(tmp_path / "scan" / "phrases",
                  [["доставка", "бесплатно", "при", "заказе"], ["все", "права", "защищены"]])
    idx = NearDupIndex.build(["some text"], tmp_path / "i", phrases=tmp_path / "scan")
    text = "Новинки! Доставка бесплатно при заказе... © 2024, Все права защищены."
    d = idx.query(text).documents[0]
    spans = {text[f["start"]:f["end"]] for f in d["phrases"]}
    assert spans == {"Доставка бесплатно при заказе", "Все права защищены"}
    assert d["boilerplate_share"] == pytest.approx(7 / 9)
    assert idx.stats()["phrases"] == 2


# -- format, errors, merge, snapshots -----------------------------------------------------

def test_format_version_and_not_an_index(tmp_path):
    idx = NearDupIndex.build(corpus(1, n=20), tmp_path / "i")
    m = json.loads((tmp_path / "i" / "MANIFEST.json").read_text())
    m["format_version"] = 99
    (tmp_path / "i" / "MANIFEST.json").write_text(json.dumps(m))
    with pytest.raises(InputError, match="format version 99"):
        NearDupIndex.open(tmp_path / "i")
    with pytest.raises(InputError, match="not a repetend index"):
        NearDupIndex.open(tmp_path)
    store = TokenStore.from_texts(["a b c"])
    store.save(tmp_path / "store")
    with pytest.raises(InputError, match="token store, not an index"):
        NearDupIndex.open(tmp_path / "store")
    (tmp_path / "i" / "MANIFEST.json").write_text("{not json")
    with pytest.raises(InputError, match="unreadable"):
        NearDupIndex.open(tmp_path / "i")
    assert idx.n_docs == 20


def test_parameter_errors(tmp_path):
    with pytest.raises(ParameterError, match="minhash"):
        NearDupIndex.build(["a"], tmp_path / "x", method="allpairs")
    idx = NearDupIndex.build(["a b c d e f"], tmp_path / "i")
    with pytest.raises(ParameterError, match="already exists"):
        NearDupIndex.build(["a"], tmp_path / "i")
    with pytest.raises(ParameterError):
        idx.query("a b", threshold=1.5)
    with pytest.raises(ParameterError):
        idx.add("just one string")
    with pytest.raises(ParameterError):
        idx.add([1, 2])
    with pytest.raises(ParameterError):
        idx.add(TokenStore.from_texts(["x"], unit="char"))
    again = NearDupIndex.build(["z y x w v"], tmp_path / "i", overwrite=True)
    assert again.n_docs == 1


def test_merge_keeps_indices_and_answers(tmp_path):
    texts = corpus(9, n=90)
    idx = NearDupIndex.build(texts[:30], tmp_path / "i", NearDupConfig(threshold=0.6, shingle=3))
    idx.add(texts[30:60])
    idx.add(texts[60:])
    probes = texts[::9]
    before = idx.query(probes).to_json()["documents"]
    old = {p.name for p in (tmp_path / "i" / "segments").iterdir()}
    s = idx.merge()
    assert s["segments_before"] == 3 and idx.n_segments == 1
    after = idx.query(probes).to_json()["documents"]
    assert after == before
    assert not old & {p.name for p in (tmp_path / "i" / "segments").iterdir()}
    r = idx.add(texts[:5])  # exact copies of old documents are found after the merge
    assert {(a, b) for a, b in pair_set(r.pairs) if b - 90 == a} >= {
        (i, 90 + i) for i in range(5) if len(texts[i].split()) >= 1}


def test_reader_snapshot_is_stable_during_add_and_merge(tmp_path):
    texts = corpus(2, n=80)
    writer = NearDupIndex.build(texts[:40], tmp_path / "i", NearDupConfig(threshold=0.6, shingle=3))
    reader = NearDupIndex.open(tmp_path / "i")
    probe = texts[50]
    stop = threading.Event()
    seen: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def loop():
        r = NearDupIndex.open(tmp_path / "i")
        while not stop.is_set():
            try:
                res = r.query(probe, fragments=False)
                n = res.summary["index_documents"]
                hit = any(m["doc_index"] == 50 for m in res.documents[0]["near_duplicates"])
                seen.append((n, hit))
                r.reload()
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)
                return

    th = threading.Thread(target=loop)
    th.start()
    writer.add(texts[40:])
    writer.merge()
    stop.set()
    th.join()
    assert not errors
    assert all((n == 40 and not hit) or (n == 80 and hit) for n, hit in seen)
    assert reader.n_docs == 40  # held its snapshot through add and merge
    assert reader.query(texts[3], fragments=False).summary["index_documents"] == 40
    assert reader.reload().n_docs == 80


def test_store_input_and_result_tables(tmp_path):
    texts = corpus(4, n=40)
    store = TokenStore.from_texts(texts, ids=[f"s{i}" for i in range(40)])
    store.save(tmp_path / "store")
    idx = NearDupIndex.build(TokenStore.open(tmp_path / "store"), tmp_path / "i",
                             NearDupConfig(threshold=0.6, shingle=3))
    out = idx.last_add.write(tmp_path / "rep")
    t = pq.read_table(out / "pairs.parquet")
    assert t.num_rows == idx.last_add.pairs.num_rows > 0
    assert set(t.column("a").to_pylist()) <= {f"s{i}" for i in range(40)}
    q = idx.query(texts[:3], ids=["x", "y", "z"])
    tab = q.matches_table()
    assert set(tab.column("query_id").to_pylist()) <= {"x", "y", "z"}


# -- CLI --------------------------------------------------------------------------------

def _cli():
    import click

    from repetend.cli import _Group
    from repetend.cli.index_cmd import COMMANDS

    @click.group(cls=_Group)
    def cli():
        pass

    for c in COMMANDS:
        cli.add_command(c)
    return cli


def test_cli_build_add_query_merge(tmp_path):
    texts = corpus(8, n=60)
    for name, part in (("a", texts[:30]), ("b", texts[30:])):
        with open(tmp_path / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for i, t in enumerate(part):
                f.write(json.dumps({"id": f"{name}{i}", "text": t}) + "\n")
    cli = _cli()
    run = CliRunner().invoke
    r = run(cli, ["index", "build", str(tmp_path / "a.jsonl"), "--out", str(tmp_path / "idx"),
                  "-t", "0.6", "-k", "3", "-q"])
    assert r.exit_code == 0, r.output
    r = run(cli, ["index", "add", str(tmp_path / "idx"), str(tmp_path / "b.jsonl"), "-q",
                  "--report", str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output
    assert "30 documents added (30 -> 60" in r.output
    rep = pq.read_table(tmp_path / "rep" / "pairs.parquet")
    whole = find_near_duplicates(TokenStore.from_texts(texts), threshold=0.6, shingle=3)
    first = NearDupIndex.build(texts[:30], tmp_path / "tmpidx", threshold=0.6, shingle=3)
    assert pair_set(rep) | pair_set(first.last_add.pairs) == set(
        zip(whole.pairs.a.tolist(), whole.pairs.b.tolist()))
    r = run(cli, ["query", str(tmp_path / "idx"), "--text", texts[40], "--max-matches", "5"])
    assert r.exit_code == 0, r.output
    ans = json.loads(r.output)
    if len(texts[40].split()) >= 1:
        assert 40 in {m["doc_index"] for m in ans["documents"][0]["near_duplicates"]}
    r = run(cli, ["query", str(tmp_path / "idx"), str(tmp_path / "b.jsonl"), "--no-fragments",
                  "-o", str(tmp_path / "q.json")])
    assert r.exit_code == 0, r.output
    assert len(json.loads((tmp_path / "q.json").read_text())["documents"]) == 30
    r = run(cli, ["index", "merge", str(tmp_path / "idx")])
    assert r.exit_code == 0 and "2 segments -> 1" in r.output
    r = run(cli, ["index", "info", str(tmp_path / "idx")])
    assert json.loads(r.output)["documents"] == 60
    r = run(cli, ["query", str(tmp_path / "idx")])
    assert r.exit_code == 2 and "error: give INPUT files or --text" in r.output
    r = run(cli, ["query", str(tmp_path), "--text", "x"])
    assert r.exit_code == 2 and "not a repetend index" in r.output


# -- shingle postings ---------------------------------------------------------------------

@pytest.mark.parametrize("min_shared", [1, 3])
def test_postings_find_every_document_sharing_text(tmp_path, min_shared):
    rng = np.random.default_rng(21)
    words = [f"u{i}" for i in range(300)]
    docs = [" ".join(rng.choice(words, int(rng.integers(5, 120)))) for _ in range(80)]
    k = 3
    idx = NearDupIndex.build(docs[:40], tmp_path / "i", NearDupConfig(threshold=0.8, shingle=k),
                             postings=True, postings_max_df=10_000)
    idx.add(docs[40:])
    py = [shingles(t, k) for t in docs]
    probes = []
    for _ in range(12):  # pieces of two documents glued with own words
        a, b = rng.integers(0, 80, size=2)
        wa, wb = docs[a].split(), docs[b].split()
        probes.append(" ".join(["own"] + wa[: int(rng.integers(1, len(wa) + 1))] + ["mine"]
                               + wb[int(rng.integers(0, len(wb))):]))
    res = idx.query(probes, fragments=False, limit=1000, min_shared=min_shared)
    for text, d in zip(probes, res.documents):
        s = shingles(text, k)
        got = {m["doc_index"]: m for rel in ("near_duplicates", "contained_in", "contains", "sharing")
               for m in d[rel]}
        want = {i for i, t in enumerate(py) if len(s & t) >= min_shared}
        assert set(got) == want
        for i, m in got.items():
            assert m["shared_shingles"] == len(s & py[i])
            assert m["containment_query_in_doc"] == pytest.approx(len(s & py[i]) / len(s))
        assert {m["doc_index"] for m in d["contained_in"]} == {
            i for i in want if len(s & py[i]) / len(s) >= 0.8 and jaccard(s, py[i]) < 0.8}


def test_postings_leave_out_template_shingles(tmp_path):
    footer = "all rights reserved by the company"
    docs = [f"body {i} text {i} more {i} words {footer}" for i in range(30)]
    idx = NearDupIndex.build(docs, tmp_path / "i", NearDupConfig(shingle=3), postings=True,
                             postings_max_df=5)
    d = idx.query(f"something else entirely {footer}", limit=100).documents[0]
    assert d["sharing"] == [] and d["contained_in"] == []  # the footer is in 30 > 5 documents
    wide = NearDupIndex.build(docs, tmp_path / "j", NearDupConfig(shingle=3), postings=True)
    d = wide.query(f"something else entirely {footer}", limit=100).documents[0]
    assert len(d["sharing"]) == 30
    f = d["sharing"][0]["fragments"][0]
    assert f["text"] == footer


def test_index_all_is_the_public_api():
    import repetend.index as I

    assert I.__all__ == sorted(["AddResult", "FORMAT_VERSION", "KnownPhrases", "NearDupIndex",
                                "QueryResult", "load_phrases", "shared_fragments", "tokens_of"])
    for name in I.__all__:
        assert hasattr(I, name)


def test_merge_last_segments_only(tmp_path):
    texts = corpus(12, n=80)
    cfg = NearDupConfig(threshold=0.6, shingle=3)
    idx = NearDupIndex.build(texts[:20], tmp_path / "i", cfg, postings=True)
    for a in range(20, 80, 15):
        idx.add(texts[a:a + 15])
    first = idx.stats()["segments"][0]["name"]
    probes = texts[::7]
    before = idx.query(probes).to_json()["documents"]
    s = idx.merge(last=3)
    assert (s["segments_before"], s["segments_after"]) == (5, 3)
    names = [g["name"] for g in idx.stats()["segments"]]
    assert names[0] == first and len(names) == 3
    assert idx.query(probes).to_json()["documents"] == before
    assert [idx.text(i) for i in (0, 19, 20, 79)] == [texts[i] for i in (0, 19, 20, 79)]
    with pytest.raises(ParameterError):
        idx.merge(last=1)


def test_capped_buckets_incremental_is_a_superset(tmp_path):
    """With huge buckets the batch run emits a star + chain; the index examines every
    member of an old bucket, so it finds at least the batch run's pairs."""
    rng = np.random.default_rng(17)
    words = [f"h{i}" for i in range(300)]
    base = " ".join(rng.choice(words, 30))
    texts = [base if i % 3 == 0 else " ".join(rng.choice(words, 30)) for i in range(60)]
    cfg = NearDupConfig(threshold=0.8, max_bucket=4)
    whole = find_near_duplicates(TokenStore.from_texts(texts), cfg)
    assert whole.summary["capped_buckets"] > 0
    want = set(zip(whole.pairs.a.tolist(), whole.pairs.b.tolist()))
    _, found, _ = incremental_pairs(tmp_path, texts, [30], cfg)
    assert want <= found
    copies = [i for i in range(60) if i % 3 == 0]
    assert {(a, b) for a in copies for b in copies if a < 30 <= b} <= found  # all old-new


def test_index_built_with_other_hash_functions_is_refused(tmp_path):
    NearDupIndex.build(corpus(1, n=10), tmp_path / "i")
    f = tmp_path / "i" / "MANIFEST.json"
    m = json.loads(f.read_text())
    assert len(m["hashing_check"]) == 8
    m["hashing_check"] = "00000000"
    f.write_text(json.dumps(m))
    with pytest.raises(InputError, match="hashes text differently"):
        NearDupIndex.open(tmp_path / "i")


def test_set_phrases_replaces_and_removes(tmp_path):
    write_phrases(tmp_path / "p1", [["aa", "bb", "cc"]])
    write_phrases(tmp_path / "p2", [["xx", "yy"], ["aa", "bb"]])
    idx = NearDupIndex.build(["some text here"], tmp_path / "i", phrases=tmp_path / "p1")
    reader = NearDupIndex.open(tmp_path / "i")
    assert idx.set_phrases(tmp_path / "p2") == 2
    found = idx.query("aa bb cc xx yy").documents[0]["phrases"]
    assert sorted(f["phrase"] for f in found) == ["aa bb", "xx yy"]
    assert [f["phrase"] for f in reader.query("aa bb cc").documents[0]["phrases"]] == ["aa bb cc"]
    dirs = sorted(p.name for p in (tmp_path / "i").iterdir() if p.name.startswith("phrases-"))
    assert len(dirs) == 1
    r = CliRunner().invoke(_cli(), ["index", "phrases", str(tmp_path / "i"), "--remove"])
    assert r.exit_code == 0 and "0 known phrases" in r.output
    assert idx.reload().query("aa bb").documents[0]["phrases"] == []
    assert not any(p.name.startswith("phrases-") for p in (tmp_path / "i").iterdir())


def test_refresh_sees_other_writers_and_reuses_segments(tmp_path):
    texts = corpus(13, n=40)
    a = NearDupIndex.build(texts[:20], tmp_path / "i")
    b = NearDupIndex.open(tmp_path / "i")
    assert not b.refresh()
    first = b._snap.segments[0].data
    a.add(texts[20:])
    assert b.n_docs == 20 and b.refresh() and b.n_docs == 40
    assert b._snap.segments[0].data is first  # the unchanged segment was not reopened
    assert not b.refresh()


@pytest.mark.parametrize("segment_docs", [7, 50])
def test_build_in_segments_equals_one_run(tmp_path, segment_docs):
    texts = corpus(14, n=100)
    cfg = NearDupConfig(threshold=0.6, shingle=3)
    whole = find_near_duplicates(TokenStore.from_texts(texts), cfg)
    store = TokenStore.from_texts(texts, ids=[f"d{i}" for i in range(100)])
    store.save(tmp_path / "store")
    idx = NearDupIndex.build(TokenStore.open(tmp_path / "store"), tmp_path / "i", cfg,
                             segment_docs=segment_docs)
    assert idx.n_segments == -(-100 // segment_docs)
    assert pair_set(idx.last_add.pairs) == set(zip(whole.pairs.a.tolist(), whole.pairs.b.tolist()))
    assert idx.last_add.summary["documents_added"] == 100
    assert idx.doc_ids([0, 99]) == ["d0", "d99"] and idx.text(57) == texts[57]
    q = idx.query(texts[64], fragments=True).documents[0]
    assert 64 in {m["doc_index"] for m in q["near_duplicates"]}


def test_drop_candidates_keep_the_first_copy(tmp_path):
    texts = corpus(15, n=90)
    idx = NearDupIndex.build(texts[:45], tmp_path / "i", NearDupConfig(threshold=0.6, shingle=3))
    r = idx.add(texts[45:])
    drop = r.drop_candidates().to_pylist()
    pairs = r.pairs.to_pylist()
    want = {}
    for p in pairs:  # earliest partner of each new document
        want[p["b_index"]] = min(want.get(p["b_index"], p["a_index"]), p["a_index"])
    assert {d["doc_index"]: d["duplicate_of_index"] for d in drop} == want
    assert r.summary["drop_candidates"] == len(drop) > 0
    assert all(d["doc_index"] >= 45 and d["duplicate_of_index"] < d["doc_index"] for d in drop)
    out = r.write(tmp_path / "rep")
    assert pq.read_table(out / "drop.parquet").num_rows == len(drop)


def test_refresh_after_an_overwrite_build_reads_the_new_phrases(tmp_path):
    """A reader (the service) of an index that `build --overwrite` replaced sees the
    new index's phrase table, although both builds name it phrases-000000."""
    write_phrases(tmp_path / "p1", [["aa", "bb", "cc"]])
    write_phrases(tmp_path / "p2", [["xx", "yy"]])
    NearDupIndex.build(["some text here"], tmp_path / "i", phrases=tmp_path / "p1")
    reader = NearDupIndex.open(tmp_path / "i")
    NearDupIndex.build(["other text there"], tmp_path / "i", phrases=tmp_path / "p2",
                       overwrite=True)
    assert reader.refresh()
    found = reader.query("aa bb cc xx yy").documents[0]["phrases"]
    assert [f["phrase"] for f in found] == ["xx yy"]
    assert reader.text(0) == "other text there"


def test_overwrite_builds_aside_and_swaps(tmp_path, monkeypatch):
    """While `build --overwrite` runs, the old index stays in place and answers; the
    new one is written in a temporary sibling that carries the build marker."""
    from repetend.index import format as F

    old = corpus(16, n=30)
    NearDupIndex.build(old, tmp_path / "i")
    seen = []

    def pause(stage):
        if stage == "swap":  # the new index is complete beside the old one
            aside = [p for p in tmp_path.iterdir() if p.name.startswith(".i.")]
            seen.append((NearDupIndex.open(tmp_path / "i").n_docs,
                         [(p / F.BUILDING).is_file() and F.is_index(p) for p in aside]))

    monkeypatch.setattr(F, "test_pause", pause)
    idx = NearDupIndex.build(["a new text of its own"], tmp_path / "i", overwrite=True)
    assert seen == [(30, [True])]
    assert idx.n_docs == 1 and idx.path == tmp_path / "i"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["i"]
    assert not (tmp_path / "i" / F.BUILDING).exists()
