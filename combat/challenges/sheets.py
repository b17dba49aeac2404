"""From a participant's sheet (current values through the ledger) to the engine's side.

The engine reads plain values (:class:`combat.rules.challenge.Contender`); this module reads
them off the sheet: current traits of the category (C1), temper (W1), permanent ability
ratings (W2), powers, health (C5-C7), negative traits (C5, W8), Stamina flags (C12, C15), a
weapon's bonus (C5) and, in met_bns, the test pool (B1, B10) and damage (B3).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from characters.models import Character
from combat.models import Participant
from combat.render_cache import sheets_now
from combat.rules.challenge import Contender
from combat.rules.terms import Health

TEMPERS = ("willpower", "rage", "gnosis")
CATEGORIES = ("physical", "social", "mental")


@dataclass
class Sheet:
    """What a challenge reads of one participant (a sheet, or a quick NPC's typed pools)."""

    participant: Participant
    character: Character | None
    now: dict[str, Any] | None

    @property
    def name(self) -> str:
        return self.participant.name

    def traits(self, category: str) -> dict[str, int]:
        """Current (not lost) traits of the category, by name; a quick NPC has a number."""
        if self.now is None:
            return {}
        return {n: c for n, c in self.now["traits"].get(category, {}).items() if c > 0}

    def pool(self, name: str) -> int:
        """A quick NPC's typed-in pool, by name (any case)."""
        pools = {k.casefold(): v for k, v in self.participant.quick_pools.items()}
        return int(pools.get(name.casefold(), 0))

    def trait_count(self, category: str) -> int:
        if self.now is None:
            return self.pool(category)
        return sum(self.traits(category).values())

    def temper(self, name: str) -> int:
        if self.now is None:
            return self.pool(name)
        return int(self.now.get(name, 0))

    def abilities(self) -> dict[str, int]:
        """Permanent ratings (W2 counts the rating even after its points were spent)."""
        if self.character is None:
            return {
                k: v
                for k, v in self.participant.quick_pools.items()
                if k.casefold() not in {*CATEGORIES, *TEMPERS}
            }
        return {a.name: a.rating for a in self.character.abilities.all()}

    def ability_points(self, name: str) -> int:
        """Current points of an ability tonight (W10 spends them)."""
        if self.now is None:
            return self.pool(name)
        wanted = name.casefold()
        return next((v for k, v in self.now["abilities"].items() if k.casefold() == wanted), 0)

    def powers(self) -> list[str]:
        return [p.name for p in self.character.powers.all()] if self.character else []

    def has_power(self, word: str) -> bool:
        return any(word.casefold() in p.casefold() for p in self.powers())

    def weapons(self) -> list[Any]:
        if self.character is None:
            return []
        return [e for e in self.character.equipment.all() if e.kind == "weapon"]

    def attributes(self) -> dict[str, int]:
        if self.character is None:
            return dict(self.participant.quick_pools.items())
        return {a.name: a.value for a in self.character.attributes.all()}

    def health(self) -> Health:
        """C5-C7 reading of the MET track: the level a character is at is the first level
        with an empty box (one box filled of Healthy: Bruised); a full track: the last of
        Incapacitated or Torpor it passed (C6, C7 read both as Wounded or worse, and down)."""
        if self.now is None:
            return Health.HEALTHY
        down: Health | None = None  # a level past Incapacitated is no better for a challenge
        for level in self.now["health"]["levels"]:
            name = level["name"].casefold()
            if any(box is None for box in level["boxes"]):
                try:
                    return Health(name)
                except ValueError:
                    return down or Health.HEALTHY
            if name in {Health.INCAPACITATED.value, Health.TORPOR.value}:
                down = Health(name)
        return down or Health.INCAPACITATED

    def negatives(self, category: str) -> list[str]:
        if self.character is None:
            return []
        return [
            t.name for t in self.character.traits.all() if t.negative and t.category == category
        ]

    def stamina_flags(self) -> dict[str, bool]:
        if self.character is None:
            return {}
        return {
            t.name: t.stamina_based
            for t in self.character.traits.all()
            if t.category == "physical" and not t.negative and t.stamina_based is not None
        }


def load(participant: Participant) -> Sheet:
    """The participant's sheet with its current values (one ledger query; read once per
    change's renderings, :mod:`combat.render_cache`)."""
    return load_many([participant])[0]


def load_many(participants: Iterable[Participant | None]) -> list[Sheet | None]:
    """The sheets of several participants (``None`` for none) read together: one query per
    kind of row and one for the ledger, however many there are."""
    participants = list(participants)
    found = sheets_now(p.character_id for p in participants if p is not None and p.character_id)
    out: list[Sheet | None] = []
    for p in participants:
        if p is None or p.character_id is None:
            out.append(None if p is None else Sheet(p, None, None))
        elif p.character_id not in found:
            raise Character.DoesNotExist(f"no character {p.character_id}")
        else:
            out.append(Sheet(p, *found[p.character_id]))
    return out


def bns_pool(
    sheet: Sheet,
    *,
    attribute: str,
    skill: str = "",
    bonus: int = 0,
    weapon_bonus: int = 0,
    prone: int = 0,
) -> int:
    """B1: attribute + skill + bonus (weapon, power); B10: the prone modifier, never below 0."""
    attributes = {k.casefold(): v for k, v in sheet.attributes().items()}
    value = attributes.get(attribute.casefold(), 0)
    if skill:
        if skill.casefold() == "willpower":
            value += sheet.temper("willpower")  # B1: some defenses name attribute + Willpower
        else:
            abilities = {k.casefold(): v for k, v in sheet.abilities().items()}
            value += abilities.get(skill.casefold(), 0)
    return max(value + bonus + weapon_bonus + prone, 0)


def prone_modifier(*, prone: bool, category: str, ranged_far: bool) -> int:
    """B10: a prone defender is +2 against physical ranged attacks from more than three steps,
    -2 against physical attacks from within three steps."""
    if not prone or category != "physical":
        return 0
    return 2 if ranged_far else -2


def contender(
    sheet: Sheet,
    *,
    ruleset: str,
    category: str,
    bid: str | None,
    ability: str | None = None,
    weapon: Any | None = None,
    surprised: bool = False,
    outpaced: bool = False,
    stamina_ruling: bool | None = None,
    pool: int = 0,
    opponent: Sheet | None = None,
    blood_kept: int = 0,
) -> Contender:
    """The engine's side for this sheet in a challenge of ``category``."""
    temper = category in TEMPERS
    traits: dict[str, int] | int
    traits = sheet.pool(category) if sheet.character is None else sheet.traits(category)
    weapon_bonus = weapon.bonus_traits if weapon is not None else 0
    skill = "firearms" if weapon is not None and weapon.range else "melee"
    weapon_skill = weapon is not None and any(
        k.casefold() == skill and v > 0 for k, v in sheet.abilities().items()
    )
    damage_bonus = 1 if sheet.has_power("Potence") else 0  # B3
    damage_reduction = 1 if opponent is not None and opponent.has_power("Fortitude") else 0
    return Contender.make(
        traits=traits if not temper else 0,
        bid=None if temper or ruleset == "met_bns" else bid,
        ability=ability or None,
        abilities=sheet.abilities(),
        powers=sheet.powers(),
        temper={name: sheet.temper(name) for name in TEMPERS},
        health=sheet.health(),
        weapon_bonus=weapon_bonus,
        weapon_skill=weapon_skill,
        negatives=sheet.negatives(category),
        blood_per_turn=sheet.character.blood_per_turn if sheet.character else 3,
        blood_kept=blood_kept if category == "physical" else 0,
        surprised=surprised,
        pool=pool,
        name=sheet.name,
        stamina_based=sheet.stamina_flags(),
        stamina_ruling=stamina_ruling,
        outpaced=outpaced,
        armed=bool(sheet.weapons()) or sheet.character is None,
        damage={"base": 1, "bonus": damage_bonus, "reduction": damage_reduction},
    )
