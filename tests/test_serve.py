"""The HTTP service: answers, bounded requests, malformed input -> 4xx (never 5xx),
consistent snapshots for queries that run while a batch is added."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("starlette")
pytest.importorskip("httpx")

import warnings  # noqa: E402

with warnings.catch_warnings():  # starlette >= 1.x prefers httpx2 for its TestClient; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from repetend.index import NearDupIndex  # noqa: E402
from repetend.neardup import NearDupConfig  # noqa: E402
from repetend.serve import create_app  # noqa: E402


def _texts(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [f"s{i}" for i in range(800)]
    return [" ".join(rng.choice(words, 40)) for _ in range(n)]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    path = tmp_path_factory.mktemp("srv") / "idx"
    texts = _texts(0, 50)
    NearDupIndex.build(texts, path, NearDupConfig(threshold=0.7))
    app = create_app(path, max_body_bytes=20_000, max_docs=5)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, texts


def test_health_stats_query(served):
    client, texts = served
    r = client.get("/health")
    assert r.status_code == 200 and r.json()["status"] == "ok"
    assert client.get("/stats").json()["documents"] >= 50
    r = client.post("/query", json={"text": texts[7], "limit": 3})
    assert r.status_code == 200
    d = r.json()["documents"][0]
    assert d["near_duplicates"][0]["doc_index"] == 7
    assert d["near_duplicates"][0]["jaccard"] == 1.0
    f = d["near_duplicates"][0]["fragments"][0]
    assert texts[7][f["query_start"]:f["query_end"]] == texts[7]
    r = client.post("/query", json={"texts": texts[:2], "ids": ["x", "y"], "fragments": False})
    assert [x["id"] for x in r.json()["documents"]] == ["x", "y"]


MALFORMED = [
    (b"", 400), (b"{not json", 400), (b"\xff\xfe", 400), (b"[1, 2]", 422), (b"42", 422),
    (b'{"text": 5}', 422), (b'{"texts": "abc"}', 422), (b'{"texts": [1]}', 422),
    (b'{"text": "a", "texts": ["b"]}', 422), (b"{}", 422), (b'{"text": "a", "bogus": 1}', 422),
    (b'{"text": "a", "threshold": 2}', 422), (b'{"text": "a", "threshold": "x"}', 422),
    (b'{"text": "a", "limit": true}', 422), (b'{"text": "a", "limit": 0}', 422),
    (b'{"text": "a", "limit": 100000}', 422), (b'{"text": "a", "fragments": "yes"}', 422),
    (b'{"text": "a", "threshold": NaN}', 422), (b'{"text": "a", "containment": -1}', 422),
    (b'{"texts": ["a","b","c","d","e","f"]}', 413), (b'{"text": "a", "ids": ["x", "y"]}', 422),
]


@pytest.mark.parametrize("body,status", MALFORMED)
def test_malformed_query_gets_4xx_with_message(served, body, status):
    client, _ = served
    r = client.post("/query", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    assert r.json()["error"]


@pytest.mark.parametrize("body,status", [
    (b'{"documents": []}', 422), (b'{"documents": [{"id": "x"}]}', 422),
    (b'{"documents": [{"text": "a", "id": 5}]}', 422), (b'{"documents": "a"}', 422),
    (b'{"documents": [{"text": "a", "extra": 1}]}', 422), (b'{"docs": []}', 422),
    (b'{"documents": [{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}, '
     b'{"text": "e"}, {"text": "f"}]}', 413),
])
def test_malformed_add_gets_4xx(served, body, status):
    client, _ = served
    r = client.post("/add", content=body)
    assert r.status_code == status, r.text
    assert "error" in r.json()


def test_size_limits_and_routing(served):
    client, _ = served
    big = json.dumps({"text": "word " * 10_000}).encode()
    r = client.post("/query", content=big)
    assert r.status_code == 413 and "limit" in r.json()["error"]

    def chunks():  # no Content-Length: the limit is enforced while streaming
        for _ in range(50):
            yield b" " * 1000

    r = client.post("/query", content=chunks())
    assert r.status_code == 413
    r = client.get("/query")
    assert r.status_code == 405 and r.json()["error"]
    r = client.get("/nope")
    assert r.status_code == 404 and "/query" in r.json()["error"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(
                        st.sampled_from(["text", "texts", "ids", "threshold", "limit", "fragments",
                                         "documents", "x"]), c, max_size=4),
                    max_leaves=10),
       st.sampled_from(["/query", "/add"]))
def test_fuzzed_bodies_never_5xx(served, obj, path):
    client, _ = served
    if path == "/add":  # keep the index small: only malformed adds (no string 'text' inside)
        if isinstance(obj, dict) and isinstance(obj.get("documents"), list) and any(
                isinstance(d, dict) and isinstance(d.get("text"), str) for d in obj["documents"]):
            return
    r = client.post(path, content=json.dumps(obj, allow_nan=True).encode())
    assert r.status_code < 500, (obj, r.text)


def test_add_endpoint_reports_duplicates(served):
    client, texts = served
    r = client.post("/add", json={"documents": [{"text": texts[3], "id": "copy3"},
                                                {"text": "fresh words only here and there"}]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["summary"]["documents_added"] == 2
    assert any(p["a_index"] == 3 and p["b"] == "copy3" for p in body["pairs"])
    r = client.post("/query", json={"text": texts[3], "fragments": False})
    assert {m["doc_id"] for m in r.json()["documents"][0]["near_duplicates"]} >= {"3", "copy3"}


def test_concurrent_queries_during_add_see_a_snapshot(tmp_path):
    """A real server on loopback: query threads run while a batch is added; each
    answer is the index before the batch (no match for the new copy) or after it."""
    import httpx
    import uvicorn

    texts = _texts(1, 40)
    new = _texts(2, 5) + [texts[0]]
    NearDupIndex.build(texts, tmp_path / "idx", NearDupConfig(threshold=0.7))
    app = create_app(tmp_path / "idx")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error"))
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    t0 = time.monotonic()
    while not server.started and time.monotonic() - t0 < 30:
        time.sleep(0.02)
    assert server.started
    port = server.servers[0].sockets[0].getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    seen: list[tuple[int, int]] = []
    errors: list = []
    stop = threading.Event()

    def reader():
        with httpx.Client(base_url=base, timeout=30) as c:
            while not stop.is_set():
                r = c.post("/query", json={"text": texts[0], "fragments": False})
                if r.status_code != 200:
                    errors.append(r.text)
                    return
                j = r.json()
                seen.append((j["summary"]["index_documents"],
                             len(j["documents"][0]["near_duplicates"])))

    readers = [threading.Thread(target=reader) for _ in range(3)]
    try:
        for t in readers:
            t.start()
        time.sleep(0.3)
        with httpx.Client(base_url=base, timeout=60) as c:
            r = c.post("/add", json={"documents": [{"text": t} for t in new]})
        assert r.status_code == 200, r.text
        time.sleep(0.3)
    finally:
        stop.set()
        for t in readers:
            t.join()
        server.should_exit = True
        th.join(timeout=30)
    assert not errors
    assert seen and {n for n, _ in seen} <= {40, 46}
    assert all((n == 40 and k == 1) or (n == 46 and k == 2) for n, k in seen)
    assert any(n == 46 for n, _ in seen)


def test_background_merge_after_adds(tmp_path):
    NearDupIndex.build(_texts(5, 10), tmp_path / "idx")
    app = create_app(tmp_path / "idx", max_segments=2)
    with TestClient(app) as client:
        for i in range(3):
            r = client.post("/add", json={"documents": [{"text": t} for t in _texts(10 + i, 3)]})
            assert r.status_code == 200
        stats = client.get("/stats").json()
    assert stats["documents"] == 19
    assert len(stats["segments"]) <= 2
