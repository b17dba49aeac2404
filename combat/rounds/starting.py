"""Starting a fight (D3, D4, B11, C15): one step for every ruleset. The storyteller names some
of the scene's characters (two at least, none removed, no fight already running); the
ruleset makes the fight's row (:func:`start_fight`'s ``make``) and logs its first line."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from combat import steps
from combat.models import Combat, Participant, Scene
from combat.rounds.errors import ALREADY_FIGHTING, NEEDS_TWO, UNSUPPORTED, RoundError
from combat.rounds.fight import record_round, require_storyteller
from combat.rounds.reads import is_visible, running_combat
from combat.services import SceneError, lock_open_scene


def _lock_scene(scene: Scene) -> tuple[Scene, Scene]:
    try:
        locked = lock_open_scene(scene)
    except SceneError as error:
        raise RoundError(str(error)) from error
    return locked, locked


def _storyteller(
    by: AbstractBaseUser, scene: Scene, row: Scene, payload: Mapping[str, Any]
) -> None:
    require_storyteller(by, scene)


START_STEP = steps.declare(
    steps.Step(action="round.start", lock=_lock_scene, may_act=_storyteller, refusal=RoundError)
)


def start_fight(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    participants: Sequence[Participant],
    make: Callable[[Scene, list[Participant]], Combat],
    key: str | None = None,
) -> Combat:
    """The storyteller starts a fight with ``participants`` (two at least, of this scene, none
    removed, no other fight running); ``make(scene, present)`` makes its row and logs it."""
    ids = sorted({p.pk for p in participants})

    def rules(scene: Scene, _row: Scene) -> Combat:
        if Combat.objects.filter(scene=scene, ended_at__isnull=True).exists():
            raise RoundError(ALREADY_FIGHTING)
        present = list(Participant.objects.filter(pk__in=ids, scene=scene, removed_at__isnull=True))
        if len(present) < 2 or len(present) != len(ids):
            raise RoundError(NEEDS_TWO)
        return make(scene, present)

    return steps.run(
        START_STEP,
        scene,
        by=by,
        key=key,
        payload={"s": scene.pk, "p": ids},
        rules=rules,
        replayed=lambda scene, _row: running_combat(scene),
    )


def combat_start(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    participants: Sequence[Participant],
    key: str | None = None,
) -> Combat:
    """D3, D4: the storyteller starts a wod_dice fight: everyone rolls initiative."""
    if scene.ruleset != "wod_dice":
        raise RoundError(UNSUPPORTED.format(ruleset=scene.get_ruleset_display()))

    def make(scene: Scene, present: list[Participant]) -> Combat:
        combat = Combat(
            scene=scene,
            ruleset=scene.ruleset,
            members=[p.pk for p in sorted(present, key=lambda p: p.pk)],
            started_by=by,
            haste={},
        )
        combat.save()
        names = ", ".join(p.name for p in present if is_visible(p))
        record_round(scene, combat, by, f"Combat! Roll initiative: {names}")
        return combat

    return start_fight(scene=scene, by=by, participants=participants, make=make, key=key)
