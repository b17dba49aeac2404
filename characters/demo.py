"""The demo: one chronicle per ruleset, each with its cast, an open game night and a scene.

A newcomer logs in as the storyteller on one screen and as two of a chronicle's players on two
others, and sees the scene live at once: every cast is already joined to its chronicle's scene.

The numbers come from the worked examples of the source texts behind RULES.md (seed 004 for
Delilah and Melvin, 003 for Janet and Cody, 002 for Jane, Frank, Teddy and Paulo); the
met_classic pair, Marcus and Sophia, carry the traits of the rules cases' first challenge.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from characters.models import (
    HEALTH_TRACKS,
    Ability,
    Attribute,
    Character,
    Chronicle,
    Equipment,
    GameNight,
    HealthLevel,
    Power,
    Ruleset,
    Trait,
)
from characters.roles import storytellers_group
from characters.sheet_versions import bump_sheets
from combat import services as scenes
from combat.models import Scene

CHRONICLE = "Demo by Night"
STORYTELLER = ("storyteller", "storyteller", "storyteller")

# ruleset: (chronicle, its scene)
CHRONICLES: dict[str, tuple[str, str]] = {
    Ruleset.MET_CLASSIC: (CHRONICLE, "Elysium"),
    Ruleset.MET_WEREWOLF: ("Demo Sept", "The caern at dusk"),
    Ruleset.MET_BNS: ("Demo Test Pools", "The docks"),
    Ruleset.WOD_DICE: ("Demo Dice", "The warehouse"),
}


def _wod(strength: int, dexterity: int, stamina: int, wits: int, perception: int = 2) -> dict:
    return {
        "Strength": strength,
        "Dexterity": dexterity,
        "Stamina": stamina,
        "Charisma": 2,
        "Manipulation": 2,
        "Appearance": 2,
        "Perception": perception,
        "Intelligence": 2,
        "Wits": wits,
    }


# name: (ruleset the sheet is built for, sheet)
CAST: dict[str, tuple[str, dict[str, Any]]] = {
    "Marcus": (
        "met_classic",
        {
            "creature": "vampire",
            "affiliation": "Brujah",
            "generation": 11,
            "willpower": 4,
            "blood": 12,
            "blood_per_turn": 1,
            "traits": {
                "physical": {"Quick": 1, "Strong": 2, "Brawny": 3, "Nimble": 4},
                "social": {"Intimidating": 2, "Commanding": 2},
                "mental": {"Alert": 2, "Cunning": 2},
            },
            "negatives": {"social": {"Tactless": 1}},
            "abilities": {"Brawl": 3, "Melee": 1, "Intimidation": 2},
            "powers": {"Celerity: Alacrity": 1, "Potence: Prowess": 1},
        },
    ),
    "Sophia": (
        "met_classic",
        {
            "creature": "vampire",
            "affiliation": "Toreador",
            "generation": 10,
            "willpower": 5,
            "blood": 13,
            "blood_per_turn": 1,
            "traits": {
                "physical": {"Tough": 2, "Wiry": 3, "Stalwart": 3},
                "social": {"Charismatic": 3, "Elegant": 2},
                "mental": {"Perceptive": 2, "Clever": 2},
            },
            "negatives": {"physical": {"Clumsy": 1}},
            "abilities": {"Dodge": 2, "Expression": 3, "Empathy": 1},
            "powers": {"Auspex: Heightened Senses": 1, "Presence: Awe": 1},
        },
    ),
    "Janet": (
        "met_werewolf",
        {
            "creature": "werewolf",
            "affiliation": "Children of Gaia",
            "willpower": 5,
            "rage": 3,
            "gnosis": 5,
            "traits": {
                "physical": {"Quick": 2, "Dexterous": 2},
                "social": {"Charismatic": 3, "Eloquent": 3, "Persuasive": 3},
                "mental": {"Clever": 2, "Wise": 2},
            },
            "abilities": {"Expression": 2, "Melee": 2, "Leadership": 1},
            "equipment": [{"name": "Sword", "kind": "weapon", "bonus_traits": 2}],
        },
    ),
    "Cody": (
        "met_werewolf",
        {
            "creature": "werewolf",
            "affiliation": "Shadow Lords",
            "willpower": 4,
            "rage": 5,
            "gnosis": 3,
            "traits": {
                "physical": {"Brawny": 1, "Tough": 2},
                "social": {"Impressive": 4, "Commanding": 3, "Dignified": 3},
                "mental": {"Perceptive": 2, "Alert": 2},
            },
            "abilities": {"Dodge": 2, "Leadership": 2, "Alertness": 1},
        },
    ),
    "Delilah": (
        "met_bns",
        {
            "creature": "vampire",
            "affiliation": "Gangrel",
            "willpower": 4,
            "blood": 10,
            "attributes": {"Physical": 9, "Social": 5, "Mental": 4},
            "abilities": {"Melee": 4, "Dodge": 3, "Firearms": 2},
            "powers": {"Fortitude": 1},
            "equipment": [
                {"name": "Baseball bat", "kind": "weapon", "bonus_traits": 2, "damage": 1},
                {"name": "Shotgun", "kind": "weapon", "bonus_traits": 3, "damage": 2},
            ],
        },
    ),
    "Melvin": (
        "met_bns",
        {
            "creature": "vampire",
            "affiliation": "Nosferatu",
            "willpower": 5,
            "blood": 10,
            "attributes": {"Physical": 3, "Social": 4, "Mental": 12},
            "abilities": {"Melee": 4, "Dodge": 4, "Stealth": 3},
            "powers": {"Obfuscate: Vanish": 1},
            "equipment": [{"name": "Knife", "kind": "weapon", "bonus_traits": 2, "damage": 1}],
        },
    ),
    "Jane": (
        "wod_dice",
        {
            "creature": "mortal",
            "willpower": 6,
            "attributes": _wod(2, 5, 3, 5),
            "abilities": {"Brawl": 2, "Athletics": 3, "Firearms": 3, "Alertness": 2},
            "equipment": [
                {
                    "name": "Pistol",
                    "kind": "weapon",
                    "damage": 4,
                    "damage_type": "lethal",
                    "difficulty": 6,
                    "range": 20,
                }
            ],
        },
    ),
    "Frank": (
        "wod_dice",
        {
            "creature": "mage",
            "willpower": 7,
            "attributes": _wod(2, 2, 2, 3),
            "abilities": {"Occult": 4, "Dodge": 2, "Athletics": 1},
            "powers": {"Time": 2},
        },
    ),
    "Teddy": (
        "wod_dice",
        {
            "creature": "werewolf",
            "willpower": 5,
            "rage": 6,
            "gnosis": 4,
            "attributes": _wod(4, 3, 4, 3),
            "abilities": {"Brawl": 4, "Athletics": 2, "Dodge": 2},
        },
    ),
    "Paulo": (
        "wod_dice",
        {
            "creature": "vampire",
            "generation": 10,
            "willpower": 6,
            "blood": 13,
            "attributes": _wod(3, 5, 3, 5),
            "abilities": {"Melee": 3, "Dodge": 3, "Brawl": 2},
            "powers": {"Celerity": 2, "Fortitude": 1},
            "equipment": [
                {
                    "name": "Leather jacket",
                    "kind": "armor",
                    "armor": 1,
                },
                {"name": "Machete", "kind": "weapon", "damage": 2, "damage_type": "lethal"},
            ],
        },
    ),
}

# (user, password, role) as `make run` prints them: every player plays one character of the
# chronicle of that character's ruleset, and that character is joined to the chronicle's scene.
DEMO_LOGINS: list[tuple[str, str, str]] = [
    (*STORYTELLER[:2], "storyteller of all " + str(len(CHRONICLES))),
    *(
        (name.lower(), name.lower(), f"{name} in {CHRONICLES[ruleset][0]}")
        for name, (ruleset, _sheet) in CAST.items()
    ),
]


def _user(username: str, password: str, *, staff: bool = False) -> Any:
    user, created = get_user_model().objects.get_or_create(
        username=username, defaults={"first_name": username.capitalize(), "is_staff": staff}
    )
    if created:
        user.set_password(password)
        user.save(update_fields=["password"])
    return user


def _write_sheet(character: Character, ruleset: str, sheet: dict[str, Any]) -> None:
    for model in (Trait, Ability, Power, Attribute, Equipment, HealthLevel):
        model.objects.filter(character=character).delete()
    Trait.objects.bulk_create(
        [
            Trait(character=character, category=cat, name=name, count=count, negative=negative)
            for key, negative in (("traits", False), ("negatives", True))
            for cat, traits in sheet.get(key, {}).items()
            for name, count in traits.items()
        ]
    )
    Ability.objects.bulk_create(
        Ability(character=character, name=n, rating=r)
        for n, r in sheet.get("abilities", {}).items()
    )
    Power.objects.bulk_create(
        Power(character=character, name=n, level=lv) for n, lv in sheet.get("powers", {}).items()
    )
    Attribute.objects.bulk_create(
        Attribute(character=character, name=n, value=v)
        for n, v in sheet.get("attributes", {}).items()
    )
    Equipment.objects.bulk_create(
        Equipment(character=character, **item) for item in sheet.get("equipment", [])
    )
    track = HEALTH_TRACKS["wod_dice" if ruleset == "wod_dice" else "met"]
    HealthLevel.objects.bulk_create(
        HealthLevel(character=character, name=n, boxes=b, penalty=p, order=i)
        for i, (n, b, p) in enumerate(track)
    )
    bump_sheets([character.pk])


_FIELDS = ("creature", "affiliation", "generation", "willpower", "blood", "blood_per_turn")


def _scene(chronicle: Chronicle, name: str, storyteller: Any) -> None:
    """The chronicle's demo scene with its cast joined (opened once; joining is idempotent)."""
    scene = Scene.objects.filter(chronicle=chronicle, closed_at__isnull=True).first()
    if scene is None:
        scene = scenes.scene_open(chronicle=chronicle, by=storyteller, name=name)
    for character in chronicle.characters.filter(npc=False, player__isnull=False).select_related(
        "player"
    ):
        scenes.scene_join(code=scene.join_code, user=character.player, character=character)


