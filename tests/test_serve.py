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


# -- a service safe to expose: JSON nesting, access, work budgets -------------------------

from repetend.errors import ParameterError  # noqa: E402
from repetend.serve import check_bind, is_loopback  # noqa: E402
from repetend.serve.app import json_depth_exceeds  # noqa: E402


@pytest.fixture(scope="module")
def idx_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("budget") / "idx"
    texts = _texts(3, 60)
    NearDupIndex.build(texts, path, NearDupConfig(threshold=0.7), postings=True)
    return path, texts


def test_json_depth_scan():
    assert not json_depth_exceeds(b'{"a": [[1], {"b": [2]}]}', 4)
    assert json_depth_exceeds(b'{"a": [[1], {"b": [[2]]}]}', 4)
    assert not json_depth_exceeds(b'{"t": "[[[[[[{{{{\\"[[[["}', 2)  # brackets in strings do not count
    assert json_depth_exceeds(b"[" * 100_000, 64)
    assert not json_depth_exceeds(b"[" * 64 + b"]" * 64, 64)
    assert json_depth_exceeds(b"[" * 65 + b"]" * 65, 64)


@pytest.mark.parametrize("body", [b"[" * 100_000, b'{"a":' * 100_000,
                                  b'{"text": "a", "ids": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"])
def test_deep_nesting_is_400_not_500(idx_path, body):
    app = create_app(idx_path[0], max_body_bytes=1 << 20)
    with TestClient(app, raise_server_exceptions=False) as client:
        for path in ("/query", "/add"):
            t0 = time.perf_counter()
            r = client.post(path, content=body)
            assert r.status_code == 400, r.text
            assert "nested deeper than 64" in r.json()["error"]
            assert time.perf_counter() - t0 < 5


def test_nesting_at_the_bound_is_parsed(idx_path):
    app = create_app(idx_path[0], max_depth=5)
    with TestClient(app) as client:
        ok = b'{"text": "a", "ids": [[[["x"]]]]}'  # depth 5: parsed, then the wrong shape -> 422
        assert client.post("/query", content=ok).status_code == 422
        deep = b'{"text": "a", "ids": [[[[["x"]]]]]}'
        r = client.post("/query", content=deep)
        assert r.status_code == 400 and "5 levels" in r.json()["error"]
        r = client.post("/query", json={"text": "[" * 1000 + " s1 s2 s3"})  # in a string: fine
        assert r.status_code == 200


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LocalHost",
                                  "::ffff:127.0.0.1"])
def test_loopback_hosts_need_nothing(host):
    assert is_loopback(host)
    assert check_bind(host, 8000, token=None, read_only=False) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "192.168.1.5", "10.0.0.1", "example.com",
                                  "localhost.example.com", "::ffff:10.0.0.1"])
def test_non_loopback_needs_token_or_read_only(host):
    assert not is_loopback(host)
    with pytest.raises(ParameterError, match="--token.*--read-only"):
        check_bind(host, 8000, token=None, read_only=False)
    w = check_bind(host, 8000, token="t0ken", read_only=False)
    assert f"{host}:8000" in w and "writes enabled" in w and "token required" in w
    w = check_bind(host, 8000, token=None, read_only=True)
    assert "read-only" in w and "no token" in w


@pytest.mark.parametrize("token", ["", "has space", "tab\tx", "é"])
def test_unusable_tokens_are_refused(token):
    with pytest.raises(ParameterError):
        check_bind("0.0.0.0", 80, token=token, read_only=False)


