"""Who may reach the service: loopback binds, the bearer token, the start-up check.

No Starlette here: :func:`check_bind` runs before the server (and its optional
dependencies) is started, so that ``repetend serve`` can refuse an unsafe bind
with one ``error:`` line.
"""

from __future__ import annotations

import hmac
import ipaddress

from ..errors import ParameterError

__all__ = ["check_bind", "check_token", "is_loopback", "token_matches"]


def is_loopback(host: str) -> bool:
    """Whether *host* names a loopback interface only.

    Parameters
    ----------
    host : str
        The address the server binds: an IP address (``127.0.0.0/8``, ``::1``, also
        written ``[::1]`` or IPv4-mapped ``::ffff:127.0.0.1``) or ``localhost``.

    Returns
    -------
    bool
        ``False`` for anything else, including ``0.0.0.0``, ``::``, an empty string
        and every other host name (a name is not resolved: it could point anywhere).
    """
    h = host.strip()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    if h.lower().rstrip(".") == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(h)
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool(ip.is_loopback or (mapped is not None and mapped.is_loopback))


def check_token(token: str | None) -> str | None:
    """*token* if it can be sent in an ``Authorization: Bearer`` header, else a ParameterError.

    Parameters
    ----------
    token : str or None
        ``None`` means no token.

    Returns
    -------
    str or None
        The token unchanged.

    Raises
    ------
    ParameterError
        An empty token, or one with characters other than visible ASCII.
    """
    if token is None:
        return None
    if not token:
        raise ParameterError("the token is empty; pass a non-empty --token (or REPETEND_TOKEN)")
    if not all(33 <= ord(ch) <= 126 for ch in token):
        raise ParameterError("the token must be visible ASCII characters without spaces "
                             "(it is sent as 'Authorization: Bearer <token>')")
    return token


def check_bind(host: str, port: int, *, token: str | None, read_only: bool) -> str | None:
    """Decide whether the service may listen on *host*.

    A loopback bind needs nothing (and gets no warning).  Any other bind exposes
    the service to the network: it needs a token (every request but
    ``GET /health`` must then carry it) or ``read_only`` (no ``POST /add``).

    Parameters
    ----------
    host, port : the address the server binds
    token : the bearer token, or None
    read_only : whether ``POST /add`` is disabled

    Returns
    -------
    str or None
        For a non-loopback bind, a one-line warning to print (the address, whether
        writes are enabled, whether a token is required); None for loopback.

    Raises
    ------
    ParameterError
        A non-loopback bind without a token and without ``read_only``, or an unusable token.
    """
    check_token(token)
    if is_loopback(host):
        return None
    where = f"{host}:{port}"
    if token is None and not read_only:
        raise ParameterError(
            f"--host {host} is not a loopback address: anyone who can reach {where} could add "
            f"documents; pass --token TOKEN (or set REPETEND_TOKEN) to require "
            f"'Authorization: Bearer TOKEN', or --read-only to disable POST /add")
    writes = "writes enabled (POST /add)" if not read_only else "read-only (POST /add disabled)"
    auth = ("bearer token required except on GET /health" if token is not None
            else "no token: queries are open")
    return f"serving on {where}, which is not loopback: {writes}; {auth}"


def token_matches(header: bytes | None, token: bytes) -> bool:
    """Whether an ``Authorization`` header value is ``Bearer <token>`` (constant-time compare).

    Parameters
    ----------
    header : the raw header value, or None when the request has none
    token : the expected token, as bytes

    Returns
    -------
    bool
    """
    if not header:
        return False
    scheme, _, cred = header.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return False
    return hmac.compare_digest(cred.strip(), token)
