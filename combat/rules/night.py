"""Across challenges in one game night: running out (W6), regaining (W7), and the locks
that keep a failed or fended-off attack from being repeated at once (C10, W9)."""

from __future__ import annotations

from dataclasses import dataclass

from combat.rules.errors import RuleError

PHYSICAL_MENTAL_SOCIAL = ("physical", "social", "mental")
FIVE_MINUTES = 5 * 60  # W9, in game-clock seconds
TEN_MINUTES = 10 * 60  # C10


def regain(category: str, *, already_regained: set[str], willpower: int) -> int:
    """W7: once per game night per category, one willpower buys back every trait lost in it.
    Returns the willpower left."""
    if category not in PHYSICAL_MENTAL_SOCIAL:
        raise RuleError("W7", "Only physical, social or mental traits can be regained.")
    if category in already_regained:
        raise RuleError("W7", f"{category.capitalize()} traits were already regained tonight.")
    if willpower < 1:
        raise RuleError("W7", "Regaining traits costs one willpower; none is left.")
    return willpower - 1


@dataclass(frozen=True)
class Lock:
    """An attacker kept from using ``what`` on ``target`` until ``until`` (game seconds)."""

    attacker: str
    target: str
    what: str
    until: int
    rule: str


def willpower_lock(attacker: str, target: str, power: str, now: int) -> Lock:
    """C10: a willpower retest that fends off the attack bars that ability or discipline
    path against that defender for ten minutes of game time."""
    return Lock(attacker, target, power, now + TEN_MINUTES, "C10")


def five_minute_lock(attacker: str, target: str, challenge: str, now: int) -> Lock:
    """W9: the initiator of a social or mental challenge it lost may not repeat the same
    challenge on the same target for five minutes of game time."""
    return Lock(attacker, target, challenge, now + FIVE_MINUTES, "W9")


def check_locks(locks: tuple[Lock, ...], attacker: str, target: str, what: str, now: int) -> None:
    """Refuse a challenge that a lock still in force forbids."""
    for lock in locks:
        if (lock.attacker, lock.target, lock.what) == (attacker, target, what) and now < lock.until:
            minutes = -(-(lock.until - now) // 60)
            raise RuleError(
                lock.rule,
                f"{attacker} cannot use {what} on {target} for {minutes} more minute(s).",
            )
