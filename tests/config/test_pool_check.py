"""The pool's check of a connection it hands out (``config.postgresql``): no statement for a
healthy idle one, and one whose server went away is found and replaced before it is used."""

from __future__ import annotations

import select
import time

import pytest
from django.db import connection

from config.postgresql.base import check

pytestmark = pytest.mark.django_db


@pytest.fixture
def pool():
    if connection.vendor != "postgresql":
        pytest.skip("the pool is PostgreSQL's")
    from psycopg_pool import ConnectionPool

    made = ConnectionPool(kwargs=_params(), min_size=1, max_size=1, check=check, open=True)
    yield made
    made.close()


@pytest.fixture
def full_checks(monkeypatch):
    from psycopg_pool import ConnectionPool

    calls = []
    checked = ConnectionPool.check_connection
    monkeypatch.setattr(
        ConnectionPool, "check_connection", staticmethod(lambda c: (calls.append(c), checked(c)))
    )
    return calls


def _params() -> dict:
    """The test database's connection parameters, for a psycopg connection of its own."""
    params = connection.get_connection_params()
    params.pop("pool", None)
    return params


def _put_back_after(pool, statement: str):
    """A connection of ``pool`` that ran ``statement`` and went back idle; its backend's pid."""
    conn = pool.getconn()
    pid = _backend(conn)
    conn.execute(statement)
    if not conn.autocommit:
        conn.commit()
    pool.putconn(conn)
    return conn, pid


def _backend(conn) -> int:
    return conn.execute("SELECT pg_backend_pid()").fetchone()[0]


def test_a_healthy_idle_connection_is_handed_out_without_a_statement(pool, full_checks):
    conn = pool.getconn()
    pid = _backend(conn)
    pool.putconn(conn)
    conn = pool.getconn()
    assert _backend(conn) == pid
    pool.putconn(conn)
    assert full_checks == []


def test_a_connection_whose_server_went_away_is_replaced_before_it_is_used(pool, full_checks):
    conn = pool.getconn()
    pid = _backend(conn)
    pool.putconn(conn)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    poller = select.poll()
    poller.register(conn.pgconn.socket, select.POLLIN)
    deadline = time.monotonic() + 5
    while not poller.poll(50) and time.monotonic() < deadline:
        pass
    conn = pool.getconn(timeout=10)
    assert _backend(conn) != pid  # a new connection, and it answers
    pool.putconn(conn)
    assert full_checks  # the terminated one got the statement, and failed it


def test_the_sites_pool_checks_with_it(settings):
    if connection.vendor != "postgresql" or not connection.pool:
        pytest.skip("the pool is PostgreSQL's")
    assert connection.pool._check is check


def _wait_readable(conn, seconds: float = 5) -> None:
    poller = select.poll()
    poller.register(conn.pgconn.socket, select.POLLIN)
    deadline = time.monotonic() + seconds
    while not poller.poll(50) and time.monotonic() < deadline:
        pass


def test_a_connection_ended_by_idle_session_timeout_is_replaced(pool, full_checks):
    """PostgreSQL ends a session idle too long (``idle_session_timeout``): the pool's next
    hand-out finds it on the socket and gives a new one that answers."""
    conn, pid = _put_back_after(pool, "SET idle_session_timeout = '100ms'")
    _wait_readable(conn)
    conn = pool.getconn(timeout=10)
    assert _backend(conn) != pid
    pool.putconn(conn)
    assert full_checks


def test_a_connection_in_a_failed_transaction_is_not_handed_out_as_it_is():
    """A connection whose transaction failed (a statement raised, no rollback) fails the
    check: the pool throws it away rather than hand it to a request that would fail."""
    if connection.vendor != "postgresql":
        pytest.skip("the pool is PostgreSQL's")
    import psycopg
    from psycopg import pq

    with psycopg.connect(**_params()) as conn:
        conn.autocommit = False
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("SELECT 1/0")
        assert conn.pgconn.transaction_status == pq.TransactionStatus.INERROR
        with pytest.raises(psycopg.Error):
            check(conn)


def test_a_healthy_connection_with_a_message_waiting_is_kept(pool, full_checks):
    """Something waiting on the socket (a notification) is not a dead server: the pool's own
    check runs, passes, and the same connection is handed out."""
    import psycopg

    conn, pid = _put_back_after(pool, "LISTEN st_pool_check")
    with psycopg.connect(**_params(), autocommit=True) as other:  # outside the test's transaction
        other.execute("NOTIFY st_pool_check")
    _wait_readable(conn)
    conn = pool.getconn(timeout=10)
    assert _backend(conn) == pid
    conn.execute("UNLISTEN *")
    pool.putconn(conn)
    assert full_checks
