"""Writes to scenes: open, join, NPCs, the game clock, removal, presence.

Every function runs in one transaction, locks the scene row (``select_for_update``), bumps the
scene's ``seq``, writes a log line where a person would want one, and announces the change with
``transaction.on_commit`` so no phone hears of a change that rolled back. A refused request
raises :class:`SceneError` with a sentence for people and changes nothing.

The scene's own writes are declared steps (:mod:`combat.steps`): ``OPEN``, ``JOIN``,
``NPC``, ``REMOVE``, ``SITUATION``, ``RULESET``, ``CLOSE`` and ``CLOCK``, each taken by
``steps.run`` in the one order (lock → the request's key → who may act → the token the
tablet saw → the rules part, a short function here). A tablet's token is
:func:`scene_token`: the board it drew is current.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Model, QuerySet
from django.utils import timezone

from characters.access import chronicles_run_by
from characters.models import Character, Chronicle, GameNight, Ruleset
from combat import live, steps
from combat.gametime import format_game_time
from combat.logtext import one_line
from combat.models import (
    JOIN_CODE_ALPHABET,
    JOIN_CODE_LENGTH,
    LogKind,
    Participant,
    Scene,
    SceneLogEntry,
)
from combat.selectors import scene_token
from combat.steps import Refused
from config.prepared import Linked, PreparedUpdate, save_row

NO_OPEN_NIGHT = "{chronicle} has no open game night: open one before opening a scene."
NOT_STORYTELLER = "Only a storyteller of {chronicle} can do that."
SCENE_CLOSED = "This scene is closed."
NAME_REQUIRED = "Give the scene a name."
NAME_TOO_LONG = "A name is at most {limit} characters."
UNKNOWN_RULESET = "Unknown ruleset {ruleset!r}."
UNKNOWN_CODE = "No open scene has the code {code}. Check the code on the storyteller's tablet."
NOT_YOUR_CHARACTER = "{character} is not one of your characters."
WRONG_CHRONICLE = "{character} is not in {chronicle}, the chronicle of this scene."
ALREADY_IN = "{character} is already in this scene."
NOT_AN_NPC = "{character} is not an NPC of {chronicle}."
CLOCK_RANGE = "Advance the clock by 1 second to 24 hours."
NOT_IN_SCENE = "That participant is not in this scene."
STALE = "The scene moved on since you loaded it; nothing was changed. Look again and retry."

MAX_CLOCK_STEP = 24 * 60 * 60
# The board's regions (combat/fragments.py renders them; the names are the public API).
BOARD_REGIONS = ("clock", "people", "challenges", "combat", "chase", "log")
# Who is here changed: the features' boards list the participants in their start forms.
PARTICIPANT_REGIONS = ("people", "challenges", "combat", "chase")


class SceneError(Refused):
    """A scene change refused, with a message for the storyteller or player."""


def is_storyteller_of_scene(user: AbstractBaseUser, scene: Scene) -> bool:
    """A scene's storytellers are the storytellers of its chronicle (one rule, in access).
    A tap's request read it with the scene, for its user, in the same transaction
    (``combat.access.screen_for``: ``scene.run_by``): not asked twice."""
    known = getattr(scene, "run_by", None)
    if known is not None and known[0] == user.pk:
        return known[1]
    return chronicles_run_by(user).filter(pk=scene.chronicle_id).exists()


def require_storyteller(user: AbstractBaseUser, chronicle: Chronicle) -> None:
    if not chronicles_run_by(user).filter(pk=chronicle.pk).exists():
        raise SceneError(NOT_STORYTELLER.format(chronicle=chronicle))


def lock_open_scene(scene: Scene | int, *, expected_seq: int | None = None) -> Scene:
    """Lock the scene row (``scene`` or its id) and check it is open (and at ``expected_seq``)."""
    locked = lock_scene(scene)
    if locked.closed_at is not None:
        raise SceneError(SCENE_CLOSED)
    if expected_seq is not None and locked.seq != expected_seq:
        raise SceneError(STALE)
    return locked


def lock_scene(scene: Scene | int) -> Scene:
    """Lock the scene row (a declared step's lock: whether it is open is checked after the
    request's key, so a replayed tap answers as the first did). The row the request's view
    locked already is not read again (:func:`combat.steps.held`)."""
    pk = scene if isinstance(scene, int) else scene.pk
    locked = steps.held(Scene, pk)
    if locked is not None:
        return locked
    return Scene.objects.select_for_update().select_related("chronicle").get(pk=pk)


def _open_scene(scene: Scene) -> None:
    if scene.closed_at is not None:
        raise SceneError(SCENE_CLOSED)


def _storyteller_of_open_scene(by: AbstractBaseUser, scene: Scene, _row: Any, _: Any) -> None:
    _open_scene(scene)
    require_storyteller(by, scene.chronicle)


def _scene_step(action: str, **declared: Any) -> steps.Step:
    """A step of the storyteller's on an open scene, on the board's token."""
    defaults = {
        "lock": lambda scene: (lock_scene(scene),) * 2,
        "may_act": _storyteller_of_open_scene,
        "tokens": lambda scene: (scene_token(scene),),
        "refusal": SceneError,
        "moved_on": STALE,
    }
    return steps.declare(steps.Step(action=action, **{**defaults, **declared}))


def _run(
    step: steps.Step,
    target: Any,
    *,
    by: AbstractBaseUser,
    key: str | None,
    seen: str | None,
    payload: dict[str, Any],
    rules: Any,
    **answers: Any,
) -> Any:
    return steps.run(
        step, target, by=by, key=key or None, payload=payload, seen=seen or None, rules=rules,
        **answers,
    )  # fmt: skip


def _own_seq(seq: int, scene_id: int, players: list[int]) -> tuple[QuerySet, dict]:
    """The present participants of the scene played by ``players``: their own part's seq."""
    found = Participant.objects.filter(
        scene_id=scene_id, removed_at__isnull=True, character__player_id__in=players
    )
    return found, {"own_seq": seq}


_OWN_SEQ = PreparedUpdate(_own_seq)  # by how many players: its SQL compiled once


def record_change(
    scene: Scene,
    *,
    by: AbstractBaseUser | None,
    kind: str | None = None,
    text: str = "",
    public: bool = False,
    characters: Iterable[Character] = (),
    data: dict[str, Any] | None = None,
    private_user_ids: Iterable[int] = (),
    regions: Iterable[str] | None = None,
    players: bool = True,
    more_lines: Sequence[tuple[str, bool, dict[str, Any]]] = (),
    rows: Sequence[Model] = (),
) -> None:
    """Bump ``seq``, log the change (when ``kind`` is given) and publish it on commit.

    Every write to a scene goes through here, the scene's own and those of challenges, rounds
    and chases: call it inside the transaction, with the scene locked by
    :func:`lock_open_scene`, naming in ``private_user_ids`` the players whose private part
    changed and in ``regions`` the board's regions that changed (``combat.fragments.REGIONS``:
    ``clock``, ``people``, ``challenges``, ``combat``, ``chase``, ``log``; ``None``, the
    default, is all of them). The clock panel always goes (its buttons carry the ``seq``), the
    log too when a line is written, and every player gets the public part.

    ``players=False``: a step players do not see (one only a hidden NPC takes, a player
    putting a finished card away): the players' ``players_seq`` stays and no public part goes
    out, so no phone can count such steps; only the private parts named (a player whose own
    prompt the step changed) are pushed, with the ``players_seq`` they had.

    The players named get the change's ``seq`` as their own part's (``Participant.own_seq``,
    one update): the hubs compare it with what each phone was sent of that part, so a private
    push lost while the public one arrived is caught up (``combat.hub``).

    ``rows``: the step's own rows (locked by it, a challenge) saved with the scene, every
    column: on PostgreSQL the scene's UPDATE, theirs and the players' own seq are one
    statement (:func:`config.prepared.save_row`).
    """
    if regions is not None:
        regions = set(regions) | {"clock"} | ({"log"} if kind is not None else set())
        unknown = regions - set(BOARD_REGIONS)
        if unknown:
            raise ValueError(f"unknown board regions: {sorted(unknown)}")
    steps.forget_held()  # a later lock in this request reads afresh
    scene.seq += 1
    if players:
        scene.players_seq += 1
    concerned = tuple(sorted({u for u in private_user_ids if u is not None}))
    # on PostgreSQL the players' own seq is written in the scene's UPDATE (config.prepared)
    own = (_OWN_SEQ, (scene.seq, scene.pk, list(concerned))) if concerned else None
    fields = (
        *("seq", "players_seq", "game_time", "situation", "ruleset", "closed_at"),
        *("challenges_done", "challenges_done_seq"),  # a challenge's save counts (recording)
    )
    # the log's lines (and the characters they name) inserted in the scene's UPDATE's
    # statement on PostgreSQL: the writes of a step are one round trip under the lock
    logged = None
    if kind is not None:
        lines = [(text, public, data or {}), *more_lines]
        logged = _log_rows(scene, by=by, kind=kind, lines=lines, characters=characters)
    save_row(scene, fields, rows=rows, along=own, then=logged)
    transaction.on_commit(
        partial(
            live.scene_changed,
            scene.pk,
            private_user_ids=concerned,
            regions=None if regions is None else tuple(sorted(regions)),
            players=players,
            seq=scene.seq,
            actor=getattr(by, "pk", None),
        )
    )


def _log_rows(
    scene: Scene,
    *,
    by: AbstractBaseUser | None,
    kind: str,
    lines: Sequence[tuple[str, bool, dict[str, Any]]],
    characters: Iterable[Character] = (),
) -> Linked:
    """The log's new rows for ``lines`` (``(text, public, data)``) of one change at the
    scene's ``seq``, each naming ``characters`` (not inserted yet: they go with the scene's
    UPDATE, :func:`config.prepared.save_row`'s ``then``)."""
    author = by if by is not None and by.is_authenticated else None
    entries = [
        SceneLogEntry(
            scene=scene,
            seq=scene.seq,
            game_time=scene.game_time,
            kind=kind,
            text=one_line(text)[:500],
            public=public,
            data=data,
            created_by=author,
        )
        for text, public, data in lines
    ]
    ids = list(dict.fromkeys(c.pk for c in characters))
    through = SceneLogEntry.characters.through
    return Linked(entries, through, "scenelogentry_id", "character_id", ids)


def _new_join_code() -> str:
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH))


