"""D5, D7-D11: two actions meeting, and what lands.

An exchange takes each side's declared action and its successes (rolled by the caller) and
says which attack lands with how many successes, the damage pool it rolls, whether an escape
starts a chase (D9, K4) or a grapple starts (D10, G1).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from combat.rules.errors import RuleError


class Action(Enum):
    ATTACK = "attack"
    GRAPPLE = "grapple"
    BLOCK = "block"
    DODGE = "dodge"
    ESCAPE = "escape"
    GUARD = "guard"

    @property
    def is_attack(self) -> bool:
        return self in {Action.ATTACK, Action.GRAPPLE}

    @property
    def meets_as_attack(self) -> bool:
        """D7, D9, D10 and D6's guard: compared attack against attack (lower successes off
        the higher), not subtracted as a defense (D8)."""
        return self.is_attack or self in {Action.ESCAPE, Action.GUARD}


class Maneuver(Enum):
    """D5: attack kinds with their (difficulty, damage dice) modifiers."""

    BASIC = "basic"
    POWER = "power"
    FEINT = "feint"
    COMMITTED = "committed"

    @property
    def difficulty(self) -> int:
        return {Maneuver.POWER: 1, Maneuver.FEINT: -1}.get(self, 0)

    @property
    def damage(self) -> int:
        return {Maneuver.POWER: 2, Maneuver.FEINT: -2}.get(self, 0)


@dataclass(frozen=True)
class Move:
    action: Action
    successes: int
    damage: int = 0
    maneuver: Maneuver = Maneuver.BASIC


@dataclass(frozen=True)
class Outcome:
    lands: str | None = None  # "attacker", "defender" or None
    net: int = 0
    damage_pool: int = 0
    chase_head_start: int | None = None
    grappler: str | None = None
    control: int = 0


def damage_pool(move: Move, net: int) -> int:
    """D11 (with D5): damage dice + maneuver modifier + (remaining successes - 1), at least 0."""
    return max(move.damage + move.maneuver.damage + net - 1, 0)


def _landing(side: str, move: Move, net: int) -> Outcome:
    if move.action is Action.GRAPPLE:
        return Outcome(grappler=side, control=net)  # D10, G1
    return Outcome(lands=side, net=net, damage_pool=damage_pool(move, net))


def resolve(attacker: Move, defender: Move, *, first_attack: bool = True) -> Outcome:
    """D7-D10: compare the attacker's action with the defender's.

    D6 with D7: a guard is no defense. It turns into an attack on the first attacker and is
    compared attack against attack (the higher lands with the difference, equal: neither);
    against any later attacker (``first_attack`` false) it has already been spent, so the
    attack meets no defense and lands with all its successes.
    """
    a, d = attacker.successes, defender.successes
    if a < 0 or d < 0:
        raise RuleError("D7", "Successes are counted from 0 up.")
    if defender.action is Action.GUARD and not first_attack:
        return _landing("attacker", attacker, a) if a > 0 else Outcome()
    if defender.action.meets_as_attack:
        # D7, D9, D10: the lower successes come off the higher; equal, nothing lands.
        if a == d:
            return Outcome()
        if a > d:
            return _landing("attacker", attacker, a - d)
        if defender.action is Action.ESCAPE:
            return Outcome(chase_head_start=d - a)  # D9, K4
        return _landing("defender", defender, d - a)
    # D8 (and D10 for a grapple attack against a defense): defense successes come off.
    net = a - d
    if net <= 0:
        return Outcome()
    return _landing("attacker", attacker, net)
