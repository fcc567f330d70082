"""The HTML report: sections, escaping of hostile corpus text, caps, CLI.

Scan directories are built here by hand from a tiny TokenStore with the slow
oracles (naive phrases, all-pairs Jaccard over Python sets), following the scan
directory contract, so the report is tested independently of the producers.
The helpers are shared with test_clean.py and test_report_browser.py.
"""

from __future__ import annotations

import html
import json
import random
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from naive_phrases import naive_coverage, naive_phrases
from repetend.corpus.store import TokenStore
from repetend.corpus.tokenize_ref import is_single_char_token, is_word_char

pytest.importorskip("matplotlib")

HOSTILE = [
    "<script>alert(1)</script>",
    "</details></td></tr></table><script>document.body.dataset.pwned='1'</script>",
    "\"quoted\" & 'single' &amp; </script><img src=x onerror=alert(2)>",
    "--> <!-- ]]> ${x} `tick` \\u003c",
]


# ---------------------------------------------------------------- helpers (shared)

def ref_token_spans(text, unit="word", lang=None, name=None):
    """Character spans of the word tokens, by the tokenizer's definition
    (stand-in while the compiled tokenizer's token_spans is a placeholder;
    assumes NFC input)."""
    out = []
    start = None
    for i, ch in enumerate(text):
        if is_word_char(ch) and is_single_char_token(ch):
            if start is not None:
                out.append((start, i))
                start = None
            out.append((i, i + 1))
        elif is_word_char(ch):
            if start is None:
                start = i
        elif start is not None:
            out.append((start, i))
            start = None
    if start is not None:
        out.append((start, len(text)))
    return np.asarray(out, dtype=np.int64).reshape(-1, 2)


@pytest.fixture(autouse=True)
def _token_spans_available(monkeypatch):
    patch_token_spans(monkeypatch)


def patch_token_spans(monkeypatch):
    import repetend.corpus.tokenizer as tk

    try:
        tk.token_spans("a b")
    except NotImplementedError:
        monkeypatch.setattr(tk, "token_spans", ref_token_spans)


def _shingles(tokens, k=3):
    tokens = list(tokens)
    if 0 < len(tokens) < k:
        return {tuple(tokens)}
    return {tuple(tokens[i:i + k]) for i in range(len(tokens) - k + 1)}


