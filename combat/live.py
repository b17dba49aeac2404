"""Pushing rendered fragments to the phones and tablets that are watching.

Audiences are channel-layer groups: the storytellers of a scene, all players of a scene, one
player's private part of a scene, and one user (``user.<id>``). A change is rendered once per
audience (:mod:`combat.fragments`) and sent once per audience over the channel layer; services
call :func:`scene_changed` from ``transaction.on_commit`` so nobody is told about a change that
rolled back. A push carries whole fragments (never diffs) and the scene's ``seq``, so a lost
push costs nothing: a phone that sees a gap reconnects and gets the full state.
"""

from __future__ import annotations

from collections.abc import Iterable

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

FRAGMENT_EVENT = "live.fragment"


def user_group(user_id: int) -> str:
    """The group of every open socket of one user."""
    return f"user.{user_id}"


def storytellers_group(scene_id: int) -> str:
    return f"scene.{scene_id}.st"


def players_group(scene_id: int) -> str:
    return f"scene.{scene_id}.players"


def player_group(scene_id: int, user_id: int) -> str:
    return f"scene.{scene_id}.user.{user_id}"


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
