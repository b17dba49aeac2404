"""Shared terms of RULES.md: throws, categories, sides, health, modes, retest kinds."""

from __future__ import annotations

from enum import Enum

from combat.rules.errors import RuleError


class Throw(Enum):
    """Rock beats scissors, scissors beats paper, paper beats rock; equal throws draw."""

    ROCK = "rock"
    PAPER = "paper"
    SCISSORS = "scissors"

    def beats(self, other: Throw) -> bool:
        return (self, other) in _BEATS

    @classmethod
    def parse(cls, value: Throw | str) -> Throw:
        """C3: a throw is rock, paper or scissors; anything else is refused by name."""
        if isinstance(value, Throw):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            raise RuleError("C3", f"{value!r} is not a throw: rock, paper or scissors.") from None


_BEATS = {
    (Throw.ROCK, Throw.SCISSORS),
    (Throw.SCISSORS, Throw.PAPER),
    (Throw.PAPER, Throw.ROCK),
}


class Outcome(Enum):
    """Who wins one throw: the first thrower, the second, or a draw."""

    FIRST = "a"
    SECOND = "b"
    DRAW = "draw"


def compare(first: Throw, second: Throw) -> Outcome:
    """Shared terms: one throw (a chop) between two sides."""
    if first is second:
        return Outcome.DRAW
    return Outcome.FIRST if first.beats(second) else Outcome.SECOND


class Category(Enum):
    """Trait categories and the temper categories (W1)."""

    PHYSICAL = "physical"
    SOCIAL = "social"
    MENTAL = "mental"
    RAGE = "rage"
    GNOSIS = "gnosis"
    WILLPOWER = "willpower"

    @property
    def is_temper(self) -> bool:
        return self in {Category.RAGE, Category.GNOSIS, Category.WILLPOWER}


class Side(Enum):
    ATTACKER = "attacker"
    DEFENDER = "defender"

    @property
    def other(self) -> Side:
        return Side.DEFENDER if self is Side.ATTACKER else Side.ATTACKER


class Health(Enum):
    """C5–C7: the MET health levels that change a challenge (Torpor is past Incapacitated)."""

    HEALTHY = "healthy"
    BRUISED = "bruised"
    WOUNDED = "wounded"
    INCAPACITATED = "incapacitated"
    TORPOR = "torpor"

    @property
    def wounded(self) -> bool:
        """C6 (clarified 2026-11-26): Wounded or worse (Incapacitated, Torpor)."""
        return self in {Health.WOUNDED, Health.INCAPACITATED, Health.TORPOR}

    @property
    def down(self) -> bool:
        """C7: Incapacitated or worse (Torpor is no better for a challenge)."""
        return self in {Health.INCAPACITATED, Health.TORPOR}


class Mode(Enum):
    """C1, C11, C13, W13, W14: the kinds of test."""

    CONTESTED = "contested"
    STATIC = "static"
    SIMPLE = "simple"
    DIFFICULT = "difficult"
    EXTENDED = "extended"


class RetestKind(Enum):
    """C8–C10, C6, W10–W12, B2: the retests a losing side may call for."""

    POWER = "power"
    ABILITY = "ability"
    OVERBID = "overbid"
    WILLPOWER = "willpower"
    FREE = "free"