def write_phrases(scan: Path, store: TokenStore, min_docs: int, min_len: int) -> dict:
    """phrases/ by the naive oracle; returns {phrase tuple: (df, global starts)}."""
    ans = naive_phrases(store.tokens, store.doc_offsets, min_docs, min_len)
    items = sorted(ans.items(), key=lambda kv: (-len(kv[0]) * kv[1][0], -len(kv[0]), kv[0]))
    d = scan / "phrases"
    d.mkdir(parents=True, exist_ok=True)
    occ_rows = {"phrase_id": [], "doc_index": [], "doc_id": [], "start": [], "end": []}
    ph = {"phrase_id": [], "tokens": [], "text": [], "df": [], "occurrences": [], "length": [],
          "psi": [], "example_doc_id": []}
    ids = store.doc_ids
    for pid, (p, (df, starts)) in enumerate(items):
        docs = store.doc_of_position(np.asarray(starts))
        for s, dd in zip(starts, docs):
            loc = int(s - store.doc_offsets[dd])
            occ_rows["phrase_id"].append(pid)
            occ_rows["doc_index"].append(int(dd))
            occ_rows["doc_id"].append(ids[dd])
            occ_rows["start"].append(loc)
            occ_rows["end"].append(loc + len(p))
        d0 = int(docs[0])
        s0 = int(starts[0] - store.doc_offsets[d0])
        ph["phrase_id"].append(pid)
        ph["tokens"].append(store.token_strings(p))
        ph["text"].append(store.surface(d0, s0, s0 + len(p)))
        ph["df"].append(df)
        ph["occurrences"].append(len(starts))
        ph["length"].append(len(p))
        ph["psi"].append(len(p) * df)
        ph["example_doc_id"].append(ids[d0])
    pq.write_table(pa.table({"phrase_id": pa.array(ph["phrase_id"], pa.int64()),
                             "tokens": pa.array(ph["tokens"], pa.list_(pa.string())),
                             "text": pa.array(ph["text"], pa.string()),
                             "df": pa.array(ph["df"], pa.int64()),
                             "occurrences": pa.array(ph["occurrences"], pa.int64()),
                             "length": pa.array(ph["length"], pa.int64()),
                             "psi": pa.array(ph["psi"], pa.int64()),
                             "example_doc_id": pa.array(ph["example_doc_id"], pa.string())}),
                   d / "phrases.parquet")
    pq.write_table(pa.table({"phrase_id": pa.array(occ_rows["phrase_id"], pa.int64()),
                             "doc_index": pa.array(occ_rows["doc_index"], pa.int64()),
                             "doc_id": pa.array(occ_rows["doc_id"], pa.string()),
                             "start": pa.array(occ_rows["start"], pa.int64()),
                             "end": pa.array(occ_rows["end"], pa.int64())}), d / "occurrences.parquet")
    mask = naive_coverage(store.tokens, store.doc_offsets, ans)
    n = store.doc_lengths
    cs = np.concatenate([[0], np.cumsum(mask.astype(np.int64))])
    cov = cs[store.doc_offsets[1:]] - cs[store.doc_offsets[:-1]]
    share = np.where(n > 0, cov / np.maximum(n, 1), 0.0)
    docs = store.docs
    pq.write_table(pa.table({"doc_index": pa.array(np.arange(store.n_docs), pa.int64()),
                             "doc_id": docs.column("doc_id"), "url": docs.column("url"),
                             "host": docs.column("host"), "n_tokens": pa.array(n, pa.int64()),
                             "covered_tokens": pa.array(cov, pa.int64()),
                             "boilerplate_share": pa.array(share, pa.float64())}), d / "documents.parquet")
    if store.has_urls:
        hosts: dict = {}
        for i, h in enumerate(docs.column("host").to_pylist()):
            r = hosts.setdefault(h, [0, 0, 0])
            r[0] += 1
            r[1] += int(n[i])
            r[2] += int(cov[i])
        hs = sorted(hosts, key=str)
        pq.write_table(pa.table({"host": pa.array(hs, pa.string()),
                                 "documents": pa.array([hosts[h][0] for h in hs], pa.int64()),
                                 "tokens": pa.array([hosts[h][1] for h in hs], pa.int64()),
                                 "covered_tokens": pa.array([hosts[h][2] for h in hs], pa.int64()),
                                 "covered_share": pa.array([hosts[h][2] / max(hosts[h][1], 1) for h in hs])}),
                       d / "hosts.parquet")
    (d / "summary.json").write_text(json.dumps({"parameters": {"min_docs": min_docs, "min_len": min_len,
                                                               "engine": "naive"}}))
    return ans


def write_dups(scan: Path, store: TokenStore, threshold=0.5, bands=8, rows=2):
    """dups/ by exact all-pairs Jaccard over 3-token shingle sets."""
    n = store.n_docs
    sets = [_shingles(store.doc_tokens(i)) for i in range(n)]
    ids = store.doc_ids
    pairs, cont, cands = [], [], []
    rng = random.Random(1)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = sets[i], sets[j]
            if not a or not b:
                continue
            inter = len(a & b)
            jac = inter / len(a | b)
            row = {"a": ids[i], "b": ids[j], "a_index": i, "b_index": j, "jaccard": jac,
                   "containment_ab": inter / len(a), "containment_ba": inter / len(b), "method": "exact"}
            if jac >= threshold:
                pairs.append(row)
            elif max(row["containment_ab"], row["containment_ba"]) >= 0.8:
                cont.append(row)
            if jac >= 0.05:
                cands.append({"a_index": i, "b_index": j, "jaccard": jac,
                              "estimate": min(1.0, max(0.0, jac + rng.uniform(-0.1, 0.1)))})
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for r in pairs:
        ra, rb = find(r["a_index"]), find(r["b_index"])
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    comp: dict = {}
    for i in range(n):
        comp.setdefault(find(i), []).append(i)
    cl = {"doc_index": [], "doc_id": [], "cluster_id": [], "cluster_size": [], "is_representative": []}
    for root, mem in comp.items():
        if len(mem) < 2:
            continue
        for m in mem:
            cl["doc_index"].append(m)
            cl["doc_id"].append(ids[m])
            cl["cluster_id"].append(root)
            cl["cluster_size"].append(len(mem))
            cl["is_representative"].append(m == min(mem))
    d = scan / "dups"
    d.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([("a", pa.string()), ("b", pa.string()), ("a_index", pa.int64()),
                        ("b_index", pa.int64()), ("jaccard", pa.float64()),
                        ("containment_ab", pa.float64()), ("containment_ba", pa.float64()),
                        ("method", pa.string())])
    pq.write_table(pa.Table.from_pylist(pairs, schema=schema), d / "pairs.parquet")
    pq.write_table(pa.Table.from_pylist(cont, schema=schema), d / "containment.parquet")
    pq.write_table(pa.Table.from_pylist(cands, schema=pa.schema([
        ("a_index", pa.int64()), ("b_index", pa.int64()), ("jaccard", pa.float64()),
        ("estimate", pa.float64())])), d / "candidates.parquet")
    pq.write_table(pa.table({"doc_index": pa.array(cl["doc_index"], pa.int64()),
                             "doc_id": pa.array(cl["doc_id"], pa.string()),
                             "cluster_id": pa.array(cl["cluster_id"], pa.int64()),
                             "cluster_size": pa.array(cl["cluster_size"], pa.int64()),
                             "is_representative": pa.array(cl["is_representative"], pa.bool_())}),
                   d / "clusters.parquet")
    (d / "summary.json").write_text(json.dumps({
        "parameters": {"method": "minhash", "threshold": threshold, "shingle": 3, "num_perm": bands * rows,
                       "bands": bands, "rows": rows},
        "candidates": len(cands), "verified_pairs": len(pairs), "clusters": sum(len(m) > 1 for m in comp.values())}))
    return pairs, cl


