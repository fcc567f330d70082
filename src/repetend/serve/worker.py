"""One worker process of ``repetend serve --workers N``: serves the app on a listening
socket inherited from the parent (its file descriptor the only argument; the app's
settings, JSON, in the environment variable ``REPETEND_SERVE_WORKER``)."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

from . import WORKER_ENV, create_app

__all__ = ["main"]


def main(argv: list[str]) -> int:
    import uvicorn

    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent stops the workers (SIGTERM)
    settings = json.loads(os.environ.pop(WORKER_ENV))
    sock = socket.socket(fileno=int(argv[0]))
    app = create_app(settings.pop("index"), **settings)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    return 0


if __name__ == "__main__":  # pragma: no cover - started by repetend.serve.run
    sys.exit(main(sys.argv[1:]))
