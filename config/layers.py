"""channels-redis, its ``group_send`` in one round trip to Redis and its hub's reads in one.

Every push of a change is one ``group_send`` per audience (``combat.live``), three or more a
tap, and every server process's hub (``combat.hub``) reads what each one sends it.
channels-redis 4 makes a ``group_send`` four commands, one after the other (drop the
group's expired members, read the members, drop each member channel's expired messages,
add the message where there is room), and a ``receive`` four more (put back what an
interrupted read left in a backup queue, a blocking pop, the message into the backup queue,
then out of it) and two tasks, a lock and a wait; each round trip costs the event loop the
command written, a wake-up for the answer and the answer parsed. Here:

- **Publishing** (:meth:`RedisChannelLayer.group_send`) is one script (:data:`PUBLISH`): the
  same commands, in the same order, on the same keys, for every member that is a plain
  channel (a hub's: :meth:`RedisChannelLayer.new_reader`); a process-local member
  (``specific.…!…``: a consumer with a channel of its own, ``/ws/live/``) is returned, and
  gets its message as channels-redis gives it (its channel's name in it) in a second trip
  (:data:`DELIVER`). From a worker thread (a view's commit), :meth:`group_send_blocking`
  does it over a synchronous connection of its own: no hop to the event loop and back.
- **A hub's reading** (:meth:`RedisChannelLayer.receive_many`): its channel is a plain one of
  its own, read with one ``BZMPOP``: every message waiting, up to :data:`READ_BATCH`, in one
  round trip (Redis 7; before it, which has no ``BZMPOP``, one ``BZPOPMIN`` a message). No
  backup queue: a message popped by a process that dies before writing it to its sockets is
  lost with those sockets (they reconnect, and get the whole state).

Those two run for every push (three publishes a tap, and each server's hub reads each one),
so they skip redis-py's client (``config.resp``): a command packed once, a script by its
SHA-1, on connections of their own; one that failed is never used again (a publish is tried
twice: ``combat.live``).

Any other reader (``receive`` of a channel: ``/ws/live/``, ``/healthz``) reads as
channels-redis does, except that a cancelled ``receive`` ends (:meth:`RedisChannelLayer.receive`).
Several Redis servers (a sharded ring) or per-channel capacities: channels-redis's ways.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import time
import uuid
from typing import Any
from weakref import WeakKeyDictionary

import redis
from channels_redis.core import RedisChannelLayer as RedisChannelLayerBase

from config.resp import Connections, Script, exchange, pack

log = logging.getLogger("channels_redis.core")

READ_BATCH = 64  # messages a hub takes off its channel in one read, at most
# Python 3.11's asyncio.wait_for (redis-py wraps each command's write in it when the socket has
# a timeout) returns the result, dropping the cancellation, when its task is cancelled as the
# write completes (CPython gh-86296; 3.12's wait_for no longer does).
WAIT_FOR_DROPS_CANCEL = sys.version_info < (3, 12)
RECANCEL = 0.05  # seconds between two cancellations of a receive that has not ended
# Seconds a hub's read waits before each new try after its connection failed (a restart).
READ_RETRIES = (0.0, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32)

# KEYS[1]: the group. ARGV: members added before this time have expired; the message; a
# channel's capacity; messages older than this have expired; the time now; the channels'
# expiry (seconds); the layer's prefix. Returns {channels over capacity, local members}.
# A member's channel key is the prefix and its name: the script writes keys it computes,
# which one Redis server (not a cluster) allows.
PUBLISH = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, ARGV[1])
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
local capacity = tonumber(ARGV[3])
local over_capacity = 0
local local_members = {}
for _, member in ipairs(members) do
    if string.find(member, '!', 1, true) then
        local_members[#local_members + 1] = member
    else
        local key = ARGV[7] .. member
        redis.call('ZREMRANGEBYSCORE', key, 0, ARGV[4])
        if redis.call('ZCOUNT', key, '-inf', '+inf') < capacity then
            redis.call('ZADD', key, ARGV[5], ARGV[2])
            redis.call('EXPIRE', key, ARGV[6])
        else
            over_capacity = over_capacity + 1
        end
    end
end
return {over_capacity, local_members}
"""

