"""What a round needs from a combatant's sheet: dots, weapons, armor and the current values.

Player characters and NPC sheets are read from their sheet and the night's ledger
(``characters.selectors.current_values_for``); a quick NPC from its typed-in pools. Names are
compared case-insensitively, so a quick NPC typed as ``dexterity 3`` reads like a sheet.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from characters.models import Character
from combat.models import Participant
from combat.render_cache import sheets_now

#: D12: the soak rule's creatures for the sheet's (a changeling calling on the Wyrd soaks as fae).
SOAK_CREATURE = {
    "vampire": "vampire",
    "ghoul": "ghoul",
    "werewolf": "werewolf",
    "fera": "fera",
    "changeling": "fae",
}


@dataclass(frozen=True)
class Weapon:
    name: str
    pool: str  # "brawl", "melee" or "firearms"
    damage: int
    damage_type: str  # bashing, lethal, aggravated
    difficulty: int | None = None
    range: int | None = None


@dataclass(frozen=True)
class Stats:
    """One combatant as the round reads it."""

    pid: int
    name: str
    dots: dict[str, int]
    creature: str = "mortal"
    armor: int = 0
    weapons: tuple[Weapon, ...] = ()
    willpower: int = 0
    rage: int = 0
    wound_penalty: int = 0  # D2, a size
    can_act: bool = True
    damage: int = 0
    health_boxes: int = 7
    fortitude: int = 0
    character: Character | None = field(default=None, compare=False)

    def dot(self, name: str) -> int:
        return self.dots.get(name.casefold(), 0)

    def weapon(self, name: str) -> Weapon | None:
        return next((w for w in self.weapons if w.name == name), None)


def _weapon_pool(item) -> str:
    if item.range:
        return "firearms"
    return "melee"


def stats_for(participants: Iterable[Participant]) -> dict[int, Stats]:
    """Stats of each participant, by participant id, in a fixed number of queries."""
    participants = list(participants)
    ids = [p.character_id for p in participants if p.character_id]
    read = sheets_now(ids)  # the per-process sheet cache (characters.sheet_cache)
    characters = {pk: character for pk, (character, _now) in read.items()}
    now = {pk: values for pk, (_character, values) in read.items()}
    out: dict[int, Stats] = {}
    for p in participants:
        character = characters.get(p.character_id) if p.character_id else None
        if character is None:
            out[p.pk] = _quick(p)
            continue
        values = now[character.pk]
        dots = {a.name.casefold(): a.value for a in character.attributes.all()}
        dots.update({a.name.casefold(): a.rating for a in character.abilities.all()})
        powers = {pw.name.casefold(): pw.level for pw in character.powers.all()}
        for power, level in powers.items():  # Celerity, Fortitude… read like dots
            dots.setdefault(power, level)
        weapons = [Weapon("Fists", "brawl", 0, "bashing")]
        armor = 0
        for item in character.equipment.all():
            if item.kind == "armor":
                armor += item.armor
            elif item.kind == "weapon":
                weapons.append(
                    Weapon(
                        item.name,
                        _weapon_pool(item),
                        item.damage,
                        item.damage_type or "lethal",
                        item.difficulty,
                        item.range,
                    )
                )
        health = values["health"]
        out[p.pk] = Stats(
            pid=p.pk,
            name=p.name,
            dots=dots,
            creature=SOAK_CREATURE.get(character.creature, "mortal"),
            armor=armor,
            weapons=tuple(weapons),
            willpower=values["willpower"],
            rage=values["rage"],
            wound_penalty=abs(health["penalty"] or 0),
            can_act=health["level"] != "Incapacitated",
            damage=values["damage"],
            health_boxes=health["boxes"],
            fortitude=powers.get("fortitude", 0),
            character=character,
        )
    return out


def _quick(p: Participant) -> Stats:
    """A quick NPC: its typed-in pools are its dots (``Damage`` taken, ``Armor`` worn)."""
    dots = {str(k).casefold(): int(v) for k, v in (p.quick_pools or {}).items()}
    return Stats(
        pid=p.pk,
        name=p.name,
        dots=dots,
        armor=dots.get("armor", 0),
        weapons=(Weapon("Fists", "brawl", 0, "bashing"),),
        willpower=dots.get("willpower", 0),
        rage=dots.get("rage", 0),
    )