def make_scan(root: Path, texts, ids=None, urls=None, *, min_docs=2, min_len=3, phrases=True, dups=True,
              inputs=None, input_options=None):
    """A scan directory following the contract, built with the slow oracles."""
    root.mkdir(parents=True, exist_ok=True)
    store = TokenStore.from_texts(texts, ids=ids, urls=urls)
    store.save(root / "store")
    store = TokenStore.open(root / "store")
    (root / "summary.json").write_text(json.dumps({
        "command": "repetend scan corpus.jsonl --out " + str(root),
        "inputs": [str(x) for x in (inputs or ["corpus.jsonl"])],
        "store": "store", "input_format": "jsonl",
        "input_options": input_options or {"text_field": "text", "id_field": "id", "url_field": "url"},
        "parameters": {"min_docs": min_docs, "min_len": min_len},
        "timings": {"total_s": 0.1},
        "corpus": {"documents": store.n_docs, "tokens": store.n_tokens,
                   "read": {"files": 1, "records": store.n_docs, "malformed": 0, "empty": 0,
                            "invalid_utf8": 0}}}))
    ans = write_phrases(root, store, min_docs, min_len) if phrases else None
    dup = write_dups(root, store) if dups else None
    return store, ans, dup


FOOTER = "Free delivery on orders over 3000 rubles & more — \"terms\" apply"
COOKIE = "We use cookies to improve your experience; by browsing you agree"


