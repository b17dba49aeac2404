"""The scene socket (/ws/scenes/<pk>/) through the real ASGI application: who may open it,
the whole state on connect, pushes by audience and region, presence, logout and removal, and
the sync test (a phone's state plus the pushes equals a fresh render)."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connection
from django.test import Client
from django.test.html import Element
from django.test.utils import CaptureQueriesContext

from characters.services import ledger_spend
from combat import fragments, hub, live, selectors, services
from combat.consumers import (
    CLOSE_FORBIDDEN,
    CLOSE_LOGGED_OUT,
    CLOSE_NOT_FOUND,
    CLOSE_UNAUTHENTICATED,
)
from combat.models import Participant, Presence, Scene
from config.asgi import application
from tests.conftest import client_for
from tests.factories import CharacterFactory, ChronicleFactory, StorytellerFactory
from tests.live_pages import apply, as_shown, pieces

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("stop_the_hub"),
]

HEADERS = [(b"origin", b"http://localhost:8000"), (b"host", b"localhost:8000")]
WAIT = 5  # seconds a condition may take before the test fails


@pytest.fixture
def stranger_st(db):  # storytells another chronicle
    other = StorytellerFactory(username="stranger_st")
    ChronicleFactory(name="Someone Else's Chronicle").storytellers.add(other)
    return other


@pytest.fixture
def cody(other_player):  # other_player's character, in another chronicle
    return CharacterFactory(name="Cody", player=other_player)


def _cookie(client: Client) -> bytes:
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def _socket(pk: object, client: Client | None = None) -> WebsocketCommunicator:
    headers = list(HEADERS)
    if client is not None:
        headers.append((b"cookie", _cookie(client)))
    return WebsocketCommunicator(application, f"/ws/scenes/{pk}/", headers=headers)


async def _open(pk: object, user=None) -> tuple[WebsocketCommunicator, str]:
    client = await sync_to_async(client_for)(user) if user is not None else None
    socket = _socket(pk, client)
    connected, _ = await socket.connect(timeout=WAIT)
    assert connected
    return socket, await socket.receive_from(timeout=WAIT)


async def _closed_with(socket: WebsocketCommunicator) -> int:
    message = await socket.receive_output(timeout=WAIT)
    assert message["type"] == "websocket.close", message
    await socket.disconnect()
    return message["code"]


# Who may open it -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "outcome"),
    [
        ("storyteller", "board"),
        ("player", "phone"),
        ("stranger_st", CLOSE_FORBIDDEN),
        ("other_player", CLOSE_FORBIDDEN),
        ("visitor", CLOSE_UNAUTHENTICATED),
    ],
)
async def test_it_lets_in_the_scenes_storytellers_and_players_only(
    role, outcome, scene, storyteller, player, stranger_st, other_player, cody
) -> None:
    user = {
        "storyteller": storyteller,
        "player": player,
        "stranger_st": stranger_st,
        "other_player": other_player,
        "visitor": None,
    }[role]
    client = await sync_to_async(client_for)(user) if user is not None else None
    socket = _socket(scene.pk, client)
    connected, _ = await socket.connect(timeout=WAIT)
    assert connected  # refusals are accepted, then closed with a code the browser sees
    if isinstance(outcome, int):
        assert await _closed_with(socket) == outcome
        assert await sync_to_async(Presence.objects.count)() == 0
        return
    state = await socket.receive_from(timeout=WAIT)
    if outcome == "board":
        assert state.lstrip().startswith('<div id="scene-board"')
        assert "scene-private" not in state
    else:
        assert state.lstrip().startswith('<section id="scene-public"')
        assert 'id="scene-private"' in state and "scene-board" not in state
    assert f'data-seq="{scene.seq}"' in state
    assert await sync_to_async(Presence.objects.filter(scene=scene, user=user).count)() == 1
    await socket.disconnect()


@pytest.mark.parametrize("path", ["999999", "abc", "12x", "99999999999999999999999", "-1"])
async def test_it_closes_a_socket_for_no_scene_with_4404(path, storyteller) -> None:
    client = await sync_to_async(client_for)(storyteller)
    socket = _socket(path, client)
    connected, _ = await socket.connect(timeout=WAIT)
    assert connected
    assert await _closed_with(socket) == CLOSE_NOT_FOUND


async def test_it_refuses_a_removed_player(scene, storyteller, player) -> None:
    participant = await sync_to_async(scene.participants.get)()
    await sync_to_async(services.scene_remove)(scene=scene, by=storyteller, participant=participant)
    client = await sync_to_async(client_for)(player)
    socket = _socket(scene.pk, client)
    await socket.connect(timeout=WAIT)
    assert await _closed_with(socket) == CLOSE_FORBIDDEN


# Pushes ------------------------------------------------------------------------------------


async def _until(socket: WebsocketCommunicator, needle: str) -> list[str]:
    """Messages until one holds ``needle`` (every message read is returned)."""
    seen = []
    while True:
        message = await socket.receive_from(timeout=WAIT)
        seen.append(message)
        if needle in message:
            return seen


async def test_it_pushes_a_clock_change_as_the_clock_and_log_regions(
    scene, storyteller, player
) -> None:
    tablet, _ = await _open(scene.pk, storyteller)
    phone, _ = await _open(scene.pk, player)
    await sync_to_async(services.scene_advance_clock)(scene=scene, by=storyteller, seconds=60)
    seq = scene.seq + 1
    pushed = (await _until(tablet, "1m 00s"))[-1]
    assert f'data-seq="{seq}"' in pushed and "1m 00s" in pushed
    assert 'id="log-panel"' in pushed
    assert 'id="people-panel"' not in pushed and 'id="scene-board"' not in pushed
    assert len(pushed) < len(await sync_to_async(fragments.storyteller_state)(scene))
    public = (await _until(phone, f'data-seq="{seq}"'))[-1]
    assert public.lstrip().startswith('<section id="scene-public"') and "1m 00s" in public
    await tablet.disconnect()
    await phone.disconnect()


async def test_it_tells_the_board_who_connected_and_who_left(scene, storyteller, player) -> None:
    tablet, state = await _open(scene.pk, storyteller)
    assert "0 of 1 phones connected" in state
    phone, _ = await _open(scene.pk, player)
    await _until(tablet, "1 of 1 phones connected")
    await phone.disconnect()
    await _until(tablet, "0 of 1 phones connected")
    assert await sync_to_async(Presence.objects.filter(user=player).count)() == 0
    await tablet.disconnect()


async def test_it_pushes_a_cost_to_the_players_phone_without_a_scene_change(
    scene, storyteller, player, character
) -> None:
    phone, state = await _open(scene.pk, player)
    assert "3<small>/3</small>" in state
    sheet_seq = await sync_to_async(selectors.sheet_seq)(scene, [character.pk])
    await sync_to_async(ledger_spend)(
        character=character, kind="willpower_spent", amount=1, by=storyteller, reason="frenzy"
    )
    private = (await _until(phone, 'id="scene-private"'))[-1]
    assert "2<small>/3</small>" in private
    # Not a scene change: the scene's seq stays (no gap, no stale storyteller tap) and the
    # sheets' own counter moved on.
    assert f'data-seq="{scene.seq}"' in private
    assert f'data-sheet-seq="{sheet_seq}"' not in private
    assert await sync_to_async(lambda: Scene.objects.get(pk=scene.pk).seq)() == scene.seq
    await phone.disconnect()


async def test_it_closes_the_socket_of_a_session_that_logs_out(scene, player) -> None:
    client = await sync_to_async(client_for)(player)
    socket = _socket(scene.pk, client)
    await socket.connect(timeout=WAIT)
    await socket.receive_from(timeout=WAIT)
    await sync_to_async(client.post)("/accounts/logout/")
    assert await _closed_with(socket) == CLOSE_LOGGED_OUT


async def test_it_shows_a_removed_player_the_removal_then_closes(
    scene, storyteller, player
) -> None:
    phone, _ = await _open(scene.pk, player)
    participant = await sync_to_async(scene.participants.get)()
    await sync_to_async(services.scene_remove)(scene=scene, by=storyteller, participant=participant)
    private = await _until(phone, 'id="scene-private"')
    assert "out of this scene" in private[-1]
    while True:  # whatever else was on its way, then the close
        message = await phone.receive_output(timeout=WAIT)
        if message["type"] == "websocket.close":
            assert message["code"] == CLOSE_FORBIDDEN
            break
    await phone.disconnect()


# The sync test: the state a phone holds after the pushes is a fresh render ----------------


_pieces, _apply, _as_shown = pieces, apply, as_shown


async def _drain_until_equal(socket, page: list[Element], pk: int, fresh) -> None:
    """Apply pushes until the page equals a fresh render (or fail after WAIT seconds)."""
    seq, want = 0, ""
    try:
        async with asyncio.timeout(WAIT):
            while True:
                seq = await sync_to_async(lambda: Scene.objects.get(pk=pk).seq)()
                want = _as_shown(_pieces(await sync_to_async(fresh)()), seq)
                if _as_shown(page, seq) == want:
                    return
                _apply(page, await socket.receive_from(timeout=WAIT))
    except TimeoutError:
        assert _as_shown(page, seq) == want  # shows the difference


async def test_a_phone_and_a_tablet_that_apply_the_pushes_equal_a_fresh_render(
    scene, storyteller, player, character, chronicle
) -> None:
    tablet, board_html = await _open(scene.pk, storyteller)
    phone, phone_html = await _open(scene.pk, player)
    board, page = _pieces(board_html), _pieces(phone_html)

    def fresh_board() -> str:
        return fragments.storyteller_state(Scene.objects.get(pk=scene.pk))

    def fresh_phone() -> str:
        fresh = Scene.objects.get(pk=scene.pk)
        return fragments.players_state(fresh) + fragments.private_state(fresh, player)

    sophia = await sync_to_async(CharacterFactory)(chronicle=chronicle, name="Sophia")
    steps = [
        lambda: services.scene_advance_clock(scene=scene, by=storyteller, seconds=60),
        lambda: services.scene_set_situation(scene=scene, by=storyteller, situation="Sirens"),
        lambda: services.scene_add_npc(scene=scene, by=storyteller, name="Lurker", hidden=True),
        lambda: services.scene_add_npc(scene=scene, by=storyteller, name="Bouncer"),
        lambda: services.scene_join(code=scene.join_code, user=sophia.player, character=sophia),
        lambda: services.scene_add_npc(scene=scene, by=storyteller, name="Doorman"),
        lambda: services.scene_remove(
            scene=scene, by=storyteller, participant=Participant.objects.get(name="Doorman")
        ),
        lambda: ledger_spend(character=character, kind="willpower_spent", amount=1, by=storyteller),
        lambda: services.scene_advance_clock(scene=scene, by=storyteller, seconds=900),
        lambda: services.scene_set_ruleset(scene=scene, by=storyteller, ruleset="wod_dice"),
    ]
    for step in steps:
        await sync_to_async(step)()
        await _drain_until_equal(tablet, board, scene.pk, fresh_board)
        await _drain_until_equal(phone, page, scene.pk, fresh_phone)
    shown_board, shown_phone = _as_shown(board, 0), _as_shown(page, 0)
    assert "Lurker" not in shown_phone and "Bouncer" in shown_phone and "Lurker" in shown_board
    assert "Doorman" not in shown_phone  # removed: gone from the phones' targets too
    assert "Sirens" in shown_phone and "16m 00s" in shown_phone and "Sophia" in shown_board
    await tablet.disconnect()
    await phone.disconnect()


# Cost of a broadcast -------------------------------------------------------------------------


def _scene_with(chronicle, storyteller, size: int) -> Scene:
    scene = services.scene_open(chronicle=chronicle, by=storyteller, name=f"Size {size}")
    for i in range(size):
        character = CharacterFactory(chronicle=chronicle, name=f"PC {size}-{i}")
        services.scene_join(code=scene.join_code, user=character.player, character=character)
    return Scene.objects.get(pk=scene.pk)


def test_a_broadcast_costs_the_same_queries_for_3_or_30_participants(
    chronicle, storyteller, django_assert_num_queries
) -> None:
    counts = []
    for size in (3, 30):
        scene = _scene_with(chronicle, storyteller, size)
        with CaptureQueriesContext(connection) as captured:
            live.scene_changed(scene.pk)  # every region, the public part
        counts.append(len(captured))
    assert counts[0] == counts[1]


async def test_one_layer_message_per_audience_reaches_the_process_whatever_the_phones(
    scene, storyteller, chronicle, monkeypatch
) -> None:
    """Nine phones of three players and the tablet: a change is one layer message per
    audience for this process, and every socket of the audience gets it."""
    monkeypatch.setattr(live, "presence_changed", lambda scene_id: None)  # only the change
    players = []
    for i in range(3):
        character = await sync_to_async(CharacterFactory)(chronicle=chronicle, name=f"P{i}")
        await sync_to_async(services.scene_join)(
            code=scene.join_code, user=character.player, character=character
        )
        players.append(character.player)
    phones = [(await _open(scene.pk, players[i % 3]))[0] for i in range(9)]
    tablet, _ = await _open(scene.pk, storyteller)
    the_hub = hub.get_hub()
    await sync_to_async(services.scene_set_situation)(scene=scene, by=storyteller, situation="Hi")
    seq = await sync_to_async(lambda: Scene.objects.get(pk=scene.pk).seq)()
    for phone in phones:
        await _until(phone, f'data-seq="{seq}"')
    await _until(tablet, f'data-seq="{seq}"')
    before = the_hub.delivered
    await sync_to_async(services.scene_set_situation)(scene=scene, by=storyteller, situation="Yo")
    for phone in phones:
        await _until(phone, f'data-seq="{seq + 1}"')
    await _until(tablet, f'data-seq="{seq + 1}"')
    assert the_hub.delivered - before == 2  # the storytellers' and the players' message
    for socket in [*phones, tablet]:
        await socket.disconnect()


# Presence of a process that is gone ---------------------------------------------------------


def test_the_heartbeat_forgets_the_sockets_of_a_process_that_is_gone(scene, player) -> None:
    from datetime import timedelta

    from django.utils import timezone

    gone = Presence.objects.create(scene=scene, user=player, channel_name="dead-host.1.ab.cd")
    Presence.objects.filter(pk=gone.pk).update(
        connected_at=timezone.now() - timedelta(seconds=hub.STALE_AFTER + 1)
    )
    assert player.pk not in selectors.connected_user_ids(scene)  # not shown even before
    mine = Presence.objects.create(scene=scene, user=player, channel_name=hub.new_socket_id())
    Presence.objects.filter(pk=mine.pk).update(connected_at=timezone.now() - timedelta(hours=1))
    assert hub.heartbeat() == [scene.pk]  # this process's row is touched, not deleted
    assert Presence.objects.filter(pk=gone.pk).exists() is False
    assert Presence.objects.filter(pk=mine.pk).exists()
    assert player.pk in selectors.connected_user_ids(scene)


def test_the_heartbeat_deletes_the_rows_of_its_own_sockets_it_no_longer_serves(
    scene, player
) -> None:
    """A socket that failed before it could clean up: its process's heartbeat forgets it."""
    served = Presence.objects.create(scene=scene, user=player, channel_name=hub.new_socket_id())
    leaked = Presence.objects.create(scene=scene, user=player, channel_name=hub.new_socket_id())
    assert hub.heartbeat({served.channel_name}) == [scene.pk]
    assert Presence.objects.filter(pk=leaked.pk).exists() is False
    assert Presence.objects.filter(pk=served.pk).exists()


