"""The signed-in user, read with the session in one statement.

Every request reads its session (:mod:`config.sessions`) and then, for someone signed in, the
session's user (the backend's ``get_user``): two statements, one after the other. A session's
key belongs to one user all its life (a login takes a new key: ``cycle_key`` or ``flush``), so
a process that has written or read a key's session once knows whose it is (:func:`remember`):
its later reads of that key bring that user's row along (:func:`joined_select`, a LEFT JOIN on
the id it knows) and :class:`UserBackend` takes the row instead of reading it again, if it is
the user the session names. What proves who someone is stays Django's: the session's row must
be there and unexpired (a logout deletes it), the user active (``user_can_authenticate``), and
the session's hash the user's (a password change ends the other sessions), which
``django.contrib.auth.get_user`` checks on the row as on one it read itself.

Sessions made before this backend name ``ModelBackend``; the store reads them as this one's
(:data:`MODEL_BACKEND`), so a deploy signs nobody out and only one backend checks passwords.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextvars import ContextVar
from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.db import connections

#: The path sessions made before :class:`UserBackend` name, read as :data:`BACKEND`.
MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"
BACKEND = "config.auth.UserBackend"

# Whose each session key is, for the keys this process read lately (a key is one user's).
OWNERS_KEPT = 10_000
_owners: OrderedDict[str, Any] = OrderedDict()
_owners_lock = threading.Lock()

# The user row read with this request's session: (its pk, the user or None if no row).
_read_with_session: ContextVar[tuple[Any, Any] | None] = ContextVar("user_read", default=None)


def owner(session_key: str) -> Any:
    """The user id the session ``session_key`` was read with before, or None."""
    return _owners.get(session_key)


def remember(session_key: str, user_id: Any) -> None:
    """``session_key`` is ``user_id``'s session (its data said so)."""
    with _owners_lock:
        _owners[session_key] = user_id
        _owners.move_to_end(session_key)
        while len(_owners) > OWNERS_KEPT:
            _owners.popitem(last=False)


@cache
def _user_columns(alias: str) -> tuple[str, tuple[Any, ...]]:
    """The user table's columns as ``u.<column>``, and each one's (field, Col, converters)."""
    users = get_user_model()
    connection = connections[alias]
    q = connection.ops.quote_name
    fields = tuple(users._meta.concrete_fields)
    columns = ", ".join(f"u.{q(f.column)}" for f in fields)
    found = []
    for field in fields:
        col = field.get_col(users._meta.db_table)
        converters = [*connection.ops.get_db_converters(col), *col.get_db_converters(connection)]
        found.append((field, col, tuple(converters)))
    return columns, tuple(found)


def joined_select(alias: str, select: str, session_table: str) -> str:
    """``select`` (the session's read, ``FROM <session_table> WHERE ...``) with the user whose
    id is its first parameter brought along: a LEFT JOIN, so a missing user still reads the
    session."""
    users = get_user_model()
    q = connections[alias].ops.quote_name
    columns, _ = _user_columns(alias)
    head, _, rest = select.partition(f" FROM {q(session_table)} ")
    table, pk = q(users._meta.db_table), q(users._meta.pk.column)
    return f"{head}, {columns} FROM {q(session_table)} LEFT JOIN {table} u ON u.{pk} = %s {rest}"


def keep_user_row(alias: str, user_id: Any = None, values: tuple[Any, ...] = ()) -> None:
    """The user columns read with the session (all None: no such user), for :class:`UserBackend`
    in this request; none: this request's session was read alone (nothing is kept)."""
    if user_id is None:
        _read_with_session.set(None)
        return
    user = None
    if values[0] is not None:
        connection = connections[alias]
        _, found = _user_columns(alias)
        row = []
        for value, (_field, col, converters) in zip(values, found, strict=True):
            for converter in converters:
                value = converter(value, col, connection)
            row.append(value)
        user = get_user_model().from_db(alias, [f.attname for f, _c, _v in found], row)
    _read_with_session.set((user_id, user))


class UserBackend(ModelBackend):
    """Django's ``ModelBackend``: the same passwords and permissions; its ``get_user`` takes the
    user row read with the session when it is the one asked for."""

    def get_user(self, user_id: Any) -> Any:
        kept = _read_with_session.get()
        if kept is None or kept[0] != user_id:
            return super().get_user(user_id)
        _read_with_session.set(None)  # one request's, taken once
        user = kept[1]
        return user if user is not None and self.user_can_authenticate(user) else None
