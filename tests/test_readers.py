"""Corpus readers: every format against the records it was written from, and bad input.

The oracle is the list of records a test writes itself with the standard
writers (json, csv, pyarrow, warcio): reading it back must give exactly those
records, and every damaged record must be counted, not lost.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import string
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repetend.corpus.readers import (
    FORMATS,
    JsonlReader,
    Reader,
    detect_format,
    expand_inputs,
    read_corpus,
)
from repetend.corpus.record import ReadStats
from repetend.errors import InputError, ParameterError

DATA = Path(__file__).parent / "data" / "readers"


def read(inputs, **kw):
    stats = kw.pop("stats", None) or ReadStats()
    if isinstance(inputs, (str, Path)):
        inputs = [inputs]
    recs = list(read_corpus(inputs, stats=stats, **kw))
    return recs, stats


# -- writers: the obviously-correct side ---------------------------------------------------
def write_jsonl(path: Path, rows: list[dict]) -> Path:
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    name = path.name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(data))
    elif name.endswith(".zst"):
        import zstandard

        path.write_bytes(zstandard.ZstdCompressor().compress(data))
    else:
        path.write_bytes(data)
    return path


def write_csv(path: Path, rows: list[dict], delimiter=",") -> Path:
    import csv

    fields = list(rows[0]) if rows else ["id", "text", "url"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter=delimiter)
        w.writerow(fields)
        for r in rows:
            w.writerow([r.get(k, "") for k in fields])
    return path


def write_parquet(path: Path, rows: list[dict], row_group_size=7) -> Path:
    cols = {k: [r.get(k) for r in rows] for k in (rows[0] if rows else {"text": 0})}
    table = pa.table({k: pa.array(v, pa.string()) for k, v in cols.items()})
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


def write_warc(path: Path, pages: list[tuple[str, bytes, str]], *, wet=False, extra=True) -> Path:
    """pages: (url, payload, content type). WET: conversion records; WARC: responses,
    with a warcinfo header and (extra) a request record and an image response."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as out:
        w = WARCWriter(out, gzip=path.name.endswith(".gz"))

        def put(rec):
            w.write_record(rec)
            rec.raw_stream.close()  # warcio leaves its spool file open

        put(w.create_warcinfo_record(path.name, {"software": "repetend-tests"}))
        for url, payload, ctype in pages:
            if wet:
                put(w.create_warc_record(url, "conversion", payload=io.BytesIO(payload),
                                         length=len(payload), warc_content_type="text/plain"))
                continue
            if extra:
                req = StatusAndHeaders("GET / HTTP/1.1", [("Host", "x")], is_http_request=True)
                put(w.create_warc_record(url, "request", payload=io.BytesIO(b""), length=0,
                                         http_headers=req))
            h = StatusAndHeaders("200 OK", [("Content-Type", ctype)], protocol="HTTP/1.1")
            put(w.create_warc_record(url, "response", payload=io.BytesIO(payload),
                                     length=len(payload), http_headers=h))
        if extra and not wet:
            h = StatusAndHeaders("200 OK", [("Content-Type", "image/png")], protocol="HTTP/1.1")
            png = b"\x89PNG\r\n"
            put(w.create_warc_record("http://x/i.png", "response", payload=io.BytesIO(png),
                                     length=len(png), http_headers=h))
    return path


# -- random corpora ------------------------------------------------------------------------
_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
_texts = st.one_of(st.text(_chars, max_size=40), st.sampled_from(["", " ", "\n\t", "a,b\"c\r\nd"]))
_ids = st.one_of(st.none(), st.text(string.ascii_letters + string.digits + "-_", min_size=1,
                                    max_size=8))
_urls = st.one_of(st.none(), st.builds(lambda h, p: f"https://{h}.example/{p}",
                                       st.text(string.ascii_lowercase, min_size=1, max_size=5),
                                       st.text(string.ascii_lowercase, max_size=5)))
_rows = st.lists(st.fixed_dictionaries({"id": _ids, "text": _texts, "url": _urls}),
                 min_size=1, max_size=25)


def _expected(rows, name):
    ids = [r["id"] if r["id"] not in (None, "") else f"{name}:{i}" for i, r in enumerate(rows)]
    urls = [r["url"] or None for r in rows]
    return ids, [r["text"] for r in rows], urls


_settings = settings(max_examples=25, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])


