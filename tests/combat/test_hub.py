"""The per-process hub (combat/hub.py): one layer subscription per audience per process, one
layer message per audience per process, whatever the number of sockets.

Two hubs on two layer instances stand for two server processes. On channels-redis (when
REDIS_URL is set) the instances share Redis as two processes would; the in-memory layer has
one process only, so there the two hubs share one instance.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer

from combat import live
from combat.hub import SHARED, Hub

WAIT = 5


class Socket:
    """A stand-in for a SceneConsumer: it notes what the hub hands it."""

    def __init__(self) -> None:
        self.got: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()

    def hub_message(self, message: dict[str, Any]) -> None:
        self.got.append(message)
        self.arrived.set()


def _redis_layer(prefix: str):
    from channels_redis.core import RedisChannelLayer

    return RedisChannelLayer(
        hosts=[{"address": os.environ["REDIS_URL"], "socket_timeout": 15}], prefix=prefix
    )


def _project_layer(prefix: str):
    from config.layers import RedisChannelLayer

    return RedisChannelLayer(
        hosts=[{"address": os.environ["REDIS_URL"], "socket_timeout": 15}], prefix=prefix
    )


def _layers(kind: str) -> tuple[Any, Any, Any]:
    """Two processes' layers and a third, the sender's (a sync view's). ``redis``:
    channels-redis's own; ``project``: config.layers' (a hub's channel of its own, read in
    batches; publishing in one round trip)."""
    if kind == "memory":
        shared = InMemoryChannelLayer()
        return shared, shared, shared
    if not os.environ.get("REDIS_URL"):
        pytest.skip("REDIS_URL is not set: the channels-redis hub tests need Redis")
    prefix = f"hubtest-{uuid.uuid4().hex[:8]}"
    make = _project_layer if kind == "project" else _redis_layer
    return make(prefix), make(prefix), make(prefix)


async def _until(predicate, what: str) -> None:
    async with asyncio.timeout(WAIT):
        while not predicate():
            await asyncio.sleep(0.01)  # polling a condition, not a timed wait


@pytest.mark.parametrize("kind", ["memory", "redis", "project"])
async def test_two_processes_get_one_layer_message_per_audience_each(kind) -> None:
    first_layer, second_layer, sender = _layers(kind)
    first, second = Hub(first_layer), Hub(second_layer)
    players = live.players_group(1)
    storytellers = live.storytellers_group(1)
    phones_a = [Socket() for _ in range(25)]
    phones_b = [Socket() for _ in range(15)]
    tablet = Socket()
    try:
        for phone in phones_a:
            await first.subscribe(phone, [players])
        for phone in phones_b:
            await second.subscribe(phone, [players])
        await second.subscribe(tablet, [storytellers])
        assert first.groups == [players] and second.groups == sorted([players, storytellers])

        await sender.group_send(players, live.fragment_event('<p data-seq="7">x</p>', players))
        await sender.group_send(storytellers, live.fragment_event("<p>st</p>", storytellers))
        everyone = [*phones_a, *phones_b, tablet]
        await _until(lambda: all(s.got for s in everyone), "every socket has its push")

        if kind != "memory":  # each process read one message per audience it serves
            assert (first.delivered, second.delivered) == (1, 2)
            # and the group holds one channel per process, not one per socket
            members = await _group_members(sender, players)
            assert members == sorted([first.channel, second.channel])
        else:
            assert first.delivered + second.delivered == 3
        assert all(len(s.got) == 1 for s in everyone)
        assert tablet.got[0]["html"] == "<p>st</p>"
    finally:
        await first.stop()
        await second.stop()


async def _group_members(layer, group: str) -> list[str]:
    connection = layer.connection(layer.consistent_hash(group))
    members = await connection.zrange(layer._group_key(group), 0, -1)
    return sorted(m.decode() for m in members)


@pytest.mark.parametrize("kind", ["memory", "redis", "project"])
async def test_the_last_socket_of_an_audience_leaving_unsubscribes_the_process(kind) -> None:
    layer, _, sender = _layers(kind)
    hub = Hub(layer)
    group = live.players_group(2)
    phone, other = Socket(), Socket()
    try:
        await hub.subscribe(phone, [group])
        await hub.subscribe(other, [group])
        await hub.unsubscribe(phone, [group])
        assert hub.groups == [group]
        await hub.unsubscribe(other, [group])
        assert hub.groups == []
        if kind != "memory":
            assert await _group_members(sender, group) == []
    finally:
        await hub.stop()


async def test_a_hub_is_not_held_up_by_another_channel_of_its_layer() -> None:
    """channels-redis reads an instance's process-local channels through one blocking read: a
    /ws/live/ socket's channel waiting on the same instance must not delay the hub's push."""
    layer, _, sender = _layers("redis")
    hub = Hub(layer)
    group = live.players_group(3)
    phone = Socket()
    other = await layer.new_channel()
    waiting = asyncio.ensure_future(layer.receive(other))  # a LiveConsumer, reading
    try:
        await _until(lambda: layer.receive_lock is not None and layer.receive_lock.locked(), "")
        await hub.subscribe(phone, [group])
        await sender.group_send(group, live.fragment_event("<p>now</p>", group))
        async with asyncio.timeout(2):  # well under the blocking read's 5 s
            await phone.arrived.wait()
    finally:
        waiting.cancel()
        await hub.stop()


async def test_one_broken_socket_does_not_cost_the_others_their_push() -> None:
    hub = Hub(InMemoryChannelLayer())

    class Broken(Socket):
        def hub_message(self, message: dict[str, Any]) -> None:
            raise RuntimeError("gone")

    good = Socket()
    group = live.players_group(4)
    try:
        await hub.subscribe(Broken(), [group])
        await hub.subscribe(good, [group])
        assert hub.dispatch(live.fragment_event("<p>x</p>", group)) == 2
        assert len(good.got) == 1
    finally:
        await hub.stop()


async def test_a_push_for_several_sockets_is_marked_shared_one_for_one_is_not() -> None:
    """Several sockets write one frame compressed once (combat.consumers._shared_frame); a
    push for one socket keeps its own context (the best compression)."""
    hub = Hub(InMemoryChannelLayer())
    players, own = live.players_group(5), live.player_group(5, 1)
    phones = [Socket(), Socket()]
    try:
        for phone in phones:
            await hub.subscribe(phone, [players])
        await hub.subscribe(phones[0], [own])
        hub.dispatch(live.fragment_event("<p>all</p>", players))
        hub.dispatch(live.fragment_event("<p>mine</p>", own))
        assert [m.get(SHARED) for m in phones[0].got] == [True, None]
    finally:
        await hub.stop()


class AnsweringLayer:
    """A channels-redis layer whose marker check (``SET``, :meth:`Hub._check_layer`) waits
    for the test to answer it: Redis's answer and a stop can then come in one turn."""

    prefix, ring_size = "stop", 1

    def __init__(self) -> None:
        self.sets = 0
        self.asked = asyncio.Event()
        self.answer: asyncio.Future | None = None

    def new_reader(self) -> str:
        return "hub.stop"

    async def receive_many(self, channel: str) -> list[dict[str, Any]]:
        await asyncio.Event().wait()
        return []

    async def group_add(self, group: str, channel: str) -> None:
        pass

    async def group_discard(self, group: str, channel: str) -> None:
        pass

    def connection(self, index: int) -> AnsweringLayer:
        return self

    async def set(self, key: str, value: str, ex: int, get: bool) -> None:
        self.sets += 1
        self.answer = asyncio.get_running_loop().create_future()
        self.asked.set()
        return await self.answer


async def test_a_hub_stopped_as_redis_answers_its_check_stops_for_good(monkeypatch) -> None:
    """Python 3.11's ``wait_for`` returns the answer of a command that completed in the turn
    its task was cancelled, dropping the cancellation (``config.layers.WAIT_FOR_DROPS_CANCEL``):
    the layer's watch went on checking Redis forever, on a hub stopped (its channel gone),
    and the stop had not waited for it. The stop ends every task of the hub before it returns."""
    from combat import hub as hub_module

    monkeypatch.setattr(hub_module, "LAYER_CHECK", 0)
    layer = AnsweringLayer()
    hub = Hub(layer)
    await hub.start()
    tasks = list(hub.tasks)
    await layer.asked.wait()
    layer.answer.set_result(None)  # Redis answers the check...
    await hub.stop()  # ...in the turn the hub stops
    for _ in range(20):  # the loop's turns in which a watch that went on checks again
        await asyncio.sleep(0)
    assert all(task.done() for task in tasks)
    assert layer.sets == 1
    for task in tasks:  # a guard: without the fix the watch is still there to be ended
        task.cancel()
        if layer.answer is not None and not layer.answer.done():
            layer.answer.cancel()
    await asyncio.wait(tasks, timeout=WAIT)


@pytest.mark.parametrize("kind", ["memory", "redis", "project"])
async def test_renewing_many_groups_adds_the_hubs_channel_to_each(kind) -> None:
    layer, _, sender = _layers(kind)
    hub = Hub(layer)
    groups = [live.player_group(3, user) for user in range(40)]
    try:
        await hub.start()
        await hub.add_groups(groups)
        if kind != "memory":
            assert all([await _group_members(sender, g) == [hub.channel] for g in groups])
        for group in groups[::7]:
            await sender.group_send(group, live.fragment_event(f"<p>{group}</p>", group))
        await _until(lambda: hub.delivered == len(groups[::7]), "the hub read each push")
    finally:
        await hub.stop()


# A player's own part: caught up like the other audiences ----------------------------------
#
# The hub's catch-up compares each phone with the database: the public part by its seq, the
# sheets by their counter, and the player's own part (its prompts) by the seq of the last
# change to it (``Participant.own_seq``, hub-only, never shown). A change's own part lost
# while the public part that follows arrives leaves the phone at the new seq with an old
# prompt: the second look sends it the whole state.


class Layer:
    """What combat.live publishes, captured: each test hands it to its sockets by hand."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def group_send(self, group: str, event: dict[str, Any]) -> None:
        self.sent.append((group, event))

    def take(self) -> list[tuple[str, dict[str, Any]]]:
        sent, self.sent = self.sent, []
        return sent


@pytest.fixture
def layer(monkeypatch) -> Layer:
    captured = Layer()
    monkeypatch.setattr(live, "get_channel_layer", lambda: captured)
    return captured


@pytest.fixture
def played(chronicle, storyteller, character, player, other_player):
    """A scene with Janet (``player``) and Cody (``other_player``) in it."""
    from combat import services
    from tests.factories import CharacterFactory

    scene = services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")
    services.scene_join(code=scene.join_code, user=player, character=character)
    cody = CharacterFactory(chronicle=chronicle, name="Cody", player=other_player)
    services.scene_join(code=scene.join_code, user=other_player, character=cody)
    return scene


async def _phone(scene, user):
    """A player's scene socket past its first state (the accounting of a connected one), its
    writes queued in its outbox (no writer)."""
    from asgiref.sync import sync_to_async

    from combat.consumers import SceneConsumer

    socket = SceneConsumer()
    socket.scope = {"user": await sync_to_async(lambda: type(user).objects.get(pk=user.pk))()}
    socket.socket_id = f"test.{user.pk}.{uuid.uuid4().hex[:6]}"
    socket.scene_id, socket.role, socket.user_id = scene.pk, "player", user.pk
    socket.seq_group = live.players_group(scene.pk)
    socket.own_group = live.player_group(scene.pk, user.pk)
    socket.writer, socket.writing, socket.outbox = None, False, asyncio.Queue()
    socket.shown = socket.behind = 0
    socket.ahead, socket.sheets = set(), ""
    socket._caught_up(await socket.current_state())
    return socket


def _queued(socket) -> list[dict[str, Any]]:
    out = []
    while not socket.outbox.empty():
        out.append(socket.outbox.get_nowait())
    return out


def _change(scene, by, **kwargs: Any) -> None:
    """One change of the scene through the one recording of changes (published on commit)."""
    from django.db import transaction

    from combat import services

    with transaction.atomic():
        locked = services.lock_open_scene(scene)
        services.record_change(locked, by=by, regions=(), **kwargs)


def _deliver(sent: list[tuple[str, dict[str, Any]]], sockets, *, lose: str = "") -> None:
    """Hand each push to the sockets of its group, except the pushes to ``lose``."""
    for group, event in sent:
        if group == lose:
            continue
        for socket in sockets:
            if group in (socket.seq_group, socket.own_group):
                socket.hub_message({**event, "group": group})


async def _looks(hub: Hub, times: int = 2) -> list[int]:
    return [await hub.catch_up() for _ in range(times)]


@pytest.mark.django_db(transaction=True)
async def test_a_phone_sent_the_public_part_but_not_its_own_is_resynced_on_the_second_look(
    played, storyteller, player, other_player, layer
) -> None:
    from asgiref.sync import sync_to_async

    janet, cody = await _phone(played, player), await _phone(played, other_player)
    lost = await _phone(played, player)  # Janet's other phone: it loses her own part
    hub = Hub(InMemoryChannelLayer())
    hub.watched.update({janet, cody, lost})
    assert await _looks(hub) == [0, 0]  # all caught up

    await sync_to_async(_change)(played, storyteller, private_user_ids=[player.pk])
    sent = layer.take()
    assert [g for g, _e in sent] == [live.player_group(played.pk, player.pk), janet.seq_group]
    _deliver(sent, [janet, cody])
    _deliver(sent, [lost], lose=lost.own_group)
    _queued(janet), _queued(cody), _queued(lost)
    assert lost.shown == janet.shown  # the public part at the new seq reached both

    assert await _looks(hub) == [0, 1]  # the first look: its push may be on its way
    assert _queued(lost) == [{"type": "live.resync"}]
    assert _queued(janet) == [] and _queued(cody) == []
    lost._caught_up(await lost.current_state())  # the writer sends the whole state
    assert await _looks(hub) == [0, 0]


@pytest.mark.django_db(transaction=True)
async def test_an_own_part_that_arrives_between_two_looks_is_not_resynced(
    played, storyteller, player, layer
) -> None:
    from asgiref.sync import sync_to_async

    janet = await _phone(played, player)
    hub = Hub(InMemoryChannelLayer())
    hub.watched.add(janet)
    await sync_to_async(_change)(played, storyteller, private_user_ids=[player.pk])
    sent = layer.take()
    _deliver(sent, [janet], lose=janet.own_group)
    assert await hub.catch_up() == 0
    _deliver([(g, e) for g, e in sent if g == janet.own_group], [janet])  # late, not lost
    assert await _looks(hub, 3) == [0, 0, 0]
    assert {m["type"] for m in _queued(janet)} == {"live.fragment"}  # no resync among them


@pytest.mark.django_db(transaction=True)
async def test_hidden_steps_neither_resync_a_phone_nor_show_it_their_count(
    played, storyteller, player, other_player, layer
) -> None:
    """A hidden NPC's steps (``players=False``) bump the scene's seq, not the players': a
    phone they do not concern hears nothing and is never resynced; one whose own prompt they
    change gets it at the players' seq it had, and the hub's number stays in the hub."""
    from asgiref.sync import sync_to_async

    from combat.models import Scene

    janet, cody = await _phone(played, player), await _phone(played, other_player)
    hub = Hub(InMemoryChannelLayer())
    hub.watched.update({janet, cody})
    players_seq = janet.shown
    for _ in range(3):
        await sync_to_async(_change)(played, storyteller, players=False)
    hidden = {"players": False, "private_user_ids": [cody.user_id]}
    await sync_to_async(_change)(played, storyteller, **hidden)
    sent = layer.take()
    assert [g for g, _e in sent] == [cody.own_group]
    _deliver(sent, [janet, cody])
    assert await _looks(hub, 3) == [0, 0, 0]
    assert _queued(janet) == []
    (push,) = _queued(cody)
    scene = await sync_to_async(Scene.objects.get)(pk=played.pk)
    assert scene.seq > scene.players_seq == players_seq
    assert f'data-seq="{players_seq}"' in push["html"]
    assert f'data-seq="{scene.seq}"' not in push["html"]

    # Cody's own part lost in a hidden step: his phone gets the whole state, at the players'
    # seq (what it would have shown), and Janet's phone still nothing.
    hidden = {"players": False, "private_user_ids": [cody.user_id]}
    await sync_to_async(_change)(played, storyteller, **hidden)
    layer.take()
    assert await _looks(hub) == [0, 1]
    assert _queued(cody) == [{"type": "live.resync"}] and _queued(janet) == []
    state = await cody.current_state()
    assert f'data-seq="{players_seq}"' in state and f'data-seq="{scene.seq + 1}"' not in state


async def _tablet(scene, user):
    """A storyteller's scene socket past its first state (see :func:`_phone`)."""
    from asgiref.sync import sync_to_async

    from combat.consumers import STORYTELLER, SceneConsumer

    socket = SceneConsumer()
    socket.scope = {"user": await sync_to_async(lambda: type(user).objects.get(pk=user.pk))()}
    socket.socket_id = f"test.{user.pk}.{uuid.uuid4().hex[:6]}"
    socket.scene_id, socket.role, socket.user_id = scene.pk, STORYTELLER, user.pk
    socket.seq_group, socket.own_group = live.storytellers_group(scene.pk), ""
    socket.writer, socket.writing, socket.outbox = None, False, asyncio.Queue()
    socket.shown = socket.behind = 0
    socket.ahead, socket.sheets = set(), ""
    from combat import presence

    await sync_to_async(presence.presence_connect)(
        scene_id=scene.pk, user_id=user.pk, channel_name=socket.socket_id, announce=False
    )  # as the consumer does before its first state: the board is watched
    socket._caught_up(await socket.current_state())
    return socket


@pytest.mark.django_db(transaction=True)
async def test_a_tablet_sent_every_change_is_not_resynced_when_a_push_renders_after_the_next_commit(
    played, storyteller, layer, monkeypatch
) -> None:
    """A tap's turn ends at its commit (combat.turns): the scene's next tap may commit before
    the first one's push is rendered, which then shows the scene at the later seq. The board
    got both changes' pushes (each with the regions its change touched, rendered at or after
    it), so the hub must not find it behind and send it the whole board again."""
    from asgiref.sync import sync_to_async

    tablet = await _tablet(played, storyteller)
    hub = Hub(InMemoryChannelLayer())
    hub.watched.add(tablet)
    assert await _looks(hub) == [0, 0]

    published = live.scene_changed
    held: list[tuple[tuple, dict]] = []
    monkeypatch.setattr(live, "scene_changed", lambda *a, **k: held.append((a, k)))
    await sync_to_async(_change)(played, storyteller)
    await sync_to_async(_change)(played, storyteller)
    monkeypatch.setattr(live, "scene_changed", published)
    for args, kwargs in held:  # both rendered after the second commit
        await sync_to_async(published)(*args, **kwargs)
    _deliver(layer.take(), [tablet])
    _queued(tablet)
    assert await _looks(hub, 3) == [0, 0, 0]
    assert _queued(tablet) == []


class SlowLayer:
    """A layer whose group changes take a few turns (a slow Redis), each new reader named
    afresh."""

    def __init__(self) -> None:
        self.readers = 0
        self.adds: list[tuple[str, str]] = []
        self.go = asyncio.Event()

    def new_reader(self) -> str:
        self.readers += 1
        return f"hub.slow{self.readers}"

    async def receive_many(self, channel: str) -> list[dict[str, Any]]:
        await asyncio.Event().wait()
        return []

    async def group_add(self, group: str, channel: str) -> None:
        self.adds.append((group, channel))
        await self.go.wait()

    async def group_discard(self, group: str, channel: str) -> None:
        pass


async def test_a_socket_subscribed_as_the_hub_stops_is_heard_by_a_running_hub() -> None:
    """A socket that found the hub started but waited for its lock while the hub stopped
    joins its groups on a hub started again, never on the channel the stop emptied (a group
    with no one reading it: the socket would hear nothing)."""
    layer = SlowLayer()
    hub = Hub(layer)
    first = asyncio.ensure_future(hub.subscribe(object(), ["g1"]))
    while not layer.adds:  # the first socket holds the lock, waiting on the layer
        await asyncio.sleep(0)
    stopping = asyncio.ensure_future(hub.stop())
    await asyncio.sleep(0)
    second = asyncio.ensure_future(hub.subscribe(object(), ["g2"]))  # finds it started
    await asyncio.sleep(0)
    layer.go.set()
    await asyncio.wait_for(asyncio.gather(first, stopping, second), WAIT)
    assert ("g2", "") not in layer.adds
    assert layer.adds[-1] == ("g2", hub.channel) and hub.channel and hub.tasks
    await hub.stop()
