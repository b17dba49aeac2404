"""D2: the wod_dice health track and its wound penalties."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HealthLevel:
    name: str
    penalty: int  # dice taken off pools and initiative (a size, >= 0)
    can_act: bool = True


#: D2 decision: the standard track, one box each.
TRACK: tuple[HealthLevel, ...] = (
    HealthLevel("Bruised", 0),
    HealthLevel("Hurt", 1),
    HealthLevel("Injured", 1),
    HealthLevel("Wounded", 2),
    HealthLevel("Mauled", 2),
    HealthLevel("Crippled", 5),
    HealthLevel("Incapacitated", 0, can_act=False),
)


def level_for(damage: int) -> HealthLevel | None:
    """The level a character with ``damage`` levels of damage is at (None when unhurt)."""
    if damage <= 0:
        return None
    return TRACK[min(damage, len(TRACK)) - 1]


def wound_penalty(damage: int) -> int:
    """D2: the penalty, as a size, for ``damage`` levels taken."""
    level = level_for(damage)
    return level.penalty if level else 0


def apply_penalty(pool: int, penalty: int) -> int:
    """D2: pools never go below 0."""
    return max(pool - penalty, 0)