@_settings
@given(rows=_rows, ext=st.sampled_from(["jsonl", "jsonl.gz", "jsonl.zst", "ndjson", "json"]))
def test_jsonl_round_trip(tmp_path_factory, rows, ext):
    path = write_jsonl(tmp_path_factory.mktemp("j") / f"c.{ext}", rows)
    recs, stats = read(path)
    ids, texts, urls = _expected(rows, path.name)
    assert [r.id for r in recs] == ids
    assert [r.text for r in recs] == texts
    assert [r.url for r in recs] == urls
    assert [r.record_no for r in recs] == list(range(len(rows)))
    assert all(r.source == str(path) for r in recs)
    assert stats.records == len(rows) and stats.files == 1 and stats.malformed == 0
    assert stats.empty == sum(1 for t in texts if not t.strip())


@_settings
@given(rows=_rows, fmt=st.sampled_from(["csv", "tsv"]))
def test_csv_tsv_round_trip(tmp_path_factory, rows, fmt):
    # csv has no null: a missing id/url is an empty field
    path = write_csv(tmp_path_factory.mktemp("c") / f"c.{fmt}",
                     [{k: v or "" for k, v in r.items()} for r in rows],
                     delimiter="," if fmt == "csv" else "\t")
    recs, stats = read(path)
    ids, texts, urls = _expected(rows, path.name)
    assert [r.id for r in recs] == ids
    assert [r.text for r in recs] == texts
    assert [r.url for r in recs] == urls
    assert stats.records == len(rows) and stats.malformed == 0


@_settings
@given(rows=_rows)
def test_parquet_round_trip(tmp_path_factory, rows):
    path = write_parquet(tmp_path_factory.mktemp("p") / "c.parquet", rows)
    recs, stats = read(path)
    ids, texts, urls = _expected(rows, path.name)
    assert ([r.id for r in recs], [r.text for r in recs], [r.url for r in recs]) == (ids, texts, urls)
    assert stats.records == len(rows) and stats.malformed == 0


@_settings
@given(files=st.dictionaries(st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6}){0,2}\.(txt|md)", fullmatch=True),
                             st.text(_chars, max_size=40), min_size=1, max_size=8))
def test_text_tree_round_trip(tmp_path_factory, files):
    root = tmp_path_factory.mktemp("t") / "docs"
    written = {}
    for rel, text in files.items():
        p = root / rel
        if any(Path(w) in p.parents or Path(rel) in Path(w).parents for w in written):
            continue  # a name used both as a file and a directory
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode())
        written[rel] = text
    recs, stats = read(root)
    got = {r.id: r.text for r in recs}
    assert got == written
    assert stats.files == len(written) and stats.records == len(written)
    assert [r.id for r in recs] == sorted(got, key=lambda s: Path(s).parts)


# -- the JSONL fuzz: random garbage mixed with good lines, against a naive parser ----------
_line = st.one_of(
    st.builds(lambda t, i: json.dumps({"text": t, "id": i}), st.text(_chars, max_size=10), _ids),
    st.builds(lambda t: json.dumps({"body": t}), st.text(max_size=5)),      # no text field
    st.sampled_from(["{", "garbage", "[1, 2]", "3", '{"text": null}', '{"text": 5}', "", "  "]),
)


@_settings
@given(first=st.builds(lambda t: json.dumps({"text": t}), st.text(_chars, max_size=10)),
       lines=st.lists(_line, max_size=30))
def test_jsonl_fuzz_against_naive(tmp_path_factory, first, lines):
    lines = [first] + lines
    path = tmp_path_factory.mktemp("f") / "x.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    want, bad, missing = [], 0, 0
    for no, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            bad += 1
            missing += isinstance(obj, dict) and obj.get("text") is None
            continue
        want.append((obj["id"] if obj.get("id") else f"x.jsonl:{no}", obj["text"]))
    recs, stats = read(path)
    assert [(r.id, r.text) for r in recs] == want
    assert stats.malformed == bad and stats.missing_text == missing
    assert len(stats.errors) == min(bad, ReadStats.MAX_ERRORS)
    if bad:
        with pytest.raises(InputError, match="x.jsonl"):
            read(path, on_error="fail")