def _lock_chronicle(chronicle: Chronicle) -> tuple[None, Chronicle]:
    return None, Chronicle.objects.select_for_update().get(pk=chronicle.pk)


def _runs_chronicle(by: AbstractBaseUser, _scene: None, chronicle: Chronicle, _: Any) -> None:
    require_storyteller(by, chronicle)


#: Opening a scene: the chronicle's storyteller, in its open game night.
OPEN = steps.declare(
    steps.Step(
        action="scene.open", lock=_lock_chronicle, may_act=_runs_chronicle, refusal=SceneError
    )
)


def scene_open(
    *,
    chronicle: Chronicle,
    by: AbstractBaseUser,
    name: str,
    ruleset: str | None = None,
    key: str | None = None,
) -> Scene:
    """Open a scene in the chronicle's open game night, run by ``by``."""
    name = (name or "").strip()
    if not name:
        raise SceneError(NAME_REQUIRED)
    if len(name) > 120:
        raise SceneError(NAME_TOO_LONG.format(limit=120))
    ruleset = ruleset or chronicle.ruleset
    if ruleset not in Ruleset.values:
        raise SceneError(UNKNOWN_RULESET.format(ruleset=ruleset))

    def rules(_: None, chronicle: Chronicle) -> Scene:
        night = GameNight.objects.filter(chronicle=chronicle, closed_at__isnull=True).first()
        if night is None:
            raise SceneError(NO_OPEN_NIGHT.format(chronicle=chronicle))
        scene = Scene.objects.create(
            chronicle=chronicle,
            game_night=night,
            name=name,
            ruleset=ruleset,
            join_code=_new_join_code(),
            storyteller=by,
        )
        record_change(scene, by=by, kind=LogKind.SCENE, text=f"Scene opened: {name}", public=True)
        return scene

    payload = {"chronicle": chronicle.pk, "name": name, "ruleset": ruleset}
    for _ in range(10):
        try:
            return _run(
                OPEN, chronicle, by=by, key=key, seen=None, payload=payload, rules=rules,
                answer=lambda scene: {"scene": scene.pk},
                recall=lambda stored: Scene.objects.get(pk=stored["scene"]),
            )  # fmt: skip
        except IntegrityError:  # a join code taken at the same moment: draw another
            continue
    raise SceneError("Could not draw a free join code; try again.")


