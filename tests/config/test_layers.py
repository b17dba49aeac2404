"""The channel layer (config.layers): what channels-redis delivers, in one round trip to Redis
for a hub's plain channel (two with a process-local member), published from a worker thread
without the event loop, and read by a hub in batches. Needs Redis (REDIS_URL)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time

import pytest
import redis

from combat import live
from combat.hub import Hub
from config import layers
from config.layers import READ_BATCH, RedisChannelLayer

pytestmark = pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs REDIS_URL")


def layer(**config) -> RedisChannelLayer:
    prefix = f"{os.environ.get('CHANNELS_PREFIX', 'test')}_layers_{os.getpid()}"
    return RedisChannelLayer(hosts=[os.environ["REDIS_URL"]], prefix=prefix, **config)


def _packed(monkeypatch) -> list[bytes]:
    """The name of every command any asynchronous connection of this test's event loop sends
    from now on (but a new connection's handshake), a hub's reads included. The patch is the
    class's, so a server another test left running in its own thread (a hub checking the layer)
    would be counted too: only this loop's are."""
    from redis.asyncio.connection import AbstractConnection

    sent: list[bytes] = []
    original = AbstractConnection.send_packed_command
    loop = asyncio.get_running_loop()

    async def counted(self, command, *args, **kwargs):
        packed = command if isinstance(command, bytes) else b"".join(command)
        name = packed.split(b"\r\n")[2]
        ours = asyncio.get_running_loop() is loop
        if ours and name not in {b"HELLO", b"CLIENT", b"AUTH", b"SELECT"}:
            sent.append(name)
        return await original(self, command, *args, **kwargs)

    monkeypatch.setattr(AbstractConnection, "send_packed_command", counted)
    exchange = layers.exchange  # a hub's read: its command written on the stream directly

    async def exchanged(connection, command):
        if asyncio.get_running_loop() is loop:
            sent.append(command.split(b"\r\n")[2])
        return await exchange(connection, command)

    monkeypatch.setattr(layers, "exchange", exchanged)
    return sent


def _counted(monkeypatch, connection) -> list[str]:
    commands: list[str] = []
    original = type(connection).execute_command

    async def counted(self, *args, **kwargs):
        commands.append(args[0])
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(type(connection), "execute_command", counted)
    return commands


async def test_a_group_send_with_process_local_members_takes_two_round_trips(monkeypatch) -> None:
    one = layer()
    a, b = await one.new_channel(), await one.new_channel()
    plain = "plain.bench"
    for channel in (a, b, plain):
        await one.group_add("scene.1.players", channel)
    commands = _counted(monkeypatch, one.connection(0))
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


async def test_a_group_of_plain_channels_is_sent_to_in_one_round_trip(monkeypatch) -> None:
    one = layer()
    hubs = [one.new_reader(), one.new_reader()]
    for channel in hubs:
        await one.group_add("scene.3.players", channel)
    commands = _counted(monkeypatch, one.connection(0))
    await one.group_send("scene.3.players", {"type": "live.fragment", "html": "<p>3</p>"})
    assert commands == ["EVAL"]
    monkeypatch.undo()
    for channel in hubs:
        assert await one.receive_many(channel) == [{"type": "live.fragment", "html": "<p>3</p>"}]
    await one.flush()


async def test_a_blocking_publish_reaches_plain_and_local_members_without_the_loop(
    monkeypatch,
) -> None:
    one = layer()
    hub, specific = one.new_reader(), await one.new_channel()
    for channel in (hub, specific):
        await one.group_add("scene.4.players", channel)
    commands = _counted(monkeypatch, one.connection(0))  # the event loop's connection
    message = {"type": "live.fragment", "html": "<p>4</p>"}
    await asyncio.to_thread(one.group_send_blocking, "scene.4.players", message)
    assert commands == []
    monkeypatch.undo()
    assert await one.receive_many(hub) == [message]
    assert await one.receive(specific) == message
    await one.flush()


async def test_a_hub_reads_every_waiting_message_in_order_in_one_round_trip(monkeypatch) -> None:
    one, sender = layer(), layer()
    channel = one.new_reader()
    await one.group_add("scene.5.players", channel)
    for n in range(READ_BATCH + 3):
        await sender.group_send("scene.5.players", {"type": "t", "n": n})
    sent = _packed(monkeypatch)
    first = await one.receive_many(channel)
    assert sent == [b"BZMPOP"]
    assert [m["n"] for m in first] == list(range(READ_BATCH))
    assert [m["n"] for m in await one.receive_many(channel)] == [
        READ_BATCH,
        READ_BATCH + 1,
        READ_BATCH + 2,
    ]
    monkeypatch.undo()
    await one.flush()


async def test_a_hub_on_redis_before_7_still_reads_every_message(monkeypatch) -> None:
    """Redis 5 and 6 have no BZMPOP (7.0): the hub's read must not fail on it forever (every
    push lost); it reads one message a trip, as channels-redis does, in order."""
    import redis

    one, sender = layer(), layer()
    channel = one.new_reader()
    await one.group_add("scene.7.players", channel)
    for n in range(3):
        await sender.group_send("scene.7.players", {"type": "t", "n": n})
    connection = one.connection(0)
    original = type(connection).execute_command
    sent: list[str] = []

    async def redis_6(self, *args, **kwargs):
        sent.append(args[0])
        return await original(self, *args, **kwargs)

    async def no_bzmpop(channel, key):
        sent.append("BZMPOP")
        raise redis.ResponseError("unknown command `BZMPOP`, with args beginning with: ")

    monkeypatch.setattr(type(connection), "execute_command", redis_6)
    monkeypatch.setattr(one, "_bzmpop_read", no_bzmpop)
    got = [m["n"] for _ in range(3) for m in await one.receive_many(channel)]
    assert got == [0, 1, 2]
    assert sent == ["BZMPOP", "BZPOPMIN", "BZPOPMIN", "BZPOPMIN"]  # asked once, then not
    monkeypatch.undo()
    await one.flush()


class Phone:
    def __init__(self) -> None:
        self.got: list[dict] = []

    def hub_message(self, message: dict) -> None:
        self.got.append(message)


async def test_a_hub_on_this_layer_hears_a_views_blocking_publish() -> None:
    one, sender = layer(), layer()
    hub, phone = Hub(one), Phone()
    group = live.players_group(6)
    try:
        await hub.subscribe(phone, [group])
        assert "!" not in hub.channel
        event = live.fragment_event('<p data-seq="2">6</p>', group)
        await asyncio.to_thread(sender.group_send_blocking, group, event)
        async with asyncio.timeout(5):
            while not phone.got:
                await asyncio.sleep(0.01)  # polling a condition, not a timed wait
        assert phone.got == [event] and hub.delivered == 1
    finally:
        await hub.stop()
        await one.flush()


async def test_a_receive_cancelled_as_its_command_goes_out_still_ends(monkeypatch) -> None:
    """A socket that closes right after it opens (a refused ``/ws/live/``) cancels its channel
    receive while redis-py writes the blocking read. Python 3.11's ``asyncio.wait_for``, which
    redis-py wraps that write in, drops a cancellation that lands as the write completes; the
    receive then polled Redis forever and the socket's task never ended."""
    from redis.asyncio.connection import Connection

    one = layer()
    channel = await one.new_channel()
    receiving: list[asyncio.Task] = []
    write = Connection._send_packed_command

    async def cancelled_as_it_goes_out(self, command) -> None:
        await write(self, command)
        if b"BZPOPMIN" in b"".join(command) and receiving:
            receiving.pop().cancel()  # the socket closes: its receive is cancelled right now

    monkeypatch.setattr(Connection, "_send_packed_command", cancelled_as_it_goes_out)
    task = asyncio.ensure_future(one.receive(channel))
    receiving.append(task)
    done, _ = await asyncio.wait({task}, timeout=10)  # a guard: without the fix, never
    assert done and task.cancelled()
    await one.flush()


async def test_a_receive_cancelled_twice_still_cancels_until_it_ends(monkeypatch) -> None:
    """The socket's task cancelled again while its receive waits for the dropped cancellation
    to be repeated (a server closing the socket's task as it ends): the receive still ends."""
    from channels_redis.core import RedisChannelLayer as Base

    from config import layers

    if not layers.WAIT_FOR_DROPS_CANCEL:
        pytest.skip("Python 3.12's wait_for keeps the cancellation")
    inner: list[asyncio.Task] = []

    async def drops_one_cancel(self, channel):  # as redis-py's write under 3.11's wait_for
        inner.append(asyncio.current_task())
        with contextlib.suppress(asyncio.CancelledError):  # the first cancellation, dropped
            await asyncio.sleep(3600)
        await asyncio.sleep(3600)

    monkeypatch.setattr(Base, "receive", drops_one_cancel)
    one = layer()
    task = asyncio.ensure_future(one.receive(await one.new_channel()))
    await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.sleep(0.01)  # it has cancelled its receive once, which went on
    task.cancel()
    await asyncio.wait({task}, timeout=2)
    done, _ = await asyncio.wait(inner, timeout=2)  # a guard: without the fix, never
    assert task.cancelled() and done


def test_a_command_is_packed_as_redis_py_packs_it() -> None:
    from redis.connection import Connection

    from config.resp import pack

    args = ("EVALSHA", "ab", 1, "k€y", b"\x00\xffbin", 1717000000.123456, 60, -3)
    assert pack(*args) == b"".join(Connection().pack_command(*args))


def test_a_script_redis_does_not_know_is_sent_whole_then_by_its_sha() -> None:
    """As after a Redis restart (its scripts forgotten): EVALSHA is refused, EVAL runs it."""
    import uuid

    from config.resp import Script

    script = Script(f"return ARGV[1] .. KEYS[1] -- {uuid.uuid4().hex}")
    connection = redis.Redis.from_url(os.environ["REDIS_URL"]).connection_pool.make_connection()
    try:
        assert script.call(connection, ["k"], ["v"]) == b"vk"  # NOSCRIPT, then EVAL
        assert script.call(connection, ["k"], ["w"]) == b"wk"  # known now: EVALSHA
    finally:
        connection.disconnect()


REPLIES = [
    b"$3\r\nabc\r\n",
    b"$-1\r\n",
    b"*-1\r\n",
    b"_\r\n",
    b":42\r\n",
    b"(12345678901234567890\r\n",
    b",1.5\r\n",
    b"#t\r\n",
    b"+OK\r\n",
    b"=8\r\ntxt:some\r\n",
    b"%1\r\n+k\r\n:1\r\n",
    b"*2\r\n$3\r\nkey\r\n*2\r\n*2\r\n$2\r\nm1\r\n,1717000000.5\r\n*2\r\n$0\r\n\r\n,2\r\n",
    b"*2\r\n:0\r\n*1\r\n$10\r\nspecific!x\r\n",
    b"*0\r\n",
]


@pytest.mark.parametrize("data", REPLIES)
def test_a_reply_is_read_as_redis_py_reads_it(data) -> None:
    """config.resp.reply against redis-py's own parser on the same bytes (RESP2's for its
    nulls, RESP3's for the rest), whole and cut short anywhere."""
    from redis._parsers.resp2 import _RESP2Parser
    from redis._parsers.resp3 import _RESP3Parser

    from config.resp import Incomplete, reply

    class Buffer:  # redis-py's socket buffer, over these bytes
        def __init__(self, data: bytes) -> None:
            self.lines = iter(data.split(b"\r\n"))

        def readline(self, **kwargs) -> bytes:
            return next(self.lines)

        def read(self, length: int, **kwargs) -> bytes:
            return next(self.lines)

    parser = (_RESP2Parser if data.endswith(b"-1\r\n") else _RESP3Parser)(65536)
    parser._buffer = Buffer(data)
    assert reply(data) == parser._read_response(disable_decoding=True)
    for cut in range(len(data)):
        with pytest.raises(Incomplete):
            reply(data[:cut])


def test_an_error_reply_is_raised_as_redis_py_raises_it() -> None:
    from config.resp import reply

    with pytest.raises(redis.exceptions.NoScriptError):
        reply(b"-NOSCRIPT No matching script.\r\n")
    with pytest.raises(redis.ResponseError, match="unknown command"):
        reply(b"-ERR unknown command 'BZMPOP'\r\n")
    assert isinstance(reply(b"*1\r\n-ERR inside\r\n")[0], redis.ResponseError)
    with pytest.raises(redis.InvalidResponse):
        reply(b":1\r\n:2\r\n")  # two replies where one was asked for


async def test_a_hub_reads_messages_larger_than_one_read_of_its_socket() -> None:
    one, sender = layer(), layer()
    channel = one.new_reader()
    await one.group_add("scene.6.players", channel)
    big = [{"type": "t", "html": str(n) * 150_000} for n in range(3)]
    for message in big:
        await sender.group_send("scene.6.players", message)
    assert await one.receive_many(channel) == big
    await one.flush()


class _Bystander:
    """A connection to the same Redis beside the test (another test of ``-n 2``, another
    run), which does not reconnect by itself."""

    def __init__(self) -> None:
        self.connection = redis.ConnectionPool.from_url(os.environ["REDIS_URL"]).make_connection()
        self.connection.connect()

    def ping(self) -> bool:
        try:
            self.connection.send_command("PING")
            return self.connection.read_response() in (b"PONG", "PONG")
        finally:
            self.connection.disconnect()


async def _kill(one: RedisChannelLayer, sockname: tuple[str, int]) -> None:
    """Redis drops the one connection whose end is ``sockname`` (as a restart drops all), and
    no other client's: the Redis is shared."""
    host, port = sockname[:2]
    assert await one.connection(0).client_kill_filter(addr=f"{host}:{port}") == 1


async def test_a_publish_on_a_connection_redis_dropped_fails_once_then_reconnects() -> None:
    one = layer()
    hub = one.new_reader()
    await one.group_add("scene.9.players", hub)
    await asyncio.to_thread(one.group_send_blocking, "scene.9.players", {"type": "t", "n": 1})
    bystander = _Bystander()
    (idle,) = one._hot.idle  # the publish's connection, kept idle
    await _kill(one, idle._sock.getsockname())
    with pytest.raises(redis.ConnectionError):
        await asyncio.to_thread(one.group_send_blocking, "scene.9.players", {"type": "t", "n": 2})
    await asyncio.to_thread(one.group_send_blocking, "scene.9.players", {"type": "t", "n": 3})
    assert [m["n"] for m in await one.receive_many(hub)] == [1, 3]
    assert bystander.ping()  # the shared Redis's other clients (a test beside it) are left alone
    await one.flush()


async def test_a_hub_whose_connection_redis_dropped_reads_on_a_new_one_at_once() -> None:
    one, sender = layer(), layer()
    channel = one.new_reader()
    await one.group_add("scene.10.players", channel)
    await sender.group_send("scene.10.players", {"type": "t", "n": 1})
    assert [m["n"] for m in await one.receive_many(channel)] == [1]
    bystander = _Bystander()
    reader = one._readers[asyncio.get_running_loop()][channel][0]
    await _kill(sender, reader._writer.get_extra_info("sockname"))  # the reader's alone
    await sender.group_send("scene.10.players", {"type": "t", "n": 2})
    assert [m["n"] for m in await one.receive_many(channel)] == [2]
    assert bystander.ping()  # the shared Redis's other clients (a test beside it) are left alone
    await sender.flush()


async def test_a_hub_read_rides_out_a_redis_restart_of_a_moment(monkeypatch) -> None:
    """Redis restarting: its read's connection dropped, the next connects refused for a
    moment; the read is tried again until Redis is back (not once, leaving the hub its own
    second's wait)."""
    one = layer()
    channel = one.new_reader()
    await one.group_add("scene.11.players", channel)
    await one.group_send("scene.11.players", {"type": "t", "n": 1})
    read, refused = one._bzmpop_once, [4]

    async def restarting(channel, key):
        if refused[0]:
            refused[0] -= 1
            raise redis.ConnectionError(
                "Error 111 connecting to 127.0.0.1:6379. Connection refused."
            )
        return await read(channel, key)

    monkeypatch.setattr(one, "_bzmpop_once", restarting)
    assert [m["n"] for m in await one.receive_many(channel)] == [1]
    await one.flush()
