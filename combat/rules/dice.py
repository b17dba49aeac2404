"""D1: d10 dice pools, successes and botches.

The dice are always given: a caller rolls them with :func:`roll_d10s` and a ``random.Random``
it owns (a scripted list in tests), so the engine never draws randomness of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from random import Random

from combat.rules.errors import RuleError

MIN_DIFFICULTY, MAX_DIFFICULTY = 2, 10


class RollKind(Enum):
    """D1: action rolls may botch; damage and soak rolls count successes only."""

    ACTION = "action"
    DAMAGE = "damage"
    SOAK = "soak"


@dataclass(frozen=True)
class RollResult:
    dice: tuple[int, ...]
    difficulty: int
    successes: int
    botch: bool


def clamp_difficulty(difficulty: int) -> int:
    """D1 decision: difficulties are held to 2..10."""
    return max(MIN_DIFFICULTY, min(MAX_DIFFICULTY, difficulty))


def count(dice: Sequence[int], difficulty: int, kind: RollKind = RollKind.ACTION) -> RollResult:
    """D1: each die at or above the difficulty succeeds; on an action roll each 1 cancels one
    success (never below 0), and a roll with no die at the difficulty and a 1 is a botch."""
    if any(not 1 <= die <= 10 for die in dice):
        raise RuleError("D1", "A d10 shows 1 to 10.")
    target = clamp_difficulty(difficulty)
    hits = sum(1 for die in dice if die >= target)
    if kind is not RollKind.ACTION:
        return RollResult(tuple(dice), target, hits, False)
    ones = sum(1 for die in dice if die == 1)
    return RollResult(tuple(dice), target, max(hits - ones, 0), hits == 0 and ones > 0)


def roll_d10s(pool: int, rng: Random) -> tuple[int, ...]:
    """Roll ``pool`` ten-sided dice with the caller's generator (a pool below 0 rolls none)."""
    return tuple(rng.randint(1, 10) for _ in range(max(pool, 0)))
