"""Reads of scenes: what the storyteller's board and each phone show, in fixed queries.

Each state below costs the same number of queries whatever the number of participants
(tests/combat/test_scene_views.py counts them with 3 and 30 participants). The rows a change's
renderings share (the scene's participants, who is connected, the logs) are read once for
all of them (:func:`combat.render_cache.cached`); what they return is never changed.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Iterator
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import Count, Model, OuterRef, Q, QuerySet, Subquery
from django.db.models.base import ModelState
from django.utils import timezone

from characters.models import Character, Chronicle, GameNight, LedgerEntry
from characters.selectors import chronicles_run_by, sheet
from combat import board_log, regions
from combat.gametime import format_game_time
from combat.logtext import one_line
from combat.models import Participant, Presence, Scene, SceneLogEntry
from combat.own_log import OwnLine
from combat.own_log import read as own_log_rows
from combat.own_log import read_with_board as own_log_with_board
from combat.render_cache import cached, known, offer_sheet_rows, sheets_now
from combat.steps import token
from config.prepared import Prepared, PreparedValues, copy_row, read_with, statement_cursor

STALE_AFTER = 90  # a presence row untouched this long belongs to a process that is gone

BOARD_LOG_LENGTH = 30
PHONE_LOG_LENGTH = 20

# Game seconds of the tablet's "+1 turn" button. RULES.md, Shared terms (Game clock): a wod_dice
# round is fifteen seconds, a met_bns turn about three; the other MET rulesets use three too.
TURN_SECONDS = {"wod_dice": 15, "met_bns": 3, "met_classic": 3, "met_werewolf": 3}


def clock_steps(scene: Scene) -> list[tuple[str, int]]:
    """The tablet's clock buttons: (label, game seconds)."""
    return [
        ("+1 turn", TURN_SECONDS.get(scene.ruleset, 3)),
        ("+1 min", 60),
        ("+5 min", 5 * 60),
        ("+15 min", 15 * 60),
    ]


def open_scenes_run_by(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Scene]:
    """Every open scene of the chronicles the user storytells (the overview)."""
    return (
        Scene.objects.filter(chronicle__in=chronicles_run_by(user), closed_at__isnull=True)
        .select_related("chronicle", "storyteller", "game_night")
        .annotate(
            present=Count(
                "participants",
                filter=Q(participants__removed_at__isnull=True),
                distinct=True,
            )
        )
        .order_by("chronicle__name", "-opened_at", "-pk")
    )


def scenes_run_by(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Scene]:
    """Every scene (open or closed) the user may run: the storyteller's access rule."""
    return Scene.objects.filter(chronicle__in=chronicles_run_by(user)).select_related(
        "chronicle", "storyteller"
    )


def scenes_played_by(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Scene]:
    """Scenes the user has (or had: removed players see they were removed) a character in."""
    if not user.is_authenticated:
        return Scene.objects.none()
    return (
        Scene.objects.filter(participants__character__player=user)
        .select_related("chronicle", "storyteller")
        .distinct()
    )


def open_scenes_played_by(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Scene]:
    if not user.is_authenticated:
        return Scene.objects.none()
    return (
        Scene.objects.filter(
            closed_at__isnull=True,
            participants__character__player=user,
            participants__removed_at__isnull=True,
        )
        .select_related("chronicle")
        .distinct()
    )


def chronicles_for_new_scene(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Chronicle]:
    """The chronicles the user runs, with their open game night's number (None: no open night)."""
    return chronicles_run_by(user).order_by("name")


def joinable_characters(user: AbstractBaseUser, scene: Scene) -> list[Character]:
    """The user's characters of the scene's chronicle (the ones they may join with)."""
    return list(
        Character.objects.filter(player=user, chronicle_id=scene.chronicle_id).order_by("name")
    )


def npc_sheets(scene: Scene) -> list[Character]:
    """The chronicle's NPC sheets not in the scene right now."""
    inside = Participant.objects.filter(
        scene=scene, removed_at__isnull=True, character__isnull=False
    ).values("character_id")
    return list(
        Character.objects.filter(chronicle_id=scene.chronicle_id, npc=True)
        .exclude(pk__in=inside)
        .order_by("name")
    )


