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
the client streams without a Content-Length), as is the number of documents
per request (``max_docs`` → 413).  Malformed JSON → 400, a body of the wrong
shape or a parameter out of range → 422, each with ``{"error": message}``;
an unexpected failure of a query is reported as 500 only as a last resort.

Consistency: a query takes the index's current snapshot once (one attribute
read) and answers from it (after a ``stat`` of the manifest: a batch added by
another process, e.g. ``repetend index add``, is picked up); ``/add`` runs one at a time (an asyncio lock, plus
the on-disk writer lock) in a worker thread and replaces the snapshot when the
new manifest is in place, so concurrent queries see the index either before
or after the batch, never half of it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from pathlib import Path

from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..errors import RepetendError

__all__ = ["create_app", "MAX_BODY_BYTES", "MAX_DOCS"]

log = logging.getLogger("repetend.serve")

MAX_BODY_BYTES = 4 * 1024 * 1024
MAX_DOCS = 1000


class _HTTPError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _read_json(request: Request, max_bytes: int):
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


def create_app(index, *, max_body_bytes: int = MAX_BODY_BYTES, max_docs: int = MAX_DOCS,
               allow_add: bool = True, max_segments: int | None = 8) -> Starlette:
    """The ASGI app serving *index* (a :class:`NearDupIndex` or the path of one).

    After an ``/add`` that leaves more than ``max_segments`` segments, the newest
    segments are merged in the background (after the answer is sent, still
    serialised with other adds); queries keep answering from their snapshot.
    """
    from ..index import NearDupIndex

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

    def _refresh_and_query(texts, ids, kw):
        if not add_lock.locked():  # see batches added by another process (one stat)
            index.refresh()
        return index.query(texts, ids=ids, **kw)

    async def health(request: Request):
        return JSONResponse({"status": "ok", "documents": index.n_docs,
                             "generation": index.generation})

    async def stats(request: Request):
        return JSONResponse(index.stats())

    async def query(request: Request):
        obj = await _read_json(request, max_body_bytes)
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
        res = await run_in_threadpool(_refresh_and_query, texts, ids, kw)
        return JSONResponse(res.to_json())

    async def add(request: Request):
        if not allow_add:
            raise _HTTPError(403, "this server was started with adding disabled")
        obj = await _read_json(request, max_body_bytes)
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
        async with add_lock:
            base = index.n_docs
            ids = [x if x is not None else str(base + i) for i, x in enumerate(ids)]
            res = await run_in_threadpool(index.add, texts, ids=ids, urls=urls)
        task = None
        if max_segments is not None and index.n_segments > max_segments:
            task = BackgroundTask(compact)
        return JSONResponse({"summary": res.summary, "pairs": res.pairs.to_pylist(),
                             "containment": res.containment.to_pylist()}, background=task)

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
    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})
    app.state.index = index
    return app