# -- bad input, one case at a time ---------------------------------------------------------
def test_malformed_json_line_named_and_counted(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text('{"text": "a"}\nnot json\n{"text": "b"}\n')
    recs, stats = read(p)
    assert [r.text for r in recs] == ["a", "b"]
    assert [r.id for r in recs] == ["c.jsonl:0", "c.jsonl:2"]  # ids stay stable past a bad line
    assert stats.malformed == 1 and stats.missing_text == 0
    assert "c.jsonl" in stats.errors[0] and "line 2" in stats.errors[0]
    with pytest.raises(InputError, match=r"c\.jsonl.*line 2"):
        read(p, on_error="fail")


def test_missing_text_field_in_first_record_names_fields(tmp_path):
    p = write_jsonl(tmp_path / "c.jsonl", [{"body": "x", "id": 1}, {"text": "y"}])
    with pytest.raises(InputError) as e:
        read(p)
    msg = str(e.value)
    assert "c.jsonl" in msg and "'text'" in msg and "'body'" in msg and "'id'" in msg
    recs, _ = read(p, text_field="body")
    assert [r.text for r in recs] == ["x"] and recs[0].id == "1"


def test_named_id_or_url_field_must_exist(tmp_path):
    rows = [{"text": "x", "docid": "7", "link": "http://a/"}]
    for path in (write_jsonl(tmp_path / "c.jsonl", rows), write_csv(tmp_path / "c.csv", rows),
                 write_parquet(tmp_path / "c.parquet", rows)):
        for kw, field in (({"id_field": "doc_id"}, "'doc_id'"), ({"url_field": "href"}, "'href'")):
            with pytest.raises(InputError) as e:
                read(path, **kw)
            assert field in str(e.value) and "'docid'" in str(e.value), path
        recs, _ = read(path, id_field="docid", url_field="link")
        assert (recs[0].id, recs[0].url) == ("7", "http://a/")
        recs, _ = read(path)  # the defaults may be missing: fallback ids
        assert recs[0].id == f"{path.name}:0" and recs[0].url is None


def test_missing_text_field_later_is_malformed(tmp_path):
    p = write_jsonl(tmp_path / "c.jsonl", [{"text": "x"}, {"body": "y"}, {"text": None}])
    recs, stats = read(p)
    assert len(recs) == 1
    assert stats.malformed == 2 and stats.missing_text == 2
    with pytest.raises(InputError, match="line 2"):
        read(p, on_error="fail")


def test_dotted_fields_reach_nested_objects(tmp_path):
    p = write_jsonl(tmp_path / "c.jsonl", [{"content": {"body": "hi"}, "meta": {"url": "http://a.b/c",
                                                                                 "id": 7}}])
    recs, _ = read(p, text_field="content.body", url_field="meta.url", id_field="meta.id")
    assert (recs[0].text, recs[0].url, recs[0].id, recs[0].host) == ("hi", "http://a.b/c", "7", "a.b")


def test_json_array_file_gets_a_clear_error(tmp_path):
    p = tmp_path / "c.json"
    p.write_text('[\n{"text": "a"},\n{"text": "b"}\n]\n')
    with pytest.raises(InputError, match="JSON array"):
        read(p)
    p.write_text('[{"text": "a"}, {"text": "b"}]')
    with pytest.raises(InputError, match="JSON array"):
        read(p)
    p.write_text('{\n  "text": "a"\n}\n')
    with pytest.raises(InputError, match="pretty-printed"):
        read(p)


def test_bad_parameters_fail_before_reading(tmp_path):
    p = write_jsonl(tmp_path / "c.jsonl", [{"text": "a"}])
    for kw in ({"text_field": ""}, {"on_error": "ignore"}, {"limit": 0}, {"html": "raw"},
               {"id_field": None}):
        with pytest.raises(ParameterError):
            read_corpus([p], **kw)  # not even iterated


def test_invalid_utf8_replaced_and_counted(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_bytes(b'{"text": "caf\xe9 ok"}\n{"text": "fine"}\n{"text": "lone \\ud800 sur"}\n')
    recs, stats = read(p)
    assert [r.text for r in recs] == ["caf\ufffd ok", "fine", "lone \ufffd sur"]
    assert stats.invalid_utf8 == 2
    for r in recs:
        r.text.encode("utf-8")  # strict: nothing unencodable reaches the store
    c = tmp_path / "c.csv"
    c.write_bytes(b"text,id\n\"a\xff\xfeb\",1\nplain,2\n")
    recs, stats = read(c)
    assert recs[0].text.startswith("a\ufffd") and recs[0].text.endswith("b")
    assert recs[1].text == "plain" and stats.invalid_utf8 == 1
    d = tmp_path / "d"
    d.mkdir()
    (d / "a.txt").write_bytes(b"mostly fine text \xff here" * 20)
    recs, stats = read(d)
    assert len(recs) == 1 and "\ufffd" in recs[0].text and stats.invalid_utf8 == 1
    pqp = tmp_path / "b.parquet"
    pq.write_table(pa.table({"text": pa.array([b"ok", b"x\xc3("], pa.binary())}), pqp)
    recs, stats = read(pqp)
    assert [r.text for r in recs] == ["ok", "x\ufffd("] and stats.invalid_utf8 == 1


def test_empty_text_yielded_and_counted(tmp_path):
    p = write_jsonl(tmp_path / "c.jsonl", [{"text": ""}, {"text": " \n\t"}, {"text": "x"}])
    recs, stats = read(p)
    assert len(recs) == 3 and stats.empty == 2


@pytest.mark.parametrize("name", ["e.jsonl", "e.jsonl.gz", "e.jsonl.zst", "e.csv", "e.tsv",
                                  "e.parquet", "e.warc.gz", "e.wet", "emptydir"])
def test_empty_inputs_give_no_records(tmp_path, name):
    p = tmp_path / name
    if name == "emptydir":
        p.mkdir()
    elif name.endswith(".gz"):
        p.write_bytes(gzip.compress(b""))
    elif name.endswith(".zst"):
        import zstandard

        p.write_bytes(zstandard.ZstdCompressor().compress(b""))
    elif name.endswith(".parquet"):
        pq.write_table(pa.table({"text": pa.array([], pa.string())}), p)
    else:
        p.write_bytes(b"")
    recs, stats = read(p)
    assert recs == [] and stats.malformed == 0


@pytest.mark.parametrize("ext", ["jsonl.gz", "jsonl.zst"])
def test_truncated_compressed_keeps_what_came_before(tmp_path, ext):
    rows = [{"text": f"document number {i} " * 20} for i in range(300)]
    good = write_jsonl(tmp_path / f"g.{ext}", rows)
    data = good.read_bytes()
    bad = tmp_path / f"t.{ext}"
    bad.write_bytes(data[: len(data) * 2 // 3])
    recs, stats = read(bad)
    assert len(recs) < len(rows)
    assert [r.text for r in recs] == [r["text"] for r in rows[: len(recs)]]
    assert stats.malformed == 1 and "truncated" in stats.errors[-1] and f"t.{ext}" in stats.errors[-1]
    with pytest.raises(InputError, match=f"t.{ext}"):
        read(bad, on_error="fail")


def test_zstd_many_frames_and_big_ratio(tmp_path):
    import zstandard

    a = "".join(json.dumps({"text": "x" * 100_000, "id": i}) + "\n" for i in range(40)).encode()
    b = b'{"text": "last"}\n'
    p = tmp_path / "m.jsonl.zst"
    p.write_bytes(zstandard.ZstdCompressor().compress(a) + zstandard.ZstdCompressor().compress(b))
    recs, stats = read(p)
    assert len(recs) == 41 and recs[-1].text == "last" and stats.malformed == 0


def test_parquet_without_text_column(tmp_path):
    p = tmp_path / "c.parquet"
    pq.write_table(pa.table({"body": ["a"], "doc": ["1"]}), p)
    with pytest.raises(InputError) as e:
        read(p)
    assert "'text'" in str(e.value) and "'body'" in str(e.value) and "'doc'" in str(e.value)
    q = tmp_path / "n.parquet"
    pq.write_table(pa.table({"text": pa.array([1, 2])}), q)
    with pytest.raises(InputError, match="int64"):
        read(q)


def test_parquet_batches_shrink_for_big_documents(tmp_path, monkeypatch):
    from repetend.corpus.read_table import ParquetReader

    rows = [{"id": str(i), "text": os.urandom(200 + 50 * i).hex()} for i in range(40)]
    p = write_parquet(tmp_path / "b.parquet", rows, row_group_size=16)
    monkeypatch.setattr(ParquetReader, "batch_bytes", 2000)
    import pyarrow.parquet as _pq

    assert ParquetReader()._batch_rows(_pq.ParquetFile(p)) < 4
    recs, stats = read(p)
    assert [(r.id, r.text) for r in recs] == [(x["id"], x["text"]) for x in rows]


def test_parquet_null_text_and_only_needed_columns(tmp_path):
    p = tmp_path / "c.parquet"
    pq.write_table(pa.table({"text": ["a", None, "c"], "id": ["x", "y", None],
                             "big": [np.arange(3).tolist()] * 3}), p)
    recs, stats = read(p)
    assert [(r.id, r.text) for r in recs] == [("x", "a"), ("c.parquet:2", "c")]
    assert stats.malformed == 1 and stats.missing_text == 1


def test_csv_wrong_field_count_and_huge_field(tmp_path):
    p = tmp_path / "c.csv"
    huge = "w " * 200_000  # beyond csv's default 128 KiB field limit
    p.write_text(f'id,text\n1,"{huge}"\n2,a,b\n3\n4,ok\n', encoding="utf-8")
    recs, stats = read(p)
    assert [r.id for r in recs] == ["1", "4"] and recs[0].text == huge
    assert stats.malformed == 2 and stats.missing_text == 1
    assert "line 3" in stats.errors[0]
    q = tmp_path / "q.csv"
    q.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="'a', 'b'"):
        read(q)


def test_csv_bad_quoting_is_malformed_not_swallowed(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text('id,text\n1,"a"b\n2,ok\n3,"unterminated\n', encoding="utf-8")
    recs, stats = read(p)
    assert [(r.id, r.text) for r in recs] == [("2", "ok")]
    assert stats.malformed == 2 and "line 2" in stats.errors[0]
    with pytest.raises(InputError, match="q.csv"):
        read(p, on_error="fail")


def test_nonexistent_paths_globs_and_unknown_formats(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="no file matches"):
        read(str(tmp_path / "*.jsonl"))
    for i in range(3):
        write_jsonl(tmp_path / f"part-{i}.jsonl", [{"text": f"t{i}"}])
    recs, stats = read(str(tmp_path / "part-*.jsonl"))
    assert [r.text for r in recs] == ["t0", "t1", "t2"] and stats.files == 3
    (tmp_path / "data.bin").write_bytes(b"x")
    with pytest.raises(InputError, match="--format"):
        read(tmp_path / "data.bin")
    (tmp_path / "data.dat").write_text('{"text": "forced"}\n')
    recs, _ = read(tmp_path / "data.dat", fmt="jsonl")
    assert recs[0].text == "forced"
    with pytest.raises(ParameterError):
        read(tmp_path / "data.dat", fmt="xml")
    with pytest.raises(ParameterError):
        read(tmp_path / "data.dat", fmt="jsonl", on_error="ignore")


def test_directory_with_a_format_reads_its_files(tmp_path):
    d = tmp_path / "shards"
    (d / "sub").mkdir(parents=True)
    write_jsonl(d / "a.jsonl", [{"text": "a"}])
    write_jsonl(d / "sub" / "b.jsonl.gz", [{"text": "b"}])
    (d / "README").write_text("not a shard")
    recs, stats = read(d, fmt="jsonl")
    assert sorted(r.text for r in recs) == ["a", "b"] and stats.files == 2


def test_directory_of_shards_is_read_as_shards(tmp_path):
    d = tmp_path / "shards"
    d.mkdir()
    write_parquet(d / "part-0.parquet", [{"text": "p0"}])
    write_jsonl(d / "part-1.jsonl.gz", [{"text": "p1"}])
    (d / ".gitattributes").write_text("*.parquet filter=lfs")
    recs, stats = read(d)
    assert [r.text for r in recs] == ["p0", "p1"] and stats.files == 2
    (d / "README.md").write_text("a dataset card")  # no longer only shards: a text tree
    recs, stats = read(d)
    assert {r.id for r in recs} == {"README.md", "part-1.jsonl.gz"}
    assert any("part-0.parquet" in e and "binary" in e for e in stats.errors)
    recs, _ = read(d, fmt="parquet")
    assert [r.text for r in recs] == ["p0"]


def test_compression_recognised_by_magic_bytes(tmp_path):
    import bz2
    import lzma

    import zstandard

    data = b'{"text": "packed"}\n'
    for name, packed in (("a.jsonl", gzip.compress(data)),
                         ("b.jsonl", zstandard.ZstdCompressor().compress(data)),
                         ("c.jsonl.bz2", bz2.compress(data)), ("d.jsonl.xz", lzma.compress(data)),
                         ("e.jsonl.gz", data)):  # a .gz name on a plain file is fine too
        (tmp_path / name).write_bytes(packed)
        recs, stats = read(tmp_path / name)
        assert [r.text for r in recs] == ["packed"], name
    p = tmp_path / "w.wet"
    write_warc(tmp_path / "w.warc.wet.gz", [("http://a/", b"t", "")], wet=True)
    p.write_bytes((tmp_path / "w.warc.wet.gz").read_bytes())
    assert [r.text for r in read(p)[0]] == ["t"]


def test_bom_dictionary_column_and_corrupt_parquet(tmp_path):
    p = tmp_path / "bom.jsonl"
    p.write_bytes(b'\xef\xbb\xbf{"text": "with bom"}\n')
    recs, stats = read(p)
    assert [r.text for r in recs] == ["with bom"] and stats.malformed == 0
    q = tmp_path / "dict.parquet"
    pq.write_table(pa.table({"text": pa.array(["a", "b", "a"]).dictionary_encode()}), q)
    recs, _ = read(q)
    assert [r.text for r in recs] == ["a", "b", "a"]
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really parquet")
    with pytest.raises(InputError, match="bad.parquet"):
        read(bad)


@pytest.mark.parametrize("pack", ["plain", "gzip", "zstd"])
def test_standard_input(monkeypatch, pack):
    import zstandard

    data = b'{"text": "one"}\n\n{"text": "two", "id": "b"}\n'
    packed = {"plain": data, "gzip": gzip.compress(data),
              "zstd": zstandard.ZstdCompressor().compress(data)}[pack]
    stdin = io.TextIOWrapper(io.BytesIO(packed))
    monkeypatch.setattr("sys.stdin", stdin)
    recs, stats = read("-")
    assert [(r.id, r.text) for r in recs] == [("stdin:0", "one"), ("b", "two")]
    assert not stdin.closed
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"text,id\nhello,1\n")))
    recs, _ = read("-", fmt="csv")
    assert [(r.id, r.text) for r in recs] == [("1", "hello")]
    with pytest.raises(ParameterError, match="standard input"):
        read("-", fmt="parquet")


def test_limit_across_files(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [{"text": str(i)} for i in range(5)])
    b = write_csv(tmp_path / "b.csv", [{"text": str(i)} for i in range(5, 10)])
    for k in (1, 5, 7, 10, 50):
        recs, stats = read([a, b], limit=k)
        assert [r.text for r in recs] == [str(i) for i in range(min(k, 10))]
        assert stats.records == min(k, 10)
    with pytest.raises(ParameterError):
        read(a, limit=0)


def test_text_tree_binary_hidden_glob_gz_and_stores(tmp_path):
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "store").mkdir()
    (root / "a.md").write_text("# Title\nbody")
    (root / "sub" / "b.txt").write_text("bee")
    (root / "sub" / "c.txt.gz").write_bytes(gzip.compress("сжатый текст".encode()))
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main")
    (root / "store" / "meta.json").write_text("{}")
    (root / "store" / "tokens.npy").write_bytes(b"\x93NUMPY")
    recs, stats = read(root)
    assert {r.id: r.text for r in recs} == {"a.md": "# Title\nbody", "sub/b.txt": "bee",
                                            "sub/c.txt.gz": "сжатый текст"}
    assert any("img.png" in e and "binary" in e for e in stats.errors)
    assert stats.malformed == 0
    recs, _ = read(root, glob="**/*.txt")
    assert [r.id for r in recs] == ["sub/b.txt"]
    recs, _ = read(root / "a.md")  # one text file = one document
    assert [(r.id, r.text) for r in recs] == [((root / "a.md").as_posix(), "# Title\nbody")]
    recs, _ = read(str(root / "**" / "*.txt"), fmt="text")  # a glob of files: ids stay apart
    assert [r.id for r in recs] == [(root / "sub" / "b.txt").as_posix()]


