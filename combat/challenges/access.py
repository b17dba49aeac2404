"""Who may take a step of a challenge, on which row: the lock (the scene, then the challenge),
the request's key (a replay answers as the first did, before any other check), the step the
actor saw and the side they act for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest

from combat import access, steps
from combat.challenges.reads import engine_of, round_token, sides_for, step_token
from combat.challenges.refusals import CLOSED, MOVED_ON, NOT_ST, NOT_YOURS, ChallengeError
from combat.models import Challenge, ChallengeStatus, Scene
from combat.rules.challenge import Challenge as Engine
from combat.rules.challenge import Phase
from combat.services import SceneError, is_storyteller_of_scene, lock_open_scene
from config.prepared import Prepared


def _challenge_read(scene_id: int, pk: int, *, lock: bool) -> QuerySet[Challenge]:
    found = Challenge.objects.select_related("attacker__character", "defender__character")
    found = found.filter(scene_id=scene_id, pk=pk)
    if lock:
        found = found.select_for_update(of=("self",))
    return found.order_by()[:1]  # by its key: nothing to order


_CHALLENGE_READS: Prepared[Challenge] = Prepared(_challenge_read, model=Challenge)


def _with_scene_read(
    scene_id: int, pk: int, user_pk: int, *, flags: tuple[bool, bool, bool], from_phone: bool
) -> QuerySet[Challenge]:
    asked = access.screen_asked(
        user_pk,
        flags=flags,
        from_phone=from_phone,
        scene_id="scene_id",
        chronicle_id="scene__chronicle_id",
    )
    # the scene's seq as the statement's snapshot has it: not the locked row's when a write
    # committed between the snapshot and the lock (the sides read with it may be older)
    asked["seen_seq"] = Subquery(
        Scene.objects.filter(pk=OuterRef("scene_id")).order_by().values("seq")[:1]
    )
    found = Challenge.objects.select_related(
        "scene__chronicle", "attacker__character", "defender__character"
    )
    found = found.filter(scene_id=scene_id, pk=pk).annotate(**asked)
    # the scene's row is locked first, then the challenge's (PostgreSQL locks a row's
    # tables in the order FOR UPDATE OF names them), as every step locks them
    return found.select_for_update(of=("scene", "self")).order_by()[:1]


_WITH_SCENE: Prepared[Challenge] = Prepared(_with_scene_read, model=Challenge)


def locked_with_scene(request: HttpRequest, scene_id: int, pk: int) -> Challenge | None:
    """The scene's challenge ``pk`` and the scene, both locked (the scene's row first) in one
    statement, the scene asked what :func:`combat.access.screen_for` asks of it; ``None``
    when there is no such challenge, or a write committed between the statement's snapshot
    and its lock (the challenge's sides, read unlocked, might be older than the lock: a
    read after the scene's lock reads them as they are). The caller then reads as before."""
    asked = access.screen_read(request)
    if asked is None:
        return None
    user_pk, options = asked
    ch = _WITH_SCENE.first(int(scene_id), int(pk), user_pk, **options)
    if ch is None or ch.seen_seq != ch.scene.seq:  # type: ignore[attr-defined]
        return None
    scene = ch.scene
    for name in ("runs", "plays", "present"):
        if hasattr(ch, name):
            setattr(scene, name, getattr(ch, name))
    return ch


def challenge_in(scene_id: int, pk: int, *, lock: bool = False) -> Challenge | None:
    """The scene's challenge ``pk`` with both sides and their characters (one query, its SQL
    compiled once: :mod:`config.prepared`); ``lock``: ``select_for_update`` of the row."""
    return _CHALLENGE_READS.first(scene_id, pk, lock=lock)


def locked(challenge_id: int, scene: Scene) -> tuple[Scene, Challenge]:
    try:
        scene = lock_open_scene(scene)
    except SceneError as error:
        raise ChallengeError(str(error)) from None
    challenge = steps.held(Challenge, challenge_id)  # the request's view locked it already
    if challenge is None or challenge.scene_id != scene.pk:
        challenge = challenge_in(scene.pk, challenge_id, lock=True)
    if challenge is None:
        raise ChallengeError("No such challenge in this scene.")
    challenge.scene = scene  # the locked row (its chronicle read with it), not a second read
    return scene, challenge


def lock(challenge: Challenge) -> tuple[Scene, Challenge]:
    """A step's lock: the challenge's scene (open), then the challenge row."""
    return locked(challenge.pk, challenge.scene)


def step_tokens(ch: Challenge) -> tuple[str, ...]:
    """The step a screen saw: the challenge's ``step``, which every step moves on."""
    return (step_token(ch),)


def round_tokens(ch: Challenge) -> tuple[str, ...]:
    """Both sides throw (and declare) at the same step, so a throw's screen carries the
    throw it belongs to (:func:`round_of`): the other side locking in does not make it
    stale, a later throw does."""
    return (round_token(ch),)


def side_may_act(by: AbstractBaseUser, scene: Scene, ch: Challenge, asked: Mapping) -> None:
    """Who may take a side's step: a player for their own character's side, the storyteller
    (from the tablet, ``as_st``) for an NPC or static side. That the challenge is still open
    is checked after the token (:func:`take`)."""
    side, as_st = asked["side"], asked.get("as_st", False)
    if side not in ("attacker", "defender"):
        raise ChallengeError(NOT_YOURS)
    if as_st and not is_storyteller_of_scene(by, scene):
        raise ChallengeError(NOT_ST)
    if side not in sides_for(ch, by, as_st=as_st):
        raise ChallengeError(NOT_YOURS)


def storyteller_may_act(by: AbstractBaseUser, scene: Scene, ch: Challenge, _: Mapping) -> None:
    """Only a storyteller of the scene's chronicle."""
    if not is_storyteller_of_scene(by, scene):
        raise ChallengeError(NOT_ST)


def declare(
    action: str,
    *,
    may_act: Callable[[AbstractBaseUser, Scene, Challenge, Mapping], None] | None = side_may_act,
    tokens: Callable[[Challenge], tuple[str, ...]] | None = step_tokens,
) -> steps.Step[Challenge, Challenge]:
    """Declare a step of a challenge (``action`` "challenge.<verb>"): it locks the scene and
    the row, refuses as :class:`ChallengeError` and says the challenge moved on."""
    return steps.declare(
        steps.Step(
            action=action,
            lock=lock,
            may_act=may_act,
            tokens=tokens,
            refusal=ChallengeError,
            moved_on=MOVED_ON,
        )
    )


def take(
    step: steps.Step[Challenge, Challenge],
    challenge: Challenge,
    *,
    by: AbstractBaseUser,
    key: str | None,
    seen: str | None,
    asked: dict[str, Any],
    rules: Callable[[Scene, Challenge], Challenge],
) -> Challenge:
    """Take ``step`` on ``challenge`` (:func:`combat.steps.run`): ``asked`` is what the tap
    asked (the key is claimed for it, ``side_may_act`` reads its side), ``seen`` the token
    its screen carried (none: not checked); ``rules(scene, row)`` is the step itself.

    A side's step (:func:`side_may_act`) is taken only in an open challenge, checked after
    the token: a tap on a challenge another tap has just ended says it moved on."""

    def open_only(scene: Scene, ch: Challenge) -> Challenge:
        if not ch.is_open:
            raise ChallengeError(CLOSED)
        return rules(scene, ch)

    return steps.run(
        step,
        challenge,
        by=by,
        key=key,
        payload={"challenge": challenge.pk, **asked},
        seen=seen,
        rules=open_only if step.may_act is side_may_act else rules,
    )


def require_live(ch: Challenge) -> Engine:
    if ch.status != ChallengeStatus.LIVE:
        raise ChallengeError("The challenge is waiting for an answer first.", "C1")
    engine = engine_of(ch)
    assert engine is not None
    if engine.phase is Phase.OVER:
        raise ChallengeError(CLOSED)
    return engine
