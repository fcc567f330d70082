"""A time budget stops the work itself: ``NearDupIndex.query(timeout=)`` checks its
deadline between segments, texts and aligned matches; ``add(timeout=)`` between its
stages, and adds nothing when it stops; the service's ``/query`` and ``/add`` use
them (503, the worker does not run on)."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

from repetend.errors import DeadlineExceeded, ParameterError
from repetend.index import NearDupIndex
from repetend.index import api as index_api
from repetend.index import build as index_build
from repetend.neardup import NearDupConfig


def _texts(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(500)]
    return [" ".join(rng.choice(words, 40)) for _ in range(n)]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """40 documents in 4 segments; the queries are the documents themselves, so every
    query has at least one match whose fragments are aligned."""
    path = tmp_path_factory.mktemp("deadline") / "idx"
    texts = _texts(1, 40)
    NearDupIndex.build(texts, path, NearDupConfig(threshold=0.7), segment_docs=10)
    idx = NearDupIndex.open(path)
    assert idx.n_segments == 4
    return idx, texts


def _slowed(monkeypatch, module, name, seconds):
    """Make module.name sleep *seconds* before each call; return the list of calls."""
    real = getattr(module, name)
    calls = []

    def slow(*a, **kw):
        calls.append(time.monotonic())
        time.sleep(seconds)
        return real(*a, **kw)

    monkeypatch.setattr(module, name, slow)
    return calls


def test_a_generous_timeout_changes_nothing(index):
    idx, texts = index
    a = idx.query(texts[:12], limit=5).to_json()
    b = idx.query(texts[:12], limit=5, timeout=600).to_json()
    for r in (a, b):
        r["summary"].pop("milliseconds")
    assert a == b


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_a_timeout_must_be_positive(index, bad):
    idx, texts = index
    with pytest.raises(ParameterError, match="timeout"):
        idx.query(texts[:1], timeout=bad)
    with pytest.raises(ParameterError, match="timeout"):
        idx.add(["one two three four five six"], timeout=bad)


def test_the_query_stops_between_aligned_matches(index, monkeypatch):
    idx, texts = index
    calls = _slowed(monkeypatch, index_api, "shared_fragments", 0.05)
    t0 = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="the query took longer than its 0.3 s budget"):
        idx.query(texts, timeout=0.3)
    took = time.monotonic() - t0
    assert 3 <= len(calls) <= 8, len(calls)     # 40 matches at least without the deadline
    assert took < 0.6


def test_the_query_stops_between_segments(index, monkeypatch):
    idx, texts = index
    calls = _slowed(monkeypatch, index_build, "_ranges", 0.1)   # 2 tables a segment
    with pytest.raises(DeadlineExceeded):
        idx.query(texts[:2], fragments=False, timeout=0.15)
    assert len(calls) == 2, len(calls)           # the first segment's two tables, then the check


def test_an_add_out_of_time_adds_nothing(tmp_path, monkeypatch):
    path = tmp_path / "idx"
    texts = _texts(2, 20)
    NearDupIndex.build(texts, path, NearDupConfig(threshold=0.7))
    idx = NearDupIndex.open(path)
    before = (idx.n_docs, idx.generation, sorted(p.name for p in (path / "segments").iterdir()))
    _slowed(monkeypatch, index_build, "batch_pairs", 0.4)
    with pytest.raises(DeadlineExceeded, match="adding to the index"):
        idx.add(_texts(3, 5), timeout=0.2)
    again = NearDupIndex.open(path)
    for i in (idx, again):
        assert (i.n_docs, i.generation,
                sorted(p.name for p in (path / "segments").iterdir())) == before
    monkeypatch.undo()
    assert idx.add(_texts(3, 5), timeout=60).summary["documents_after"] == 25   # lock released


def _client(app):
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    return TestClient(app, raise_server_exceptions=False)


def test_the_service_query_worker_stops_at_the_deadline(index, monkeypatch):
    from repetend.serve import create_app

    idx, texts = index
    app = create_app(idx, query_seconds=0.4, warm_up=False)
    with _client(app) as client:
        calls = _slowed(monkeypatch, index_api, "shared_fragments", 0.05)
        r = client.post("/query", json={"texts": texts[:8]})    # one chunk of 8 texts
        assert r.status_code == 503 and "--query-seconds" in r.json()["error"]
        n = len(calls)
        time.sleep(0.5)
        assert len(calls) == n and n <= 10, (n, len(calls))    # the worker stopped, not ran on


def test_the_service_add_has_a_time_budget(tmp_path, monkeypatch):
    from repetend.serve import create_app

    NearDupIndex.build(_texts(4, 20), tmp_path / "idx", NearDupConfig(threshold=0.7))
    app = create_app(tmp_path / "idx", add_seconds=0.3, warm_up=False)
    with _client(app) as client:
        _slowed(monkeypatch, index_build, "batch_pairs", 0.6)
        r = client.post("/add", json={"documents": [{"text": t} for t in _texts(5, 3)]})
        assert r.status_code == 503 and "--add-seconds" in r.json()["error"], r.text
        assert "nothing was added" in r.json()["error"]
        assert client.get("/health").json()["documents"] == 20
        monkeypatch.undo()
        r = client.post("/add", json={"documents": [{"text": t} for t in _texts(5, 3)]})
        assert r.status_code == 200 and client.get("/health").json()["documents"] == 23