def active_participants(scene: Scene) -> list[Participant]:
    """Everyone in the scene now (hidden NPCs too), with their characters and players: read
    once for a change's renderings (the board's people, the public part, each own part).

    Their characters' rows are what a sheet's read asks first (``characters.sheet_cache``:
    the version, the open game night, the chronicle's ruleset): read here with them, the
    renderings' sheets take them instead of reading them again (one query fewer a change)."""

    return cached(
        ("participants", scene.pk), lambda: _participants(scene, _active_participants.run(scene.pk))
    )


def _participants(scene: Scene, rows: list[tuple[Any, ...]]) -> list[Participant]:
    found = _participant_rows(rows)
    offer_sheet_rows(lambda ids: _sheet_rows(scene, found, ids))
    return found


def scene_with_participants(
    scene_read: Prepared[Scene], scene_id: int
) -> tuple[Scene | None, list[tuple[Any, ...]]]:
    """``scene_read``'s row of the scene and the rows of its participants as
    :func:`active_participants` reads them, in one statement on PostgreSQL
    (:func:`config.prepared.read_with`): after a change, its renderings read both."""
    return read_with(scene_read, (scene_id,), _active_participants, (scene_id,))


def keep_participants(scene: Scene, rows: list[tuple[Any, ...]]) -> None:
    """``rows`` (:func:`scene_with_participants`') are the active cache's participants of the
    scene (:func:`active_participants` reads them no more), unless it has them already."""
    cached(("participants", scene.pk), lambda: _participants(scene, rows))


#: A player's columns the renderings of a scene show or ask (their name, whether they run
#: chronicles): not their password's hash, e-mail or dates. Another one is read on its own
#: the first time it is asked of the row (a deferred field), never answered wrong.
PLAYER_COLUMNS = (
    *("id", "username", "first_name", "last_name"),
    *("is_active", "is_staff", "is_superuser"),
)


def _read_fields(model: type[Model]) -> list[Any]:
    fields = model._meta.concrete_fields
    if model is get_user_model():
        return [f for f in fields if f.attname in PLAYER_COLUMNS]
    return list(fields)


@functools.cache
def _joined() -> tuple[tuple[type[Model], str, tuple[str, ...]], ...]:
    """The models of a participant's row as :func:`active_participants` reads it, each with
    the path of its columns and the attribute names of the fields it reads: the
    participant, its character (every field: a sheet's read takes the row), the character's
    player (``PLAYER_COLUMNS``)."""
    player = get_user_model()
    models = ((Participant, ""), (Character, "character__"), (player, "character__player__"))
    return tuple(
        (model, path, tuple(f.attname for f in _read_fields(model))) for model, path in models
    )


def _active_participants_query(scene_id: int) -> QuerySet[Participant]:
    rows = Participant.objects.filter(scene_id=scene_id, removed_at__isnull=True)
    open_night = GameNight.objects.filter(  # one at most (``one_open_game_night``)
        chronicle_id=OuterRef("character__chronicle_id"), closed_at__isnull=True
    ).order_by()
    open_night = open_night.values("pk")[:1]
    rows = rows.annotate(open_night=Subquery(open_night))
    columns = [f"{path}{f.name}" for m, path, _ in _joined() for f in _read_fields(m)]
    return rows.values_list(*columns, "open_night")


def _participant_rows(rows: list[tuple[Any, ...]]) -> list[Participant]:
    """The participants of ``rows`` (:func:`_active_participants_query`'s columns) with their
    characters and players, as ``select_related("character", "character__player")`` makes
    them (a character or player left NULL is None), but built without a model's
    ``__init__`` per row, which was most of the read's cost in a shared scene (issue 21):
    none of the three models has an init signal (checked) or a field that converts on set."""
    out = []
    for row in rows:
        made, start = [], 0
        for model, _path, names in _joined():
            values = row[start : start + len(names)]
            start += len(names)
            made.append(None if values[0] is None else _built(model, names, values))
        participant, character, player = made
        participant._state.fields_cache["character"] = character
        if character is not None:
            character._state.fields_cache["player"] = player
        participant.open_night = row[start]  # type: ignore[attr-defined]
        out.append(participant)
    return out


