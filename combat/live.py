"""Pushing rendered fragments to the phones and tablets that are watching.

Audiences are channel-layer groups: one per user (``user.<id>``) for what only that person
may see. Services call :func:`push_to_user` from ``transaction.on_commit`` so nobody is told
about a change that rolled back. A push carries whole fragments (never diffs), so a lost
push costs nothing: the next push or reconnect carries the full state.
"""

from __future__ import annotations

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

FRAGMENT_EVENT = "live.fragment"


def user_group(user_id: int) -> str:
    """The group of every open socket of one user."""
    return f"user.{user_id}"


def fragment_event(html: str) -> dict[str, str]:
    """The channel-layer event that carries out-of-band fragments to sockets."""
    return {"type": FRAGMENT_EVENT, "html": html}


def push_to_user(user_id: int, html: str) -> None:
    """Send out-of-band fragments to every socket of one user (call it on commit)."""
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(user_group(user_id), fragment_event(html))
