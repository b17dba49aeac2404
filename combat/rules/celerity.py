"""C15: Celerity actions inside a met_classic round: their order, and the blood announced
for them up front."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from combat.rules.errors import RuleError

#: C15: a Celerity level grants these actions, in this order around the normal action.
LEVELS = ("Alacrity", "Swiftness", "Rapidity", "Fleetness")


@dataclass(frozen=True)
class Slot:
    who: str
    action: str  # "Alacrity", "normal", "Swiftness", …


def _their_level(who: str, users: Mapping[str, int], targets: Mapping[str, str] | None) -> int:
    """The Celerity the character's target uses (0: none, or not using it). Without a
    target named, every other character is a possible target: the highest of theirs."""
    if targets and who in targets:
        return users.get(targets[who], 0)
    return max((level for name, level in users.items() if name != who), default=0)


def alacrity_first(
    who: str, celerity: Mapping[str, int], targets: Mapping[str, str] | None = None
) -> bool:
    """C15: Alacrity acts before the normal actions only against a target without Celerity
    (or not using it); if both use it and their Celerity differs, only the higher goes first
    (the other responds as if it had not used Celerity); matched Celerity: neither does."""
    users = {name: level for name, level in celerity.items() if level > 0}
    mine = users.get(who, 0)
    if mine == 0:
        return False
    theirs = _their_level(who, users, targets)
    return theirs == 0 or mine > theirs


def round_order(
    celerity: Mapping[str, int],
    order: list[str] | None = None,
    targets: Mapping[str, str] | None = None,
) -> list[Slot]:
    """C15: Alacrity, the normal actions, Swiftness, Rapidity, Fleetness.

    ``celerity`` maps each character to the Celerity level it uses this round (0: none);
    ``order`` is the order of the normal actions (default: as given); ``targets`` maps a
    character to the one it acts against (default: every other character). An Alacrity
    action comes first only as :func:`alacrity_first` allows; one that may not is not taken
    (its blood is spent anyway, :class:`CelerityRound`). A higher combination beats a lower
    one, so within a slot the higher Celerity acts first.
    """
    names = list(order or celerity)
    users = {n: celerity.get(n, 0) for n in names if celerity.get(n, 0) > 0}
    by_level = sorted(users, key=lambda n: -users[n])
    slots = [Slot(n, "Alacrity") for n in by_level if alacrity_first(n, users, targets)]
    slots += [Slot(n, "normal") for n in names]
    for index, level in enumerate(LEVELS[1:], start=2):
        slots += [Slot(n, level) for n in by_level if users[n] >= index]
    return slots


def matched(attacker_level: int, target_level: int) -> bool:
    """C15: a target of Celerity actions it cannot match bids only Stamina-based traits."""
    return target_level >= attacker_level


def alacrity_dodge_succeeds(
    *, dodging_with_alacrity: bool, attack: str, attacker_level: int
) -> bool:
    """C15: Alacrity dodging a Brawl attacker without Celerity succeeds outright."""
    return dodging_with_alacrity and attack.lower() == "brawl" and attacker_level == 0


@dataclass(frozen=True)
class CelerityRound:
    """One round's Celerity, as announced up front (C15): each character's level, the
    follow-up actions it states and the blood they cost. Blood for announced actions is
    spent even when an action cannot be used (a lost Alacrity, a target gone)."""

    levels: tuple[tuple[str, int], ...] = ()
    targets: tuple[tuple[str, str], ...] = ()
    announced: tuple[tuple[str, int, int], ...] = ()  # (who, follow-ups, blood)
    taken: tuple[tuple[str, str], ...] = ()  # (who, action) actually used

    def announce(
        self,
        who: str,
        *,
        level: int,
        follow_ups: int,
        target: str | None = None,
        blood_each: int = 1,
    ) -> CelerityRound:
        """C15: the attacker states up front how many follow-up actions it makes; each costs
        ``blood_each`` blood, spent now."""
        if any(name == who for name, _f, _b in self.announced):
            raise RuleError("C15", f"{who} has already announced this round's Celerity.")
        if level < 0 or level > len(LEVELS):
            raise RuleError("C15", f"Celerity goes from 0 to {len(LEVELS)}.")
        if follow_ups < 0 or follow_ups > level:
            raise RuleError("C15", f"Celerity {level} grants at most {level} extra action(s).")
        return CelerityRound(
            levels=(*self.levels, (who, level)),
            targets=(*self.targets, (who, target)) if target else self.targets,
            announced=(*self.announced, (who, follow_ups, follow_ups * blood_each)),
            taken=self.taken,
        )

    def order(self, normal_order: list[str] | None = None) -> list[Slot]:
        """C15: the order of this round's actions (see :func:`round_order`)."""
        levels = {who: follows for who, follows, _b in self.announced}
        names = normal_order or [who for who, _level in self.levels]
        return round_order(levels, names, dict(self.targets))

    def take(self, who: str, action: str) -> CelerityRound:
        """Record a Celerity action used; one the order does not give is refused."""
        if Slot(who, action) not in self.order() or (who, action) in self.taken:
            raise RuleError("C15", f"{who} has no {action} action to take now.")
        return CelerityRound(
            self.levels, self.targets, self.announced, (*self.taken, (who, action))
        )

    def blood_spent(self) -> dict[str, int]:
        """C15: the blood announced actions cost, used or not."""
        return {who: blood for who, _follows, blood in self.announced}

    def unused(self) -> list[Slot]:
        """Announced Celerity actions not taken (their blood stays spent)."""
        given = [slot for slot in self.order() if slot.action != "normal"]
        lost = []
        for who, follows, _blood in self.announced:
            mine = [s for s in given if s.who == who]
            granted = {LEVELS[i] for i in range(follows)}
            lost += [Slot(who, a) for a in LEVELS if a in granted and Slot(who, a) not in mine]
            lost += [s for s in mine if (s.who, s.action) not in self.taken]
        return lost