def web_corpus(seed=0, n=24):
    """Pages of three sites: shared footer/cookie templates, random bodies,
    hostile snippets, planted near-duplicate pages."""
    rng = random.Random(seed)
    words = [f"w{i}x" for i in range(400)]
    texts, ids, urls = [], [], []
    for i in range(n):
        body = " ".join(rng.choice(words) for _ in range(rng.randint(15, 40)))
        parts = [body]
        if i % 3 != 0:
            parts.append(FOOTER)
        if i % 2 == 0:
            parts.insert(0, COOKIE + ".")
        if i % 5 == 0:
            parts.append(HOSTILE[(i // 5) % len(HOSTILE)])
        texts.append("\n".join(parts))
        ids.append(f"doc-{i:03d}" if i != 1 else 'doc-"1"&<b>')
        urls.append(f"https://site{i % 3}.example/p/{i}?a=1&b=<2>")
    # near-duplicates: copies with one word changed
    for k, src in enumerate((1, 2, 2)):
        t = texts[src].split(" ")
        t[3] = "changed"
        texts.append(" ".join(t))
        ids.append(f"copy-{k}")
        urls.append(f"https://mirror.example/{k}")
    # template-only pages (drop candidates)
    for k in range(2):
        texts.append(COOKIE + ". " + FOOTER)
        ids.append(f"tpl-{k}")
        urls.append(f"https://site0.example/tpl/{k}")
    return texts, ids, urls


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.starts: dict[str, int] = {}
        self.text: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        self.starts[tag] = self.starts.get(tag, 0) + 1
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


def parse(page: str) -> _Tags:
    p = _Tags()
    p.feed(page)
    p.close()
    return p


# ---------------------------------------------------------------- tests

@pytest.fixture(scope="module")
def built(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    patch_token_spans(mp)
    root = tmp_path_factory.mktemp("scan")
    texts, ids, urls = web_corpus()
    store, ans, dup = make_scan(root / "scan", texts, ids, urls, min_docs=3, min_len=4)
    from repetend.report import build_report

    out = build_report(root / "scan", root / "report.html")
    yield root, out.read_text(encoding="utf-8"), store, ans, dup, texts
    mp.undo()


def test_sections_and_numbers(built):
    root, page, store, ans, dup, texts = built
    for anchor in ("summary", "eaters", "coverage", "hosts", "dups", "lsh", "params"):
        assert f'id="{anchor}"' in page
    assert "not in this scan" not in page
    # every phrase in ≥ σ distinct clusters (fewer than the cap) is listed with its escaped
    # surface form; one frequent only through copies of a document is not
    tp = pq.read_table(root / "scan" / "phrases" / "phrases.parquet").to_pylist()
    assert 0 < len(tp) <= 200
    cluster_of = {d: f"c{c}" for d, c in zip(dup[1]["doc_index"], dup[1]["cluster_id"])}
    occ = pq.read_table(root / "scan" / "phrases" / "occurrences.parquet").to_pylist()
    cdf = {r["phrase_id"]: len({cluster_of.get(o["doc_index"], o["doc_index"]) for o in occ
                                if o["phrase_id"] == r["phrase_id"]}) for r in tp}
    eaters = page[page.index('id="eaters"'):page.index('id="coverage"')]
    listed = [r for r in tp if cdf[r["phrase_id"]] >= 3]
    assert listed and len(listed) < len(tp)
    for r in tp:
        assert (html.escape(r["text"][:400], quote=True) in eaters) == (cdf[r["phrase_id"]] >= 3)
    assert f"Left out: {len(tp) - len(listed):,} of the {len(tp):,} phrases" in eaters
    # corpus share of boilerplate as the oracle computes it: all tokens, and the tokens
    # of the representatives (one per near-duplicate cluster)
    mask = naive_coverage(store.tokens, store.doc_offsets, ans)
    assert f"{100 * mask.mean():.1f}%" in page
    rep = np.ones(store.n_docs, bool)
    rep[[d for d, r in zip(dup[1]["doc_index"], dup[1]["is_representative"]) if not r]] = False
    doc_of = np.repeat(np.arange(store.n_docs), np.diff(store.doc_offsets))
    assert f"{100 * mask[rep[doc_of]].mean():.1f}%" in page
    # the duplicate share: documents beyond one per cluster
    in_clusters = len(dup[1]["doc_index"])
    assert in_clusters > 0
    n_extra = in_clusters - len(set(dup[1]["cluster_id"]))
    assert f"{100 * n_extra / store.n_docs:.1f}%" in page
    # each cluster's side-by-side pair carries the oracle's figures
    ids = store.doc_ids
    shown = 0
    for r in dup[0]:
        for x, y, cab, cba in ((r["a_index"], r["b_index"], r["containment_ab"], r["containment_ba"]),
                               (r["b_index"], r["a_index"], r["containment_ba"], r["containment_ab"])):
            head = f"representative <b>{html.escape(ids[x])}</b> and {html.escape(ids[y])}</summary>"
            if head in page:
                shown += 1
                tail = page[page.index(head):page.index(head) + 2000]
                assert (f"Jaccard {r['jaccard']:.3f}, containment a⊂b {cab:.3f}, b⊂a {cba:.3f}") in tail
    assert shown == len({c for c in dup[1]["cluster_id"]})
    # figures: histogram, S-curve, chord picture, all inline
    assert page.count('src="data:image/svg+xml;base64,') == 3
    assert "<link" not in page and "src=\"http" not in page
    # the reproducing command
    assert html.escape("repetend scan corpus.jsonl", quote=True) in page


def test_hostile_text_is_escaped(built):
    root, page, store, *_ = built
    p = parse(page)
    assert p.starts.get("script") == 1        # only our own script
    assert p.starts.get("img", 0) == 3        # the three figures, no injected <img>
    text = "".join(p.text)
    shown = 0
    for h in HOSTILE:
        if h in text:
            shown += 1
    assert shown >= 2                          # they appear as text in examples/tables
    for _, v in p.attrs:
        assert v is None or "onerror" not in v
    assert 'doc-"1"&<b>' in text               # shown (a cluster member), as text
    assert 'doc-"1"&<b>' not in page           # the id is never raw


def test_examples_highlight_the_occurrence(built):
    root, page, store, ans, *_ = built
    occ = pq.read_table(root / "scan" / "phrases" / "occurrences.parquet").to_pylist()
    marks = set()
    p = page
    while "<mark>" in p:
        a = p.index("<mark>") + 6
        b = p.index("</mark>", a)
        marks.add(html.unescape(p[a:b]))
        p = p[b:]
    surfaces = {store.surface(r["doc_index"], r["start"], r["end"]) for r in occ}
    assert marks and marks <= surfaces


def test_only_one_stage(tmp_path):
    from repetend.report import build_report

    texts, ids, urls = web_corpus(1, 9)
    make_scan(tmp_path / "a", texts, ids, urls, min_docs=3, min_len=4, dups=False)
    page = build_report(tmp_path / "a", tmp_path / "a.html").read_text()
    assert "Near-duplicate documents: not in this scan" in page and 'id="eaters"' in page
    make_scan(tmp_path / "b", texts, ids, None, min_docs=3, min_len=4, phrases=False)
    page = build_report(tmp_path / "b", tmp_path / "b.html").read_text()
    assert "Boilerplate phrases: not in this scan" in page and 'id="dups"' in page
    assert 'id="eaters"' not in page


def test_caps(tmp_path):
    from repetend.report import ReportCaps, build_report

    rng = random.Random(3)
    # many distinct phrases: each pair of docs shares its own 4-word phrase
    texts = [" ".join(f"u{i}v{j}" for j in range(6)) for i in range(30)]
    for i in range(30):
        texts[i] += " " + " ".join(f"p{i // 2}q{j}" for j in range(5))
    rng.shuffle(texts)
    make_scan(tmp_path / "s", texts, min_docs=2, min_len=4, dups=False)
    n_phr = pq.read_metadata(tmp_path / "s" / "phrases" / "phrases.parquet").num_rows
    assert n_phr == 15
    page = build_report(tmp_path / "s", tmp_path / "r.html",
                        caps=ReportCaps(max_phrases=5, examples_per_phrase=1)).read_text()
    eaters = page[page.index('id="eaters"'):page.index('id="coverage"')]
    assert eaters.count("<tr>") == 1 + 5
    assert "Showing 5 of 15" in eaters
    with pytest.raises(Exception):
        ReportCaps(max_rows=0)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet=st.sampled_from(list("ab <>&\"'/=!-scriptdeal\n")), max_size=30),
                min_size=3, max_size=6))
def test_escaping_random(tmp_path_factory, chunks):
    from repetend.report import build_report

    root = tmp_path_factory.mktemp("rnd")
    base = "shared words here for all of them"
    texts = [base + " " + c for c in chunks]
    ids = [c[:10] + f"#{i}" for i, c in enumerate(chunks)]
    make_scan(root / "s", texts, ids, [f"http://h/{c[:5]}" for c in chunks], min_docs=2, min_len=3)
    page = build_report(root / "s", root / "r.html").read_text()
    p = parse(page)
    assert p.starts.get("script") == 1
    assert set(p.starts) <= {"html", "head", "meta", "title", "style", "body", "header", "h1", "div", "nav",
                             "a", "main", "section", "h2", "h3", "p", "table", "thead", "tbody", "tr", "th",
                             "td", "span", "details", "summary", "mark", "b", "code", "figure", "img",
                             "figcaption", "pre", "br", "script"}
    text = "".join(p.text)
    # every document holding a phrase is shown (as text, never as markup); a document
    # without one (a maximal phrase of the others ends inside it) need not be listed
    import pyarrow.parquet as pq
    shown = set(pq.read_table(root / "s" / "phrases" / "occurrences.parquet").column("doc_id").to_pylist())
    assert shown
    for i in shown:
        assert i in text


def test_cli(tmp_path):
    from click.testing import CliRunner

    from repetend.cli import main

    texts, ids, urls = web_corpus(2, 9)
    make_scan(tmp_path / "s", texts, ids, urls, min_docs=3, min_len=4)
    res = CliRunner().invoke(main, ["report", str(tmp_path / "s"), "--out", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    res = CliRunner().invoke(main, ["report", str(tmp_path / "nope"), "--out", str(tmp_path / "x.html")])
    assert res.exit_code == 2 and "error:" in res.output and not (tmp_path / "x.html").exists()


def test_chord_picture_counts_and_colours():
    from repetend.report.plots import _viridis_bins, chord_picture

    rng = np.random.default_rng(0)
    n = 50
    a = rng.integers(0, n, 300)
    b = rng.integers(0, n, 300)
    j = rng.random(300)
    svg, drawn = chord_picture(n, a, b, j, max_chords=120)
    assert drawn == 120 and svg.count("Q") == 120
    svg, drawn = chord_picture(n, a, b, j, order_keys=np.array([f"id{i:03d}" for i in range(n)][::-1]))
    assert drawn == 300 and svg.count("Q") == 300
    # one chord of similarity 1.0 is drawn in viridis' yellow end, one of 0.0 in its dark end
    svg, _ = chord_picture(n, [0, 1], [10, 20], [0.0, 1.0])
    top, bottom = _viridis_bins(32)[-1], _viridis_bins(32)[0]
    assert f'stroke="{top}" d="M' in svg and f'stroke="{bottom}" d="M' in svg
    assert chord_picture(1, [0], [0], [1.0]) == (None, 0)


def test_measured_recall_against_python_sets(tmp_path):
    """The S-curve's measured points (computed by the scan job for the report):
    per similarity bin, the share of all pairs (exact join) that are candidates —
    checked against Python sets after dropping a random half of the candidates."""
    from repetend.neardup.recall import RECALL_FLOOR, measured_recall

    texts, ids, urls = web_corpus(4, 30)
    store, _, _ = make_scan(tmp_path / "s", texts, ids, urls, min_docs=3, min_len=4)
    cpath = tmp_path / "s" / "dups" / "candidates.parquet"
    cand = pq.read_table(cpath)
    keep = np.random.default_rng(1).random(cand.num_rows) < 0.5
    cand = cand.filter(pa.array(keep))
    pq.write_table(cand, cpath)
    m = measured_recall(store, cand.column("a_index").to_numpy(), cand.column("b_index").to_numpy(),
                        3, bins=8)
    xc, frac, cnt = np.asarray(m["centres"]), np.asarray(m["share"]), np.asarray(m["count"])
    sets = [_shingles(store.doc_tokens(i)) for i in range(store.n_docs)]
    kept = {(r["a_index"], r["b_index"]) for r in cand.to_pylist()}
    edges = np.linspace(RECALL_FLOOR, 1.0, 9)
    want_cnt, want_hit = np.zeros(8), np.zeros(8)
    for i in range(store.n_docs):
        for j in range(i + 1, store.n_docs):
            if not sets[i] or not sets[j]:
                continue
            jac = len(sets[i] & sets[j]) / len(sets[i] | sets[j])
            if jac >= RECALL_FLOOR:
                k = min(int(np.searchsorted(edges, jac, side="right") - 1), 7)
                want_cnt[k] += 1
                want_hit[k] += (i, j) in kept
    nz = want_cnt > 0
    assert np.array_equal(cnt, want_cnt[nz])
    assert np.allclose(frac, want_hit[nz] / want_cnt[nz])
    assert 0 < frac.mean() < 1


def test_chord_order_is_id_order():
    from repetend.report.plots import chord_picture

    keys = np.array(["c", "a", "d", "b"], dtype=object)
    s1, _ = chord_picture(4, [0], [2], [0.5], order_keys=keys)
    s2, _ = chord_picture(4, [0], [2], [0.5], order=np.argsort(keys))
    s3, _ = chord_picture(4, [0], [2], [0.5])
    assert s1 == s2 and s1 != s3


def test_nothing_found_and_empty_documents(tmp_path):
    from repetend.report import build_report

    texts = ["alpha beta gamma delta", "", "one two three four five", "   \n  "]
    make_scan(tmp_path / "s", texts, min_docs=2, min_len=3)
    assert pq.read_metadata(tmp_path / "s" / "phrases" / "phrases.parquet").num_rows == 0
    assert pq.read_metadata(tmp_path / "s" / "dups" / "clusters.parquet").num_rows == 0
    page = build_report(tmp_path / "s", tmp_path / "r.html").read_text()
    assert "No phrase reached" in page and "No duplicate clusters." in page
    assert "0.0%" in page
    p = parse(page)
    assert p.starts.get("script") == 1


def test_what_to_do_gives_the_clean_command_and_what_it_would_do(tmp_path):
    """The command has the scan's own paths, shell-quoted; the figures are those of
    the scan's documents.parquet, which is what clean with its defaults does."""
    import shlex

    from repetend.clean import decision_counts, write_decisions
    from repetend.report import build_report
    from repetend.scandir import open_scan

    mp = pytest.MonkeyPatch()
    patch_token_spans(mp)
    try:
        texts, ids, urls = web_corpus(2, 15)
        src = tmp_path / "my corpus's files" / "in.jsonl"
        src.parent.mkdir()
        src.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, texts)))
        scan_dir = tmp_path / "the scan"
        make_scan(scan_dir, texts, ids, urls, min_docs=3, min_len=4, inputs=[str(src)])
        page = build_report(scan_dir, tmp_path / "r.html").read_text()
        assert 'id="todo"' in page and "no per-document decisions" in page
        table = write_decisions(open_scan(scan_dir, need_store=True))
        page = build_report(scan_dir, tmp_path / "r.html").read_text()
    finally:
        mp.undo()
    todo = page[page.index('id="todo"'):page.index('id="eaters"')]
    cmd = html.unescape(todo[todo.index("<pre>") + 5:todo.index("</pre>")])
    argv = shlex.split(cmd)
    assert argv[:2] == ["repetend", "clean"] and argv[2] == str(src)
    assert argv[argv.index("--scan") + 1] == str(scan_dir.resolve())
    out = Path(argv[argv.index("--out") + 1])
    assert out.parent == src.parent and out.name == "in.clean.jsonl"
    c = decision_counts(table)
    assert c["drop_duplicate"] > 0 and c["drop_template"] > 0
    for label, key in (("dropped as duplicates", "drop_duplicate"), ("dropped as mostly template", "drop_template"),
                       ("characters cut from kept documents", "chars_cut_kept")):
        row = todo[todo.index(label):]
        assert row[row.index("<td>") + 4:].startswith(f"{c[key]:,}")


