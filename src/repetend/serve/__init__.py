"""``repetend serve``: the index as a small HTTP service (needs the ``serve`` extra:
starlette, uvicorn; httpx for the tests and the load benchmark).

:func:`check_bind` (who may listen where) needs no optional dependency; the app
and the server import Starlette and uvicorn when called.
"""

from __future__ import annotations

from .access import check_bind, is_loopback

__all__ = ["check_bind", "create_app", "is_loopback", "run"]


def create_app(index, **kwargs):
    """See :func:`repetend.serve.app.create_app`."""
    from ..errors import require

    require("starlette", "serve", "repetend serve")
    from .app import create_app as _create

    return _create(index, **kwargs)


def run(index, host: str = "127.0.0.1", port: int = 8000, **kwargs) -> None:
    """Serve *index* with uvicorn (blocking); *kwargs* go to :func:`create_app`.

    Does not check the bind: call :func:`check_bind` first (``repetend serve`` does).
    """
    from ..errors import require

    uvicorn = require("uvicorn", "serve", "repetend serve")
    app = create_app(index, **kwargs)
    uvicorn.run(app, host=host, port=port, log_level="warning")
