"""The channel layer's group_send (config.layers): what channels-redis delivers, in two round
trips to Redis. Needs Redis (REDIS_URL)."""

from __future__ import annotations

import os
import time

import pytest

from config.layers import RedisChannelLayer

pytestmark = pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs REDIS_URL")


def layer(**config) -> RedisChannelLayer:
    prefix = f"{os.environ.get('CHANNELS_PREFIX', 'test')}_layers_{os.getpid()}"
    return RedisChannelLayer(hosts=[os.environ["REDIS_URL"]], prefix=prefix, **config)


async def test_a_group_send_reaches_every_member_in_two_round_trips(monkeypatch) -> None:
    one = layer()
    a, b = await one.new_channel(), await one.new_channel()
    plain = "plain.bench"
    for channel in (a, b, plain):
        await one.group_add("scene.1.players", channel)
    connection = one.connection(0)
    commands: list[str] = []
    original = type(connection).execute_command

    async def counted(self, *args, **kwargs):
        commands.append(args[0])
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(type(connection), "execute_command", counted)
    await one.group_send("scene.1.players", {"type": "live.fragment", "html": "<p>1</p>"})
    assert commands == ["EVAL", "EVAL"]
    monkeypatch.undo()
    for channel in (a, b, plain):
        got = await one.receive(channel)
        assert got == {"type": "live.fragment", "html": "<p>1</p>"}
    await one.flush()


async def test_expired_members_and_full_channels_get_nothing() -> None:
    one = layer(group_expiry=60, capacity=1)
    gone, full = "gone.x", "full.x"
    await one.group_add("scene.2.players", full)
    await one.group_add("scene.2.players", gone)
    key = one._group_key("scene.2.players")
    await one.connection(0).zadd(key, {gone: time.time() - 120})  # it joined long ago
    await one.group_send("scene.2.players", {"type": "t", "n": 1})
    await one.group_send("scene.2.players", {"type": "t", "n": 2})  # over capacity: dropped
    assert await one.connection(0).zrange(key, 0, -1) == [full.encode()]
    assert await one.receive(full) == {"type": "t", "n": 1}
    assert await one.connection(0).exists(one.prefix + gone) == 0
    await one.flush()
