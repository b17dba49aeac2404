"""The websocket's Origin is compared by scheme, host and port with the host it was opened on
(config/origin.py), through the real ASGI application and table-driven on the check itself.

The cast: a logged-in player whose cookie a page of another origin would ride on.
"""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from config.asgi import application
from config.origin import is_same_origin, parse_origin
from tests.factories import UserFactory

HOST = b"localhost:8000"


def _cookie() -> bytes:
    client = Client()
    client.force_login(UserFactory(username="janet_player"))
    return f"sessionid={client.cookies['sessionid'].value}".encode()


async def _connect(origin: bytes) -> bool:
    cookie = await sync_to_async(_cookie)()
    headers = [(b"origin", origin), (b"host", HOST), (b"cookie", cookie)]
    socket = WebsocketCommunicator(application, "/ws/live/", headers=headers)
    connected, _ = await socket.connect(timeout=5)
    await socket.disconnect()
    return connected


@pytest.mark.django_db(transaction=True)
async def test_it_lets_in_the_pages_own_origin() -> None:
    assert await _connect(b"http://localhost:8000")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "origin",
    [b"http://localhost:9999", b"https://localhost:8000", b"http://localhost", b"null"],
)
async def test_it_refuses_another_port_or_scheme_of_the_same_host(origin) -> None:
    assert not await _connect(origin)


def _scope(origin: str | None, host: str | None, scheme: str = "ws") -> dict:
    headers = []
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    if host is not None:
        headers.append((b"host", host.encode()))
    return {"type": "websocket", "scheme": scheme, "headers": headers}


@pytest.mark.parametrize(
    ("origin", "host", "scheme", "allowed"),
    [
        ("http://localhost:8000", "localhost:8000", "ws", True),
        ("http://LOCALHOST:8000", "localhost:8000", "ws", True),
        ("http://localhost", "localhost:80", "ws", True),  # 80 is http's own port
        ("https://localhost", "localhost", "wss", True),  # behind TLS: uvicorn says wss
        ("https://localhost:443", "localhost", "wss", True),
        ("http://127.0.0.1:8000", "127.0.0.1:8000", "ws", True),
        ("http://localhost:9999", "localhost:8000", "ws", False),  # another port
        ("https://localhost:8000", "localhost:8000", "ws", False),  # another scheme
        ("http://localhost", "localhost", "wss", False),
        ("http://127.0.0.1:8000", "localhost:8000", "ws", False),  # another host
        ("http://evil.example:8000", "evil.example:8000", "ws", False),  # not an allowed host
        ("http://localhost:8000/page", "localhost:8000", "ws", False),
        ("http://localhost:99999", "localhost:99999", "ws", False),  # no such port
        ("file://", "localhost:8000", "ws", False),
        ("null", "localhost:8000", "ws", False),
        (None, "localhost:8000", "ws", False),  # no Origin at all
        ("http://localhost:8000", None, "ws", False),
    ],
)
def test_is_same_origin(origin, host, scheme, allowed, settings) -> None:
    settings.ALLOWED_HOSTS = ["localhost", "127.0.0.1"]
    assert is_same_origin(_scope(origin, host, scheme)) is allowed


def test_it_refuses_two_origin_headers(settings) -> None:
    settings.ALLOWED_HOSTS = ["localhost"]
    scope = _scope("http://localhost:8000", "localhost:8000")
    scope["headers"].append((b"origin", b"http://localhost:9999"))
    assert not is_same_origin(scope)


def test_it_lets_in_an_origin_of_csrf_trusted_origins(settings) -> None:
    """A proxy that reaches the app under another name: the public origin is trusted."""
    settings.ALLOWED_HOSTS = ["app.internal"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://st.example.org"]
    assert is_same_origin(_scope("https://st.example.org", "app.internal:8000"))
    assert not is_same_origin(_scope("https://st.example.org:8443", "app.internal:8000"))


def test_parse_origin() -> None:
    assert parse_origin("http://[::1]:8000") == ("http", "::1", 8000)
    assert parse_origin("ftp://localhost") is None