@transaction.atomic
def load_demo() -> list[Chronicle]:
    """Create the demo chronicles; running it again leaves existing sheets as they are."""
    storyteller = _user(STORYTELLER[0], STORYTELLER[1], staff=True)
    storyteller.groups.add(storytellers_group())
    chronicles: dict[str, Chronicle] = {}
    for ruleset, (chronicle_name, _scene_name) in CHRONICLES.items():
        chronicle, _ = Chronicle.objects.get_or_create(
            name=chronicle_name, defaults={"ruleset": ruleset}
        )
        chronicle.storytellers.add(storyteller)
        chronicles[ruleset] = chronicle
    demo_names = [name for name, _scene in CHRONICLES.values()]
    for name, (ruleset, sheet) in CAST.items():
        player = _user(name.lower(), name.lower())
        chronicle = chronicles[ruleset]
        values = {key: sheet[key] for key in (*_FIELDS, "rage", "gnosis") if key in sheet}
        note = f"Demo sheet built for {ruleset}."
        character = Character.objects.filter(name=name, chronicle__name__in=demo_names).first()
        if character is None:
            character = Character.objects.create(
                chronicle=chronicle, name=name, player=player, npc=False, notes=note, **values
            )
            _write_sheet(character, ruleset, sheet)
        elif character.chronicle_id != chronicle.pk:  # an older demo kept everyone in one
            character.chronicle = chronicle
            character.save(update_fields=["chronicle"])
    for ruleset, chronicle in chronicles.items():
        if not GameNight.objects.filter(chronicle=chronicle).exists():
            GameNight.objects.create(chronicle=chronicle, number=1, opened_by=storyteller)
        if GameNight.objects.filter(chronicle=chronicle, closed_at__isnull=True).exists():
            _scene(chronicle, CHRONICLES[ruleset][1], storyteller)
    return list(chronicles.values())
