"""The live server (uvicorn, its own event loop in a thread) and the tests' own event loops
never receive on one channel layer instance at once (channels-redis refuses that)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from config.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)


def _session_cookie(username: str) -> str:
    user = get_user_model().objects.create_user(username=username, password="x" * 12)
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


def _hold_open(live_url: str, cookie: str, hello: list[str], release: threading.Event) -> None:
    from websockets.sync.client import connect

    url = live_url.replace("http://", "ws://") + "/ws/live/"
    with connect(url, origin=live_url, additional_headers={"Cookie": cookie}) as socket:
        hello.append(socket.recv(timeout=10))
        release.wait(timeout=30)


async def test_it_serves_a_test_socket_while_the_live_server_holds_one_open(live_url) -> None:
    cookie = await sync_to_async(_session_cookie)("held")
    hello: list[str] = []
    release = threading.Event()
    holder = threading.Thread(target=_hold_open, args=(live_url, cookie, hello, release))
    holder.start()
    try:
        while holder.is_alive() and not hello:
            await asyncio.sleep(0.05)
        assert hello and 'data-user="held"' in hello[0], "the live server's socket is open"

        cookie = await sync_to_async(_session_cookie)("tested")
        communicator = WebsocketCommunicator(
            application,
            "/ws/live/",
            headers=[
                (b"origin", b"http://localhost:8000"),
                (b"host", b"localhost:8000"),
                (b"cookie", cookie.encode()),
            ],
        )
        connected, _ = await communicator.connect()
        assert connected
        assert 'data-user="tested"' in await communicator.receive_from(timeout=5)
        await communicator.disconnect()
    finally:
        release.set()
        await asyncio.to_thread(holder.join, 10)
