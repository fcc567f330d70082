"""The worker processes reading byte ranges of a gzipped WARC give exactly the
records, counts and messages of one pass over the file in this process: on odd
records (non-HTML, chunked, gzip content-encoding, bad charsets, records
without an id, empty gzip members), on a gzip magic inside a record (a wrong
start, read again), on files cut anywhere, on ranges of any size, and on a
part of the real WARC of the benchmark."""

from __future__ import annotations

import gzip
import io
import os
import random
from concurrent.futures import Future
from pathlib import Path

import pytest

from repetend.corpus import read_warc
from repetend.corpus.record import ReadStats

pytest.importorskip("warcio")
pytest.importorskip("trafilatura")

from test_readers import read, write_warc  # noqa: E402

REAL = Path("/work/data/manuals.warc.gz")


class _Inline:
    """An executor running each task when it is submitted (no fork needed)."""

    def submit(self, fn, *args):
        fut: Future = Future()
        try:
            fut.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - as a pool would hand it over
            fut.set_exception(exc)
        return fut

    def shutdown(self, **kw):
        pass


def _result(path, **kw):
    stats = ReadStats()
    try:
        recs, stats = read(path, stats=stats, **kw)
        out = [(r.id, r.url, r.text, r.record_no, r.source) for r in recs]
    except Exception as exc:  # the same error, too
        out = ("error", type(exc).__name__, str(exc))
    return out, stats.as_dict()


def _both(monkeypatch, path, range_bytes, **kw):
    monkeypatch.setattr(read_warc.WarcReader, "workers", 1)
    serial = _result(path, **kw)
    monkeypatch.setattr(read_warc.WarcReader, "workers", 2)
    monkeypatch.setattr(read_warc.WarcReader, "pool_range_bytes", range_bytes)
    monkeypatch.setattr(read_warc.WarcReader, "_get_pool", lambda self, w: _Inline())
    ranged = _result(path, **kw)
    return serial, ranged


def _odd_warc(path: Path, rng: random.Random, n: int = 40) -> Path:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    inner = io.BytesIO()           # a whole WARC.gz record, to hide inside a payload
    iw = WARCWriter(inner, gzip=True)
    h = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
    body = b"<html><body><p>hidden page</p></body></html>"
    rec = iw.create_warc_record("http://hidden/", "response", payload=io.BytesIO(body),
                                length=len(body), http_headers=h)
    iw.write_record(rec)
    hidden = inner.getvalue()

    with open(path, "wb") as out:
        w = WARCWriter(out, gzip=True)

        def put(rec):
            w.write_record(rec)
            rec.raw_stream.close()

        def response(url, body, headers, status="200 OK", **kw):
            h = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
            put(w.create_warc_record(url, "response", payload=io.BytesIO(body), length=len(body),
                                     http_headers=h, **kw))

        put(w.create_warcinfo_record(path.name, {"software": "repetend-tests"}))
        for i in range(n):
            kind = rng.randrange(12)
            html = (f"<html><head><title>T{i}</title></head><body><nav>Home | Shop</nav><p>Page {i} "
                    + "word " * rng.randrange(0, 300) + "Доставка</p></body></html>").encode()
            url = f"http://s{i % 4}.example/{i}"
            if kind == 0:
                response(url, gzip.compress(html), [("Content-Type", "text/html"),
                                                    ("Content-Encoding", "gzip")])
            elif kind == 1:
                response(url, b"%x\r\n%s\r\n0\r\n\r\n" % (len(html), html),
                         [("Content-Type", "text/html"), ("Transfer-Encoding", "chunked")])
            elif kind == 2:
                response(url, html.decode().encode("cp1251"),
                         [("Content-Type", "text/html; charset=nosuch")])
            elif kind == 3:
                response(url, b"%PDF-1.4 " + os.urandom(200), [("Content-Type", "application/pdf")])
            elif kind == 4:
                response(url, html, [("Content-Type", "text/html")], status="404 Not Found")
            elif kind == 5:   # a stored gzip member holding a whole WARC.gz record
                blob = os.urandom(rng.randrange(100, 3000)) + hidden + os.urandom(500)
                out.write(_stored_record(url, blob, "application/octet-stream"))
            elif kind == 6:
                put(w.create_warc_record(url, "resource", payload=io.BytesIO(html),
                                         length=len(html), warc_content_type="text/html"))
            elif kind == 7:
                req = StatusAndHeaders("GET / HTTP/1.1", [("Host", "x")], is_http_request=True)
                put(w.create_warc_record(url, "request", payload=io.BytesIO(b""), length=0,
                                         http_headers=req))
            elif kind == 8:   # gzip content-encoding that is not gzip: a damaged payload
                response(url, b"\x1f\x8b\x08junk" + html, [("Content-Type", "text/html"),
                                                           ("Content-Encoding", "gzip")])
            elif kind == 9:
                response(url, b"\xff\xfe<html><body>\x00\x00bad", [("Content-Type", "text/html")])
            elif kind == 10:  # no WARC-Record-ID: the id is "{file}:{record_no}"
                h = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
                rec = w.create_warc_record(url, "response", payload=io.BytesIO(html),
                                           length=len(html), http_headers=h)
                rec.rec_headers.remove_header("WARC-Record-ID")
                put(rec)
            else:
                response(url, html, [("Content-Type", "text/html; charset=utf-8")])
            if rng.random() < 0.05:
                out.write(gzip.compress(b""))           # an empty gzip member
    return path


