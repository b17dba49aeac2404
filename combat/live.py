"""Pushing rendered fragments to the phones and tablets that are watching.

Audiences are channel-layer groups: the storytellers of a scene, all players of a scene, one
player's private part of a scene, one user (``user.<id>``) and one login session
(``session.<digest>``, so that logging out closes that session's sockets). A change is
rendered once per audience (:mod:`combat.fragments`) and sent once per audience over the
channel layer; services call :func:`scene_changed` from ``transaction.on_commit`` so nobody
is told about a change that rolled back. A push carries whole fragments (never diffs) and
the scene's ``seq``, so a lost push costs nothing: a phone that sees a gap reconnects and
gets the full state.

Every event names its ``group``: a server process reads the layer through one hub
(:mod:`combat.hub`) subscribed once per audience, and the group tells it which of its sockets
get the event. Publishing never raises: the change is committed already, and a phone that
missed a push resyncs (a layer that is down is logged).

Sheet changes (costs, refreshes, a new game night) do not bump any scene's ``seq``: they are
not scene changes, and a storyteller's tap made on that ``seq`` must stay valid. They push the
private part of the players concerned (carrying the scene's current ``seq``, so no gap shows,
and the sheets' own counter ``data-sheet-seq``) and the board regions that show sheets.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Collection, Iterable
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth import get_user_model

FRAGMENT_EVENT = "live.fragment"
LOGOUT_EVENT = "live.logout"
RECHECK_EVENT = "live.recheck"  # a player's access to a scene may have ended: sockets look again

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


def fragment_event(html: str, group: str = "") -> dict[str, str]:
    """The channel-layer event that carries out-of-band fragments to sockets."""
    event = {"type": FRAGMENT_EVENT, "html": html}
    if group:
        event["group"] = group
    return event


def _send(group: str, html: str) -> None:
    layer = get_channel_layer()
    if layer is None or not html:
        return
    try:
        async_to_sync(layer.group_send)(group, fragment_event(html, group))
    except Exception:  # committed already: phones resync; a push must not fail the request
        log.exception("could not publish to %s", group)


def push_to_user(user_id: int, html: str) -> None:
    """Send out-of-band fragments to every socket of one user (call it on commit)."""
    _send(user_group(user_id), html)


def scene_changed(
    scene_id: int,
    *,
    private_user_ids: Iterable[int] = (),
    regions: Collection[str] | None = None,
    players: bool = True,
) -> None:
    """Render the scene once per audience and send each rendering once (call it on commit).

    ``regions`` names the board's regions that changed (``None``: all of them); ``players``
    false: a change no player sees, for the storytellers alone.
    """
    from combat import fragments

    parts = fragments.scene_change_parts(
        scene_id, private_user_ids=private_user_ids, regions=regions, players=players
    )
    for audience, user_id, html in parts:  # each sent as soon as it is rendered
        if audience == "players":
            _send(players_group(scene_id), html)
        elif audience == "storytellers":
            _send(storytellers_group(scene_id), html)
        else:
            _send(player_group(scene_id, user_id), html)


def recheck_player(scene_id: int, user_id: int) -> None:
    """After a removal (on commit): the player's sockets of the scene check they may stay."""
    group = player_group(scene_id, user_id)
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group, {"type": RECHECK_EVENT, "group": group})
    except Exception:
        log.exception("could not ask %s to check its access", group)


def presence_changed(scene_id: int) -> None:
    """Who is connected changed: only the storytellers' board shows it."""
    from combat import fragments

    html = fragments.presence_fragment(scene_id)
    if html:
        _send(storytellers_group(scene_id), html)


def sheets_changed(*, character_ids: Iterable[int] = (), chronicle_ids: Iterable[int] = ()) -> None:
    """Sheets changed (call it on commit): every open scene they are in shows it.

    The private part of each player concerned (rendered once per player: it is theirs) and,
    once per scene, the board regions that show sheets.
    """
    from combat import fragments

    try:
        scenes = fragments.open_scenes_of(character_ids=character_ids, chronicle_ids=chronicle_ids)
        if not scenes:
            return
        users = get_user_model().objects.in_bulk(
            {u for players in scenes.values() for u in players}
        )
        for scene_id, players in sorted(scenes.items()):
            scene = fragments.load(scene_id)
            if scene is None:
                continue
            _send(
                storytellers_group(scene_id),
                fragments.board_regions(scene, fragments.SHEET_REGIONS),
            )
            for user_id in sorted(players):
                if user_id in users:
                    _send(
                        player_group(scene_id, user_id),
                        fragments.private_state(scene, users[user_id]),
                    )
    except Exception:  # the sheet is written: a phone that misses it resyncs
        log.exception("could not announce a sheet change")


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
        group = session_group(session_key)
        async_to_sync(layer.group_send)(group, {"type": LOGOUT_EVENT, "group": group})
    except Exception:  # a logout must succeed even when Redis is down
        log.exception("could not close the sockets of a session that logged out")
