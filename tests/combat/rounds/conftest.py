"""A wod_dice fight: the storyteller, three players (Jane, Frank, Teddy) and NPCs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from characters.models import Attribute, Character
from combat import live, services
from combat.models import Participant, Scene
from combat.rounds.initiative import combat_begin_round, combat_initiative
from combat.rounds.starting import combat_start
from tests.factories import (
    AbilityFactory,
    CharacterFactory,
    ChronicleFactory,
    EquipmentFactory,
    GameNightFactory,
    PowerFactory,
    StorytellerFactory,
    UserFactory,
)

WOD = ("Strength", "Dexterity", "Stamina", "Wits", "Perception")


def _sheet(character: Character, dots: dict[str, int], abilities: dict[str, int]) -> Character:
    for name in WOD:
        Attribute.objects.create(character=character, name=name, value=dots.get(name, 2))
    for name, rating in abilities.items():
        AbilityFactory(character=character, name=name, rating=rating)
    return character


@dataclass
class Cast:
    storyteller: object
    users: dict[str, object]
    scene: Scene
    p: dict[str, Participant] = field(default_factory=dict)


@pytest.fixture
def cast(db) -> Cast:
    st = StorytellerFactory(username="wod_st")
    chronicle = ChronicleFactory(name="Dice", ruleset="wod_dice")
    chronicle.storytellers.add(st)
    GameNightFactory(chronicle=chronicle, number=1)
    scene = services.scene_open(chronicle=chronicle, by=st, name="Warehouse")
    users = {n: UserFactory(username=n.lower()) for n in ("Jane", "Frank", "Teddy")}
    sheets = {
        "Jane": (
            "mortal",
            {"Dexterity": 4, "Wits": 4, "Strength": 2, "Stamina": 2},
            {"Brawl": 2, "Athletics": 3, "Firearms": 3},
        ),
        "Frank": ("mage", {"Dexterity": 2, "Wits": 3, "Stamina": 2}, {"Athletics": 1, "Brawl": 1}),
        "Teddy": (
            "werewolf",
            {"Strength": 4, "Dexterity": 3, "Stamina": 4, "Wits": 3},
            {"Brawl": 4, "Athletics": 2},
        ),
    }
    cast = Cast(storyteller=st, users=users, scene=scene)
    for name, (creature, dots, abilities) in sheets.items():
        c = CharacterFactory(
            chronicle=chronicle,
            name=name,
            player=users[name],
            creature=creature,
            willpower=5,
            rage=4,
        )
        _sheet(c, dots, abilities)
        cast.p[name] = services.scene_join(code=scene.join_code, user=users[name], character=c)
    thug = CharacterFactory(
        chronicle=chronicle, name="Thug", player=None, npc=True, creature="mortal"
    )
    _sheet(thug, {"Strength": 3, "Dexterity": 2, "Wits": 2, "Stamina": 2}, {"Brawl": 3, "Melee": 2})
    EquipmentFactory(character=thug, name="Club", kind="weapon", damage=2, damage_type="bashing")
    cast.p["Thug"] = services.scene_add_npc(scene=scene, by=st, character=thug)
    cast.p["Lurker"] = services.scene_add_npc(
        scene=scene,
        by=st,
        name="Lurker",
        pools={"Dexterity": 3, "Wits": 3, "Brawl": 3, "Stamina": 2, "Strength": 2},
        hidden=True,
    )
    cast.scene = Scene.objects.get(pk=scene.pk)
    return cast


@pytest.fixture
def fight(cast: Cast) -> Scene:
    """Jane and Frank in a round, Frank (the slower) to declare first."""
    st, jane, frank = cast.storyteller, cast.p["Jane"], cast.p["Frank"]
    combat = combat_start(scene=cast.scene, by=st, participants=[jane, frank])
    combat_initiative(combat=combat, by=st, participant=jane, roll=7)
    combat_initiative(combat=combat, by=st, participant=frank, roll=3)
    combat_begin_round(combat=combat, by=st)
    return Scene.objects.get(pk=cast.scene.pk)


@dataclass
class Sent:
    group: str
    html: str


@pytest.fixture
def pushes(monkeypatch) -> Iterator[list[Sent]]:
    """Every fragment the live layer sends, per audience group (what each phone receives)."""
    sent: list[Sent] = []
    monkeypatch.setattr(live, "_send", lambda group, html: sent.append(Sent(group, html)))
    yield sent


@pytest.fixture
def docks(db):
    st = StorytellerFactory(username="bns_st")
    chronicle = ChronicleFactory(name="Pools", ruleset="met_bns")
    chronicle.storytellers.add(st)
    GameNightFactory(chronicle=chronicle, number=1)
    scene = services.scene_open(chronicle=chronicle, by=st, name="Docks")
    users, p = {}, {}
    # Ana P8 M6 S5 with Celerity 2; Bo P5 M7; Cy P6 M6.
    for name, (phys, ment, soc, cel) in {
        "Ana": (8, 6, 5, 2),
        "Bo": (5, 7, 4, 0),
        "Cy": (6, 6, 3, 0),
    }.items():
        users[name] = UserFactory(username=f"bns_{name.lower()}")
        c = CharacterFactory(chronicle=chronicle, name=name, player=users[name])
        for attr, value in (("Physical", phys), ("Mental", ment), ("Social", soc)):
            Attribute.objects.create(character=c, name=attr, value=value)
        if cel:
            PowerFactory(character=c, name="Celerity", level=cel)
        p[name] = services.scene_join(code=scene.join_code, user=users[name], character=c)
    return st, users, p, Scene.objects.get(pk=scene.pk)
