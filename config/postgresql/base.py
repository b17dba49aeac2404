"""Django's PostgreSQL backend (psycopg 3 and its pool), with one change: the pool's check of
a connection it hands out (``CONN_HEALTH_CHECKS``) sends a statement only when the connection's
socket says something happened since it was last used.

psycopg_pool's check sends an empty statement, a round trip to PostgreSQL on every request
that takes a connection (a tap's first statement, before any of its own). An idle connection
whose server went away (a restart, a crash, ``pg_terminate_backend``) has its socket readable
or closed: PostgreSQL's last message or the end of the stream is waiting there. So the socket
is polled first, without waiting; only a connection that is not plainly idle and healthy
(readable, in a bad state, inside a transaction) gets the pool's own check, which replaces it
if it fails. What no socket shows (a network that drops packets without a word) the empty
statement would not have found any sooner: it waits for TCP like any statement.

And one addition: a ``timestamptz`` is read by psycopg's C loader when the connection's time
zone is UTC (:func:`utc_loader`). Django's own loader subclasses psycopg's pure-Python one to
put its time zone on each value, so every timestamp a page or a push reads was parsed in
Python (a shared scene's change reads a hundred: its challenges' and its log's); the C loader
gives the same values, in the connection's time zone, which Django sets to UTC.
"""

from __future__ import annotations

import datetime
import select
from functools import lru_cache
from typing import Any

from django.db.backends.postgresql import base


def check(conn: Any) -> None:
    """The pool's check of ``conn``: raises if it cannot be used (the pool then replaces it)."""
    from psycopg import pq
    from psycopg_pool import ConnectionPool

    if (
        conn.pgconn.status == pq.ConnStatus.OK
        and conn.pgconn.transaction_status == pq.TransactionStatus.IDLE
        and not _readable(conn.pgconn.socket)
    ):
        return
    ConnectionPool.check_connection(conn)


def _readable(fd: int) -> bool:
    """Whether anything (a message, an error, the end) waits on the idle socket ``fd``."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(0))


@lru_cache
def utc_loader() -> type | None:
    """A ``timestamptz`` loader whose ``load`` is psycopg's C one, with the ``timezone``
    Django's cursors compare (UTC: they then register no loader of their own); None without
    psycopg's C build. The C loader cannot be subclassed: each instance takes one's bound
    ``load``, which psycopg's row loader then calls without a Python frame between."""
    from psycopg import adapters
    from psycopg.adapt import Loader
    from psycopg.pq import Format
    from psycopg.types.datetime import TimestamptzLoader

    fast = adapters.get_loader(adapters.types["timestamptz"].oid, Format.TEXT)
    if fast is None or issubclass(fast, TimestamptzLoader):
        return None  # the pure-Python one: Django's is as fast

    class UtcTimestamptzLoader(Loader):
        timezone = datetime.UTC

        def __init__(self, oid: int, context: Any = None) -> None:
            super().__init__(oid, context)
            self._fast = fast(oid, context)
            self.load = self._fast.load  # type: ignore[method-assign]

        def load(self, data: Any) -> datetime.datetime:  # what the instance's bound one does
            return self._fast.load(data)

    return UtcTimestamptzLoader


@lru_cache
def _with_utc_loader(context: Any) -> Any:
    """A copy of Django's adapters map (``context``, shared by its connections) whose
    ``timestamptz`` loader is :func:`utc_loader`'s."""
    from psycopg.adapt import AdaptersMap

    loader = utc_loader()
    if loader is None:
        return context
    fast = AdaptersMap(context)
    fast.register_loader("timestamptz", loader)
    return fast


class DatabaseWrapper(base.DatabaseWrapper):
    """Django's PostgreSQL backend; its pool checks connections with :func:`check`, and its
    connections read ``timestamptz`` with psycopg's C loader (:func:`utc_loader`) when their
    time zone is UTC."""

    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        # Django sets each connection's time zone to timezone_name (its configure step) and
        # reads values in self.timezone: both UTC, the C loader gives what Django's does
        if (
            params.get("context") is not None
            and self.timezone_name == "UTC"
            and self.timezone == datetime.UTC
        ):
            params["context"] = _with_utc_loader(params["context"])
        return params

    @property
    def pool(self) -> Any:
        pool = super().pool
        if pool is not None and pool._check is not None:
            pool._check = check
        return pool
