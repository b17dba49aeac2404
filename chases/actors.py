"""Who may take a chase step: the storyteller runs the chase; a player acts only for their
own character, and NPC sides (a hidden NPC is nobody to a player) are the storyteller's."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser

from chases import rules
from chases.models import Chase, Role, Side
from chases.refusals import NOT_STORYTELLER, NOT_YOURS, NPC_IS_THE_STORYTELLERS, ChaseError
from combat.access import NOT_HERE, participants_named_by
from combat.models import Scene
from combat.services import is_storyteller_of_scene


def require_storyteller(by: AbstractBaseUser, scene: Scene) -> None:
    if not is_storyteller_of_scene(by, scene):
        raise ChaseError(NOT_STORYTELLER)


def require_actor(by: AbstractBaseUser, scene: Scene, side: Side | Sequence[Side]) -> None:
    """The side's own player acts for a player character; the storyteller for an NPC. A
    group fleeing together is one Prey (K1): any member's player acts for it, and the
    storyteller does when an NPC is among them."""
    members = [side] if isinstance(side, Side) else list(side)
    participants = [m.participant for m in members]
    if any(p.player_id == by.pk and not p.npc for p in participants if p.character_id):
        return
    npcs = [p for p in participants if p.npc or p.character_id is None]
    if npcs:
        if not is_storyteller_of_scene(by, scene):
            if any(p.hidden for p in npcs):  # a hidden NPC is nobody to a player
                raise ChaseError(NOT_HERE)
            raise ChaseError(NPC_IS_THE_STORYTELLERS.format(name=npcs[0].name))
        return
    raise ChaseError(NOT_YOURS.format(name=" and ".join(p.name for p in participants)))


def sides_named_by(chase: Chase, scene: Scene, by: AbstractBaseUser, key: str) -> list[Side]:
    """The sides behind the engine key ``key`` (every member of the Prey, K1, or one
    Predator) that ``by`` may name, in one query. For anyone but the scene's storytellers a
    hidden participant's side does not exist: a forged key of a hidden NPC is refused exactly
    as a key that names nobody (:data:`combat.access.NOT_HERE`)."""
    found = Side.objects.filter(chase=chase).select_related("participant__character")
    found = found.filter(role=Role.PREY) if key == rules.PREY else found.filter(key=key)
    if not is_storyteller_of_scene(by, scene):
        found = found.filter(participant__in=participants_named_by(scene, by).values("pk"))
    sides = list(found)
    if not sides:
        raise ChaseError(NOT_HERE)
    return sides