@pytest.mark.parametrize("seed", range(4))
def test_ranges_equal_one_pass_on_odd_records(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    path = _odd_warc(tmp_path / "odd.warc.gz", rng)
    before = read_warc.WarcReader._ranges_redone
    for range_bytes in (600, 2500, 1 << 20):
        serial, ranged = _both(monkeypatch, path, range_bytes)
        assert ranged == serial, range_bytes
        assert isinstance(serial[0], list) and len(serial[0]) > 5
    assert read_warc.WarcReader._ranges_redone >= before   # (counted, see the next test)


def _stored_record(url: str, body: bytes, ctype: str) -> bytes:
    """A response record as one gzip member of stored (not compressed) blocks: the
    bytes of *body* stand in the file as they are."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    raw = io.BytesIO()
    w = WARCWriter(raw, gzip=False)
    h = StatusAndHeaders("200 OK", [("Content-Type", ctype)], protocol="HTTP/1.1")
    w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body),
                                        length=len(body), http_headers=h))
    return gzip.compress(raw.getvalue(), compresslevel=0)


def test_a_gzip_magic_inside_a_record_is_read_again(tmp_path, monkeypatch):
    hidden = _stored_record("http://hidden/", b"<html><body><p>hidden</p></body></html>",
                            "text/html")
    path = tmp_path / "m.warc.gz"
    with open(path, "wb") as out:
        for i in range(6):
            out.write(_stored_record(f"http://x/{i}", os.urandom(3000) + hidden + os.urandom(300),
                                     "application/octet-stream"))
            out.write(_stored_record(f"http://x/p{i}", f"<html><body><p>page {i}</p></body></html>"
                                     .encode(), "text/html"))
    assert path.read_bytes().count(hidden) == 6
    before = read_warc.WarcReader._ranges_redone
    for range_bytes in (500, 2000, 3500):
        serial, ranged = _both(monkeypatch, path, range_bytes)
        assert ranged == serial
        assert [t for _, _, t, _, _ in serial[0]] == [f"page {i}" for i in range(6)]
    assert read_warc.WarcReader._ranges_redone > before      # the wrong starts were noticed


def test_ranges_equal_one_pass_on_cut_files(tmp_path, monkeypatch):
    full = _odd_warc(tmp_path / "full.warc.gz", random.Random(7), n=25).read_bytes()
    rng = random.Random(1)
    cuts = sorted(rng.sample(range(20, len(full)), 25)) + [len(full) - 1, len(full) - 30]
    for cut in cuts:
        p = tmp_path / "cut.warc.gz"
        p.write_bytes(full[:cut])
        for range_bytes in (900, 1 << 20):
            serial, ranged = _both(monkeypatch, p, range_bytes)
            assert ranged == serial, (cut, range_bytes)


def test_not_a_warc_inside_gzip(tmp_path, monkeypatch):
    p = tmp_path / "x.warc.gz"
    p.write_bytes(gzip.compress(b"WARC/1.0\r\nnonsense\r\n\r\n") + gzip.compress(b"junk" * 100))
    serial, ranged = _both(monkeypatch, p, 30)
    assert ranged == serial
    p.write_bytes(gzip.compress(b"\r\n\r\nhello world, not a warc"))
    serial, ranged = _both(monkeypatch, p, 30)
    assert ranged == serial


@pytest.mark.parametrize("on_error", ["skip", "fail"])
def test_ranges_equal_one_pass_with_on_error(tmp_path, monkeypatch, on_error):
    path = _odd_warc(tmp_path / "odd.warc.gz", random.Random(3))
    serial, ranged = _both(monkeypatch, path, 1500, on_error=on_error)
    assert ranged == serial


@pytest.mark.skipif(not REAL.exists(), reason="the benchmark WARC is not here")
@pytest.mark.parametrize("mode", ["all", "main"])
def test_ranges_equal_one_pass_on_the_real_warc(tmp_path, monkeypatch, mode):
    size = 1_500_000 if mode == "all" else 300_000
    p = tmp_path / "real.warc.gz"
    p.write_bytes(REAL.read_bytes()[:size])      # cut inside a record, too
    serial, ranged = _both(monkeypatch, p, 200_000, html=mode)
    assert ranged == serial
    assert len(serial[0]) > 20 and serial[1]["malformed"] == 1
