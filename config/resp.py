"""Redis commands for the hot paths without redis-py's client: packed once, on connections of
their own.

A push's publish (``config.layers``), a hub's read and a tap's throttle (``config.throttle``)
run for every tap. Through redis-py's client each command is packed argument by argument, goes
through its retries, its pool (a check of the connection each time), its timers and metrics:
about three times the round trip itself. Here a command is packed in one go (:func:`pack`), a
script is sent by its SHA-1 (``EVALSHA``; whole only when Redis does not know it, as after a
restart: :class:`Script`), on redis-py's ``Connection`` (it connects, and Redis's errors
are raised as the client raises them); a reply is parsed in one go from the bytes read
(:func:`reply`), not line by line through redis-py's parser. A connection that failed other
than by Redis's answer is never used again, nor are the others idle beside it
(:class:`Connections`): the next command connects afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import redis
from redis._parsers.base import BaseParser


def pack(*args: bytes | str | int | float) -> bytes:
    """A command as Redis's protocol writes it (an array of bulk strings), each argument
    encoded as redis-py encodes it (text in UTF-8, numbers by ``str`` / ``repr``)."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, bytes):
            data = arg
        elif isinstance(arg, str):
            data = arg.encode()
        elif isinstance(arg, float):
            data = repr(arg).encode()
        else:
            data = str(int(arg)).encode()
        out += (b"$%d\r\n" % len(data), data, b"\r\n")
    return b"".join(out)


class Incomplete(Exception):
    """The bytes read so far end before the reply does."""


def _reply(buf: bytes, at: int) -> tuple[Any, int]:
    """One reply (RESP2 or RESP3) from ``buf[at:]`` and where it ends, shaped as redis-py's
    parsers shape it without decoding (bulk strings as bytes, an error reply as the exception
    redis-py raises for it, not raised). :class:`Incomplete` when ``buf`` ends first."""
    end = buf.find(b"\r\n", at)
    if end < 0:
        raise Incomplete
    kind, line, at = buf[at], buf[at + 1 : end], end + 2
    if kind in b"$=!":  # bulk string, verbatim string, bulk error
        n = int(line)
        if n < 0:
            return None, at
        stop = at + n
        if len(buf) < stop + 2:
            raise Incomplete
        data = buf[at:stop]
        if kind == 61:  # "=": "txt:" before the text
            data = data[4:]
        elif kind == 33:
            return _error(data), stop + 2
        return data, stop + 2
    if kind in b"*>~":  # array, push, set
        n = int(line)
        if n < 0:
            return None, at
        out = []
        for _ in range(n):
            value, at = _reply(buf, at)
            out.append(value)
        return out, at
    if kind == 37:  # "%": a map
        pairs = {}
        for _ in range(int(line)):
            key, at = _reply(buf, at)
            pairs[key], at = _reply(buf, at)
        return pairs, at
    if kind == 124:  # "|": attributes, then the reply they describe
        for _ in range(2 * int(line)):
            _, at = _reply(buf, at)
        return _reply(buf, at)
    if kind in b":(":  # integer, big number
        return int(line), at
    if kind == 44:  # ",": double
        return float(line), at
    if kind == 95:  # "_": null
        return None, at
    if kind == 35:  # "#": boolean
        return line == b"t", at
    if kind == 43:  # "+": simple string
        return line, at
    if kind == 45:  # "-": error
        return _error(line), at
    raise redis.InvalidResponse(f"Protocol error, got {chr(kind)!r} as reply type byte")


def _error(text: bytes) -> redis.ResponseError:
    """An error reply as redis-py's parsers make it: raised at once when it is one of a
    connection (``LOADING`` after a restart, ``NOAUTH``, too many clients), else returned."""
    error = BaseParser.parse_error(text.decode(errors="replace"))
    if isinstance(error, redis.ConnectionError):
        raise error
    return error


def _pushes(buf: bytes, at: int) -> int:
    """Where the push messages (RESP3's ``>``) from ``buf[at:]`` end. A push is nobody's
    reply: a server may send one whenever it likes (Redis Enterprise's maintenance notices,
    a client-side caching invalidation), before a command's reply or right behind it, and
    it is read whole (so the connection stays in step) and dropped."""
    while at < len(buf) and buf[at] == 62:  # ">"
        _, at = _reply(buf, at)
    return at


