"""D6 defenses, D15 firefights, D16 aborts: the difficulty of a roll."""

from __future__ import annotations

from enum import Enum

from combat.rules.dice import clamp_difficulty
from combat.rules.errors import RuleError

ESCAPE_DIFFICULTY = 6  # D6
ABORT_DIFFICULTY = 8  # D16
FIREARMS_DIFFICULTY = 6  # D15
POINT_BLANK_YARDS = 5  # D15


class Against(Enum):
    BRAWL = "brawl"
    MELEE = "melee"
    PROJECTILE = "projectile"
    GUNFIRE = "gunfire"

    @property
    def ranged(self) -> bool:
        return self in {Against.PROJECTILE, Against.GUNFIRE}


class Cover(Enum):
    HALF = "half"
    NEAR = "near"  # cover within reach
    OPEN = "open"


DODGE_RANGED = {Cover.HALF: 3, Cover.NEAR: 6, Cover.OPEN: 9}
IN_MELEE_GUN = {"pistol": 4, "smg": 6, "long_gun": 8}


def block(pool: str, against: Against, *, hand_to_hand: bool = False) -> int:
    """D6: Brawl blocks Brawl; Brawl or Melee block Melee or ranged. 4 with the attack's own
    pool, 5 with another; +2 against projectiles, +4 against gunfire, except a gunner fought
    hand-to-hand: 5."""
    if pool not in {"brawl", "melee"}:
        raise RuleError("D6", "Only Brawl or Melee can block.")
    if against is Against.BRAWL and pool != "brawl":
        raise RuleError("D6", "A Brawl attack is blocked with Brawl.")
    if against is Against.GUNFIRE and hand_to_hand:
        return 5
    base = 4 if pool == against.value else 5
    extra = {Against.PROJECTILE: 2, Against.GUNFIRE: 4}.get(against, 0)
    return clamp_difficulty(base + extra)


def dodge(against: Against, cover: Cover | None = None) -> int:
    """D6: 5 in hand-to-hand; against ranged attacks 3 with half cover, 6 with cover in
    reach, 9 in the open."""
    if not against.ranged:
        return 5
    return DODGE_RANGED[cover or Cover.OPEN]


def firearms(
    *,
    range_: int | None = None,
    distance: int | None = None,
    in_melee: bool = False,
    weapon: str | None = None,
    defender_aware: bool = True,
) -> int:
    """D15: 6; beyond the effective range +2 per whole range of distance; at five yards or
    less and not in hand-to-hand 4; a gun in hand-to-hand 4 against a defender who cannot
    defend, else pistol 4, SMG 6, long gun 8; never above 10."""
    if in_melee:
        if not defender_aware:
            return 4
        if weapon not in IN_MELEE_GUN:
            raise RuleError(
                "D15", "Say which gun is fired in hand-to-hand: pistol, SMG or long gun."
            )
        return IN_MELEE_GUN[weapon]
    if distance is not None and distance <= POINT_BLANK_YARDS:
        return 4
    difficulty = FIREARMS_DIFFICULTY
    if range_ and distance is not None and distance > range_:
        difficulty += 2 * (distance // range_)
    return clamp_difficulty(difficulty)
