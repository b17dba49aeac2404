"""A new password, a deactivated or a deleted account closes that user's sockets, as logging
out does; the browser the password was changed from reconnects its own (its session got a new key).

Over the real ASGI application with Channels' communicator. The cast: ``player`` plays Janet,
in the scene, with a phone (a scene socket and a page's live socket) logged in on one session
and a laptop on another; ``storyteller`` runs the scene and must not be disturbed.
"""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from combat.consumers import CLOSE_LOGGED_OUT, CLOSE_RECONNECT, CLOSE_UNAUTHENTICATED
from config.asgi import application
from tests.conftest import client_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("stop_the_hub"),
]

WAIT = 5
NEW_PASSWORD = "a new and long passphrase 81"


async def _open(path: str, client: Client) -> WebsocketCommunicator:
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    headers = [(b"origin", b"http://localhost:8000"), (b"host", b"localhost:8000")]
    socket = WebsocketCommunicator(application, path, headers=[*headers, (b"cookie", cookie)])
    connected, _ = await socket.connect(timeout=WAIT)
    assert connected
    await socket.receive_from(timeout=WAIT)  # the whole state
    return socket


async def _sockets(path: str, user) -> tuple[Client, WebsocketCommunicator, WebsocketCommunicator]:
    """A client logged in as ``user`` with a scene socket and a live socket."""
    client = await sync_to_async(client_for)(user)
    return client, await _open(path, client), await _open("/ws/live/", client)


async def _closed(socket: WebsocketCommunicator) -> int | None:
    message = await socket.receive_output(timeout=WAIT)
    while message["type"] == "websocket.send":  # a push that was on its way
        message = await socket.receive_output(timeout=WAIT)
    await socket.disconnect()
    return message.get("code")


async def _still_open(*sockets: WebsocketCommunicator) -> None:
    """Nothing but pushes (presence moves when the others close) for a while."""
    for socket in sockets:
        while not await socket.receive_nothing(timeout=0.5):
            assert (await socket.receive_output())["type"] == "websocket.send"
        await socket.disconnect()


def _set_password(user) -> None:
    user = get_user_model().objects.get(pk=user.pk)
    user.set_password(NEW_PASSWORD)
    user.save()


async def test_it_closes_every_socket_of_a_user_whose_password_is_set_elsewhere(
    scene, player, storyteller
) -> None:
    """``manage.py changepassword`` or the admin: no session of hers holds any more."""
    _client, phone, page = await _sockets(f"/ws/scenes/{scene.pk}/", player)
    _st, tablet, st_page = await _sockets(f"/ws/scenes/{scene.pk}/", storyteller)

    await sync_to_async(_set_password)(player)

    assert await _closed(phone) == CLOSE_LOGGED_OUT
    assert await _closed(page) == CLOSE_LOGGED_OUT
    await _still_open(tablet, st_page)


async def test_a_password_changed_on_one_device_closes_the_others_only(scene, player) -> None:
    player.set_password("the old password 1234")
    await sync_to_async(player.save)()
    laptop, laptop_phone, laptop_page = await _sockets(f"/ws/scenes/{scene.pk}/", player)
    _phone_client, phone, page = await _sockets(f"/ws/scenes/{scene.pk}/", player)

    response = await sync_to_async(laptop.post)(
        "/accounts/password_change/",
        {
            "old_password": "the old password 1234",
            "new_password1": NEW_PASSWORD,
            "new_password2": NEW_PASSWORD,
        },
    )
    assert response.status_code == 302, response.content[:500]

    assert await _closed(phone) == CLOSE_LOGGED_OUT
    assert await _closed(page) == CLOSE_LOGGED_OUT
    # The laptop's session got a new key with the new password: its sockets reconnect (a code
    # the page retries) and are let in again with the laptop's cookie.
    assert await _closed(laptop_phone) == CLOSE_RECONNECT
    assert await _closed(laptop_page) == CLOSE_RECONNECT
    await _still_open(await _open(f"/ws/scenes/{scene.pk}/", laptop))


async def test_it_closes_the_sockets_of_a_deactivated_account(scene, player) -> None:
    _client, phone, page = await _sockets(f"/ws/scenes/{scene.pk}/", player)

    player.is_active = False
    await sync_to_async(player.save)()

    assert await _closed(phone) == CLOSE_LOGGED_OUT
    assert await _closed(page) == CLOSE_LOGGED_OUT


async def test_it_closes_the_sockets_of_a_deleted_account(scene, player) -> None:
    _client, phone, page = await _sockets(f"/ws/scenes/{scene.pk}/", player)

    await sync_to_async(player.delete)()

    assert await _closed(phone) == CLOSE_LOGGED_OUT
    assert await _closed(page) == CLOSE_LOGGED_OUT


async def test_other_changes_to_the_account_leave_its_sockets_open(scene, player) -> None:
    client, phone, page = await _sockets(f"/ws/scenes/{scene.pk}/", player)
    player.first_name = "Janet"
    await sync_to_async(player.save)()
    await sync_to_async(client.login)(username=player.username, password="nope")  # a failure
    await _still_open(phone, page)


async def test_a_socket_of_a_deactivated_account_is_refused_though_its_session_is_known(
    scene, player
) -> None:
    """A socket's connect reads the user with the session (config/auth.py) once this process
    knows whose the session is: that row still says who may come in. A deactivation (without
    the signal that closes open sockets) keeps the next socket out."""
    from config import auth

    client, phone, page = await _sockets(f"/ws/scenes/{scene.pk}/", player)
    await _still_open(phone, page)
    assert auth.owner(client.cookies["sessionid"].value) == player.pk  # the joined read
    await sync_to_async(get_user_model().objects.filter(pk=player.pk).update)(is_active=False)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    headers = [(b"origin", b"http://localhost:8000"), (b"host", b"localhost:8000")]
    socket = WebsocketCommunicator(
        application, f"/ws/scenes/{scene.pk}/", headers=[*headers, (b"cookie", cookie)]
    )
    await socket.connect(timeout=WAIT)
    assert await _closed(socket) == CLOSE_UNAUTHENTICATED