def reply(buf: bytes) -> Any:
    """The one reply ``buf`` holds (:class:`Incomplete` if it is not all there yet), the
    pushes before and after it skipped (:func:`_pushes`); an error reply raised as
    redis-py raises it."""
    value, end = _reply(buf, _pushes(buf, 0))
    end = _pushes(buf, end)
    if end != len(buf):  # one command in flight, one reply: anything more is out of step
        raise redis.InvalidResponse("Protocol error: more than one reply")
    if isinstance(value, redis.ResponseError):
        raise value
    return value


async def exchange(connection: Any, command: bytes) -> Any:
    """Send a packed command on redis-py's asynchronous ``Connection`` (connected first if it
    is not) and read its reply from the connection's stream directly: one or two reads of
    the socket's bytes, parsed in one go (:func:`reply`), rather than redis-py's parser
    reading them line by line through the stream. The connection must have nothing else in
    flight (a reader's own)."""
    if not connection.is_connected:
        await connection.connect()
    connection._writer.write(command)
    stream = connection._reader
    buf = b""
    try:
        async with asyncio.timeout(connection.socket_timeout):  # as redis-py's read
            while True:
                chunk = await stream.read(65536)
                if not chunk:
                    raise redis.ConnectionError("Connection closed by server.")
                buf = buf + chunk if buf else chunk
                try:
                    return reply(buf)
                except Incomplete:
                    continue
    except TimeoutError:
        raise redis.TimeoutError("Timeout reading from Redis") from None


class Script:
    """A Lua script, sent by its SHA-1 (``EVALSHA``), whole only when Redis lacks it."""

    def __init__(self, body: str) -> None:
        self.body = body
        self.sha = hashlib.sha1(body.encode()).hexdigest()

    def call(self, connection: redis.Connection, keys: list[Any], args: list[Any]) -> Any:
        """Run it on a synchronous connection; Redis's error is raised as redis-py's."""
        try:
            return exchange_blocking(connection, pack("EVALSHA", self.sha, len(keys), *keys, *args))
        except redis.exceptions.NoScriptError:
            pass
        # A Redis that restarted (or flushed its scripts): the whole text, which it keeps.
        return exchange_blocking(connection, pack("EVAL", self.body, len(keys), *keys, *args))


def exchange_blocking(connection: redis.Connection, command: bytes) -> Any:
    """:func:`exchange` on redis-py's synchronous ``Connection``: sent as it sends (it
    connects first if need be), the reply read from its socket and parsed in one go."""
    connection.send_packed_command([command], False)
    sock = connection._sock
    buf = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                raise redis.ConnectionError("Connection closed by server.")
            buf = buf + chunk if buf else chunk
            try:
                return reply(buf)
            except Incomplete:
                continue
    except TimeoutError:  # the socket's timeout (redis-py's socket_timeout)
        raise redis.TimeoutError("Timeout reading from Redis") from None
    except redis.RedisError:
        raise
    except OSError as error:
        raise redis.ConnectionError(f"Error while reading from Redis: {error}") from None


class Connections:
    """Synchronous connections made by ``make`` (a pool's ``make_connection``: its settings),
    each used by one thread at a time, kept idle between commands."""

    def __init__(self, make: Callable[[], redis.Connection]) -> None:
        self.make = make
        self.idle: list[redis.Connection] = []

    @contextlib.contextmanager
    def one(self) -> Iterator[redis.Connection]:
        """An idle connection (or a new one) for a command or a few, then idle again."""
        try:
            connection = self.idle.pop()
        except IndexError:  # every one busy in another thread
            connection = self.make()
        try:
            yield connection
        except redis.ResponseError:
            self.idle.append(connection)  # Redis answered: the connection is in step
            raise
        except BaseException:
            # Most likely Redis went away or restarted: the idle connections are as stale as
            # this one, and a second try (combat.live publishes twice) must not meet one.
            connection.disconnect()
            while self.idle:
                with contextlib.suppress(IndexError):
                    self.idle.pop().disconnect()
            raise
        self.idle.append(connection)


def script_runner(client: redis.Redis) -> Connections:
    """The :class:`Connections` of a client's pool (made once a pool)."""
    pool = client.connection_pool
    runner = getattr(pool, "_hot_connections", None)
    if runner is None:
        runner = pool._hot_connections = Connections(pool.make_connection)
    return runner