# KEYS[1]: the group; ARGV[1]: members added before this time have expired.
MEMBERS = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, ARGV[1])
return redis.call('ZRANGE', KEYS[1], 0, -1)
"""

# KEYS: the member channels' keys; ARGV: a message for each, the capacity of each, then
# messages older than this have expired, the time now, the channels' expiry (seconds).
DELIVER = """
local n = #KEYS
local over_capacity = 0
local expired = ARGV[2 * n + 1]
local current_time = ARGV[2 * n + 2]
local expiry = ARGV[2 * n + 3]
for i = 1, n do
    redis.call('ZREMRANGEBYSCORE', KEYS[i], 0, expired)
    if redis.call('ZCOUNT', KEYS[i], '-inf', '+inf') < tonumber(ARGV[i + n]) then
        redis.call('ZADD', KEYS[i], current_time, ARGV[i])
        redis.call('EXPIRE', KEYS[i], expiry)
    else
        over_capacity = over_capacity + 1
    end
end
return over_capacity
"""


PUBLISH_SCRIPT, DELIVER_SCRIPT = Script(PUBLISH), Script(DELIVER)


class RedisChannelLayer(RedisChannelLayerBase):
    """``channels_redis.core.RedisChannelLayer``, with a cheaper ``group_send`` and a hub's
    batched read (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._blocking: redis.Redis | None = None
        self._blocking_lock = threading.Lock()
        self._hot: Connections | None = None  # group_send_blocking's
        self._bzmpop = True  # until Redis says it has no such command (before 7.0)
        # receive_many's: a connection of its own for each reading channel (a hub's) of
        # each event loop, and its BZMPOP packed once.
        self._readers: WeakKeyDictionary[Any, dict[str, tuple[Any, bytes]]] = WeakKeyDictionary()

    @property
    def one_server(self) -> bool:
        """One Redis server and one capacity for every channel: the one-trip ways apply."""
        return self.ring_size == 1 and not self.channel_capacity

    def new_reader(self, prefix: str = "hub") -> str:
        """A plain channel (no ``!``) for one reader of this process: :meth:`receive_many`."""
        return f"{prefix}.{self.client_prefix}.{uuid.uuid4().hex}"

    async def receive_many(self, channel: str) -> list[dict[str, Any]]:
        """The messages waiting on a plain channel, oldest first, up to :data:`READ_BATCH`;
        waits for one (``[]`` after channels-redis's blocking timeout without any)."""
        assert "!" not in channel and self.require_valid_channel_name(channel, receive=True)
        connection = self.connection(self.consistent_hash(channel))
        key = self.prefix + channel
        members = None
        if self._bzmpop:
            try:
                popped = await self._bzmpop_read(channel, key)
            except redis.ResponseError as error:
                if "unknown command" not in str(error).lower():
                    raise
                self._bzmpop = False
                log.warning("Redis before 7.0 (no BZMPOP): a hub reads one message a trip")
            else:
                members = [member for member, _score in popped[1]] if popped else []
        if members is None:  # Redis 5 and 6: one message a trip, as channels-redis reads
            popped = await connection.bzpopmin(key, self.brpop_timeout)
            members = [popped[1]] if popped else []
        messages = []
        for member in members:
            message = self.deserialize(member)
            message.pop("__asgi_channel__", None)  # a sender of channels-redis's own names it
            messages.append(message)
        return messages

    async def receive(self, channel: str) -> dict[str, Any]:
        """channels-redis's ``receive``, which ends when it is cancelled. Cancelled as a
        command goes out (a ``/ws/live/`` socket refused or closed right after it opened), its
        cancellation could be dropped (:data:`WAIT_FOR_DROPS_CANCEL`): it then read Redis every
        ``brpop_timeout`` forever, holding the layer's receive lock, and the socket's task never
        ended (nor did ``/healthz``'s ``wait_for`` of it). So it runs in a task of its own,
        cancelled again until it has ended."""
        if not WAIT_FOR_DROPS_CANCEL:
            return await super().receive(channel)
        receiving = asyncio.ensure_future(super().receive(channel))
        try:
            return await asyncio.shield(receiving)
        except asyncio.CancelledError:
            while not receiving.done():
                receiving.cancel()
                # cancelled again meanwhile (its task ending twice): it still ends first
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait({receiving}, timeout=RECANCEL)
            if not receiving.cancelled():
                receiving.exception()  # retrieved: a message or error it got meanwhile is dropped
            raise

    async def _bzmpop_read(self, channel: str, key: str) -> Any:
        """``BZMPOP`` of ``key`` (the channel's) on the channel's own connection: redis-py's
        ``Connection`` without its client (see the module). A read cancelled or failed
        leaves its connection in an unknown state (an answer may still come): it is closed
        and the next read connects afresh; one whose connection Redis had closed (a restart)
        is tried again at once on a new one, then a few times more over about half a second
        (:data:`READ_RETRIES`), as redis-py's client retries: a Redis restarting is back
        within them, and the hub does not wait its own second (``combat.hub.RETRY``)."""
        for wait in READ_RETRIES:
            try:
                return await self._bzmpop_once(channel, key)
            except redis.ConnectionError:
                await asyncio.sleep(wait)
        return await self._bzmpop_once(channel, key)

    async def _bzmpop_once(self, channel: str, key: str) -> Any:
        readers = self._readers.setdefault(asyncio.get_running_loop(), {})
        reader = readers.get(channel)
        if reader is None:
            pool = self.connection(self.consistent_hash(channel)).connection_pool
            command = pack("BZMPOP", self.brpop_timeout, 1, key, "MIN", "COUNT", READ_BATCH)
            reader = readers[channel] = (pool.make_connection(), command)
        connection, command = reader
        try:
            return await exchange(connection, command)
        except redis.ResponseError:
            raise  # Redis answered: the connection is in step
        except BaseException:
            readers.pop(channel, None)
            await asyncio.shield(connection.disconnect(nowait=True))
            raise

    def _publish(self, group: str, message: dict[str, Any]) -> tuple[bytes, list[Any]]:
        assert self.require_valid_group_name(group), "Group name not valid"
        now = time.time()
        expired = int(now) - int(self.expiry)
        args = [int(now) - self.group_expiry, self.serialize(message), self.capacity, expired]
        return self._group_key(group), [*args, now, self.expiry, self.prefix]

    def _deliveries(self, names: list[bytes], message: dict[str, Any]) -> dict[int, list[Any]]:
        """The ``DELIVER`` script's keys and arguments for each server, for these members
        (channels-redis's messages: each names its channels)."""
        channel_names = [x.decode("utf8") for x in names]
        to_connection, messages, capacities = self._map_channel_keys_to_connection(
            channel_names, message
        )
        now = time.time()
        out = {}
        for index, keys in to_connection.items():
            args = [messages[k] for k in keys] + [capacities[k] for k in keys]
            out[index] = [len(keys), *keys, *args, int(now) - int(self.expiry), now, self.expiry]
        return out

    def _over(self, over: int, group: str) -> None:
        if over > 0:
            log.info("%s channels over capacity in group %s", over, group)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        key, args = self._publish(group, message)
        if self.one_server:
            over, names = await self.connection(0).eval(PUBLISH, 1, key, *args)
        else:
            connection = self.connection(self.consistent_hash(group))
            names, over = await connection.eval(MEMBERS, 1, key, args[0]), 0
        for index, deliver in self._deliveries(names, message).items():
            over += await self.connection(index).eval(DELIVER, *deliver)
        self._over(over, group)

    def group_send_blocking(self, group: str, message: dict[str, Any]) -> None:
        """:meth:`group_send` from a thread without an event loop (a view's commit), over a
        synchronous connection of this process. One server only (:attr:`one_server`, its
        ``address`` given): elsewhere ``group_send`` through ``async_to_sync``."""
        if not self.one_server or "address" not in self.hosts[0]:
            from asgiref.sync import async_to_sync

            async_to_sync(self.group_send)(group, message)
            return
        key, args = self._publish(group, message)
        if self._hot is None:
            self._hot = Connections(self._blocking_client().connection_pool.make_connection)
        with self._hot.one() as connection:
            over, names = PUBLISH_SCRIPT.call(connection, [key], args)
            for deliver in self._deliveries(names, message).values():
                over += DELIVER_SCRIPT.call(
                    connection, deliver[1 : 1 + deliver[0]], deliver[1 + deliver[0] :]
                )
        self._over(over, group)

    def _blocking_client(self) -> redis.Redis:
        if self._blocking is None:
            with self._blocking_lock:
                if self._blocking is None:
                    host = dict(self.hosts[0])
                    self._blocking = redis.Redis.from_url(host.pop("address"), **host)
        return self._blocking
