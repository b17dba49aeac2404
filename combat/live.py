"""Pushing rendered fragments to the phones and tablets that are watching.

Audiences are channel-layer groups: the storytellers of a scene, all players of a scene, one
player's private part of a scene, one user (``user.<id>``) and one login session
(``session.<digest>``, so that logging out closes that session's sockets). A change is
rendered once per audience (:mod:`combat.fragments`) and sent once per audience over the
channel layer; services call :func:`scene_changed` from ``transaction.on_commit`` so nobody
is told about a change that rolled back. A push carries whole fragments (never diffs) and
the scene's ``seq``, so a lost push costs nothing: a phone that sees a gap reconnects and
gets the full state.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

FRAGMENT_EVENT = "live.fragment"
LOGOUT_EVENT = "live.logout"

log = logging.getLogger(__name__)


def user_group(user_id: int) -> str:
    """The group of every open socket of one user."""
    return f"user.{user_id}"


def storytellers_group(scene_id: int) -> str:
    return f"scene.{scene_id}.st"


def players_group(scene_id: int) -> str:
    return f"scene.{scene_id}.players"


def player_group(scene_id: int, user_id: int) -> str:
    return f"scene.{scene_id}.user.{user_id}"


def session_group(session_key: str) -> str:
    """The group of every socket opened under one login session.

    The key itself never goes to the channel layer: only a digest of it.
    """
    return "session." + hashlib.sha256(session_key.encode()).hexdigest()[:40]


def fragment_event(html: str) -> dict[str, str]:
    """The channel-layer event that carries out-of-band fragments to sockets."""
    return {"type": FRAGMENT_EVENT, "html": html}


def _send(group: str, html: str) -> None:
    layer = get_channel_layer()
    if layer is None or not html:
        return
    async_to_sync(layer.group_send)(group, fragment_event(html))


def push_to_user(user_id: int, html: str) -> None:
    """Send out-of-band fragments to every socket of one user (call it on commit)."""
    _send(user_group(user_id), html)


def scene_changed(scene_id: int, *, private_user_ids: Iterable[int] = ()) -> None:
    """Render the scene once per audience and send each rendering once (call it on commit)."""
    from combat import fragments

    rendered = fragments.scene_change_fragments(scene_id, private_user_ids=private_user_ids)
    if rendered is None:
        return
    _send(storytellers_group(scene_id), rendered.storytellers)
    _send(players_group(scene_id), rendered.players)
    for user_id, html in rendered.private.items():
        _send(player_group(scene_id, user_id), html)


def presence_changed(scene_id: int) -> None:
    """Who is connected changed: only the storytellers' board shows it."""
    from combat import fragments

    html = fragments.presence_fragment(scene_id)
    if html:
        _send(storytellers_group(scene_id), html)


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
