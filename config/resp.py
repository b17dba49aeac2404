"""Redis commands for the hot paths without redis-py's client: packed once, on connections of
their own.

A push's publish (``config.layers``), a hub's read and a tap's throttle (``config.throttle``)
run for every tap. Through redis-py's client each command is packed argument by argument, goes
through its retries, its pool (a check of the connection each time), its timers and metrics:
about three times the round trip itself. Here a command is packed in one go (:func:`pack`), a
script is sent by its SHA-1 (``EVALSHA``; whole only when Redis does not know it, as after a
restart: :class:`Script`), on redis-py's ``Connection`` (it connects, reads and raises Redis's
errors as the client does). A connection that failed other than by Redis's answer is never
used again, nor are the others idle beside it (:class:`Connections`): the next command
connects afresh.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import redis


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


class Script:
    """A Lua script, sent by its SHA-1 (``EVALSHA``), whole only when Redis lacks it."""

    def __init__(self, body: str) -> None:
        self.body = body
        self.sha = hashlib.sha1(body.encode()).hexdigest()

    def call(self, connection: redis.Connection, keys: list[Any], args: list[Any]) -> Any:
        """Run it on a synchronous connection; Redis's error is raised as redis-py's."""
        connection.send_packed_command([pack("EVALSHA", self.sha, len(keys), *keys, *args)], False)
        try:
            return connection.read_response()
        except redis.exceptions.NoScriptError:
            pass
        # A Redis that restarted (or flushed its scripts): the whole text, which it keeps.
        connection.send_packed_command([pack("EVAL", self.body, len(keys), *keys, *args)], False)
        return connection.read_response()


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