#: Closing a scene: every player's own part changes (its start forms go).
CLOSE = _scene_step("scene.close")


def scene_close(
    *, scene: Scene, by: AbstractBaseUser, key: str | None = None, seen: str | None = None
) -> Scene:
    return _run(
        CLOSE, scene, by=by, key=key, seen=seen, payload={"scene": scene.pk},
        rules=partial(_closing, by=by, text="Scene closed"),
    )  # fmt: skip


def scenes_close_with_night(
    *, night: GameNight, by: AbstractBaseUser | None, **_: Any
) -> list[Scene]:
    """The open scenes of a game night that closed close too (``night_closed``, sent on
    commit): last week's scenes leave the overview, and no phone plays on in a night whose
    losses are reset. One transaction a scene; one a storyteller closed meanwhile is left."""
    closed = []
    text = f"Scene closed: game night {night.number} ended"
    for scene in Scene.objects.filter(game_night=night, closed_at__isnull=True).order_by("pk"):
        with transaction.atomic():
            locked = lock_scene(scene)
            if locked.closed_at is None:  # else closed meanwhile
                closed.append(_closing(locked, locked, by=by, text=text))
    return closed


def _closing(scene: Scene, _: Scene, *, by: AbstractBaseUser | None, text: str) -> Scene:
    """Close the locked open scene; every player's own part changes (its start forms go)."""
    scene.closed_at = timezone.now()
    record_change(
        scene,
        by=by,
        kind=LogKind.SCENE,
        text=text,
        public=True,
        private_user_ids=_every_player(scene),
    )
    return scene