def _built(model: type[Model], names: tuple[str, ...], values: tuple[Any, ...]) -> Any:
    """A row of ``model`` as ``Model.from_db`` makes it from all its fields' values."""
    obj = model.__new__(model)
    obj.__dict__.update(zip(names, values, strict=True))
    obj._state = ModelState()
    obj._state.adding, obj._state.db = False, DEFAULT_DB_ALIAS
    return obj


def _sheet_rows(
    scene: Scene, participants: list[Participant], ids: Collection[int]
) -> Iterator[Character]:
    """The row of each character of ``ids`` among the participants' as a sheet's read would
    read it (``characters.sheet_cache``):
    a copy of its own (a sheet's reader attaches its rows to it), with its player, the
    scene's chronicle (a character plays only in its chronicle's scenes; any other is left
    to the sheet's read) and the chronicle's open night. None when the scene's row was read
    without its chronicle."""
    if not Scene.chronicle.is_cached(scene):
        return
    wanted = set(ids)
    for p in participants:
        character = p.character if p.character_id in wanted else None
        if character is None or character.chronicle_id != scene.chronicle_id:
            continue
        row = copy_row(character, chronicle=scene.chronicle)
        row.open_night = p.open_night  # type: ignore[attr-defined]
        yield row


# Its SQL is built once per process (config.prepared): read on every change.
_active_participants = PreparedValues(_active_participants_query)


def connected_user_ids(scene: Scene) -> set[int]:
    """Users with a socket of the scene open now (rows of a process gone do not count)."""

    def read() -> set[int]:
        since = connection.ops.adapt_datetimefield_value(fresh_since())
        with statement_cursor(connection) as cursor:  # prepared on PostgreSQL: one text
            cursor.execute(_connected_sql(connection.vendor), [scene.pk, since])
            return {user_id for (user_id,) in cursor.fetchall()}

    return cached(("connected", scene.pk), read)


@functools.lru_cache(maxsize=8)
def _connected_sql(vendor: str) -> str:
    """Who has a socket of a scene open since a moment: read on every change the board
    shows, its text built once per database vendor (building the ORM's query cost more than
    running it)."""
    q, table = connection.ops.quote_name, connection.ops.quote_name(Presence._meta.db_table)
    return (
        f"SELECT {table}.{q('user_id')} FROM {table}"
        f" WHERE ({table}.{q('scene_id')} = %s AND {table}.{q('connected_at')} >= %s)"
    )


def board_watched(scene_id: int) -> bool:
    """Whether a storyteller's socket of the scene may be open: a presence row of someone who
    is not a player of the scene, or who may storytell it (staff, or a storyteller of its
    chronicle who also plays a character here). One query. Rows of a process gone count too: a board
    rendered for nobody costs a render, a board skipped for a tablet would cost a change.

    A tablet writes its row before it reads the state it sends (``combat.consumers``): a
    change whose push saw no row committed before that read, so the state has it.
    :func:`combat.fragments.load` asks the same with the scene's row (``scene.watched``)."""
    return board_watchers(scene_id, scene_id).exists()


def board_watchers(scene: Any, inner: Any) -> QuerySet[Presence]:
    """The presence rows :func:`board_watched` looks for: ``scene`` is the scene's id (or an
    ``OuterRef``), ``inner`` the same as its own subqueries name it (an id, or an
    ``OuterRef(OuterRef(...))``)."""
    players = Participant.objects.filter(
        scene_id=inner, removed_at__isnull=True, character__player__isnull=False
    ).values("character__player_id")
    storytellers = Scene.objects.filter(pk=inner).values("chronicle__storytellers")
    return Presence.objects.filter(scene_id=scene).filter(
        Q(user__is_staff=True)
        | Q(user__is_superuser=True)
        | Q(user_id__in=storytellers)
        | ~Q(user_id__in=players)
    )


