"""The live websocket, through the real ASGI application (origin check, auth, channel layer)."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from combat.consumers import CLOSE_UNAUTHENTICATED
from combat.live import fragment_event, user_group
from config.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)

LOCAL_ORIGIN = b"http://localhost:8000"


def _session_cookie(username: str) -> bytes:
    user = get_user_model().objects.create_user(username=username, password="x" * 12)
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def _communicator(*, origin: bytes, cookie: bytes | None = None) -> WebsocketCommunicator:
    headers = [(b"origin", origin), (b"host", b"localhost:8000")]
    if cookie:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, "/ws/live/", headers=headers)


async def test_it_connects_a_logged_in_user_and_sends_the_current_state() -> None:
    cookie = await sync_to_async(_session_cookie)("janet")
    communicator = _communicator(origin=LOCAL_ORIGIN, cookie=cookie)
    connected, _ = await communicator.connect()
    assert connected
    hello = await communicator.receive_from(timeout=5)
    assert 'id="live-status"' in hello
    assert 'data-user="janet"' in hello
    await communicator.disconnect()


async def test_it_relays_a_fragment_sent_through_the_channel_layer() -> None:
    cookie = await sync_to_async(_session_cookie)("cody")
    user_id = await sync_to_async(lambda: get_user_model().objects.get(username="cody").pk)()
    communicator = _communicator(origin=LOCAL_ORIGIN, cookie=cookie)
    connected, _ = await communicator.connect()
    assert connected
    await communicator.receive_from(timeout=5)  # the state sent on connect

    html = '<div id="prompt" hx-swap-oob="true">Janet challenges you</div>'
    await get_channel_layer().group_send(user_group(user_id), fragment_event(html))
    assert await communicator.receive_from(timeout=5) == html
    await communicator.disconnect()


async def test_it_does_not_relay_another_users_fragments() -> None:
    cookie = await sync_to_async(_session_cookie)("frank")
    other = await sync_to_async(get_user_model().objects.create_user)(username="teddy")
    communicator = _communicator(origin=LOCAL_ORIGIN, cookie=cookie)
    await communicator.connect()
    await communicator.receive_from(timeout=5)
    await get_channel_layer().group_send(user_group(other.pk), fragment_event("<p>secret</p>"))
    assert await communicator.receive_nothing(timeout=0.5)
    await communicator.disconnect()


async def test_it_refuses_a_foreign_origin() -> None:
    cookie = await sync_to_async(_session_cookie)("paulo")
    communicator = _communicator(origin=b"http://evil.example", cookie=cookie)
    connected, _ = await communicator.connect()
    assert not connected
    await communicator.disconnect()


async def test_it_refuses_an_anonymous_visitor() -> None:
    communicator = _communicator(origin=LOCAL_ORIGIN)
    connected, code = await communicator.connect()
    assert not connected
    assert code == CLOSE_UNAUTHENTICATED
    await communicator.disconnect()
