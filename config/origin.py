"""The websocket's ``Origin``, compared by scheme, host and port with the request's own host.

Channels' ``AllowedHostsOriginValidator`` lets in any origin whose host name is allowed,
whatever its port or scheme: ``http://localhost:9999`` (another program on the machine, or a
page a phone opened elsewhere on the venue's LAN) could open a socket with the player's
cookie. Here the origin must be the very origin the page was served from: the ``Host`` the
socket was opened on (itself one of ``ALLOWED_HOSTS``), with ``http`` for ``ws`` and ``https``
for ``wss`` (uvicorn sets the scheme from ``X-Forwarded-Proto`` behind a proxy it trusts), or
exactly one of ``CSRF_TRUSTED_ORIGINS``. A socket without an ``Origin`` is refused too.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

Origin = tuple[str, str, int]
DEFAULT_PORTS = {"http": 80, "https": 443}


def parse_origin(text: str) -> Origin | None:
    """``"http://Host:8000"`` → ``("http", "host", 8000)``; None for anything else."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    return parts.scheme, parts.hostname.lower(), port or DEFAULT_PORTS[parts.scheme]


def _allowed_hosts() -> list[str]:
    # Django's own fallback for an empty ALLOWED_HOSTS under DEBUG (HttpRequest.get_host).
    if settings.DEBUG and not settings.ALLOWED_HOSTS:
        return [".localhost", "127.0.0.1", "[::1]"]
    return list(settings.ALLOWED_HOSTS)


def is_same_origin(scope: dict[str, Any]) -> bool:
    """Whether the socket's ``Origin`` is the origin of the host it was opened on."""
    origins = [v for k, v in scope.get("headers", []) if k == b"origin"]
    hosts = [v for k, v in scope.get("headers", []) if k == b"host"]
    if len(origins) != 1 or len(hosts) != 1:
        return False
    origin = parse_origin(origins[0].decode("latin1"))
    host = hosts[0].decode("latin1")
    domain, _port = split_domain_port(host)
    if origin is None or not domain or not validate_host(domain, _allowed_hosts()):
        return False
    scheme = "https" if scope.get("scheme") == "wss" else "http"
    if origin == parse_origin(f"{scheme}://{host}"):
        return True
    return origin in {parse_origin(o) for o in settings.CSRF_TRUSTED_ORIGINS}


class SameOriginValidator:
    """ASGI middleware: a websocket from another origin is refused at the handshake."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not is_same_origin(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
