"""D3, D4: the storyteller starts a wod_dice fight with some of the scene's characters."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from combat.models import Combat, Participant, Scene
from combat.rounds.errors import ALREADY_FIGHTING, NEEDS_TWO, UNSUPPORTED, RoundError
from combat.rounds.fight import record_round, require_storyteller
from combat.rounds.reads import is_visible
from combat.services import SceneError, lock_open_scene


def combat_start(
    *, scene: Scene, by: AbstractBaseUser, participants: Sequence[Participant]
) -> Combat:
    """D3, D4: the storyteller starts a fight with some of the scene's characters."""
    if scene.ruleset != "wod_dice":
        raise RoundError(UNSUPPORTED.format(ruleset=scene.get_ruleset_display()))
    with transaction.atomic():
        try:
            scene = lock_open_scene(scene)
        except SceneError as error:
            raise RoundError(str(error)) from error
        require_storyteller(by, scene)
        if Combat.objects.filter(scene=scene, ended_at__isnull=True).exists():
            raise RoundError(ALREADY_FIGHTING)
        ids = sorted({p.pk for p in participants})
        present = list(Participant.objects.filter(pk__in=ids, scene=scene, removed_at__isnull=True))
        if len(present) < 2 or len(present) != len(ids):
            raise RoundError(NEEDS_TWO)
        combat = Combat(
            scene=scene,
            ruleset=scene.ruleset,
            members=ids,
            started_by=by,
            haste={},
        )
        combat.save()
        names = ", ".join(p.name for p in present if is_visible(p))
        record_round(scene, combat, by, f"Combat! Roll initiative: {names}")
    return combat