def test_cli_refuses_an_open_non_loopback_bind(idx_path, monkeypatch):
    from click.testing import CliRunner

    import repetend.serve
    from repetend.cli import main

    calls = []
    monkeypatch.setattr(repetend.serve, "run", lambda idx, **kw: calls.append(kw))
    runner = CliRunner()
    r = runner.invoke(main, ["serve", str(idx_path[0]), "--host", "0.0.0.0"],
                      env={"REPETEND_TOKEN": None})
    assert r.exit_code == 2 and not calls
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "--token" in lines[0]
    assert "Traceback" not in r.output
    r = runner.invoke(main, ["serve", str(idx_path[0]), "--host", "0.0.0.0", "--port", "9"],
                      env={"REPETEND_TOKEN": "from-the-env"})
    assert r.exit_code == 0, r.output
    assert calls[-1]["token"] == "from-the-env" and calls[-1]["allow_add"] is True
    warn = [ln for ln in r.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warn) == 1 and "0.0.0.0:9" in warn[0] and "writes enabled" in warn[0]
    assert "from-the-env" not in r.output  # the token is never printed
    r = runner.invoke(main, ["serve", str(idx_path[0]), "--host", "0.0.0.0", "--read-only"],
                      env={"REPETEND_TOKEN": None})
    assert r.exit_code == 0 and calls[-1]["token"] is None and calls[-1]["allow_add"] is False
    assert "read-only" in r.stderr
    r = runner.invoke(main, ["serve", str(idx_path[0])], env={"REPETEND_TOKEN": None})
    assert r.exit_code == 0 and calls[-1]["token"] is None and "warning" not in r.stderr
    r = runner.invoke(main, ["serve", "--help"])
    for opt in ("--token", "REPETEND_TOKEN", "--max-tokens", "--max-matches", "--max-answer-bytes",
                "--query-seconds"):
        assert opt in r.output


def test_bearer_token(idx_path, monkeypatch):
    import hmac

    import repetend.serve.access as access

    compared = []
    real = hmac.compare_digest

    def spy(a, b):
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(access.hmac, "compare_digest", spy)
    texts = idx_path[1]
    app = create_app(idx_path[0], token="s3cret-Token")
    good = {"Authorization": "Bearer s3cret-Token"}
    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/health").status_code == 200  # open: for load balancers
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Bearer s3cret-Toke"},
                        {"Authorization": "Basic s3cret-Token"}, {"Authorization": "s3cret-Token"},
                        {"Authorization": ""}):
            for method, path in (("POST", "/query"), ("POST", "/add"), ("GET", "/stats"),
                                 ("GET", "/nope")):
                r = client.request(method, path, json={"text": texts[0]}, headers=headers)
                assert r.status_code == 401, (headers, path, r.text)
                assert "unauthorized" in r.json()["error"]
                assert r.headers["www-authenticate"].startswith("Bearer")
        assert client.get("/stats", headers=good).status_code == 200
        r = client.post("/query", json={"text": texts[0], "fragments": False}, headers=good)
        assert r.status_code == 200 and r.json()["documents"][0]["near_duplicates"]
        r = client.post("/query", json={"text": texts[0]}, headers={"authorization": "bearer s3cret-Token"})
        assert r.status_code == 200
    assert compared and all(b == b"s3cret-Token" for _, b in compared)


def test_token_budget(tmp_path):
    texts = _texts(4, 10)
    NearDupIndex.build(texts, tmp_path / "idx")
    app = create_app(tmp_path / "idx", max_tokens=100)
    with TestClient(app) as client:
        assert client.post("/query", json={"texts": texts[:2]}).status_code == 200  # 80 tokens
        r = client.post("/query", json={"texts": texts[:3]})  # 120 tokens
        assert r.status_code == 413 and "100 tokens" in r.json()["error"]
        assert "--max-tokens" in r.json()["error"]
        r = client.post("/add", json={"documents": [{"text": t} for t in _texts(5, 3)]})
        assert r.status_code == 413 and "--max-tokens" in r.json()["error"]
        assert client.get("/health").json()["documents"] == 10  # nothing was added
        assert client.post("/add", json={"documents": [{"text": _texts(6, 1)[0]}]}).status_code == 200