@pytest.mark.parametrize("seed", range(8))
def test_cluster_df_and_shares_match_the_naive_count(tmp_path, seed):
    """distinct_view / phrase_cluster_df against sets built by hand on random corpora
    with copies: a phrase's cluster df is the number of distinct clusters holding it."""
    from repetend.report.distinct import distinct_view, phrase_cluster_df
    from repetend.scandir import open_scan
    from test_clean_max_cut import random_corpus

    texts, ids, urls = random_corpus(random.Random(100 + seed))
    store, ans, (pairs, cl) = make_scan(tmp_path / "s", texts, ids, urls, min_docs=2, min_len=3)
    dv = distinct_view(open_scan(tmp_path / "s"))
    key = {d: ("c", c) for d, c in zip(cl["doc_index"], cl["cluster_id"])}
    is_rep = dict(zip(cl["doc_index"], cl["is_representative"]))
    rep = [bool(is_rep.get(i, True)) for i in range(store.n_docs)]
    assert dv.representative.tolist() == rep
    lengths = np.diff(store.doc_offsets)
    dup = dv.duplicate_share()
    assert dup["documents"] == store.n_docs - sum(rep)
    assert dup["tokens"] == int(lengths[~np.asarray(rep)].sum())
    occ = pq.read_table(tmp_path / "s" / "phrases" / "occurrences.parquet").to_pylist()
    pids = sorted({o["phrase_id"] for o in occ})
    want = [len({key.get(o["doc_index"], ("d", o["doc_index"])) for o in occ if o["phrase_id"] == p})
            for p in pids]
    assert phrase_cluster_df(open_scan(tmp_path / "s"), dv, np.asarray(pids)).tolist() == want
