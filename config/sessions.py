"""Django's database sessions, read with one statement written once.

The same engine as ``django.contrib.sessions.backends.db`` (the same table, rows, expiry and
signing): a logout deletes the row, so the cookie it leaves is nobody's at the next request,
on every process; a stolen cookie is as good or as bad as before. Only the read every request
makes (the session by its key, unexpired) is a statement whose text is built once instead of
an ORM query built and compiled anew: about a millisecond of a tap's CPU; and a session's
data read again unchanged is not verified again (its signature is checked once a process).
Once this process knows whose a session is, the same statement brings the user's row along
(config/auth.py), so the backend does not read it again. A cookie-signed or cache-kept
session was not chosen: the first cannot be ended by a logout, the second
depends on the cache (Redis), whose outage would then log everyone out or fail every page.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import suppress
from functools import cache
from typing import Any

from django.contrib.auth import BACKEND_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.core.exceptions import ValidationError
from django.db import connections, router
from django.utils import timezone

from config import auth
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


@cache
def _select_with_user(alias: str) -> str:
    """:func:`_select` with the user whose id is its first parameter (config/auth.py)."""
    from django.contrib.sessions.models import Session

    return auth.joined_select(alias, _select(alias), Session._meta.db_table)


# The payload of each session data this process verified lately: its signed text (the row's
# ``session_data``) -> the serialized data its signature covers. A session read again unchanged
# (every tap reads its session) is decoded from it without the signature's HMAC and base64;
# text that never verified is never in it.
VERIFIED_KEPT = 10_000
_verified: OrderedDict[str, bytes] = OrderedDict()
_verified_lock = threading.Lock()


class SessionStore(DatabaseSessionStore):
    """``django.contrib.sessions.backends.db``'s store; its read is :func:`_select`, with the
    user's row when this process knows whose the session is (config/auth.py)."""

    def _get_session_from_db(self) -> Any:
        model = self.model
        alias = router.db_for_read(model)
        connection = connections[alias]
        expires = model._meta.get_field("expire_date")
        now = expires.get_db_prep_value(timezone.now(), connection)
        user_id = auth.owner(self.session_key) if self.session_key else None
        with statement_cursor(connection) as cursor:
            if user_id is None:
                cursor.execute(_select(alias), [self.session_key, now])
            else:
                cursor.execute(_select_with_user(alias), [user_id, self.session_key, now])
            row = cursor.fetchone()
        auth.keep_user_row(alias, user_id if row else None, tuple(row[1:]) if row else ())
        if row is None:
            self._session_key = None  # as the ORM's read does for a key it did not find
            return None
        return model(session_key=self.session_key, session_data=row[0])

    def decode(self, session_data: str) -> dict[str, Any]:
        """Django's decode (a bad signature, or data that is not the serializer's, is an empty
        session), once for each ``session_data`` (:data:`_verified`)."""
        payload = _verified.get(session_data)
        if payload is not None:
            return self.serializer().loads(payload)  # a fresh copy: the request may change it
        data = super().decode(session_data)
        if data:
            with _verified_lock:
                _verified[session_data] = self.serializer().dumps(data)
                while len(_verified) > VERIFIED_KEPT:
                    _verified.popitem(last=False)
        return data

    def load(self) -> dict[str, Any]:
        data = super().load()
        if data.get(BACKEND_SESSION_KEY) == auth.MODEL_BACKEND:
            data[BACKEND_SESSION_KEY] = auth.BACKEND  # a session made before config.auth
        self._remember_owner(data)
        return data

    def save(self, must_create: bool = False) -> None:
        super().save(must_create=must_create)
        self._remember_owner(getattr(self, "_session_cache", {}))  # a login: whose it is

    def _remember_owner(self, data: dict[str, Any]) -> None:
        user_id = data.get(SESSION_KEY)
        if user_id is not None and self.session_key:
            with suppress(ValidationError):  # not an id at all: Django refuses it too
                auth.remember(self.session_key, get_user_model()._meta.pk.to_python(user_id))
