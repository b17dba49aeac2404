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
from combat.hub import Hub

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


def _layers(kind: str) -> tuple[Any, Any, Any]:
    """Two processes' layers and a third, the sender's (a sync view's)."""
    if kind == "memory":
        shared = InMemoryChannelLayer()
        return shared, shared, shared
    if not os.environ.get("REDIS_URL"):
        pytest.skip("REDIS_URL is not set: the channels-redis hub tests need Redis")
    prefix = f"hubtest-{uuid.uuid4().hex[:8]}"
    return _redis_layer(prefix), _redis_layer(prefix), _redis_layer(prefix)


async def _until(predicate, what: str) -> None:
    async with asyncio.timeout(WAIT):
        while not predicate():
            await asyncio.sleep(0.01)  # polling a condition, not a timed wait


@pytest.mark.parametrize("kind", ["memory", "redis"])
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

        if kind == "redis":  # each process read one message per audience it serves
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


@pytest.mark.parametrize("kind", ["memory", "redis"])
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
        if kind == "redis":
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


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_renewing_many_groups_adds_the_hubs_channel_to_each(kind) -> None:
    layer, _, sender = _layers(kind)
    hub = Hub(layer)
    groups = [live.player_group(3, user) for user in range(40)]
    try:
        await hub.start()
        await hub.add_groups(groups)
        if kind == "redis":
            assert all([await _group_members(sender, g) == [hub.channel] for g in groups])
        for group in groups[::7]:
            await sender.group_send(group, live.fragment_event(f"<p>{group}</p>", group))
        await _until(lambda: hub.delivered == len(groups[::7]), "the hub read each push")
    finally:
        await hub.stop()