def test_text_files_with_boms(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "a.txt").write_bytes("\ufeffс BOM".encode("utf-8"))
    (d / "b.txt").write_bytes("Windows текст".encode("utf-16"))  # BOM + UTF-16LE
    (d / "c.txt").write_bytes(b"\xfe\xff" + "big end".encode("utf-16-be"))
    recs, stats = read(d)
    assert [r.text for r in recs] == ["с BOM", "Windows текст", "big end"]
    assert stats.invalid_utf8 == 0 and not stats.errors


def test_utf8_cut_at_the_sniff_boundary_is_text(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "ru.txt").write_text("я" * 10_000, encoding="utf-8")  # 2-byte chars across 8 KiB
    recs, stats = read(d)
    assert recs[0].text == "я" * 10_000 and stats.invalid_utf8 == 0


# -- WARC / WET -------------------------------------------------------------------------------
PAGE = ("<html><head><title>Shop</title><script>var x = 1;</script></head><body>"
        "<nav>Home | Catalog | Cart</nav><main><h1>Red shoes</h1><p>Buy <b>red</b> shoes "
        "today.</p><!-- note -->After comment</main><footer>Free delivery from 3000 roubles"
        "</footer></body></html>")


def test_warc_html_responses_become_text(tmp_path):
    p = write_warc(tmp_path / "c.warc.gz", [
        ("http://shop.example/a", PAGE.encode(), "text/html; charset=utf-8"),
        ("http://shop.example/b", PAGE.replace("Red", "Blue").encode("cp1251"), "text/html"),
        ("http://shop.example/r", "<html><body><p>Доставка бесплатно</p></body></html>"
         .encode("cp1251"), "text/html; charset=windows-1251"),
        ("http://shop.example/c.pdf", b"%PDF-1.4", "application/pdf"),
    ])
    recs, stats = read(p)
    assert [r.url for r in recs] == ["http://shop.example/a", "http://shop.example/b",
                                     "http://shop.example/r"]
    assert recs[2].text == "Доставка бесплатно"
    t = recs[0].text
    assert t.splitlines() == ["Shop", "Home | Catalog | Cart", "Red shoes",
                              "Buy red shoes today.", "After comment",
                              "Free delivery from 3000 roubles"]
    assert "var x" not in t and "note" not in t
    assert "Blue shoes" in recs[1].text
    assert all(r.id.startswith("urn:uuid:") for r in recs) and recs[0].host == "shop.example"
    # warcinfo + 4 requests + the pdf + the png
    assert stats.skipped_non_response == 7 and stats.malformed == 0
    main, _ = read(p, html="main")
    assert "shoes today." in main[0].text and "Free delivery" not in main[0].text