def _every_player(scene: Scene) -> list[int]:
    """The players of the scene's characters: a ruleset change or closing the scene changes
    what each one's own part offers (its start forms), so each is rendered once. Both are rare
    (once a scene), unlike the broadcasts of play, which never render per player."""
    return list(
        Participant.objects.filter(scene=scene, removed_at__isnull=True, npc=False)
        .exclude(character__player__isnull=True)
        .values_list("character__player_id", flat=True)
        .distinct()
    )


#: The scene's ruleset: every player's start forms change with it.
RULESET = _scene_step("scene.ruleset")


def scene_set_ruleset(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    ruleset: str,
    key: str | None = None,
    seen: str | None = None,
) -> Scene:
    if ruleset not in Ruleset.values:
        raise SceneError(UNKNOWN_RULESET.format(ruleset=ruleset))

    def rules(scene: Scene, _: Scene) -> Scene:
        scene.ruleset = ruleset
        record_change(
            scene,
            by=by,
            kind=LogKind.SCENE,
            text=f"Ruleset: {Ruleset(ruleset).label}",
            public=True,
            private_user_ids=_every_player(scene),
        )
        return scene

    payload = {"scene": scene.pk, "ruleset": ruleset}
    return _run(RULESET, scene, by=by, key=key, seen=seen, payload=payload, rules=rules)