def test_answer_budgets(idx_path):
    path, texts = idx_path
    app = create_app(path, max_matches=20, max_answer_bytes=1300)  # answers: 0.96 kB / 1.6 kB
    with TestClient(app) as client:
        r = client.post("/query", json={"texts": texts[:3], "limit": 7})
        assert r.status_code == 413 and "--max-matches" in r.json()["error"] and "21" in r.json()["error"]
        assert client.post("/query", json={"texts": texts[:2], "limit": 10,
                                            "fragments": False}).status_code == 200
        r = client.post("/query", json={"texts": texts[:2], "limit": 10})  # fragments hold the texts
        assert r.status_code == 413 and "--max-answer-bytes" in r.json()["error"]


def test_time_budget_answers_503_at_the_deadline(idx_path):
    path, texts = idx_path
    app = create_app(path, query_seconds=0.3)
    with TestClient(app) as client:
        index = app.state.index
        real = index.query
        ran = []

        def slow(*a, **kw):  # one chunk of work that outlasts the budget
            ran.append(1)
            time.sleep(1.2)
            return real(*a, **kw)

        index.query = slow
        try:
            t0 = time.perf_counter()
            r = client.post("/query", json={"texts": texts[:40], "fragments": False})
            took = time.perf_counter() - t0
            assert r.status_code == 503 and "--query-seconds" in r.json()["error"]
            assert took < 0.9  # answered at the deadline, not when the chunk ends
            assert client.get("/health").status_code == 200
            time.sleep(1.5)
            assert len(ran) == 1  # the worker stopped at its next check instead of running on
        finally:
            del index.query


def test_query_answer_serialized_off_the_event_loop(idx_path, monkeypatch):
    import asyncio

    path, texts = idx_path
    app = create_app(path)
    seen = []
    dumps = json.dumps

    def spy(obj, *a, **kw):
        if isinstance(obj, dict) and ("near_duplicates" in obj or "documents" in obj):
            try:
                asyncio.get_running_loop()
                seen.append("loop")
            except RuntimeError:
                seen.append("worker")
        return dumps(obj, *a, **kw)

    with TestClient(app) as client:
        monkeypatch.setattr(json, "dumps", spy)
        r = client.post("/query", json={"texts": texts[:3]})
        assert r.status_code == 200
        r = client.post("/add", json={"documents": [{"text": "one more short text here and there"}]})
        assert r.status_code == 200
    assert seen and set(seen) == {"worker"}, seen


def test_chunked_query_equals_one_call(idx_path):
    path, texts = idx_path
    queries = texts[:30] + _texts(9, 15)
    app = create_app(path, query_seconds=60)
    with TestClient(app) as client:
        r = client.post("/query", json={"texts": queries, "ids": [f"q{i}" for i in range(45)],
                                        "limit": 5, "min_shared": 1})
        assert r.status_code == 200
        got = r.json()
        want = app.state.index.query(queries, ids=[f"q{i}" for i in range(45)], limit=5,
                                     min_shared=1).to_json()
    assert got["documents"] == json.loads(json.dumps(want["documents"]))
    for s in (got["summary"], want["summary"]):
        s.pop("milliseconds")
    assert got["summary"] == want["summary"]


def test_chunks_see_one_generation(tmp_path):
    """An /add of this server landing between two chunks of a query: the query starts
    again, so the whole answer is from one snapshot."""
    texts = _texts(7, 30)
    NearDupIndex.build(texts, tmp_path / "idx")
    app = create_app(tmp_path / "idx", query_seconds=60)
    with TestClient(app) as client:
        index = app.state.index
        real = index.query
        calls = []

        def query_then_add(*a, **kw):
            res = real(*a, **kw)
            calls.append(1)
            if len(calls) == 1:
                index.add([texts[0]], ids=["late"])
            return res

        index.query = query_then_add
        try:
            r = client.post("/query", json={"texts": texts, "fragments": False})
        finally:
            del index.query
    assert r.status_code == 200
    j = r.json()
    assert j["summary"]["index_documents"] == 31 and j["summary"]["documents"] == 30
    assert "late" in {m["doc_id"] for m in j["documents"][0]["near_duplicates"]}
