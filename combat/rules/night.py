"""Across challenges in one game night: running out (W6), regaining (W7), and the locks
that keep a failed or fended-off attack from being repeated at once (C10, W9)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from combat.rules.errors import RuleError
from combat.rules.profiles import Family, Profile, profile
from combat.rules.terms import Category

if TYPE_CHECKING:
    from combat.rules.challenge import Challenge

PHYSICAL_MENTAL_SOCIAL = ("physical", "social", "mental")
FIVE_MINUTES = 5 * 60  # W9, in game-clock seconds
TEN_MINUTES = 10 * 60  # C10


def regains_traits(ruleset: str | Profile) -> bool:
    """W0 (clarified 2026-11-26): regaining traits for willpower (W7) is met_werewolf's."""
    prof = ruleset if isinstance(ruleset, Profile) else profile(ruleset)
    return prof.family is Family.WEREWOLF


def require_regain(ruleset: str | Profile) -> None:
    """W7 with W0: refuse regaining traits for willpower outside met_werewolf."""
    if not regains_traits(ruleset):
        slug = ruleset.slug if isinstance(ruleset, Profile) else ruleset
        raise RuleError(
            "W7", f"Regaining traits for willpower is a met_werewolf rule (W0), not {slug}'s."
        )


def regain(
    category: str,
    *,
    already_regained: set[str],
    willpower: int,
    ruleset: str | Profile = "met_werewolf",
) -> int:
    """W7: once per game night per category, one willpower buys back every trait lost in it
    (met_werewolf only, W0). Returns the willpower left."""
    require_regain(ruleset)
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


@dataclass(frozen=True)
class Locks:
    """The locks in force in a scene, a step at a time (C10, W9). A service keeps them with
    the scene, asks :meth:`check` before a challenge starts and :meth:`after` once one is
    over; ``now`` is always the scene's game clock in seconds."""

    held: tuple[Lock, ...] = ()

    def check(self, *, attacker: str, target: str, what: str, now: int) -> None:
        """Refuse (C10 or W9) a challenge that a lock still in force forbids."""
        check_locks(self.held, attacker, target, what, now)

    def after(
        self, challenge: Challenge, *, attacker: str, target: str, now: int, what: str = ""
    ) -> Locks:
        """The locks a finished challenge leaves. C10: a defender's willpower retest that
        fended the attack off bars that ability or discipline path (``what``, by default the
        challenge's ``path``) against that defender for ten game minutes. W9: in
        met_werewolf, a social or mental challenge the initiator lost bars the same
        challenge against the same target for five game minutes."""
        what = what or challenge.path
        if not what:
            raise RuleError("C10", "Name the ability, power or effect the challenge used.")
        new: list[Lock] = []
        if challenge.fended_off():
            new.append(willpower_lock(attacker, target, what, now))
        if (
            challenge.profile.family is Family.WEREWOLF
            and challenge.category in {Category.SOCIAL, Category.MENTAL}
            and challenge.initiator_lost()
        ):
            new.append(five_minute_lock(attacker, target, what, now))
        return replace(self, held=(*self.expire(now).held, *new))

    def expire(self, now: int) -> Locks:
        """Drop the locks whose time has passed."""
        return replace(self, held=tuple(lock for lock in self.held if now < lock.until))

    def to_list(self) -> list[dict[str, Any]]:
        return [vars(lock).copy() for lock in self.held]

    @classmethod
    def from_list(cls, data: list[dict[str, Any]]) -> Locks:
        return cls(tuple(Lock(**item) for item in data))
