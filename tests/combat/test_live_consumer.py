"""The live websocket, through the real ASGI application (origin check, auth, channel layer)."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from combat.consumers import CLOSE_LOGGED_OUT, CLOSE_NOT_FOUND, CLOSE_UNAUTHENTICATED
from combat.live import fragment_event, user_group
from config.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)

LOCAL_ORIGIN = b"http://localhost:8000"


def _session_cookie(username: str) -> bytes:
    user = get_user_model().objects.create_user(username=username, password="x" * 12)
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def _logged_in_client(username: str) -> tuple[Client, bytes]:
    user = get_user_model().objects.create_user(username=username, password="x" * 12)
    client = Client()
    client.force_login(user)
    return client, f"sessionid={client.cookies['sessionid'].value}".encode()


def _second_session(username: str) -> bytes:
    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def _communicator(
    *, origin: bytes, cookie: bytes | None = None, path: str = "/ws/live/"
) -> WebsocketCommunicator:
    headers = [(b"origin", origin), (b"host", b"localhost:8000")]
    if cookie:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, path, headers=headers)


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


async def test_it_refuses_an_anonymous_visitor_with_a_code_the_browser_sees() -> None:
    # Refused before accept, a browser would see 1006 (and htmx retry forever): the consumer
    # accepts, then closes with its own code.
    communicator = _communicator(origin=LOCAL_ORIGIN)
    connected, _ = await communicator.connect()
    assert connected
    closed = await communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": CLOSE_UNAUTHENTICATED}
    await communicator.disconnect()


async def test_it_closes_an_unknown_path_cleanly() -> None:
    cookie = await sync_to_async(_session_cookie)("wanda")
    communicator = _communicator(origin=LOCAL_ORIGIN, cookie=cookie, path="/ws/nowhere/")
    connected, _ = await communicator.connect()
    assert connected
    closed = await communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": CLOSE_NOT_FOUND}
    await communicator.disconnect()


async def test_it_closes_the_sockets_of_a_session_that_logs_out() -> None:
    client, cookie = await sync_to_async(_logged_in_client)("lotte")
    other_cookie = await sync_to_async(_second_session)("lotte")  # her tablet, still logged in
    phone = _communicator(origin=LOCAL_ORIGIN, cookie=cookie)
    tablet = _communicator(origin=LOCAL_ORIGIN, cookie=other_cookie)
    for socket in (phone, tablet):
        connected, _ = await socket.connect()
        assert connected
        await socket.receive_from(timeout=5)

    response = await sync_to_async(client.post)("/accounts/logout/")
    assert response.status_code == 302

    closed = await phone.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": CLOSE_LOGGED_OUT}
    await phone.disconnect()
    assert await tablet.receive_nothing(timeout=0.5)
    await tablet.disconnect()
