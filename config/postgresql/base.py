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
"""

from __future__ import annotations

import select
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


class DatabaseWrapper(base.DatabaseWrapper):
    """Django's PostgreSQL backend; its pool checks connections with :func:`check`."""

    @property
    def pool(self) -> Any:
        pool = super().pool
        if pool is not None and pool._check is not None:
            pool._check = check
        return pool
