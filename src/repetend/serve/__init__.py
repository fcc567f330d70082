"""``repetend serve``: the index as a small HTTP service (needs the ``serve`` extra:
starlette, uvicorn; httpx for the tests and the load benchmark).

:func:`check_bind` (who may listen where) needs no optional dependency; the app
and the server import Starlette and uvicorn when called.
"""

from __future__ import annotations

from .access import check_bind, is_loopback

__all__ = ["WORKER_ENV", "check_bind", "create_app", "is_loopback", "run"]

WORKER_ENV = "REPETEND_SERVE_WORKER"   # a worker's settings, JSON (repetend.serve.worker)


def create_app(index, **kwargs):
    """See :func:`repetend.serve.app.create_app`."""
    from ..errors import require

    require("starlette", "serve", "repetend serve")
    from .app import create_app as _create

    return _create(index, **kwargs)


def run(index, host: str = "127.0.0.1", port: int = 8000, *, workers: int = 1, **kwargs) -> None:
    """Serve *index* with uvicorn (blocking); *kwargs* go to :func:`create_app`.

    With ``workers`` > 1 the listening socket is opened here and that many worker
    processes are started to accept on it, each with its own app (its own snapshot of
    the index, refreshed before each query: an ``/add`` in one worker is seen by the
    others at their next query; adds of different workers wait for each other on the
    index's writer lock).  SIGTERM or SIGINT stops them all; when one worker dies the
    others are stopped too.

    Does not check the bind: call :func:`check_bind` first (``repetend serve`` does).
    """
    from ..errors import require

    uvicorn = require("uvicorn", "serve", "repetend serve")
    if int(workers) <= 1:
        app = create_app(index, **kwargs)
        uvicorn.run(app, host=host, port=port, log_level="warning")
        return
    _run_workers(uvicorn, index, host, port, int(workers), kwargs)


def _run_workers(uvicorn, index, host: str, port: int, workers: int, kwargs: dict) -> None:
    """Open the socket, start *workers* fresh interpreters accepting on it
    (:mod:`repetend.serve.worker`; not forks: the parent has loaded OpenMP, which
    does not survive a fork), wait for them."""
    import json
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time

    from ..index import NearDupIndex

    path = index.path if isinstance(index, NearDupIndex) else index
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    env = dict(os.environ)   # the settings (a token among them) in the environment, not argv
    env[WORKER_ENV] = json.dumps({"index": str(path), **kwargs})
    children = [subprocess.Popen([sys.executable, "-m", "repetend.serve.worker", str(sock.fileno())],
                                 pass_fds=[sock.fileno()], env=env) for _ in range(workers)]
    sock.close()

    def stop(*_):
        for c in children:
            if c.poll() is None:
                c.terminate()

    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        while all(c.poll() is None for c in children):
            time.sleep(0.2)
        stop()   # one worker ended: the others follow (a partial service would hide it)
        for c in children:
            c.wait()
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