@pytest.fixture(params=["fastwarc", "warcio"])
def wet_backend(request, monkeypatch):
    from repetend.corpus.read_warc import WetReader

    monkeypatch.setattr(WetReader, "use_fastwarc", request.param == "fastwarc")
    return request.param


def test_warc_content_encoding_and_chunked(tmp_path):
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    html = b"<html><body><p>Packed page text</p></body></html>"
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(html), html)
    p = tmp_path / "e.warc.gz"
    with open(p, "wb") as out:
        w = WARCWriter(out, gzip=True)
        for headers, body in (([("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
                               gzip.compress(html)),
                              ([("Content-Type", "text/html"), ("Transfer-Encoding", "chunked")],
                               chunked)):
            h = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
            rec = w.create_warc_record("http://e.example/", "response", payload=io.BytesIO(body),
                                       length=len(body), http_headers=h)
            w.write_record(rec)
            rec.raw_stream.close()
    recs, stats = read(p)
    assert [r.text for r in recs] == ["Packed page text"] * 2 and stats.malformed == 0


def test_wet_backends_agree(tmp_path):
    from repetend.corpus.read_warc import WetReader

    pages = [(f"https://s{i % 3}.example/{i}", ("слово " * (i * 37 % 500)).encode() + b"\xff",
              "") for i in range(60)]
    p = write_warc(tmp_path / "a.warc.wet.gz", pages, wet=True)
    out = {}
    for fast in (True, False):
        WetReader.use_fastwarc = fast
        try:
            recs, stats = read(p)
        finally:
            WetReader.use_fastwarc = True
        out[fast] = ([(r.id, r.text, r.url, r.record_no) for r in recs], stats.as_dict())
    assert out[True] == out[False]
    assert len(out[True][0]) == 60 and out[True][1]["invalid_utf8"] == 60


def test_wet_conversion_records(tmp_path, wet_backend):
    pages = [(f"https://s{i % 2}.example/p{i}", f"page {i}\nfooter text".encode(), "")
             for i in range(4)]
    pages.append(("https://bad.example/", b"caf\xe9", ""))
    for name in ("c.warc.wet.gz", "c.wet"):
        p = write_warc(tmp_path / name, pages, wet=True)
        recs, stats = read(p)
        assert [r.url for r in recs] == [u for u, _, _ in pages]
        assert [r.text for r in recs][:4] == [b.decode() for _, b, _ in pages[:4]]
        assert recs[4].text == "caf\ufffd" and stats.invalid_utf8 == 1
        assert stats.skipped_non_response == 1  # the warcinfo header
        assert len({r.id for r in recs}) == 5


def test_not_a_warc_and_truncated_warc(tmp_path, wet_backend):
    p = tmp_path / "x.warc"
    p.write_text("this is not a warc file\n" * 5)
    with pytest.raises(InputError, match="x.warc"):
        read(p)
    full = write_warc(tmp_path / "f.warc.wet.gz",
                      [(f"http://a/{i}", (f"text {i} " * 300).encode(), "") for i in range(20)],
                      wet=True)
    data = full.read_bytes()
    cut = tmp_path / "cut.warc.wet.gz"
    cut.write_bytes(data[: len(data) // 2])
    recs, stats = read(cut)
    assert 0 < len(recs) < 20 and stats.malformed == 1


# -- the committed samples stay readable --------------------------------------------------------
def test_committed_samples(tmp_path):
    files = sorted(p for p in DATA.iterdir() if p.is_file() or p.is_dir())
    assert files, "tests/data/readers is empty"
    for p in files:
        fmt = "text" if p.is_dir() else None
        recs, stats = read(p, fmt=fmt)
        assert recs, p
        assert stats.records == len(recs)


# -- the API surface ------------------------------------------------------------------------
def test_formats_and_detection():
    assert set(FORMATS) == {"jsonl", "parquet", "csv", "tsv", "text", "warc", "wet", "arrow"}
    cases = {"a.jsonl": "jsonl", "a.JSONL.GZ": "jsonl", "a.jsonl.zst": "jsonl",
             "CC-MAIN-1.warc.wet.gz": "wet", "x.warc.gz": "warc", "x.tsv": "tsv",
             "x.parquet": "parquet", "x.csv.gz": "csv", "noext": None, "x.bin": None}
    for name, want in cases.items():
        assert detect_format(name) == want, name
    assert issubclass(JsonlReader, Reader)
    assert expand_inputs([str(DATA)]) == [(DATA, "text")]


# -- memory and size ------------------------------------------------------------------------------
def _rss() -> int:
    import psutil

    return psutil.Process(os.getpid()).memory_info().rss


def test_memory_stays_flat_on_a_200mb_jsonl(tmp_path):
    p = tmp_path / "big.jsonl"
    line = json.dumps({"text": "boilerplate " * 80 + "x"}) + "\n"
    block = (line * 1000).encode()
    with open(p, "wb") as f:
        while f.tell() < 200_000_000:
            f.write(block)
    n_lines = p.stat().st_size // len(line.encode())
    base = _rss()
    peak = base
    n = 0
    for n, rec in enumerate(read_corpus([p]), 1):
        if n % 20_000 == 0:
            peak = max(peak, _rss())
    p.unlink()  # 200 MB: do not keep it among pytest's retained temp dirs
    assert n == n_lines
    assert peak - base < 60_000_000, f"RSS grew by {(peak - base) / 1e6:.0f} MB"


@pytest.mark.slow
def test_a_100mb_single_document(tmp_path):
    text = "word " * 20_000_000
    p = tmp_path / "one.jsonl"
    p.write_text(json.dumps({"id": "big", "text": text}) + "\n")
    recs, stats = read(p)
    p.unlink()
    assert len(recs) == 1 and recs[0].text == text and stats.records == 1


# -- damaged files: never a crash, only records, counts, or an InputError --------------------
def _valid_bytes(fmt: str, tmp: Path) -> bytes:
    rows = [{"id": f"r{i}", "text": f"запись {i} " * (i + 1), "url": f"http://h{i}.example/"}
            for i in range(12)]
    p = tmp / f"v.{fmt}"
    if fmt.startswith("jsonl"):
        write_jsonl(p, rows)
    elif fmt in ("csv", "tsv"):
        write_csv(p, rows, delimiter="," if fmt == "csv" else "\t")
    elif fmt == "parquet":
        write_parquet(p, rows, row_group_size=4)
    elif fmt in ("warc.gz", "warc.wet.gz"):
        write_warc(p, [(r["url"], f"<html><body><p>{r['text']}</p></body></html>".encode(),
                        "text/html") for r in rows], wet=fmt == "warc.wet.gz")
    return p.read_bytes()


_FUZZ_FORMATS = ["jsonl", "jsonl.gz", "jsonl.zst", "csv", "tsv", "parquet", "warc.gz",
                 "warc.wet.gz"]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fmt=st.sampled_from(_FUZZ_FORMATS), cut=st.floats(0, 1),
       flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=4),
       on_error=st.sampled_from(["skip", "fail"]))
def test_damaged_files_never_crash(tmp_path_factory, wet_backend, fmt, cut, flips, on_error):
    tmp = tmp_path_factory.mktemp("z")
    data = bytearray(_valid_bytes(fmt, tmp))
    for where, byte in flips:
        data[min(int(where * len(data)), len(data) - 1)] = byte
    data = bytes(data[: int(cut * len(data))])
    p = tmp / f"damaged.{fmt}"
    p.write_bytes(data)
    stats = ReadStats()
    try:
        recs = list(read_corpus([p], stats=stats, on_error=on_error))
    except InputError as exc:
        assert "damaged" in str(exc)  # the message names the file
        return
    for r in recs:
        r.text.encode("utf-8")  # always valid text
        assert isinstance(r.id, str) and r.id
    assert stats.records == len(recs)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_compressed_stream_closes_its_file(tmp_path, suffix):
    import bz2
    import lzma

    from repetend.corpus import read_base
    comp = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[suffix]
    cls = {".gz": read_base._GzipOwning, ".bz2": read_base._Bz2Owning,
           ".xz": read_base._LzmaOwning}[suffix]
    path = tmp_path / f"x.jsonl{suffix}"
    path.write_bytes(comp(b'{"text": "a"}\n'))
    fh = open(path, "rb")
    stream = cls(fh)
    assert stream.read() == b'{"text": "a"}\n'
    stream.close()
    assert fh.closed
