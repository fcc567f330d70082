"""clean never empties a kept document: --max-cut and --mostly-template, checked
against an oracle on random small corpora (scans built by the slow oracles), the
removal log, the counts, and the scan's documents.parquet (the same plan)."""

from __future__ import annotations

import json
import random

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from repetend.clean import CleanConfig, decision_counts, decisions_table, plan_clean, plan_cuts, undo_cuts
from repetend.errors import ParameterError
from repetend.jobs import clean_corpus
from repetend.scandir import open_scan
from test_clean import read_log, write_jsonl
from test_report import make_scan, patch_token_spans, ref_token_spans


@pytest.fixture(autouse=True)
def _spans(monkeypatch):
    patch_token_spans(monkeypatch)


BLOCKS = ["Home | Shop | Delivery | Contacts", "We use cookies to improve your experience here",
          "© 2024 Free delivery on all orders over fifty", "Subscribe to our newsletter for weekly news"]


def random_corpus(rng: random.Random):
    """Pages of template blocks and random bodies (some empty or tiny), exact and
    near copies of some pages, and pages made only of template."""
    words = [f"w{i}z" for i in range(60)]
    texts = []
    for _ in range(rng.randint(6, 14)):
        parts = [b for b in BLOCKS if rng.random() < 0.5]
        body = " ".join(rng.choice(words) for _ in range(rng.choice((0, 1, 3, 8, 20))))
        if body:
            parts.insert(rng.randint(0, len(parts)), body)
        texts.append(("\n" if rng.random() < 0.5 else " ").join(parts) or rng.choice(words))
    for _ in range(rng.randint(0, 4)):
        src = rng.randrange(len(texts))
        texts.append(texts[src] + ("" if rng.random() < 0.5 else " more"))
    rng.shuffle(texts)
    ids = [f"p{i:02d}" for i in range(len(texts))]
    return texts, ids, [None] * len(texts)