# A push lost for good (its process killed between the commit and the publish) -------------


async def test_a_socket_whose_push_was_lost_gets_the_whole_state_again(
    scene, storyteller, player, monkeypatch
) -> None:
    """Nothing published the change (as a process killed right after its commit): the hub
    finds the tablet and the phone behind the database and sends each the whole state."""
    tablet, _ = await _open(scene.pk, storyteller)
    phone, _ = await _open(scene.pk, player)
    await _until(tablet, "1 of 1 phones connected")  # the presence push, which carries the seq
    with monkeypatch.context() as lost:
        lost.setattr(live, "scene_changed", lambda *args, **kwargs: None)
        await sync_to_async(services.scene_set_situation)(
            scene=scene, by=storyteller, situation="Nobody was told"
        )
    state = (await _until(tablet, "Nobody was told"))[-1]
    assert state.lstrip().startswith('<div id="scene-board"')  # the whole board again
    assert f'data-seq="{scene.seq + 1}"' in state
    public = (await _until(phone, "Nobody was told"))[-1]
    assert 'id="scene-private"' in public  # the phone's whole state: both parts
    await tablet.disconnect()
    await phone.disconnect()


async def test_a_presence_push_does_not_count_as_the_change_it_did_not_carry(
    scene, storyteller, player, monkeypatch
) -> None:
    """The board's regions carry the seq they were rendered at: a presence push after a lost
    change has the new seq but not the change, and the board is still caught up."""
    tablet, _ = await _open(scene.pk, storyteller)
    with monkeypatch.context() as lost:
        lost.setattr(live, "scene_changed", lambda *args, **kwargs: None)
        await sync_to_async(services.scene_advance_clock)(scene=scene, by=storyteller, seconds=600)
    phone, _ = await _open(scene.pk, player)  # its presence push: the people region, new seq
    await _until(tablet, "1 of 1 phones connected")
    state = (await _until(tablet, "10m 00s"))[-1]
    assert state.lstrip().startswith('<div id="scene-board"')
    await tablet.disconnect()
    await phone.disconnect()


