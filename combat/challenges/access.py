"""Who may take a step of a challenge, on which row: the lock (the scene, then the challenge),
the request's key (a replay answers as the first did, before any other check), the step the
actor saw and the side they act for.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from characters.idempotency import IdempotencyError, idempotency_claim
from combat import steps
from combat.challenges.reads import engine_of, sides_for
from combat.challenges.refusals import CLOSED, MOVED_ON, NOT_ST, NOT_YOURS, ChallengeError
from combat.models import Challenge, ChallengeStatus, Scene
from combat.rules.challenge import Challenge as Engine
from combat.rules.challenge import Phase
from combat.services import SceneError, is_storyteller_of_scene, lock_open_scene


def locked(challenge_id: int, scene: Scene) -> tuple[Scene, Challenge]:
    try:
        scene = lock_open_scene(scene)
    except SceneError as error:
        raise ChallengeError(str(error)) from None
    challenge = (
        Challenge.objects.select_for_update(of=("self",))
        .select_related("attacker__character", "defender__character", "scene")
        .filter(pk=challenge_id, scene=scene)
        .first()
    )
    if challenge is None:
        raise ChallengeError("No such challenge in this scene.")
    return scene, challenge


def locked_and_claimed(
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    key: str | None,
    payload: dict[str, Any],
    expected_step: int | None,
) -> tuple[Scene, Challenge, bool]:
    """Lock the scene and the challenge, claim the request's key for ``payload`` (about this
    challenge), then check the step the actor saw. True third when it is a replay: the first
    answer stands and nothing is checked again (a double tap counts once)."""
    begun = steps.begin(
        lock=lambda: locked(challenge.pk, scene),
        by=by,
        action="challenge",
        key=key,
        payload={"challenge": challenge.pk, **payload},
        refusal=ChallengeError,
    )
    if begun.replay:
        return begun.scene, begun.row, True
    if expected_step is not None and begun.row.step != expected_step:
        raise ChallengeError(MOVED_ON)
    return begun.scene, begun.row, False


def claim(user: AbstractBaseUser, key: str | None, payload: dict[str, Any]) -> bool:
    """Claim the request's key; True when it is a replay (the first answer stands)."""
    if not key:
        return False
    try:
        claim = idempotency_claim(user=user, action="challenge", key=key, payload=payload)
    except IdempotencyError as error:
        raise ChallengeError(str(error)) from None
    return claim.replay


def act(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    expected_step: int | None,
    key: str | None,
    payload: dict[str, Any],
    as_st: bool = False,
) -> tuple[Scene, Challenge, bool]:
    """Lock, check the step and the actor's right to the side, claim the key."""
    if side not in ("attacker", "defender"):
        raise ChallengeError(NOT_YOURS)
    if as_st and not is_storyteller_of_scene(by, scene):
        raise ChallengeError(NOT_ST)
    scene, locked, replay = locked_and_claimed(
        scene, challenge, by, key, {"side": side, **payload}, expected_step
    )
    if replay:
        return scene, locked, True
    if side not in sides_for(locked, by, as_st=as_st):
        raise ChallengeError(NOT_YOURS)
    if not locked.is_open:
        raise ChallengeError(CLOSED)
    return scene, locked, False


def require_live(ch: Challenge) -> Engine:
    if ch.status != ChallengeStatus.LIVE:
        raise ChallengeError("The challenge is waiting for an answer first.", "C1")
    engine = engine_of(ch)
    assert engine is not None
    if engine.phase is Phase.OVER:
        raise ChallengeError(CLOSED)
    return engine