def oracle(texts, store, occ, clusters, cfg: CleanConfig):
    """decision, reason, characters lost of every document, from first principles."""
    rep_of = {}
    for d, c, r in zip(clusters["doc_index"], clusters["cluster_id"], clusters["is_representative"]):
        if r:
            rep_of[c] = d
    dup = {d: rep_of[c] for d, c, r in zip(clusters["doc_index"], clusters["cluster_id"],
                                           clusters["is_representative"]) if not r}
    out = []
    for i, text in enumerate(texts):
        if i in dup:
            out.append(("drop_duplicate", f"duplicate_of:{store.doc_ids[dup[i]]}", len(text)))
            continue
        mine = [o for o in occ if o["doc_index"] == i]
        if not mine:
            out.append(("keep", None, 0))
            continue
        sp = ref_token_spans(text)
        cuts = plan_cuts(text, [sp[o["start"]][0] for o in mine], [sp[o["end"] - 1][1] for o in mine])
        lost = sum(c.end - c.start for c in cuts)
        if lost > cfg.max_cut * len(text):
            out.append(("drop_template", "mostly_template", len(text)) if cfg.mostly_template == "drop"
                       else ("keep", "kept_whole", 0))
        else:
            out.append(("keep", "boilerplate", lost))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_no_kept_document_loses_more_than_max_cut(tmp_path, seed):
    rng = random.Random(seed)
    texts, ids, urls = random_corpus(rng)
    src = write_jsonl(tmp_path / "in.jsonl", texts, ids, urls)
    store, ans, (pairs, clusters) = make_scan(
        tmp_path / "scan", texts, ids, urls, min_docs=rng.choice((2, 3)), min_len=rng.choice((3, 4)),
        inputs=[str(src)], input_options={"text_field": "text", "id_field": "id", "fmt": "jsonl"})
    cfg = CleanConfig(max_cut=rng.choice((0.3, 0.5, 0.7, 0.9, 1.0)), mostly_template=rng.choice(("drop", "keep")))
    res = clean_corpus([src], tmp_path / "scan", tmp_path / "out.jsonl", config=cfg)
    occ = pq.read_table(tmp_path / "scan" / "phrases" / "occurrences.parquet").to_pylist()
    want = oracle(texts, store, occ, clusters, cfg)
    after = {json.loads(x)["id"]: json.loads(x)["text"]
             for x in (tmp_path / "out.jsonl").read_text("utf-8").splitlines()}
    log = {e["id"]: e for e in read_log(res.log)}
    for i, (decision, reason, lost) in enumerate(want):
        d = ids[i]
        assert (d in after) == (decision == "keep"), (d, decision)
        assert (log[d]["reason"] if d in log else None) == reason
        if decision == "keep":
            cut = sum(c["end"] - c["start"] for c in log[d]["cuts"]) if d in log else 0
            assert cut == lost <= cfg.max_cut * len(texts[i])
            assert undo_cuts(after[d], log[d]["cuts"] if d in log else []) == texts[i]
            if reason == "kept_whole":
                assert after[d] == texts[i] and log[d]["cut_share"] > cfg.max_cut
    # the counts of the result are the counts of the log
    reasons = [e["reason"] for e in log.values()]
    assert res.dropped_duplicates == sum(r.startswith("duplicate_of:") for r in reasons)
    assert res.dropped_template == reasons.count("mostly_template")
    assert res.kept_whole == reasons.count("kept_whole")
    assert res.documents_cleaned == reasons.count("boilerplate")
    assert res.chars_cut == sum(lost for dec, _, lost in want if dec == "keep")
    assert res.chars_removed == sum(lost for _, _, lost in want)
    assert res.documents_out == len(after) == sum(dec == "keep" for dec, _, _ in want)
    line = res.describe()[0]
    assert (f"dropped {res.dropped_duplicates:,} as duplicates, {res.dropped_template:,} as mostly template"
            in line and f"{res.kept_whole:,} whole" in line)
    # the per-document decisions the scan writes are the same plan
    table = decisions_table(plan_clean(open_scan(tmp_path / "scan", need_store=True), cfg))
    assert table.column("doc_id").to_pylist() == ids
    assert list(zip(table.column("decision").to_pylist(), table.column("reason").to_pylist(),
                    table.column("chars_cut").to_pylist())) == want
    c = decision_counts(table)
    assert (c["drop_duplicate"], c["drop_template"], c["kept_whole"], c["chars_cut_kept"],
            c["chars_removed"]) == (res.dropped_duplicates, res.dropped_template, res.kept_whole,
                                    res.chars_cut, res.chars_removed)


def test_a_document_made_only_of_copies_text_is_dropped_not_emptied(tmp_path):
    """A page with two copies: at σ = 3 documents its own text is 'frequent', so the
    cuts would empty the kept representative.  Default: dropped as mostly template,
    logged with its cut share; --mostly-template keep: written whole."""
    texts = ["alpha beta gamma delta epsilon zeta eta theta"] * 3 + [
        "one two three four five six", "seven eight nine ten eleven twelve"]
    ids = ["a", "a1", "a2", "b", "c"]
    src = write_jsonl(tmp_path / "in.jsonl", texts, ids, [None] * 5)
    make_scan(tmp_path / "scan", texts, ids, None, min_docs=3, min_len=3, dups=False,
              inputs=[str(src)], input_options={"text_field": "text", "id_field": "id", "fmt": "jsonl"})
    res = clean_corpus([src], tmp_path / "scan", tmp_path / "o.jsonl")
    log = {e["id"]: e for e in read_log(res.log)}
    assert {d: e["reason"] for d, e in log.items()} == {d: "mostly_template" for d in ("a", "a1", "a2")}
    assert all(e["cut_share"] == 1.0 for e in log.values())
    assert [json.loads(x)["id"] for x in (tmp_path / "o.jsonl").read_text().splitlines()] == ["b", "c"]
    assert (res.dropped_template, res.kept_whole, res.chars_cut) == (3, 0, 0)
    res = clean_corpus([src], tmp_path / "scan", tmp_path / "k.jsonl",
                       config=CleanConfig(mostly_template="keep"))
    assert (tmp_path / "k.jsonl").read_bytes() == src.read_bytes()
    assert {e["reason"] for e in read_log(res.log)} == {"kept_whole"} and res.kept_whole == 3
    assert "3 whole although mostly template" in res.describe()[0]
    # --max-cut 1: the old behaviour, the documents are written back empty
    res = clean_corpus([src], tmp_path / "scan", tmp_path / "e.jsonl", config=CleanConfig(max_cut=1.0))
    out = [json.loads(x) for x in (tmp_path / "e.jsonl").read_text().splitlines()]
    assert [o["text"] for o in out][:3] == ["", "", ""]


