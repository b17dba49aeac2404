"""D13 piling on, D14 split actions: dice taken off a pool."""

from __future__ import annotations

from enum import Enum

from combat.rules.errors import RuleError


class Stance(Enum):
    ATTACKING = "attacking"
    DEFENDING = "defending"


def piling_on(stance: Stance, attack_number: int) -> int:
    """D13: against the 2nd, 3rd… attack a character carrying on an attack defends at -2, -4…;
    one who declared a defense at -1, -2, -3… (returned as a negative number)."""
    if attack_number < 1:
        raise RuleError("D13", "Attacks on a character are counted from the first.")
    extra = attack_number - 1
    return -2 * extra if stance is Stance.ATTACKING else -extra


def split(actions: int, wits: int) -> int:
    """D14: with N >= 2 actions each loses 2 + (N - 1) dice; at most Wits actions."""
    if actions < 1:
        raise RuleError("D14", "A turn needs at least one action.")
    if actions > wits:
        raise RuleError("D14", f"With Wits {wits} you can split into at most {wits} actions.")
    return 0 if actions == 1 else -(2 + (actions - 1))


def check_split_targets(attack_targets: list[str]) -> None:
    """D14: never two attacks on the same target in one split."""
    if len(set(attack_targets)) != len(attack_targets):
        raise RuleError("D14", "A split action cannot attack the same target twice.")
