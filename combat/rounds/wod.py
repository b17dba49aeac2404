"""wod_dice arithmetic the round services and the tablet share: pools, difficulties, rolls.

Pure functions over :class:`~combat.rounds.sheets.Stats` and the engine's declarations; the
services roll (or take typed dice) and the tablet shows the same numbers before the roll, so
what the storyteller overrides is what was computed (D5, D6, D11-D15).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from random import Random

from combat.rounds.sheets import Stats, Weapon
from combat.rules import difficulty as diff
from combat.rules.dice import RollKind, RollResult, count, roll_d10s
from combat.rules.errors import RuleError
from combat.rules.health import apply_penalty
from combat.rules.soak import DamageType, soak_pool
from config.bounds import parse_small

ATTACK_ACTIONS = ("attack", "grapple", "guard")
DEFENSE_ACTIONS = ("block", "dodge", "escape", "grapple_defense")
OTHER_ACTIONS = ("move", "other", "none")
SPLIT_ACTIONS = ("attack", "block", "dodge")  # D14: what a split adds to the main action
THIRD_PARTY_ACTIONS = ("assist", "break_up")  # G7, G5
GRAPPLER_ACTIONS = ("sustain", "release")  # G2
VICTIM_ACTIONS = ("resist", "reverse", "relent")  # G2
ACTIONS = (
    *ATTACK_ACTIONS,
    *DEFENSE_ACTIONS,
    *OTHER_ACTIONS,
    *THIRD_PARTY_ACTIONS,
    *GRAPPLER_ACTIONS,
    *VICTIM_ACTIONS,
)
ACTION_LABELS = {
    "attack": "Attack",
    "grapple": "Grapple",
    "guard": "Guard",
    "block": "Block",
    "dodge": "Dodge",
    "escape": "Escape",
    "grapple_defense": "Grapple defense",
    "move": "Move",
    "other": "Other action",
    "none": "Nothing",
    "pending": "Aborted: declaring anew",
    "sustain": "Sustain the grapple",
    "release": "Release the grapple",
    "resist": "Resist the grapple",
    "reverse": "Reverse the grapple",
    "relent": "Relent",
    "assist": "Help in the grapple",
    "break_up": "Break up the grapple",
}
MANEUVERS = ("basic", "power", "feint", "committed")
MAX_TYPED_DICE = 40


@dataclass(frozen=True)
class Pool:
    """A pool ready to roll: dice after penalties, the difficulty, and how it was built."""

    dice: int
    difficulty: int
    parts: str

    def as_dict(self) -> dict:
        return {"dice": self.dice, "difficulty": self.difficulty, "parts": self.parts}


def weapon_for(stats: Stats, name: str | None) -> Weapon:
    return (name and stats.weapon(name)) or stats.weapons[0]


def _ability_for(weapon: Weapon) -> str:
    return {"brawl": "Brawl", "melee": "Melee", "firearms": "Firearms"}[weapon.pool]


def action_pool(
    stats: Stats,
    action: str,
    *,
    weapon: str | None = None,
    maneuver: str = "basic",
    against: Weapon | None = None,
    penalty: int = 0,
) -> Pool:
    """D5, D6, D15: the dice and difficulty of one action, before any override.

    ``penalty`` is the dice taken off for split actions and piling on (D13, D14), a size;
    the wound penalty (D2) is taken off here. Pools never go below 0.
    """
    maneuver_mod = {"power": 1, "feint": -1}.get(maneuver, 0)
    if action in ("attack", "guard"):
        w = weapon_for(stats, weapon)
        ability = _ability_for(w)
        base = stats.dot("Dexterity") + stats.dot(ability)
        difficulty = w.difficulty or 6
        parts = f"Dexterity {stats.dot('Dexterity')} + {ability} {stats.dot(ability)}"
        if w.name != "Fists":
            parts += f" ({w.name})"
        difficulty += maneuver_mod
    elif action == "grapple":
        base = stats.dot("Strength") + stats.dot("Brawl")
        difficulty = 6 + maneuver_mod
        parts = f"Strength {stats.dot('Strength')} + Brawl {stats.dot('Brawl')}"
    elif action in ("block", "grapple_defense"):
        ability = (
            "Melee" if stats.dot("Melee") > stats.dot("Brawl") and action == "block" else "Brawl"
        )
        if action == "block" and against is not None and against.pool == "brawl":
            ability = "Brawl"
        base = stats.dot("Dexterity") + stats.dot(ability)
        parts = f"Dexterity {stats.dot('Dexterity')} + {ability} {stats.dot(ability)}"
        difficulty = diff.block(ability.lower(), _against(against)) if action == "block" else 6
    elif action == "dodge":
        base = stats.dot("Dexterity") + stats.dot("Athletics")
        parts = f"Dexterity {stats.dot('Dexterity')} + Athletics {stats.dot('Athletics')}"
        difficulty = diff.dodge(_against(against))
    elif action == "escape":
        base = stats.dot("Dexterity") + stats.dot("Athletics")
        parts = f"Dexterity {stats.dot('Dexterity')} + Athletics {stats.dot('Athletics')}"
        difficulty = diff.ESCAPE_DIFFICULTY
    else:
        raise RuleError("D4", f"A {action} is not rolled.")
    dice = apply_penalty(base, stats.wound_penalty + penalty)
    if stats.wound_penalty:
        parts += f" − {stats.wound_penalty} wounds"
    if penalty:
        parts += f" − {penalty}"
    return Pool(dice, max(2, min(10, difficulty)), parts)


def _against(weapon: Weapon | None) -> diff.Against:
    if weapon is None:
        return diff.Against.BRAWL
    return {
        "brawl": diff.Against.BRAWL,
        "melee": diff.Against.MELEE,
        "firearms": diff.Against.GUNFIRE,
    }[weapon.pool]


def damage_dice(stats: Stats, weapon: Weapon) -> tuple[int, str]:
    """D11: the damage pool before the remaining successes: Strength + weapon in hand-to-hand,
    the gun's damage for firearms. Returns (dice, damage type)."""
    if weapon.pool == "firearms":
        return weapon.damage, weapon.damage_type
    kind = "bashing" if weapon.pool == "brawl" else weapon.damage_type
    return stats.dot("Strength") + weapon.damage, kind