def player_participants(
    scene: Scene, user: AbstractBaseUser, *, removed: bool = False
) -> list[Participant]:
    """The user's own characters in the scene (or, with ``removed``, the ones taken out)."""
    if not removed:
        return [
            p
            for p in active_participants(scene)
            if p.character_id and p.character.player_id == user.pk
        ]
    return list(
        Participant.objects.filter(
            scene=scene, removed_at__isnull=False, character__player=user
        ).select_related("character")
    )


def log_for_storyteller(scene: Scene, limit: int | None = None) -> list[SceneLogEntry]:
    entries = SceneLogEntry.objects.filter(scene=scene).order_by("-seq", "-pk")
    if limit:
        entries = entries[:limit]
    return list(entries)[::-1]


def log_for_player(
    scene: Scene, user: AbstractBaseUser, limit: int | None = None, *, public: bool = True
) -> list[SceneLogEntry]:
    """What concerned the player's characters, and (``public``) what every player saw.

    The phone's private part shows only what concerned their characters: it is pushed when
    their characters are concerned, not on every public change (the download has both).
    """
    seen = Q(characters__player=user) | Q(public=True) if public else Q(characters__player=user)
    entries = (
        SceneLogEntry.objects.filter(scene=scene).filter(seen).distinct().order_by("-seq", "-pk")
    )
    if limit:
        entries = entries[:limit]
    return list(entries)[::-1]


def log_rows(entries: list[SceneLogEntry], *, numbered: bool = False) -> list[dict[str, Any]]:
    """The log as plain data, for the JSON and text downloads. ``numbered``: a player's
    lines are numbered 1, 2, 3 instead of by the scene's ``seq``, whose gaps would count the
    lines they do not read (a hidden NPC's among them)."""
    return [
        {
            "seq": index if numbered else e.seq,
            "game_time": e.game_time,
            "clock": format_game_time(e.game_time),
            "kind": e.kind,
            "text": one_line(e.text),  # rows written before lines were made one line
            "public": e.public,
            "at": e.created_at.isoformat(),
        }
        for index, e in enumerate(entries, start=1)
    ]


def public_state(scene: Scene) -> dict[str, Any]:
    """What every player of the scene sees: who is here (hidden NPCs never), clock, situation."""
    participants = [p for p in active_participants(scene) if not p.hidden]
    context = {
        "scene": scene,
        "participants": participants,
        "clock": format_game_time(scene.game_time),
    }
    return {**context, **regions.read(scene, "public", context)}


def scene_token(scene: Scene) -> str:
    """The token of the board a tablet drew (``combat.steps.token``): current until the
    scene's ``seq`` moves; a tablet's scene forms post it as ``token``."""
    return token("scene", scene.pk, scene.seq)


def clock_state(scene: Scene) -> dict[str, Any]:
    """The board's clock panel: the scene row is all it needs (no query)."""
    return {
        "scene": scene,
        "scene_token": scene_token(scene),
        "clock": format_game_time(scene.game_time),
        "clock_steps": clock_steps(scene),
    }


def log_state(scene: Scene) -> dict[str, Any]:
    """The board's log panel: the clock's context and the latest log lines."""
    log = cached(("log", scene.pk), lambda: board_log.read(scene.pk, BOARD_LOG_LENGTH))
    return {**clock_state(scene), "log": log}


def sheet_seq(scene: Scene, character_ids: list[int]) -> str:
    """The sheets' own counter, ``<newest game night>.<newest ledger entry>``.

    A cost or a refresh changes a sheet without a scene change (the scene's ``seq`` stays,
    so a storyteller's tap is not refused for it); the phone compares this pair to refuse a
    sheet push older than the one it shows (static/js/scene.js).
    """
    if not character_ids:
        return "0.0"

    ids = tuple(sorted(character_ids))

    def read() -> str:
        with statement_cursor(connection) as cursor:  # prepared on PostgreSQL: one text
            text = _sheet_seq_sql(connection.vendor, len(ids))
            cursor.execute(text, [scene.chronicle_id, *ids])
            top, last = cursor.fetchone()
        return f"{top or 0}.{last or 0}"

    return cached(("sheet_seq", scene.pk, ids), read)