def test_cli_max_cut_and_policy(tmp_path):
    from repetend.cli import main

    texts = ["alpha beta gamma delta epsilon zeta eta theta"] * 3 + ["one two three four five six"]
    ids = ["a", "a1", "a2", "b"]
    src = write_jsonl(tmp_path / "in.jsonl", texts, ids, [None] * 4)
    make_scan(tmp_path / "scan", texts, ids, None, min_docs=3, min_len=3, dups=False,
              inputs=[str(src)], input_options={"text_field": "text", "id_field": "id", "fmt": "jsonl"})
    r = CliRunner().invoke(main, ["clean", str(src), "--scan", str(tmp_path / "scan"), "--out",
                                  str(tmp_path / "o.jsonl"), "--mostly-template", "keep", "-q"])
    assert r.exit_code == 0, r.output
    assert "3 whole although mostly template" in r.output
    r = CliRunner().invoke(main, ["clean", str(src), "--scan", str(tmp_path / "scan"), "--out",
                                  str(tmp_path / "p.jsonl"), "--max-cut", "0", "-q"])
    assert r.exit_code != 0 and "--max-cut" in r.output
    with pytest.raises(ParameterError, match="--mostly-template"):
        CleanConfig(mostly_template="empty")
    with pytest.raises(ParameterError, match="--max-cut"):
        CleanConfig(max_cut=1.5)



def test_scan_documents_table_is_what_clean_does(tmp_path):
    """The scan's documents.parquet: one row per input document, in input order, with
    the decision and reason that `clean` with its defaults then takes."""
    from repetend.jobs import ScanConfig, scan
    from repetend.neardup import NearDupConfig
    from repetend.phrases import PhraseConfig
    from repetend.synth import weblike

    corpus = weblike(60, seed=3).write(tmp_path / "c")["corpus"]
    scan([corpus], tmp_path / "s", ScanConfig(phrases=PhraseConfig(min_docs=4, templates=False),
                                              dups=NearDupConfig(threshold=0.5), report=False))
    t = pq.read_table(tmp_path / "s" / "documents.parquet")
    sd = open_scan(tmp_path / "s", need_store=True)
    assert t.column("doc_id").to_pylist() == sd.store.doc_ids
    assert set(t.column("decision").to_pylist()) <= {"keep", "drop_duplicate", "drop_template"}
    assert "drop_duplicate" in t.column("decision").to_pylist()
    res = clean_corpus(None, tmp_path / "s", tmp_path / "o.jsonl")
    log = {e["id"]: e["reason"] for e in read_log(res.log)}
    for d, dec, why in zip(*(t.column(c).to_pylist() for c in ("doc_id", "decision", "reason"))):
        assert log.get(d) == why
        assert (dec == "drop_duplicate") == (why or "").startswith("duplicate_of:")
    c = decision_counts(t)
    assert (c["documents"], c["kept"], c["drop_duplicate"], c["drop_template"], c["chars_removed"]) == (
        res.documents_in, res.documents_out, res.dropped_duplicates, res.dropped_template, res.chars_removed)


def test_scan_of_a_store_in_memory_writes_its_decisions(tmp_path):
    from repetend.corpus.store import TokenStore
    from repetend.jobs import ScanConfig, scan
    from repetend.phrases import PhraseConfig

    texts = ["alpha beta gamma delta epsilon zeta eta theta"] * 3 + ["one two three four five six"]
    store = TokenStore.from_texts(texts, ids=["a", "a1", "a2", "b"])
    scan(store, tmp_path / "s", ScanConfig(phrases=PhraseConfig(min_docs=2, min_len=3, templates=False),
                                           report=False))
    t = pq.read_table(tmp_path / "s" / "documents.parquet")
    assert t.column("doc_id").to_pylist() == ["a", "a1", "a2", "b"]
    assert t.column("decision").to_pylist().count("drop_duplicate") == 2