def soak_dice(stats: Stats, damage_type: str) -> int:
    """D12: the pool ``stats`` soaks ``damage_type`` with (Stamina, armor, Fortitude, as its
    creature soaks that damage)."""
    return soak_pool(
        creature=stats.creature,
        stamina=stats.dot("Stamina"),
        armor=stats.armor,
        damage=DamageType(damage_type),
        fortitude=stats.fortitude,
    )


def parse_dice(text: str | None) -> tuple[int, ...] | None:
    """Dice typed in from real d10s: ``"3 7 10 1"`` (0 reads as 10). None when left empty."""
    if text is None or not str(text).strip():
        return None
    dice = []
    for part in str(text).replace(",", " ").split():
        value = parse_small(part, 0, 999_999)
        if value is None:
            raise RuleError("D1", f"Type the dice as numbers 1 to 10, not {part[:8]!r}.")
        value = 10 if value == 0 else value
        if not 1 <= value <= 10:
            raise RuleError("D1", "A d10 shows 1 to 10.")
        dice.append(value)
    if len(dice) > MAX_TYPED_DICE:
        raise RuleError("D1", f"At most {MAX_TYPED_DICE} dice.")
    return tuple(dice)


def check_typed(dice: Sequence[int], pool: int, who: str = "", what: str = "pool") -> None:
    """D1: dice typed in from the table are the whole pool the tablet shows: as many dice as
    the pool, no more, no fewer (a pool below 0 is 0 dice). Refused with the pool's size."""
    pool = max(pool, 0)
    if len(dice) == pool:
        return
    whose = f"{who}'s {what}" if who else f"The {what}"
    size = f"{pool} {'die' if pool == 1 else 'dice'}"
    fix = f"type {pool} or leave it blank" if pool else "leave it blank"
    raise RuleError("D1", f"{whose} is {size}; {len(dice)} typed: {fix}")


def roll(
    pool: int,
    difficulty: int,
    rng: Random,
    *,
    typed: tuple[int, ...] | None = None,
    kind: RollKind = RollKind.ACTION,
    who: str = "",
    what: str = "pool",
) -> RollResult:
    """D1: the server's dice, or the dice typed in from the table: as many as the pool the
    tablet shows (``who``'s ``what`` names it in the refusal)."""
    if typed is not None:
        check_typed(typed, pool, who, what)
    dice = typed if typed is not None else roll_d10s(pool, rng)
    return count(dice, difficulty, kind)


def roll_dict(label: str, result: RollResult, *, who: str = "", typed: bool = False) -> dict:
    return {
        "label": label,
        "who": who,
        "dice": list(result.dice),
        "difficulty": result.difficulty,
        "successes": result.successes,
        "botch": result.botch,
        "typed": typed,
    }
