"""The cast of a chase: Janet (the Prey, her player's), Cody (a Predator, another player's)
and the Hound (a quick NPC Predator), in a scene the storyteller runs."""

from __future__ import annotations

import pytest

from characters.models import Attribute
from combat import services as scenes
from combat.models import Participant, Scene
from tests.factories import AbilityFactory, CharacterFactory


def _sheet(character, **ratings):
    for name, value in ratings.items():
        if name in {"athletics", "alertness", "subterfuge", "drive"}:
            AbilityFactory(character=character, name=name.title(), rating=value)
        else:
            Attribute.objects.create(character=character, name=name.title(), value=value)


@pytest.fixture
def scene(chronicle, storyteller) -> Scene:
    return scenes.scene_open(chronicle=chronicle, by=storyteller, name="Alley")


@pytest.fixture
def janet(scene, character, player) -> Participant:
    _sheet(character, dexterity=3, athletics=2, stamina=2, perception=2, alertness=1)
    return scenes.scene_join(code=scene.join_code, user=player, character=character)


@pytest.fixture
def cody(scene, chronicle, other_player) -> Participant:
    cody = CharacterFactory(chronicle=chronicle, name="Cody", player=other_player)
    _sheet(cody, dexterity=2, athletics=3, stamina=3, manipulation=2, subterfuge=2)
    return scenes.scene_join(code=scene.join_code, user=other_player, character=cody)


@pytest.fixture
def hound(scene, storyteller) -> Participant:
    return scenes.scene_add_npc(
        scene=scene, by=storyteller, name="Hound", pools={"Dexterity": 4, "Athletics": 3}
    )


@pytest.fixture
def lurker(scene, storyteller) -> Participant:
    return scenes.scene_add_npc(
        scene=scene,
        by=storyteller,
        name="Lurker",
        pools={"Dexterity": 2, "Athletics": 2},
        hidden=True,
    )


class Dice:
    """A scripted generator for the server's rolls (``randint`` hands out the given faces)."""

    def __init__(self, *faces: int) -> None:
        self.faces = list(faces)

    def randint(self, low: int, high: int) -> int:
        return self.faces.pop(0)
