"""Under ASGI a request hops into a worker thread once (config.handler), and every middleware
still does its work: the security headers, the CSP, CSRF, the session, the user, axes.

Each test sends real ASGI requests to ``config.asgi.application`` (what ``manage.py serve``
runs), not through Django's test client (which is synchronous and never takes that path)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any
from urllib.parse import urlencode

import pytest
from asgiref import sync
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.core.handlers.asgi import ASGIHandler as DjangoASGIHandler
from django.test import override_settings
from django.urls import path

from config.handler import ASGIHandler, split

CSRF = "c" * 32


async def ask(
    app: Any, method: str, url: str, data: dict | None = None, cookies: str = "", csrf: bool = True
) -> tuple[int, dict[str, str], bytes]:
    body = urlencode(data or {}).encode()
    headers = [(b"host", b"testserver"), (b"content-length", str(len(body)).encode())]
    if data is not None:
        headers.append((b"content-type", b"application/x-www-form-urlencoded"))
    if csrf:
        cookies = f"{cookies}; csrftoken={CSRF}" if cookies else f"csrftoken={CSRF}"
        headers += [(b"x-csrftoken", CSRF.encode()), (b"origin", b"http://testserver")]
    if cookies:
        headers.append((b"cookie", cookies.encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": url,
        "raw_path": url.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    sent: list[dict] = []
    never = asyncio.get_running_loop().create_future()
    given = False

    async def receive() -> dict:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body}
        return await never

    async def send(message: dict) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = sent[0]
    out: dict[str, str] = {}
    for k, v in start["headers"]:
        key = k.decode().lower()
        out[key] = f"{out[key]}\n{v.decode()}" if key in out else v.decode()
    return start["status"], out, b"".join(m.get("body", b"") for m in sent[1:])


def test_the_head_of_the_chain_stays_on_the_event_loop(settings) -> None:
    loop, thread = split(list(settings.MIDDLEWARE))
    assert loop == [
        "config.inline.SecurityMiddleware",
        "config.inline.CSPMiddleware",
        "config.security.SecurityHeadersMiddleware",
        "config.static.StaticFilesMiddleware",
        "combat.turns.SceneTurnMiddleware",
    ]
    assert thread[0] == "django.contrib.sessions.middleware.SessionMiddleware"
    assert thread[-1] == "axes.middleware.AxesMiddleware"


seen: list[tuple[str, int]] = []


def recorded(request, pk: int):
    from django.http import HttpResponse

    seen.append(("view", threading.get_ident()))
    return HttpResponse(f"user {request.user.pk}")


urlpatterns = [path("scenes/<int:pk>/recorded/", recorded)]


@pytest.mark.django_db(transaction=True)
@override_settings(ROOT_URLCONF=__name__)
async def test_a_tap_hops_into_a_thread_once_and_keeps_every_promise(monkeypatch) -> None:
    """A logged-in POST to a scene: one ``sync_to_async`` call (Django's handler makes 18),
    the user known, the secure headers on; a POST without the CSRF token is refused."""
    user = await sync_to_async(get_user_model().objects.create_user)("hopper", password="x")
    client = await sync_to_async(_session_for)(user)
    app = ASGIHandler()
    calls: list[str] = []
    original = sync.SyncToAsync.__call__

    async def counted(self, *args, **kwargs):
        calls.append(getattr(self.func, "__name__", "?"))
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(sync.SyncToAsync, "__call__", counted)
    seen.clear()
    status, headers, body = await ask(app, "POST", "/scenes/1/recorded/", {"a": "1"}, client)
    assert (status, body) == (200, f"user {user.pk}".encode())
    assert calls == ["_respond"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["permissions-policy"].startswith("screen-wake-lock")
    assert "no-store" in headers["cache-control"]

    # Django's own handler, for comparison: a hop for nearly every hook
    calls.clear()
    status, _h, _b = await ask(
        DjangoASGIHandler(), "POST", "/scenes/1/recorded/", {"a": "1"}, client
    )
    assert status == 200 and len(calls) > 10

    calls.clear()
    status, _h, _b = await ask(app, "POST", "/scenes/1/recorded/", {"a": "1"}, client, csrf=False)
    assert status == 403  # CSRF
    assert len(seen) == 2  # the refused POST never reached the view


def _session_for(user) -> str:
    from django.test import Client

    c = Client()
    c.force_login(user)
    return f"sessionid={c.cookies['sessionid'].value}"


@pytest.mark.django_db(transaction=True)
async def test_the_request_thread_is_kept_and_its_connection_goes_back(settings) -> None:
    """The request's signals run in its thread: ``request_finished`` returns the database
    connection there (nothing left open), and the thread serves the next request."""
    from django.db import connections

    settings.ROOT_URLCONF = __name__
    user = await sync_to_async(get_user_model().objects.create_user)("keeper", password="x")
    client = await sync_to_async(_session_for)(user)
    app = ASGIHandler()
    seen.clear()
    for _ in range(3):
        status, _h, _b = await ask(app, "POST", "/scenes/1/recorded/", {"a": "1"}, client)
        assert status == 200
    assert len({ident for _v, ident in seen}) == 1  # one thread, kept
    assert len(app._idle) == 1

    def open_connection() -> bool:
        return connections["default"].connection is not None

    executor = app._idle[0]
    assert not await asyncio.get_running_loop().run_in_executor(executor, open_connection)


@pytest.mark.django_db(transaction=True)
async def test_logins_are_still_locked_out_after_too_many_failures(settings) -> None:
    """axes, under ASGI: the sixth wrong password from one address answers 429."""
    settings.AXES_FAILURE_LIMIT = 3
    await sync_to_async(get_user_model().objects.create_user)("locked", password="right-one")
    app = ASGIHandler()
    statuses = []
    for _ in range(4):
        status, _h, _b = await ask(
            app,
            "POST",
            "/accounts/login/",
            {"username": "locked", "password": "wrong", "csrfmiddlewaretoken": CSRF},
        )
        statuses.append(status)
    assert statuses[-1] == 429
    status, _h, _b = await ask(
        app,
        "POST",
        "/accounts/login/",
        {"username": "locked", "password": "right-one", "csrfmiddlewaretoken": CSRF},
    )
    assert status == 429  # locked out, even with the right password