#: What is happening, as the players' phones show it.
SITUATION = _scene_step("scene.situation")


def scene_set_situation(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    situation: str,
    key: str | None = None,
    seen: str | None = None,
) -> Scene:
    """What is happening, as the players' phones show it."""
    situation = (situation or "").strip()[:300]

    def rules(scene: Scene, _: Scene) -> Scene:
        scene.situation = situation
        record_change(scene, by=by, regions=())
        return scene

    payload = {"scene": scene.pk, "situation": situation}
    return _run(SITUATION, scene, by=by, key=key, seen=seen, payload=payload, rules=rules)


#: The game clock's step (C10, W9): the storyteller's, on the board's token.
CLOCK = _scene_step("scene.clock")


def scene_advance_clock(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    seconds: int,
    seen: str | None = None,
    idempotency_key: str | None = None,
) -> Scene:
    """Move the scene's game clock forward; locks and effects expire by it (C10, W9).

    A tap sent again with its ``idempotency_key`` (a double tap, an offline tap replayed after
    the first one got through) counts once and is not refused as stale; a tap on a board that
    moved on (``seen``, its :func:`scene_token`) is refused and changes nothing.
    """
    if not isinstance(seconds, int) or not 1 <= seconds <= MAX_CLOCK_STEP:
        raise SceneError(CLOCK_RANGE)

    def rules(scene: Scene, _: Scene) -> Scene:
        scene.game_time += seconds
        record_change(
            scene,
            by=by,
            kind=LogKind.CLOCK,
            text=f"Game clock +{format_game_time(seconds)}",
            public=True,
            regions=(),
        )
        return scene

    payload = {"scene": scene.pk, "seconds": seconds, "token": seen}
    return _run(CLOCK, scene, by=by, key=idempotency_key, seen=seen, payload=payload, rules=rules)


def _joins_with_own_character(
    by: AbstractBaseUser, scene: Scene, _: Scene, payload: Mapping[str, Any]
) -> None:
    """A player joins with one of their own characters, of the scene's chronicle."""
    _open_scene(scene)
    if payload["player"] != by.pk:
        raise SceneError(NOT_YOUR_CHARACTER.format(character=payload["name"]))
    if payload["chronicle"] != scene.chronicle_id:
        raise SceneError(
            WRONG_CHRONICLE.format(character=payload["name"], chronicle=scene.chronicle)
        )


#: A player joins an open scene by its code.
JOIN = steps.declare(
    steps.Step(
        action="scene.join",
        lock=lambda scene: (lock_scene(scene),) * 2,
        may_act=_joins_with_own_character,
        refusal=SceneError,
    )
)


def scene_join(
    *, code: str, user: AbstractBaseUser, character: Character, key: str | None = None
) -> Participant:
    """A player joins an open scene with one of their characters, by the scene's code."""
    code = (code or "").strip().upper()
    scene = Scene.objects.filter(join_code=code, closed_at__isnull=True).first()
    if scene is None or len(code) != JOIN_CODE_LENGTH:
        raise SceneError(UNKNOWN_CODE.format(code=code[:JOIN_CODE_LENGTH] or "(none)"))

    def rules(scene: Scene, _: Scene) -> Participant:
        existing = Participant.objects.filter(
            scene=scene, character=character, removed_at__isnull=True
        ).first()
        if existing is not None:  # joining twice (a second phone, a double tap) is no error
            return existing
        participant = Participant.objects.create(
            scene=scene, character=character, name=character.name, npc=character.npc
        )
        record_change(
            scene,
            by=user,
            kind=LogKind.JOIN,
            text=f"{character.name} joined",
            public=True,
            characters=[character],
            private_user_ids=[user.pk],
            regions=PARTICIPANT_REGIONS,
        )
        return participant

    payload = {
        "scene": scene.pk,
        "character": character.pk,
        "name": character.name,
        "player": character.player_id,
        "chronicle": character.chronicle_id,
    }
    return _run(
        JOIN, scene, by=user, key=key, seen=None, payload=payload, rules=rules,
        answer=lambda joined: {"participant": joined.pk},
        recall=lambda stored: Participant.objects.get(pk=stored["participant"]),
    )  # fmt: skip


