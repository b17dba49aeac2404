"""Pushing rendered fragments to the phones and tablets that are watching.

Audiences are channel-layer groups: the storytellers of a scene, all players of a scene, one
player's private part of a scene, one user (``user.<id>``) and one login session
(``session.<digest>``, so that logging out closes that session's sockets). A change is
rendered once per audience (:mod:`combat.fragments`) and sent once per audience over the
channel layer; services call :func:`scene_changed` from ``transaction.on_commit`` so nobody
is told about a change that rolled back. A push carries whole fragments (never diffs) and
the scene's ``seq``, so a lost push costs nothing: a phone that sees a gap reconnects and
gets the full state, and each process's hub sends the whole state to a socket it finds behind
the database (:mod:`combat.hub`), so a push lost for good (a process killed between its commit
and its publish) is made good within a couple of seconds by whichever process serves the phone.

Every event names its ``group``: a server process reads the layer through one hub
(:mod:`combat.hub`) subscribed once per audience, and the group tells it which of its sockets
get the event. Publishing never raises: the change is committed already, and a phone that
missed a push resyncs (a layer that is down is logged).

Sheet changes (costs, refreshes, a new game night) do not bump any scene's ``seq``: they are
not scene changes, and a storyteller's tap made on that ``seq`` must stay valid. They push the
private part of the players concerned (carrying the scene's current ``seq``, so no gap shows,
and the sheets' own counter ``data-sheet-seq``) and the board regions that show sheets: in a
step's request (:func:`one_commit`) those go with the board part of its scene change.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from importlib import import_module
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.db import transaction
from django.db.models import Max, QuerySet
from django.db.models.signals import post_save
from django.utils.crypto import constant_time_compare

from combat import faults, fragments, render_cache
from combat.board_turns import BoardTurns
from combat.models import Participant, Scene
from combat.seqs import seq_of
from config.prepared import Prepared, PreparedValues

FRAGMENT_EVENT = "live.fragment"
LOGOUT_EVENT = "live.logout"
RECHECK_EVENT = "live.recheck"  # a player's access to a scene may have ended: sockets look again
ACCOUNT_EVENT = "live.account"  # a password or an account changed: sockets check their session

log = logging.getLogger(__name__)
# A publish is tried twice: after a Redis restart the first use of a pooled connection that
# went stale fails, and a player's own part lost that way is not seen by any hub's catch-up
# (it compares the players' seq, which the public part that follows does carry).
PUBLISH_ATTEMPTS = 2


def user_group(user_id: int) -> str:
    """The group of every open socket of one user."""
    return f"user.{user_id}"


SEQ_GROUPS = (".st", ".players")  # the audiences whose part of a change carries its seq


def storytellers_group(scene_id: int) -> str:
    return f"scene.{scene_id}.st"


def players_group(scene_id: int) -> str:
    return f"scene.{scene_id}.players"


def player_group(scene_id: int, user_id: int) -> str:
    return f"scene.{scene_id}.user.{user_id}"


def account_group(user_id: int) -> str:
    """The group every socket of one user hears for changes to the account itself."""
    return f"account.{user_id}"


def session_group(session_key: str) -> str:
    """The group of every socket opened under one login session.

    The key itself never goes to the channel layer: only a digest of it.
    """
    return "session." + hashlib.sha256(session_key.encode()).hexdigest()[:40]


def fragment_event(html: str, group: str = "", seq: int | None = None) -> dict[str, Any]:
    """The channel-layer event that carries out-of-band fragments to sockets. ``seq``: the
    scene change it carries (a scene change's push of the board or the public part only)."""
    event: dict[str, Any] = {"type": FRAGMENT_EVENT, "html": html}
    if group:
        event["group"] = group
    if seq is not None:
        event["seq"] = seq
    return event


# Set while scene_changed sends a change: its board and public parts then name their seq (a
# presence or sheet push carries the seq too, but not a change). A flag rather than an
# argument keeps _send(group, html) as the tests that capture pushes call it.
_announcing: ContextVar[bool] = ContextVar("announcing", default=False)
# Set while a player's own part is sent: the scene's seq it was rendered at (or after). The
# event names it as ``own`` for the hubs (combat.hub's catch-up compares it with
# ``Participant.own_seq``); a socket writes the html alone, so no phone ever sees it (a
# hidden NPC's steps count in it).
_own_seq: ContextVar[int | None] = ContextVar("own_seq", default=None)
# Set while the board thread sends a board rendered for several changes at once: their seqs,
# which its event names (``seqs``) for the hubs (combat.board_turns).
_covers: ContextVar[tuple[int, ...]] = ContextVar("covers", default=())
# Set inside one_commit: the scenes whose board's sheet regions a sheet push left to the
# scene change of the same commit (see one_commit).
_sheet_boards: ContextVar[dict[int, tuple[str, ...]] | None] = ContextVar(
    "sheet_boards", default=None
)


def _is_player_group(group: str) -> bool:
    return group.startswith("scene.") and ".user." in group


def _send(group: str, html: str) -> None:
    layer = get_channel_layer()
    if layer is None or not html:
        return
    seq = seq_of(html) if _announcing.get() and group.endswith(SEQ_GROUPS) else None
    own = _own_seq.get()
    if seq is not None and own is not None and group.endswith(".st"):
        # The board's part names its change's seq, not the one it was rendered at: the next
        # tap of the scene may commit before this push renders (combat.turns), and the hubs
        # count the board's changes one by one (a seq named twice, one never: a resync).
        seq = min(seq, own)
    covers = _covers.get()
    if seq is not None and covers and group.endswith(".st"):
        seq = max(covers)
    event = fragment_event(html, group, seq)
    if seq is not None and covers and group.endswith(".st"):
        event["seqs"] = list(covers)
    if own is not None and _is_player_group(group):
        event["own"] = own
    # config.layers' publishes from this thread itself, without a hop to the event loop.
    publish = getattr(layer, "group_send_blocking", None) or async_to_sync(layer.group_send)
    for attempt in range(PUBLISH_ATTEMPTS):
        try:
            publish(group, event)
            return
        except Exception:  # committed already: phones resync; a push must not fail the request
            if attempt + 1 == PUBLISH_ATTEMPTS:
                log.exception("could not publish to %s", group)


def push_to_user(user_id: int, html: str) -> None:
    """Send out-of-band fragments to every socket of one user (call it on commit)."""
    _send(user_group(user_id), html)


# Scenes whose participants a commit wrote, until that commit's scene change pushes: its
# private parts then go whole (which characters a player has here, a removal), else as their
# prompts and log (fragments.PRIVATE_PIECES). Marked on commit (a rollback marks nothing),
# before the scene change's push: the services write participants before they record the
# change (combat.services.record_change). Per thread: a commit's callbacks run in one.
_people = threading.local()


def note_people_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    """``post_save`` / ``post_delete`` of a ``Participant``: the scene change its commit makes
    sends each player concerned their whole part."""
    transaction.on_commit(partial(_mark_people, instance.scene_id))


def _mark_people(scene_id: int) -> None:
    if not hasattr(_people, "scenes"):
        _people.scenes = set()
    _people.scenes.add(scene_id)


def _people_changed(scene_id: int) -> bool:
    """Whether the scene's participants were written since its last change (and forget it)."""
    scenes = getattr(_people, "scenes", None)
    if not scenes or scene_id not in scenes:
        return False
    scenes.discard(scene_id)
    return True


def scene_changed(
    scene_id: int,
    *,
    private_user_ids: Iterable[int] = (),
    regions: Collection[str] | None = None,
    players: bool = True,
    seq: int | None = None,
    actor: int | None = None,
) -> None:
    """Render the scene once per audience and send each rendering once (call it on commit).

    ``regions`` names the board's regions that changed (``None``: all of them); ``players``
    false: a change no player sees, for the storytellers alone. ``seq``: the change's (its
    players' own parts are rendered at it or after: their events name it for the hubs).
    ``actor``: the user who made the change, whose own part goes last (their answer carries
    it; the other side waits for theirs).
    """
    faults.point("kill_after_commit")
    whole = _people_changed(scene_id)
    left = _sheet_boards.get()
    if left is not None and scene_id in left:  # this commit's sheet push left them to us
        sheets = left.pop(scene_id)
        if regions is not None:
            regions = tuple(sorted({*regions, *sheets}))
    turn = {"mine": False}

    def board_turn() -> bool:
        # the board's turn in this process (combat.board_turns): a change without its seq
        # is rendered on its own, as before, and so is every change on a layer that cannot
        # publish from the board thread (the in-memory one's queues belong to the event loop)
        if seq is None or not hasattr(get_channel_layer(), "group_send_blocking"):
            return True
        turn["mine"] = BOARDS.claim(scene_id, None if regions is None else tuple(regions), seq)
        return turn["mine"]

    parts = fragments.scene_change_parts(
        scene_id,
        private_user_ids=private_user_ids,
        regions=regions,
        players=players,
        board=None,
        own_parts=whole,
        board_turn=board_turn,
        actor=actor,
    )
    # Each part is sent as soon as it is rendered, the private parts before the public one
    # (see scene_change_parts): a process killed halfway leaves every audience it did not
    # finish behind by its seq, and the hubs catch them up (combat.hub).
    announcing, own = _announcing.set(True), _own_seq.set(seq)
    try:
        for sent, (audience, user_id, html) in enumerate(parts):
            if sent == 1:
                faults.point("kill_mid_publish")
            if audience == "players":
                _send(players_group(scene_id), html)
            elif audience == "storytellers":
                _send(storytellers_group(scene_id), html)
            elif not faults.once("drop_own_parts", seq):
                _send(player_group(scene_id, user_id), html)
    finally:
        _announcing.reset(announcing)
        _own_seq.reset(own)
        if turn["mine"]:
            BOARDS.done(scene_id)


def _board_changes(scene_id: int, regions: tuple[str, ...] | None, seqs: tuple[int, ...]) -> None:
    """The board of several changes that committed while another rendering of it was under
    way, rendered once and sent once, its event naming each change's seq (the board thread's,
    :mod:`combat.board_turns`)."""
    parts = fragments.scene_change_parts(scene_id, regions=regions, players=False, board=None)
    announcing, covers = _announcing.set(True), _covers.set(seqs)
    try:
        for audience, _, html in parts:
            if audience == "storytellers":
                _send(storytellers_group(scene_id), html)
    finally:
        _announcing.reset(announcing)
        _covers.reset(covers)


def _board_pace() -> float:
    return float(getattr(settings, "LIVE_BOARD_PACE", 0.1))


BOARDS = BoardTurns(_board_changes, _board_pace)


def audience_seq(scene: Any, role: str) -> int:
    """The ``seq`` the seq-carrying part of an audience shows (``storyteller``: the board, the
    scene's ``seq``; ``player``: the public part, ``players_seq``, which does not count what
    players cannot see, a hidden NPC's own steps). The hubs compare each socket with it, and
    never tell a phone the number."""
    return scene.players_seq if role == "player" else scene.seq


def audience_seqs(scene_ids: Collection[int]) -> dict[int, dict[str, Any]]:
    """For each scene: the ``seq`` each audience's seq-carrying part shows now, under
    ``sheets`` each player's ``data-sheet-seq`` (what ``selectors.sheet_seq`` gives their
    private part: the newest game night, the newest ledger entry of their characters here),
    and under ``own`` the scene's seq at the last change to each player's own part
    (``Participant.own_seq``: for the hubs alone, it counts a hidden NPC's steps).
    Two queries, whatever the number of scenes and players."""
    ids = sorted({int(pk) for pk in scene_ids})
    out: dict[int, dict[str, Any]] = {}
    for scene in _SCENE_SEQS.run(ids):
        out[scene.pk] = {role: audience_seq(scene, role) for role in ("storyteller", "player")}
        out[scene.pk]["night"] = scene.night or 0
        out[scene.pk]["sheets"] = {}
        out[scene.pk]["own"] = {}
    for scene_id, player, top, own in _PLAYER_SEQS.run(ids):
        if scene_id in out:
            scene = out[scene_id]
            scene["sheets"][player] = f"{scene['night']}.{top or 0}"
            scene["own"][player] = own or 0
    return out


def _scene_seqs(ids: list[int]) -> QuerySet[Scene]:
    scenes = Scene.objects.filter(pk__in=ids).annotate(night=Max("chronicle__game_nights__pk"))
    return scenes.only("pk", "seq", "players_seq", "chronicle_id")


def _player_seqs(ids: list[int]) -> QuerySet[Participant]:
    present = Participant.objects.filter(
        scene_id__in=ids, removed_at__isnull=True, character__player__isnull=False
    )
    return present.values_list("scene_id", "character__player_id").annotate(
        top=Max("character__ledger__pk"), own=Max("own_seq")
    )


# audience_seqs's reads, on every hub's round of its scenes: their SQL built once
# (config.prepared)
_SCENE_SEQS: Prepared[Scene] = Prepared(_scene_seqs, model=Scene)
_PLAYER_SEQS = PreparedValues(_player_seqs)


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
    html = fragments.presence_fragment(scene_id)
    if html:
        _send(storytellers_group(scene_id), html)


@contextmanager
def one_commit() -> Iterator[None]:
    """Around a step's transaction: the board regions that show sheets, which a sheet push of
    its commit would render, go with the scene change of the same commit instead (its board
    part, one rendering and one message, which :mod:`combat.board_turns` may merge with other
    changes' in a busy scene). A scene the commit changed no more than its sheets (a character
    also present elsewhere) gets them on their own as the block ends."""
    left: dict[int, tuple[str, ...]] = {}
    token = _sheet_boards.set(left)
    try:
        yield
    finally:
        _sheet_boards.reset(token)
        for scene_id in sorted(left):
            try:
                scene = fragments.load(scene_id)
                if scene is not None and scene.watched:
                    _sheet_board(scene)
            except Exception:  # the sheet is written: the board shows it at its next push
                log.exception("could not push the sheets of scene %s to its board", scene_id)


def _sheet_board(scene: Scene) -> None:
    """The board regions that show sheets, pushed on their own (no seq: not a scene change)."""
    with render_cache.for_scene(scene).active():
        html = fragments.board_regions(scene, fragments.sheet_regions(scene))
    _send(storytellers_group(scene.pk), html)


def sheets_changed(*, character_ids: Iterable[int] = (), chronicle_ids: Iterable[int] = ()) -> None:
    """Sheets changed (call it on commit): every open scene they are in shows it.

    The private part of each player concerned (rendered once per player: it is theirs) and,
    once per scene, the board regions that show sheets (inside :func:`one_commit`, with the
    scene change of the same commit).
    """
    try:
        scenes = fragments.open_scenes_of(character_ids=character_ids, chronicle_ids=chronicle_ids)
        left = _sheet_boards.get()
        for scene_id, players in sorted(scenes.items()):
            scene = fragments.load(scene_id)
            if scene is None:
                continue
            # one cache for the scene's renderings (shared with the scene change's pushes and
            # the answer at this seq inside render_cache.one_request), active while they render
            cache = render_cache.for_scene(scene)
            if scene.watched and left is not None:  # the scene change's to render
                left[scene_id] = fragments.sheet_regions(scene)
            elif scene.watched:  # no board is rendered for nobody (its row says: load)
                _sheet_board(scene)
            own = _own_seq.set(scene.seq)  # rendered now: every change up to it is shown
            try:
                # the players as the scene's renderings read them (its participants)
                for user in fragments.players_of(cache, scene, players) if players else ():
                    with cache.active():
                        html = fragments.private_state(scene, user)
                    _send(player_group(scene_id, user.pk), html)
            finally:
                _own_seq.reset(own)
    except Exception:  # the sheet is written: a phone that misses it resyncs
        log.exception("could not announce a sheet change")


def on_sheets_changed(
    sender: Any, *, character_ids: Iterable[int] = (), chronicle_ids: Iterable[int] = (), **_: Any
) -> None:
    """``characters.signals.sheets_changed``'s receiver (sent on commit)."""
    sheets_changed(character_ids=character_ids, chronicle_ids=chronicle_ids)


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


SESSION_HOLDS, SESSION_STALE, SESSION_GONE = "holds", "stale", "gone"


def session_standing(user_id: int, session_key: str | None) -> str:
    """Whether that login session still logs that user in (read afresh from the store).

    ``holds``: it is that user's, the account is active and the password it logged in with
    is current. ``stale``: it no longer logs the user in (a new password, a deactivated or
    deleted account). ``gone``: no such session any more, most likely cycled by a password
    change made from it (Django gives that browser a new session key): the socket should
    reconnect with the browser's cookie, which holds or not.
    """

    store = import_module(settings.SESSION_ENGINE).SessionStore
    if not session_key or not store().exists(session_key):
        return SESSION_GONE
    data = store(session_key).load()
    if str(data.get(SESSION_KEY)) != str(user_id):
        return SESSION_STALE
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    session_hash = data.get(HASH_SESSION_KEY)
    holds = (
        user is not None
        and session_hash
        and constant_time_compare(session_hash, user.get_session_auth_hash())
    )
    return SESSION_HOLDS if holds else SESSION_STALE


def note_account_change(
    sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any
) -> None:
    """``pre_save`` of a user: mark a new password or a deactivation (one query, skipped for
    the login's ``last_login`` save)."""
    if instance.pk is None or (
        update_fields is not None and not {"password", "is_active"} & set(update_fields)
    ):
        return
    before = sender.objects.filter(pk=instance.pk).values("password", "is_active").first()
    if before and (before["password"], before["is_active"]) != (
        instance.password,
        instance.is_active,
    ):
        instance._live_account_changed = True


def close_stale_sockets(sender: Any, instance: Any, **kwargs: Any) -> None:
    """``post_save`` after a new password or a deactivation, and ``post_delete`` of a user:
    on commit, every socket of that user checks its session and closes (as on logout) unless
    it still logs the user in (the session the password was changed from keeps its sockets)."""
    if kwargs.get("signal") is post_save and not getattr(instance, "_live_account_changed", 0):
        return
    instance._live_account_changed = False
    group = account_group(instance.pk)
    transaction.on_commit(lambda: _send_event(group, {"type": ACCOUNT_EVENT, "group": group}))


def _send_event(group: str, event: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group, event)
    except Exception:  # the account is changed already; a layer that is down is logged
        log.exception("could not tell %s", group)