@functools.lru_cache(maxsize=64)
def _sheet_seq_sql(vendor: str, count: int) -> str:
    """The newest game night of a chronicle and the newest ledger entry of ``count``
    characters, in one query (its text built once per database vendor and count)."""
    q = connection.ops.quote_name
    nights, ledger = GameNight._meta.db_table, LedgerEntry._meta.db_table
    marks = ", ".join(["%s"] * count)
    return (
        f"SELECT (SELECT MAX({q('id')}) FROM {q(nights)} WHERE {q('chronicle_id')} = %s),"
        f" (SELECT MAX({q('id')}) FROM {q(ledger)} WHERE {q('character_id')} IN ({marks}))"
    )


def own_log(scene: Scene, user: AbstractBaseUser) -> list[OwnLine]:
    """The log of a player's own part (what concerned their characters), read once for a
    change's renderings of it (its prompts and log, then its whole part in the answer). When
    a change renders several players' own parts (``("private_users", scene.pk)``, set by
    :func:`combat.fragments.scene_change_parts`) the logs of all of them are read in one
    query (:func:`own_logs`)."""

    def read() -> list[OwnLine]:
        together = known(("private_users", scene.pk))
        if together and user.pk in together:
            logs = cached(("own_logs", scene.pk, together), lambda: own_logs(scene, together))
            return logs.get(user.pk, [])
        return own_logs(scene, [user.pk])[user.pk]

    return cached(("own_log", scene.pk, user.pk), read)


def own_logs(scene: Scene, user_ids: Iterable[int]) -> dict[int, list[OwnLine]]:
    """Each player's own log (:func:`log_for_player` with ``public=False``: the newest
    ``PHONE_LOG_LENGTH`` lines that concern one of their characters, oldest first), for several
    players in one query (:func:`combat.own_log.read`): a line reaches a player by a character
    of theirs it names, so a hidden NPC's line or another player's reaches nobody else; a line
    naming two of a player's characters comes once.

    When the change's board shows its log too (``("board_log", scene.pk)``, set by
    :func:`combat.fragments.scene_change_parts`), the board's lines come in the same query,
    kept for :func:`log_state`."""
    if known(("board_log", scene.pk)) and known(("log", scene.pk)) is None:
        logs, lines = own_log_with_board(scene.pk, user_ids, PHONE_LOG_LENGTH, BOARD_LOG_LENGTH)
        cached(("log", scene.pk), lambda: lines)
        return logs
    return own_log_rows(scene.pk, user_ids, PHONE_LOG_LENGTH)


def private_state(scene: Scene, user: AbstractBaseUser) -> dict[str, Any]:
    """One player's own part: their characters' current sheets and prompts addressed to them."""
    context = {**sheets_state(scene, user), "log": own_log(scene, user)}
    return {**context, **regions.read(scene, "private", context)}


def sheets_state(scene: Scene, user: AbstractBaseUser) -> dict[str, Any]:
    """What a player's own part shows beside its prompts and log (``prompts_state``): their
    characters' current sheets, or whom the storyteller took out."""
    own = player_participants(scene, user)
    characters = sheets_now(p.character_id for p in own)  # read once for the whole part
    sheets = [{"participant": p, **sheet(*characters[p.character_id])} for p in own]
    removed = [] if own else player_participants(scene, user, removed=True)
    return {
        "scene": scene,
        "player": user,
        "sheets": sheets,
        "sheet_seq": sheet_seq(scene, list(characters)),
        "removed": removed,
        "oob_piece": False,  # the part whole (a piece of it pushed alone says True)
    }


def prompts_state(scene: Scene, user: AbstractBaseUser) -> dict[str, Any]:
    """What a scene change may change in one player's own part: the prompts addressed to them
    and their log (their sheets change by the ledger, which pushes the whole part; the
    characters they have here, by a change of the scene's people)."""
    context = {
        "scene": scene,
        "player": user,
        "log": own_log(scene, user),
    }
    return {**context, **regions.read(scene, "private", context)}


def fresh_since() -> Any:
    """Presence rows touched since then count as connected (older ones are a dead process's)."""
    return timezone.now() - timedelta(seconds=STALE_AFTER)
