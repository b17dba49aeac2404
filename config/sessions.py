"""Django's database sessions, read with one statement written once.

The same engine as ``django.contrib.sessions.backends.db`` (the same table, rows, expiry and
signing): a logout deletes the row, so the cookie it leaves is nobody's at the next request,
on every process; a stolen cookie is as good or as bad as before. Only the read every request
makes (the session by its key, unexpired) is a statement whose text is built once instead of
an ORM query built and compiled anew: about a millisecond of a tap's CPU. A cookie-signed or
cache-kept session was not chosen: the first cannot be ended by a logout, the second
depends on the cache (Redis), whose outage would then log everyone out or fail every page.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.db import connections, router
from django.utils import timezone

from config.prepared import statement_cursor


@cache
def _select(alias: str) -> str:
    """The session by its key, unexpired: its data (the text for the database ``alias``)."""
    from django.contrib.sessions.models import Session

    meta, q = Session._meta, connections[alias].ops.quote_name
    key, data, expires = (
        meta.get_field(n).column for n in ("session_key", "session_data", "expire_date")
    )
    return f"SELECT {q(data)} FROM {q(meta.db_table)} WHERE {q(key)} = %s AND {q(expires)} > %s"


class SessionStore(DatabaseSessionStore):
    """``django.contrib.sessions.backends.db``'s store; its read is :func:`_select`."""

    def _get_session_from_db(self) -> Any:
        model = self.model
        alias = router.db_for_read(model)
        connection = connections[alias]
        expires = model._meta.get_field("expire_date")
        now = expires.get_db_prep_value(timezone.now(), connection)
        with statement_cursor(connection) as cursor:
            cursor.execute(_select(alias), [self.session_key, now])
            row = cursor.fetchone()
        if row is None:
            self._session_key = None  # as the ORM's read does for a key it did not find
            return None
        return model(session_key=self.session_key, session_data=row[0])
