"""Pushing rendered fragments to the phones and tablets that are watching.

Audiences are channel-layer groups: one per user (``user.<id>``) for what only that person
may see, and one per login session (``session.<digest>``) so that logging out closes that
session's sockets. Services call :func:`push_to_user` from ``transaction.on_commit`` so
nobody is told about a change that rolled back. A push carries whole fragments (never
diffs), so a lost push costs nothing: the next push or reconnect carries the full state.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

FRAGMENT_EVENT = "live.fragment"
LOGOUT_EVENT = "live.logout"

log = logging.getLogger(__name__)


def user_group(user_id: int) -> str:
    """The group of every open socket of one user."""
    return f"user.{user_id}"


def session_group(session_key: str) -> str:
    """The group of every socket opened under one login session.

    The key itself never goes to the channel layer: only a digest of it.
    """
    return "session." + hashlib.sha256(session_key.encode()).hexdigest()[:40]


def fragment_event(html: str) -> dict[str, str]:
    """The channel-layer event that carries out-of-band fragments to sockets."""
    return {"type": FRAGMENT_EVENT, "html": html}


def push_to_user(user_id: int, html: str) -> None:
    """Send out-of-band fragments to every socket of one user (call it on commit)."""
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(user_group(user_id), fragment_event(html))


def close_session_sockets(sender: Any, request: Any = None, **kwargs: Any) -> None:
    """On ``user_logged_out``: close every socket of the session that is logging out.

    Django sends the signal before it flushes the session, so the key is still there. A
    channel layer that is down must not stop a logout: that is logged, not raised.
    """
    session_key = getattr(getattr(request, "session", None), "session_key", None)
    layer = get_channel_layer()
    if not session_key or layer is None:
        return
    try:
        async_to_sync(layer.group_send)(session_group(session_key), {"type": LOGOUT_EVENT})
    except Exception:  # a logout must succeed even when Redis is down
        log.exception("could not close the sockets of a session that logged out")