async def test_a_phone_whose_sheet_push_was_lost_gets_the_whole_state_again(
    scene, storyteller, player, character, monkeypatch
) -> None:
    """A cost is not a scene change (no seq): its push lost, the phone is behind by its
    data-sheet-seq, and the hub sends it the whole state."""
    phone, state = await _open(scene.pk, player)
    assert "3<small>/3</small>" in state
    with monkeypatch.context() as lost:
        lost.setattr(live, "sheets_changed", lambda *args, **kwargs: None)
        await sync_to_async(ledger_spend)(
            character=character, kind="willpower_spent", amount=1, by=storyteller, reason="lost"
        )
    state = (await _until(phone, "2<small>/3</small>"))[-1]
    assert state.lstrip().startswith('<section id="scene-public"')  # the whole state again
    assert f'data-seq="{scene.seq}"' in state  # the scene did not move
    await phone.disconnect()


def _change_for(scene, by, user_ids) -> None:
    from django.db import transaction

    with transaction.atomic():
        locked = services.lock_open_scene(scene)
        services.record_change(locked, by=by, regions=(), private_user_ids=user_ids)


async def test_a_phone_whose_own_part_was_lost_but_not_the_public_one_gets_the_whole_state(
    scene, storyteller, player, monkeypatch
) -> None:
    """The change's private push lost, its public part (the players' seq) delivered: the
    phone is at the new seq with an old prompt, and the hub sends it the whole state."""
    phone, _ = await _open(scene.pk, player)
    kept = live._send
    with monkeypatch.context() as lost:
        lost.setattr(live, "_send", lambda g, html: None if ".user." in g else kept(g, html))
        await sync_to_async(_change_for)(scene, storyteller, [player.pk])
    public = (await _until(phone, 'id="scene-public"'))[-1]
    assert 'id="scene-private"' not in public  # the public push, at the new seq
    state = (await _until(phone, 'id="scene-private"'))[-1]
    assert state.lstrip().startswith('<section id="scene-public"')  # the whole state again
    await phone.disconnect()