#: The storyteller adds an NPC (a hidden one: no phone hears of it).
NPC = _scene_step("scene.npc")


def scene_add_npc(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    character: Character | None = None,
    name: str = "",
    pools: dict[str, Any] | None = None,
    hidden: bool = False,
    key: str | None = None,
    seen: str | None = None,
) -> Participant:
    """Add an NPC: one of the chronicle's NPC sheets, or a quick NPC with a name and pools."""
    if character is not None:
        if character.chronicle_id != scene.chronicle_id or not character.npc:
            raise SceneError(NOT_AN_NPC.format(character=character, chronicle=scene.chronicle))
        name = character.name
    name = (name or "").strip()
    if not name:
        raise SceneError("Give the NPC a name.")
    if len(name) > 120:
        raise SceneError(NAME_TOO_LONG.format(limit=120))

    def rules(scene: Scene, _: Scene) -> Participant:
        if (
            character is not None
            and Participant.objects.filter(
                scene=scene, character=character, removed_at__isnull=True
            ).exists()
        ):
            raise SceneError(ALREADY_IN.format(character=character))
        participant = Participant.objects.create(
            scene=scene,
            character=character,
            name=name,
            npc=True,
            hidden=hidden,
            quick_pools=pools or {},
        )
        record_change(
            scene,
            by=by,
            kind=LogKind.JOIN,
            text=f"NPC {name} added" + (" (hidden)" if hidden else ""),
            public=not hidden,
            regions=PARTICIPANT_REGIONS,
            players=not hidden,  # no phone counts a hidden NPC coming in
        )
        return participant

    payload = {
        "scene": scene.pk,
        "character": character.pk if character is not None else None,
        "name": name,
        "pools": pools or {},
        "hidden": hidden,
    }
    return _run(
        NPC, scene, by=by, key=key, seen=seen, payload=payload, rules=rules,
        answer=lambda added: {"participant": added.pk},
        recall=lambda stored: Participant.objects.get(pk=stored["participant"]),
    )  # fmt: skip


def _lock_participant(target: tuple[Scene, int]) -> tuple[Scene, Participant | None]:
    scene = lock_scene(target[0])
    participant = (
        Participant.objects.select_for_update(of=("self",))
        .select_related("character")
        .filter(pk=target[1], scene=scene, removed_at__isnull=True)
        .first()
    )
    return scene, participant


#: The storyteller takes someone out of the scene.
REMOVE = _scene_step("scene.remove", lock=_lock_participant, tokens=None)


def scene_remove(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    participant: Participant,
    key: str | None = None,
    seen: str | None = None,
) -> None:
    """The storyteller takes someone out of the scene; their phone is told at once."""

    def rules(scene: Scene, participant: Participant | None) -> None:
        if participant is None:
            raise SceneError(NOT_IN_SCENE)
        participant.removed_at = timezone.now()
        participant.save(update_fields=["removed_at"])
        player_ids = [participant.player_id] if participant.player_id else []
        record_change(
            scene,
            by=by,
            kind=LogKind.LEAVE,
            text=f"{participant.name} left the scene",
            public=not participant.hidden,
            characters=[participant.character] if participant.character else [],
            private_user_ids=player_ids,
            regions=PARTICIPANT_REGIONS,
            players=not participant.hidden,  # nor going
        )
        for user_id in player_ids:  # their phone shows the removal, then its socket closes
            transaction.on_commit(partial(live.recheck_player, scene.pk, user_id))

    payload = {"scene": scene.pk, "participant": participant.pk}
    target = (scene, participant.pk)
    _run(REMOVE, target, by=by, key=key, seen=seen, payload=payload, rules=rules)
