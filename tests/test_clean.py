"""repetend clean: the span rule (against the tokenizer's definition), round trips
in every writable format, the removal log, duplicates, min_share, re-scan."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_phrases import naive_phrases
from repetend.clean import apply_cuts, plan_cuts, undo_cuts
from repetend.jobs import CleanConfig, clean_corpus
from repetend.corpus.store import TokenStore
from repetend.corpus.tokenize_ref import tokenize_reference
from repetend.errors import InputError
from test_report import make_scan, patch_token_spans, ref_token_spans


@pytest.fixture(autouse=True)
def _spans(monkeypatch):
    patch_token_spans(monkeypatch)


# ------------------------------------------------------------------ the span rule

def _cut(text, phrase):
    i = text.index(phrase)
    cuts = plan_cuts(text, [i], [i + len(phrase)])
    return apply_cuts(text, cuts), cuts


@pytest.mark.parametrize("text, phrase, expected", [
    ("Read our blog | Follow us on twitter | Subscribe now", "Follow us on twitter",
     "Read our blog | Subscribe now"),
    ("Read our blog | Follow us on twitter", "Follow us on twitter", "Read our blog"),
    ("Follow us on twitter | Read our blog", "Follow us on twitter", "Read our blog"),
    ("Hello world. Cookies help us. Bye now", "Cookies help us", "Hello world. Bye now"),
    ("Para one.\n\nCookie banner text here\n\nPara two.", "Cookie banner text here", "Para one.\n\nPara two."),
    ("Para one.\nCookie banner\n\nPara two.", "Cookie banner", "Para one.\n\nPara two."),
    ("Text (read more here) end", "read more here", "Text end"),
    ("中文字符免费送货中文", "免费送货", "中文字符中文"),
    ("alpha,beta gamma,delta", "beta gamma", "alpha,delta"),
    ("line one\r\nFooter stuff here\r\nline three", "Footer stuff here", "line one\r\nline three"),
    ("Cookie notice here. Real text", "Cookie notice here", "Real text"),
    ("Real text, cookie notice here", "cookie notice here", "Real text,"),
    ("a • b • c • d", "c", "a • b • d"),
])
def test_rule_examples(text, phrase, expected):
    out, cuts = _cut(text, phrase)
    assert out == expected
    assert undo_cuts(out, [c.as_dict(text) for c in cuts]) == text


_ALPHABET = ["ab", "cd", "ef", "Gh", "ij", " ", " ", " ", "\n", "\n\n", "|", ",", ".", "—", "(", ")", "«", "»",
             "中", "文", "\t", "©", "-"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ALPHABET), min_size=1, max_size=40), st.data())
def test_rule_random(pieces, data):
    """On random texts and random token runs: the cuts cover the spans, are
    disjoint, undo exactly, and the cleaned text has exactly the original
    tokens minus the removed ones (no glued, split or lost words)."""
    text = "".join(pieces)
    spans = ref_token_spans(text)
    n = spans.shape[0]
    if n == 0:
        return
    k = data.draw(st.integers(0, 4))
    runs = []
    for _ in range(k):
        a = data.draw(st.integers(0, n - 1))
        b = data.draw(st.integers(a + 1, min(n, a + 4)))
        runs.append((a, b))
    starts = [int(spans[a, 0]) for a, b in runs]
    ends = [int(spans[b - 1, 1]) for a, b in runs]
    cuts = plan_cuts(text, starts, ends)
    for c1, c2 in zip(cuts, cuts[1:]):
        assert c1.end <= c2.start
    for s, e in zip(starts, ends):
        assert any(c.start <= s and e <= c.end for c in cuts)
    out = apply_cuts(text, cuts)
    assert undo_cuts(out, [c.as_dict(text) for c in cuts]) == text
    removed = np.zeros(n, bool)
    for a, b in runs:
        removed[a:b] = True
    kept = [text[spans[i, 0]:spans[i, 1]].lower() for i in range(n) if not removed[i]]
    assert tokenize_reference(out) == kept
    for c in cuts:
        assert c.replacement.strip() == ""          # only whitespace is ever put in


# ------------------------------------------------------------------ corpora

FOOTER = "Free delivery on orders over 3000 rubles & more — \"terms\" apply"
COOKIE = "We use cookies to improve your experience; by browsing you agree"
MENU = "Home | Catalog | Delivery and payment | Contacts"


def corpus(seed=0, n=18):
    """Texts built of template blocks (their own vocabulary) and random
    bodies; a hostile snippet; three near-copies; one template-only page."""
    rng = random.Random(seed)
    words = [f"b{i}y" for i in range(300)]
    texts, ids, urls = [], [], []
    for i in range(n):
        body = " ".join(rng.choice(words) for _ in range(rng.randint(12, 30)))
        lines = []
        if i % 2 == 0:
            lines.append(MENU + " | " + body.split()[0].capitalize())
        if i % 4 == 1:
            lines.append(COOKIE + ".")
        lines.append(body + (" <script>alert(1)</script> \"q\" &amp;" if i == 3 else ""))
        if i % 3 != 2:
            lines.append("© 2024 " + FOOTER + ".")
        texts.append("\n".join(lines))
        ids.append(f"d{i:02d}")
        urls.append(f"https://s{i % 3}.example/{i}")
    for k, src in enumerate((4, 5, 5)):
        texts.append(texts[src] + " extra")
        ids.append(f"copy{k}")
        urls.append(f"https://mirror.example/{k}")
    texts.append(MENU + "\n" + COOKIE + ".\n© 2024 " + FOOTER + ".")
    ids.append("tpl")
    urls.append("https://s0.example/tpl")
    texts.append("A page with nothing repeated at all: zq1 zq2 zq3 zq4 zq5.")
    ids.append("plain")
    urls.append(None)
    return texts, ids, urls


def write_jsonl(path: Path, texts, ids, urls):
    with open(path, "w", encoding="utf-8") as f:
        for i, (t, d, u) in enumerate(zip(texts, ids, urls)):
            # varied formatting so that byte identity means "left alone"
            obj = {"id": d, "meta": {"n": i, "tags": ["x", "y"]}, "text": t, "url": u}
            f.write(json.dumps(obj, ensure_ascii=(i % 2 == 0), separators=(",", ":") if i % 3 else (", ", ": "))
                    + "\n")
    return path


def scan_for(tmp_path, inputs, texts, ids, urls, fmt, **kw):
    return make_scan(tmp_path / "scan", texts, ids, urls, min_docs=3, min_len=4,
                     inputs=[str(x) for x in inputs],
                     input_options={"text_field": "text", "id_field": "id", "url_field": "url", "fmt": fmt}, **kw)


def read_log(path: Path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def removed_phrases(ans, store):
    return [tuple(store.token_strings(p)) for p in ans]


def occurrences_in(texts, phrases):
    found = []
    for t in texts:
        toks = tokenize_reference(t)
        for p in phrases:
            L = len(p)
            if any(tuple(toks[i:i + L]) == p for i in range(len(toks) - L + 1)):
                found.append(p)
    return found


# ------------------------------------------------------------------ JSONL end to end

def test_jsonl_round_trip_and_log(tmp_path):
    texts, ids, urls = corpus()
    src = write_jsonl(tmp_path / "in.jsonl", texts, ids, urls)
    store, ans, (pairs, clusters) = scan_for(tmp_path, [src], texts, ids, urls, "jsonl")
    assert ans and clusters["doc_index"]
    out = tmp_path / "out.jsonl"
    res = clean_corpus([src], tmp_path / "scan", out)
    in_lines = src.read_bytes().splitlines(keepends=True)
    out_lines = out.read_bytes().splitlines(keepends=True)
    log = {e["id"]: e for e in read_log(res.log)}
    dropped = {d for d, e in log.items() if e["reason"] != "boilerplate"}
    as_dup = {d for d in dropped if log[d]["reason"].startswith("duplicate_of:")}
    non_rep = {ids[d] for d, r in zip(clusters["doc_index"], clusters["is_representative"]) if not r}
    assert as_dup == non_rep
    # d05 has two copies: its own body is in σ = 3 documents, so its cuts would empty it;
    # it is dropped as mostly template, not written back empty
    assert dropped - as_dup == {"d05"} and log["d05"]["reason"] == "mostly_template"
    assert log["d05"]["cut_share"] > 0.9 and res.dropped_template == 1
    kept_in = [(ids[i], in_lines[i]) for i in range(len(ids)) if ids[i] not in dropped]
    assert len(out_lines) == len(kept_in) == res.documents_out
    cleaned = {}
    for (doc_id, raw_in), raw_out in zip(kept_in, out_lines):
        o_in, o_out = json.loads(raw_in), json.loads(raw_out)
        assert o_out["id"] == doc_id
        assert {k: v for k, v in o_in.items() if k != "text"} == {k: v for k, v in o_out.items() if k != "text"}
        if doc_id not in log:
            assert raw_out == raw_in                 # untouched: byte for byte
        else:
            assert undo_cuts(o_out["text"], log[doc_id]["cuts"]) == o_in["text"]
        cleaned[doc_id] = o_out["text"]
    assert "plain" in cleaned and "plain" not in log
    # every removed character is accounted for
    total_removed = sum(c["end"] - c["start"] for e in log.values() for c in e["cuts"])
    assert total_removed == res.chars_removed
    for e in log.values():
        for c in e["cuts"]:
            assert texts[ids.index(e["id"])][c["start"]:c["end"]] == c["text"]
    # the removed phrases are gone, and a re-scan with the same σ finds none of them
    gone = removed_phrases(ans, store)
    assert occurrences_in(cleaned.values(), gone) == []
    st2 = TokenStore.from_texts(list(cleaned.values()))
    again = naive_phrases(st2.tokens, st2.doc_offsets, 3, 4)
    assert not set(gone) & {tuple(st2.token_strings(p)) for p in again}
    try:
        from repetend.phrases import find_phrases
    except ImportError:  # pragma: no cover - the miner is optional here
        return
    real = find_phrases(st2, min_docs=3, min_len=4)
    assert not set(gone) & {tuple(t) for t in real.phrases.column("tokens").to_pylist()}


def test_keep_and_min_share(tmp_path):
    texts, ids, urls = corpus(1)
    src = write_jsonl(tmp_path / "in.jsonl", texts, ids, urls)
    scan_for(tmp_path, [src], texts, ids, urls, "jsonl")
    # keep everything: output byte-identical, empty log
    out = tmp_path / "same.jsonl"
    res = clean_corpus([src], tmp_path / "scan", out,
                       config=CleanConfig(remove_boilerplate=False, remove_duplicates=False))
    assert out.read_bytes() == src.read_bytes()
    assert res.log.read_text() == "" and res.chars_removed == 0
    # min_share only
    share = pq.read_table(tmp_path / "scan" / "phrases" / "documents.parquet").column("boilerplate_share").to_pylist()
    thr = sorted(share)[-3]
    assert 0.5 < thr < 1.0
    res = clean_corpus([src], tmp_path / "scan", tmp_path / "ms.jsonl",
                       config=CleanConfig(remove_boilerplate=False, remove_duplicates=False, min_share=thr))
    kept = [json.loads(x)["id"] for x in (tmp_path / "ms.jsonl").read_text().splitlines()]
    assert kept == [d for d, s in zip(ids, share) if s < thr]
    assert {e["id"]: e["reason"] for e in read_log(res.log)} == {d: "min_share" for d, s in zip(ids, share) if s >= thr}
    with pytest.raises(Exception):
        CleanConfig(min_share=0)


def test_input_changed(tmp_path):
    texts, ids, urls = corpus(2)
    src = write_jsonl(tmp_path / "in.jsonl", texts, ids, urls)
    scan_for(tmp_path, [src], texts, ids, urls, "jsonl")
    texts2 = list(texts)
    texts2[5] = texts2[5] + " edited"
    write_jsonl(src, texts2, ids, urls)
    with pytest.raises(InputError, match="changed since the scan"):
        clean_corpus([src], tmp_path / "scan", tmp_path / "o.jsonl")
    assert not (tmp_path / "o.jsonl").exists()
    write_jsonl(src, texts[:-1], ids[:-1], urls[:-1])
    with pytest.raises(InputError, match="scan has"):
        clean_corpus([src], tmp_path / "scan", tmp_path / "o.jsonl")


# ------------------------------------------------------------------ other formats

@pytest.mark.parametrize("delim, fmt, name", [(",", "csv", "in.csv"), ("\t", "tsv", "in.tsv")])
def test_csv(tmp_path, delim, fmt, name):
    texts, ids, urls = corpus(3)
    src = tmp_path / name
    with open(src, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, delimiter=delim, lineterminator="\r\n")
        w.writerow(["id", "text", "url", "lang"])
        for d, t, u in zip(ids, texts, urls):
            w.writerow([d, t, u or "", "en"])
    scan_for(tmp_path, [src], texts, ids, [u or None for u in urls], fmt)
    out = tmp_path / ("out." + fmt)
    res = clean_corpus([src], tmp_path / "scan", out)
    log = {e["id"]: e for e in read_log(res.log)}
    with open(out, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f, delimiter=delim))
    assert rows[0] == ["id", "text", "url", "lang"]
    got = {r[0]: r for r in rows[1:]}
    for d, t, u in zip(ids, texts, urls):
        if d in log and log[d]["reason"] != "boilerplate":
            assert d not in got
            continue
        assert got[d][2:] == [u or "", "en"]
        if d in log:
            assert undo_cuts(got[d][1], log[d]["cuts"]) == t
        else:
            assert got[d][1] == t
    # untouched rows are byte-identical: write the expected file for them
    raw_out = out.read_bytes()
    assert raw_out.startswith(b"id" + delim.encode() + b"text")
    plain = texts[ids.index("plain")]
    assert f"plain{delim}{plain}{delim}{delim}en\r\n".encode() in raw_out


def test_parquet(tmp_path):
    texts, ids, urls = corpus(4)
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": ids, "text": texts, "url": urls, "score": np.arange(len(ids), dtype=np.float32)}),
                   src, row_group_size=7)
    scan_for(tmp_path, [src], texts, ids, urls, "parquet")
    out = tmp_path / "out.parquet"
    res = clean_corpus([src], tmp_path / "scan", out)
    log = {e["id"]: e for e in read_log(res.log)}
    t = pq.read_table(out)
    assert t.schema.equals(pq.read_schema(src))
    rows = {r["id"]: r for r in t.to_pylist()}
    for i, (d, txt) in enumerate(zip(ids, texts)):
        if d in log and log[d]["reason"] != "boilerplate":
            assert d not in rows
            continue
        assert rows[d]["score"] == i and rows[d]["url"] == urls[i]
        assert (undo_cuts(rows[d]["text"], log[d]["cuts"]) if d in log else rows[d]["text"]) == txt
    assert t.num_rows == res.documents_out


def test_text_dir(tmp_path):
    texts, _, _ = corpus(5)
    root = tmp_path / "docs"
    paths = [f"sec{i % 3}/page{i:02d}.txt" for i in range(len(texts))]
    for p, t in zip(paths, texts):
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_bytes(t.encode("utf-8"))
    order = sorted(range(len(paths)), key=lambda i: tuple(paths[i].split("/")))
    texts_o = [texts[i] for i in order]
    ids_o = [paths[i] for i in order]
    scan_for(tmp_path, [root], texts_o, ids_o, [None] * len(ids_o), "text")
    out = tmp_path / "clean"
    res = clean_corpus([root], tmp_path / "scan", out)
    log = {e["id"]: e for e in read_log(res.log)}
    for d, t in zip(ids_o, texts_o):
        f = out / d
        if d in log and log[d]["reason"] != "boilerplate":
            assert not f.exists()
        elif d in log:
            assert undo_cuts(f.read_text(encoding="utf-8"), log[d]["cuts"]) == t
        else:
            assert f.read_bytes() == (root / d).read_bytes()
    assert res.out_format == "text" and res.documents_out == sum(1 for f in out.rglob("*") if f.is_file())


def test_cli_clean(tmp_path):
    from click.testing import CliRunner

    from repetend.cli import main

    texts, ids, urls = corpus(6)
    src = write_jsonl(tmp_path / "in.jsonl", texts, ids, urls)
    scan_for(tmp_path, [src], texts, ids, urls, "jsonl")
    out = tmp_path / "o.jsonl"
    r = CliRunner().invoke(main, ["clean", str(src), "--scan", str(tmp_path / "scan"), "--out", str(out),
                                  "--keep-duplicates", "--min-share", "0.95", "-q"])
    assert r.exit_code == 0, r.output
    reasons = {e["reason"] for e in read_log(Path(str(out) + ".removed.jsonl"))}
    assert reasons == {"boilerplate", "min_share"}
    r = CliRunner().invoke(main, ["clean", "--scan", str(tmp_path / "scan"), "--out", str(tmp_path / "o2.jsonl"),
                                  "--keep-duplicates", "--min-share", "0.95", "-q"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "o2.jsonl").read_bytes() == out.read_bytes()
    r = CliRunner().invoke(main, ["clean", str(src), "--scan", str(tmp_path / "nope"), "--out", str(out)])
    assert r.exit_code == 2 and "error:" in r.output


def test_jsonl_changed_records_keep_their_other_bytes(tmp_path):
    """In a changed record only the text value's JSON string differs from the input
    line: key order, spacing, escapes, number spelling and the line end are kept."""
    texts, ids, urls = corpus()
    src = tmp_path / "in.jsonl"
    parts = []
    with open(src, "wb") as f:
        for i, (t, d, u) in enumerate(zip(texts, ids, urls)):
            ascii_style = i % 2 == 0
            pre = ('{ "url" :%s,"id":"%s" ,  "n": 1.0E+2, "s":"\\/x\\u00e9\\u0041", "text":  '
                   % (json.dumps(u), d))
            post = (' , "tail": [1 ,2,{"text":"not this one"}]}' + ("\r\n" if i % 3 == 0 else "\n"))
            parts.append((pre, post, ascii_style))
            f.write((pre + json.dumps(t, ensure_ascii=ascii_style) + post).encode("utf-8"))
    scan_for(tmp_path, [src], texts, ids, urls, "jsonl")
    out = tmp_path / "out.jsonl"
    # max_cut=1: no document is dropped as mostly template, so every line comes back
    res = clean_corpus([src], tmp_path / "scan", out, config=CleanConfig(remove_duplicates=False, max_cut=1.0))
    assert res.documents_cleaned > 0
    in_lines = src.read_bytes().splitlines(keepends=True)
    out_lines = out.read_bytes().splitlines(keepends=True)
    assert len(out_lines) == len(in_lines)
    changed = 0
    for (pre, post, ascii_style), raw_in, raw_out in zip(parts, in_lines, out_lines):
        new_text = json.loads(raw_out)["text"]
        assert raw_out == (pre + json.dumps(new_text, ensure_ascii=ascii_style) + post).encode("utf-8")
        changed += raw_out != raw_in
    assert changed == res.documents_cleaned


def test_splice_json_text_replaces_only_the_value_or_declines():
    from repetend.clean.writers import splice_json_text as splice

    assert splice(b'{"a":1,"meta":{"body":"x y","k":[{"body":2}]},"body":3}\n', "meta.body", "x") == \
        b'{"a":1,"meta":{"body":"x","k":[{"body":2}]},"body":3}\n'
    assert splice(b'{"meta.body":"x y", "meta":{"body":"z"}}', "meta.body", "y") == \
        b'{"meta.body":"y", "meta":{"body":"z"}}\n'
    # duplicate keys: json.loads keeps the last one, so that is the one replaced
    assert splice(b'{"text":"a","text":"b c"}\n', "text", "c") == b'{"text":"a","text":"c"}\n'
    # invalid UTF-8 in another field stays byte for byte
    assert splice(b'{"text":"a b","x":"\xfe"}\n', "text", "b") == b'{"text":"b","x":"\xfe"}\n'
    assert splice(b'{"text":"a","x":"\xc3\xa9"}\n', "text", "\u00e9\ud800") == \
        b'{"text":"\\u00e9\\ud800","x":"\xc3\xa9"}\n'
    for line in (b"[1, 2]\n", b'{"id": 1}\n', b'{"text": "a"\n', b'"text"\n'):
        assert splice(line, "text", "x") is None


def test_jsonl_messy_input_and_gz_output(tmp_path):
    """Blank and malformed lines (skipped by the reader) are not written, a BOM
    and a moved scan directory are handled, .gz output is compressed."""
    import gzip
    import shutil

    texts, ids, urls = corpus(7)
    src = write_jsonl(tmp_path / "in.jsonl", texts, ids, urls)
    lines = src.read_bytes().splitlines(keepends=True)
    messy = [b"\xef\xbb\xbf" + lines[0], b"\n", b"{not json\n"] + lines[1:5] + [b"[1, 2]\n"] + lines[5:]
    src.write_bytes(b"".join(messy))
    scan_for(tmp_path, [src], texts, ids, urls, "jsonl")
    shutil.move(tmp_path / "scan", tmp_path / "moved")
    summary = json.loads((tmp_path / "moved" / "summary.json").read_text())
    summary["store"] = str(tmp_path / "scan" / "store")        # an absolute path that no longer exists
    (tmp_path / "moved" / "summary.json").write_text(json.dumps(summary))
    out = tmp_path / "out.jsonl.gz"
    res = clean_corpus(None, tmp_path / "moved", out)
    got = [json.loads(x) for x in gzip.decompress(out.read_bytes()).decode("utf-8").splitlines()]
    log = {e["id"]: e for e in read_log(res.log)}
    want = [d for d in ids if not (d in log and log[d]["reason"] != "boilerplate")]
    assert [g["id"] for g in got] == want
    for g in got:
        t = texts[ids.index(g["id"])]
        assert (undo_cuts(g["text"], log[g["id"]]["cuts"]) if g["id"] in log else g["text"]) == t
    assert res.documents_in == len(ids)


def test_wet_falls_back_to_jsonl(tmp_path):
    from repetend.corpus.readers import read_corpus

    src = Path(__file__).parent / "data" / "readers" / "sample.warc.wet.gz"
    if not src.exists():  # pragma: no cover - sample data ships with the tests
        pytest.skip("no WET sample")
    recs = list(read_corpus([src], fmt="wet"))
    assert recs
    make_scan(tmp_path / "scan", [r.text for r in recs], [r.id for r in recs], [r.url for r in recs],
              min_docs=2, min_len=3, dups=False, inputs=[str(src)],
              input_options={"fmt": "wet"})
    res = clean_corpus(None, tmp_path / "scan", tmp_path / "out.jsonl")
    assert res.out_format == "jsonl" and any("JSONL" in n for n in res.notes)
    got = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    log = {e["id"]: e for e in read_log(res.log)}
    assert [g["id"] for g in got] == [r.id for r in recs]
    for g, r in zip(got, recs):
        assert g["url"] == r.url
        assert (undo_cuts(g["text"], log[r.id]["cuts"]) if r.id in log else g["text"]) == r.text


def test_with_the_real_scan(tmp_path):
    """End to end with the real producers (repetend.jobs.scan): report and clean
    hold the same guarantees on a real scan directory."""
    from repetend import jobs as scan_mod
    from repetend.neardup import NearDupConfig
    from repetend.phrases import PhraseConfig, find_phrases
    from repetend.report import build_report

    texts, ids, urls = corpus(8, 30)
    src = write_jsonl(tmp_path / "in.jsonl", texts, ids, urls)
    cfg = scan_mod.ScanConfig(phrases=PhraseConfig(min_docs=3, min_len=4),
                              dups=NearDupConfig(threshold=0.5), report=False,
                              input_options={"text_field": "text", "id_field": "id", "url_field": "url"})
    scan_mod.scan([src], tmp_path / "scan", cfg)
    page = build_report(tmp_path / "scan", tmp_path / "r.html").read_text(encoding="utf-8")
    assert 'id="eaters"' in page and 'id="dups"' in page and "<script>alert" not in page
    res = clean_corpus([src], tmp_path / "scan", tmp_path / "out.jsonl")
    log = {e["id"]: e for e in read_log(res.log)}
    assert any(e["reason"] == "boilerplate" for e in log.values())
    raw_in = dict(zip(ids, src.read_bytes().splitlines(keepends=True)))
    cleaned = []
    for line in (tmp_path / "out.jsonl").read_bytes().splitlines(keepends=True):
        o = json.loads(line)
        if o["id"] not in log:
            assert line == raw_in[o["id"]]
        else:
            assert undo_cuts(o["text"], log[o["id"]]["cuts"]) == texts[ids.index(o["id"])]
        cleaned.append(o["text"])
    phrases = pq.read_table(tmp_path / "scan" / "phrases" / "phrases.parquet").column("tokens").to_pylist()
    gone = {tuple(p) for p in phrases}
    assert gone and occurrences_in(cleaned, gone) == []
    again = find_phrases(TokenStore.from_texts(cleaned), min_docs=3, min_len=4)
    assert not gone & {tuple(t) for t in again.phrases.column("tokens").to_pylist()}


def test_nothing_to_remove_is_identity(tmp_path):
    texts = ["alpha beta gamma delta", "", "one two three four five", "   \n  "]
    ids = ["a", "b", "c", "d"]
    src = write_jsonl(tmp_path / "in.jsonl", texts, ids, [None] * 4)
    scan_for(tmp_path, [src], texts, ids, [None] * 4, "jsonl")
    res = clean_corpus([src], tmp_path / "scan", tmp_path / "out.jsonl")
    assert (tmp_path / "out.jsonl").read_bytes() == src.read_bytes()
    assert res.log.read_text() == "" and res.documents_out == 4


@pytest.mark.parametrize("text, span, want", [
    ("x(BOILER)y", (2, 8), "x y"),
    ("see «BOILER» now", (5, 11), "see now"),
    ("a (BOILER) b", (3, 9), "a b"),
    ("f(a)(BOILER)", (5, 11), "f(a)"),
    ('say "BOILER" twice', (5, 11), "say twice"),
])
def test_an_emptied_bracket_or_quote_pair_goes_with_its_block(text, span, want):
    cuts = plan_cuts(text, [span[0]], [span[1]])
    assert apply_cuts(text, cuts) == want
    assert undo_cuts(apply_cuts(text, cuts), [c.as_dict(text) for c in cuts]) == text
