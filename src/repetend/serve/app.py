"""A small HTTP service over a :class:`~repetend.index.NearDupIndex` (Starlette, ASGI).

Endpoints (JSON in, JSON out; schemas in ``docs/persistent-index.md``):

``GET  /health``  ``{"status": "ok", "documents": N, "generation": G}``
``GET  /stats``   the index's :meth:`~repetend.index.NearDupIndex.stats`
``POST /query``   ``{"text": str}`` or ``{"texts": [str, ...]}``, optional ``ids``,
                  ``threshold``, ``containment``, ``fragments`` (bool), ``phrases``
                  (bool), ``limit`` (int), ``min_shared`` (int) → :meth:`QueryResult.to_json`
``POST /add``     ``{"documents": [{"text": str, "id": str?, "url": str?}, ...]}``
                  → ``{"summary": …, "pairs": [...], "containment": [...]}``

Every request body is bounded (``max_body_bytes``; larger → 413, also when
the client streams without a Content-Length), as is its JSON nesting
(``max_depth``, checked on the bytes before parsing → 400), the number of
documents per request (``max_docs`` → 413) and the total tokens of its texts
(``max_tokens`` → 413).  A query's answer is bounded too: ``limit`` × texts at
most ``max_matches`` (→ 413 before any work), the serialized answer at most
``max_answer_bytes`` (→ 413), and its time at most ``query_seconds`` (→ 503).
Malformed JSON → 400, a body of the wrong shape or a parameter out of range →
422, each with ``{"error": message}``; an unexpected failure of a query is
reported as 500 only as a last resort.  With a ``token``, every request except
``GET /health`` needs ``Authorization: Bearer <token>`` (→ 401).

Work off the event loop: a query runs in a worker thread in chunks of texts
(the time budget is checked between chunks, and the handler answers 503 at the
deadline without waiting for the chunk), and its answer is serialized there
too, one document at a time, so ``/health`` stays responsive meanwhile.

Consistency: a query takes the index's current snapshot once (one attribute
read) and answers from it (after a ``stat`` of the manifest: a batch added by
another process, e.g. ``repetend index add``, is picked up); ``/add`` runs one at a time (an asyncio lock, plus
the on-disk writer lock) in a worker thread and replaces the snapshot when the
new manifest is in place, so concurrent queries see the index either before
or after the batch, never half of it.  A query answered in several chunks checks
that every chunk saw the same generation and starts again if an ``/add`` of this
server landed in between.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import re
import threading
import time
from pathlib import Path

import anyio

from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.middleware import Middleware
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import DeadlineExceeded, RepetendError
from ..limits import MAX_SECONDS, SERVE_MAX
from .access import check_token, token_matches

__all__ = sorted(["create_app", "MAX_ANSWER_BYTES", "MAX_BODY_BYTES", "MAX_DEPTH", "MAX_DOCS",
                  "MAX_MATCHES", "MAX_TOKENS", "ADD_SECONDS", "QUERY_SECONDS", "json_depth_exceeds"])

log = logging.getLogger("repetend.serve")

MAX_BODY_BYTES = 4 * 1024 * 1024
MAX_DOCS = 1000
MAX_DEPTH = 64                      # JSON nesting (the bodies need 3)
MAX_TOKENS = 500_000                # total tokens of one request's texts
MAX_MATCHES = 20_000                # limit × texts of one query (the defaults: 20 × 1000)
MAX_ANSWER_BYTES = 16 * 1024 * 1024  # serialized answer of one query
QUERY_SECONDS = 10.0                # time of one query
ADD_SECONDS = 60.0                  # time of one /add (waiting for an earlier one included)
QUERY_THREADS = None                # queries computed at once (None: anyio's 40 worker threads)

_JSON_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)


def json_depth_exceeds(body: bytes, max_depth: int) -> bool:
    """Whether the JSON text *body* nests arrays/objects deeper than *max_depth*.

    A scan of the bytes (strings skipped, brackets counted) that stops at the first
    bracket too deep, so that ``json.loads`` never recurses on a hostile body; a body
    with at most *max_depth* brackets in all is not scanned.  Exact for valid JSON;
    on invalid JSON it may over-count (``json.loads`` rejects that anyway).

    Parameters
    ----------
    body : bytes
    max_depth : int

    Returns
    -------
    bool
    """
    if body.count(b"[") + body.count(b"{") <= max_depth:
        return False
    depth = 0
    for m in _JSON_TOKENS.finditer(body):
        c = m.group()[0]
        if c == 0x5B or c == 0x7B:
            depth += 1
            if depth > max_depth:
                return True
        elif c == 0x5D or c == 0x7D:
            depth -= 1
    return False


class _HTTPError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _read_json(request: Request, max_bytes: int, max_depth: int = MAX_DEPTH):
    length = request.headers.get("content-length")
    if length is not None:
        try:
            n = int(length)
        except ValueError:
            raise _HTTPError(400, "Content-Length is not an integer") from None
        if n > max_bytes:
            raise _HTTPError(413, f"request body of {n} bytes exceeds the limit of {max_bytes} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > max_bytes:
            raise _HTTPError(413, f"request body exceeds the limit of {max_bytes} bytes")
    if not body:
        raise _HTTPError(400, "empty request body; send a JSON object")
    if json_depth_exceeds(bytes(body), max_depth):
        raise _HTTPError(400, f"JSON nested deeper than {max_depth} levels")
    try:
        obj = json.loads(bytes(body).decode("utf-8"))
    except UnicodeDecodeError:
        raise _HTTPError(400, "request body is not UTF-8") from None
    except ValueError as exc:
        raise _HTTPError(400, f"malformed JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise _HTTPError(422, f"expected a JSON object, got {type(obj).__name__}")
    return obj


def _opt(obj: dict, key: str, kind, default=None):
    v = obj.get(key, default)
    if v is None:
        return default
    if kind is float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise _HTTPError(422, f"'{key}' must be a number")
        return float(v)
    if kind is int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise _HTTPError(422, f"'{key}' must be an integer")
        return v
    if kind is bool:
        if not isinstance(v, bool):
            raise _HTTPError(422, f"'{key}' must be true or false")
        return v
    return v


def _strings(v, key: str, max_docs: int) -> list[str]:
    if not isinstance(v, list):
        raise _HTTPError(422, f"'{key}' must be a list of strings")
    if len(v) > max_docs:
        raise _HTTPError(413, f"{len(v)} documents in one request; the limit is {max_docs}")
    for i, t in enumerate(v):
        if not isinstance(t, str):
            raise _HTTPError(422, f"'{key}[{i}]' must be a string, got {type(t).__name__}")
    return v


_QUERY_KEYS = {"text", "texts", "ids", "threshold", "containment", "fragments", "phrases", "limit",
               "min_shared"}

_DUMP = dict(ensure_ascii=False, allow_nan=False, separators=(",", ":"))  # as JSONResponse


class _OutOfTime(Exception):
    """Raised in a worker thread whose request has run out of time (nobody waits for it)."""


class _BearerAuth:
    """ASGI middleware: every HTTP request but ``GET``/``HEAD /health`` carries the token."""

    def __init__(self, app, token: str):
        self.app = app
        self.token = token.encode("ascii")

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and not (scope["path"] == "/health"
                                            and scope["method"] in ("GET", "HEAD")):
            header = next((v for k, v in scope["headers"] if k == b"authorization"), None)
            if not token_matches(header, self.token):
                what = "missing" if header is None else "wrong"
                resp = JSONResponse({"error": f"unauthorized: {what} 'Authorization: Bearer <token>' "
                                              f"header"}, status_code=401,
                                    headers={"WWW-Authenticate": 'Bearer realm="repetend"'})
                await resp(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _merge_summaries(parts: list[dict]) -> dict:
    """One query summary for the chunks of one request (counts added, largest kept)."""
    s = dict(parts[0])
    if len(parts) == 1:
        return s
    for key in ("documents", "candidates", "lsh_candidates", "milliseconds"):
        if key in s:
            s[key] = sum(p[key] for p in parts)
    if isinstance(s.get("lookup"), dict):
        s["lookup"] = {k: (max if k.startswith("largest") else sum)(p["lookup"][k] for p in parts)
                       for k in s["lookup"]}
    s["milliseconds"] = round(s.get("milliseconds", 0.0), 3)
    return s


def create_app(index, *, max_body_bytes: int = MAX_BODY_BYTES, max_docs: int = MAX_DOCS,
               allow_add: bool = True, max_segments: int | None = 8, token: str | None = None,
               max_tokens: int = MAX_TOKENS, max_matches: int = MAX_MATCHES,
               max_answer_bytes: int = MAX_ANSWER_BYTES, query_seconds: float = QUERY_SECONDS,
               add_seconds: float = ADD_SECONDS, query_threads: int | None = QUERY_THREADS,
               max_depth: int = MAX_DEPTH, warm_up: bool = True) -> Starlette:
    """The ASGI app serving *index* (a :class:`NearDupIndex` or the path of one).

    After an ``/add`` that leaves more than ``max_segments`` segments, the newest
    segments are merged in the background (after the answer is sent, still
    serialised with other adds); queries keep answering from their snapshot.

    Parameters
    ----------
    index : NearDupIndex or path
    max_body_bytes, max_docs : bounds of a request body and of its documents (413)
    allow_add : False disables ``POST /add`` (403)
    max_segments : merge the newest segments in the background above this many
    token : with a token, every request except ``GET /health`` needs
        ``Authorization: Bearer <token>`` (401), compared in constant time
    max_tokens : most tokens in all texts of one request (413)
    max_matches : most ``limit`` × texts of one query (413, before any work)
    max_answer_bytes : most bytes of a query's serialized answer (413)
    query_seconds : time budget of one query (503 when exceeded); the query itself
        stops at its next check (:meth:`NearDupIndex.query`'s ``timeout``)
    query_threads : at most this many queries are computed at once, the others wait
        (in their time budget); None: as many as anyio's worker threads (40)
    add_seconds : time budget of one ``/add``, waiting for an earlier add included
        (503 when exceeded, and nothing is added: :meth:`NearDupIndex.add`'s ``timeout``)
    max_depth : deepest JSON nesting of a body (400)
    warm_up : at start-up (the ASGI lifespan), run one query and one alignment of a
        long text so that the compiled kernels are loaded (or compiled, the first time
        on a machine) before the first request, not inside its time budget
    """
    from ..index import NearDupIndex, shared_fragments, tokens_of

    token = check_token(token)
    for name, v in (("max_body_bytes", max_body_bytes), ("max_docs", max_docs),
                    ("max_tokens", max_tokens), ("max_matches", max_matches),
                    ("max_answer_bytes", max_answer_bytes), ("max_depth", max_depth),
                    ("max_segments", 1 if max_segments is None else max_segments)):
        hi = SERVE_MAX[name]
        if isinstance(v, bool) or not 1 <= int(v) <= hi:
            raise RepetendError(f"{name} must be in 1..{hi}, got {v}")
    for name, v in (("query_seconds", query_seconds), ("add_seconds", add_seconds)):
        if isinstance(v, bool) or not 0 < float(v) <= MAX_SECONDS:
            raise RepetendError(f"{name} must be in (0, {MAX_SECONDS:g}], got {v}")
    if query_threads is not None and (isinstance(query_threads, bool)
                                      or not 1 <= int(query_threads) <= SERVE_MAX["query_threads"]):
        raise RepetendError(f"query_threads must be in 1..{SERVE_MAX['query_threads']}, "
                            f"got {query_threads}")
    limiter = None if query_threads is None else anyio.CapacityLimiter(int(query_threads))
    if not isinstance(index, NearDupIndex):
        index = NearDupIndex.open(Path(index))
    add_lock = asyncio.Lock()

    def guard(handler):
        async def wrapped(request: Request):
            try:
                return await handler(request)
            except _HTTPError as exc:
                return _error(exc.status, exc.message)
            except RepetendError as exc:
                return _error(422, str(exc))
            except Exception as exc:  # a bug: still a JSON answer, and the server keeps serving
                log.exception("unexpected error in %s", request.url.path)
                return _error(500, f"internal error ({type(exc).__name__}); see the server log")
        return wrapped

    def count_tokens(texts, stop=None):
        total = 0
        for t in texts:
            if stop is not None and stop():
                raise _OutOfTime
            total += int(tokens_of(t, index.unit, index.lang).hashes.size)
            if total > max_tokens:
                raise _HTTPError(413, f"the texts of this request hold more than {max_tokens:,} tokens; "
                                      f"the limit is {max_tokens:,} (--max-tokens)")
        return total

    def run_query(texts, ids, kw, stop):
        """In a worker thread: token budget, the query in chunks, the answer as bytes."""
        count_tokens(texts, stop)
        if not add_lock.locked():  # see batches added by another process (one stat)
            index.refresh()
        for _attempt in range(3):
            docs, parts, i, size = [], [], 0, 8
            while i < len(texts):
                if stop():
                    raise _OutOfTime
                t0 = time.perf_counter()
                try:
                    r = index.query(texts[i:i + size], ids=None if ids is None else ids[i:i + size],
                                    timeout=max(stop.left(), 1e-3), **kw)
                except DeadlineExceeded:
                    raise _OutOfTime from None
                dt = time.perf_counter() - t0
                docs.extend(r.documents)
                parts.append(r.summary)
                i += size
                size = min(size * 2, 256) if dt < 0.1 else max(size // 2, 1) if dt > 0.5 else size
            gens = {(p["generation"], p["index_documents"]) for p in parts}
            if len(gens) <= 1:
                break
        else:
            raise _HTTPError(503, "the index changed during the query three times; try again")
        if not parts:  # no texts: still one answer of the index's shape
            r = index.query([], ids=ids, **kw)
            parts = [r.summary]
        out = bytearray(b'{"documents":[')
        for j, d in enumerate(docs):
            if stop():
                raise _OutOfTime
            if j:
                out += b","
            out += json.dumps(d, **_DUMP).encode("utf-8")
            if len(out) > max_answer_bytes:
                raise _HTTPError(413, f"the answer exceeds {max_answer_bytes:,} bytes (--max-answer-bytes); "
                                      f"ask for fewer texts, a smaller 'limit' or 'fragments': false")
        out += b'],"summary":' + json.dumps(_merge_summaries(parts), **_DUMP).encode("utf-8") + b"}"
        if len(out) > max_answer_bytes:
            raise _HTTPError(413, f"the answer exceeds {max_answer_bytes:,} bytes (--max-answer-bytes)")
        return bytes(out)

    async def in_time(fn, *args, seconds: float):
        """Run *fn(*args, stop)* in a worker thread; 503 when *seconds* pass first (the
        thread is told to stop at its next check and its result is dropped)."""
        cancelled = threading.Event()
        deadline = time.monotonic() + seconds

        def stop() -> bool:
            return cancelled.is_set() or time.monotonic() > deadline

        stop.left = lambda: deadline - time.monotonic()   # seconds left, for index.query

        with anyio.move_on_after(max(deadline - time.monotonic(), 0.0)):
            try:
                return await anyio.to_thread.run_sync(fn, *args, stop, abandon_on_cancel=True,
                                                      limiter=limiter)
            except _OutOfTime:
                pass
        cancelled.set()
        raise _HTTPError(503, f"the query took longer than the {query_seconds:g} s budget "
                              f"(--query-seconds); send fewer texts, a smaller 'limit' or 'fragments': false")

    def warm() -> None:
        words = [f"w{i % 97}" for i in range(600)]
        short, long = (tokens_of(" ".join(words[:n]), index.unit, index.lang) for n in (50, 600))
        for other in (short, long):  # both alignment paths (a short and a long other text)
            shared_fragments(short, other, int(index.config.shingle), unit=index.unit, lang=index.lang)
        text = index.text(0) if index.n_docs else long.text
        index.query([text], fragments=True, phrases=True, min_shared=1)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        if warm_up:
            t0 = time.perf_counter()
            await anyio.to_thread.run_sync(warm)
            log.info("kernels ready in %.1f s", time.perf_counter() - t0)
        yield

    async def health(request: Request):
        return JSONResponse({"status": "ok", "documents": index.n_docs,
                             "generation": index.generation})

    async def stats(request: Request):
        return JSONResponse(index.stats())

    async def query(request: Request):
        started = time.monotonic()
        obj = await _read_json(request, max_body_bytes, max_depth)
        unknown = set(obj) - _QUERY_KEYS
        if unknown:
            raise _HTTPError(422, f"unknown field(s) {', '.join(sorted(unknown))}; "
                                  f"allowed: {', '.join(sorted(_QUERY_KEYS))}")
        if ("text" in obj) == ("texts" in obj):
            raise _HTTPError(422, "give exactly one of 'text' (a string) or 'texts' (a list of strings)")
        if "text" in obj:
            if not isinstance(obj["text"], str):
                raise _HTTPError(422, "'text' must be a string")
            texts = [obj["text"]]
        else:
            texts = _strings(obj["texts"], "texts", max_docs)
        ids = obj.get("ids")
        if ids is not None:
            ids = _strings(ids, "ids", max_docs)
        kw = dict(threshold=_opt(obj, "threshold", float), containment=_opt(obj, "containment", float),
                  fragments=_opt(obj, "fragments", bool, True), phrases=_opt(obj, "phrases", bool, True),
                  limit=_opt(obj, "limit", int, 20), min_shared=_opt(obj, "min_shared", int, 3))
        if kw["limit"] > 1000:
            raise _HTTPError(422, "'limit' must be at most 1000")
        if ids is not None and len(ids) != len(texts):
            raise _HTTPError(422, f"{len(ids)} ids for {len(texts)} texts")
        if kw["limit"] >= 1 and kw["limit"] * len(texts) > max_matches:
            raise _HTTPError(413, f"'limit' × texts = {kw['limit'] * len(texts):,} exceeds {max_matches:,} "
                                  f"(--max-matches); send fewer texts or a smaller 'limit'")
        left = query_seconds - (time.monotonic() - started)
        body = await in_time(run_query, texts, ids, kw, seconds=left)
        return Response(body, media_type="application/json")

    async def add(request: Request):
        if not allow_add:
            raise _HTTPError(403, "this server was started with adding disabled")
        started = time.monotonic()
        obj = await _read_json(request, max_body_bytes, max_depth)
        docs = obj.get("documents")
        if set(obj) - {"documents"}:
            raise _HTTPError(422, "unknown field(s) " + ", ".join(sorted(set(obj) - {"documents"})))
        if not isinstance(docs, list) or not docs:
            raise _HTTPError(422, "'documents' must be a non-empty list of {\"text\", \"id\"?, \"url\"?}")
        if len(docs) > max_docs:
            raise _HTTPError(413, f"{len(docs)} documents in one request; the limit is {max_docs}")
        texts, ids, urls = [], [], []
        base = None
        for i, d in enumerate(docs):
            if not isinstance(d, dict) or not isinstance(d.get("text"), str):
                raise _HTTPError(422, f"documents[{i}] must be an object with a string 'text'")
            extra = set(d) - {"text", "id", "url"}
            if extra:
                raise _HTTPError(422, f"documents[{i}]: unknown field(s) {', '.join(sorted(extra))}")
            for key in ("id", "url"):
                if d.get(key) is not None and not isinstance(d[key], str):
                    raise _HTTPError(422, f"documents[{i}].{key} must be a string")
            texts.append(d["text"])
            ids.append(d.get("id"))
            urls.append(d.get("url"))
        deadline = started + add_seconds
        late = _HTTPError(503, f"the add took longer than the {add_seconds:g} s budget "
                               f"(--add-seconds); nothing was added: send fewer documents")
        try:
            await run_in_threadpool(count_tokens, texts, lambda: time.monotonic() > deadline)
            await asyncio.wait_for(add_lock.acquire(), max(deadline - time.monotonic(), 1e-3))
        except (_OutOfTime, asyncio.TimeoutError):
            raise late from None
        try:
            base = index.n_docs
            ids = [x if x is not None else str(base + i) for i, x in enumerate(ids)]
            res = await run_in_threadpool(index.add, texts, ids=ids, urls=urls,
                                          timeout=max(deadline - time.monotonic(), 1e-3))
        except DeadlineExceeded:
            raise late from None
        finally:
            add_lock.release()
        task = None
        if max_segments is not None and index.n_segments > max_segments:
            task = BackgroundTask(compact)

        def answer() -> bytes:
            return json.dumps({"summary": res.summary, "pairs": res.pairs.to_pylist(),
                               "containment": res.containment.to_pylist()}, **_DUMP).encode("utf-8")

        body = await run_in_threadpool(answer)
        return Response(body, media_type="application/json", background=task)

    async def compact():
        async with add_lock:
            n = index.n_segments
            if max_segments is not None and n > max_segments:
                await run_in_threadpool(index.merge, n - max_segments + 1)

    async def not_allowed(request: Request, exc):
        return _error(405, f"method {request.method} not allowed here")

    async def not_found(request: Request, exc):
        return _error(404, f"no endpoint {request.url.path}; endpoints: /health, /stats, /query, /add")

    routes = [Route("/health", guard(health), methods=["GET"]),
              Route("/stats", guard(stats), methods=["GET"]),
              Route("/query", guard(query), methods=["POST"]),
              Route("/add", guard(add), methods=["POST"])]
    middleware = [Middleware(_BearerAuth, token=token)] if token is not None else []
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan,
                    exception_handlers={404: not_found, 405: not_allowed})
    app.state.index = index
    return app
