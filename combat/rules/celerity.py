"""C15: the order of Celerity actions inside a met_classic round."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: C15: a Celerity level grants these actions, in this order around the normal action.
LEVELS = ("Alacrity", "Swiftness", "Rapidity", "Fleetness")


@dataclass(frozen=True)
class Slot:
    who: str
    action: str  # "Alacrity", "normal", "Swiftness", …


def round_order(celerity: Mapping[str, int], order: list[str] | None = None) -> list[Slot]:
    """C15: Alacrity, the normal actions, Swiftness, Rapidity, Fleetness.

    ``celerity`` maps each character to the Celerity level it uses this round (0: none);
    ``order`` is the order of the normal actions (default: as given). Alacrity goes before the
    normal actions only against those not using Celerity: if several use it and their levels
    differ, only the highest gets its Alacrity first; the others' Alacrity comes with the
    normal actions. A higher combination beats a lower one, so within a slot the higher
    Celerity acts first.
    """
    names = list(order or celerity)
    users = {n: celerity.get(n, 0) for n in names if celerity.get(n, 0) > 0}
    top = max(users.values(), default=0)
    leaders = [n for n, level in users.items() if level == top]
    matched_everyone = len(users) > 1 and len(set(users.values())) == 1
    first = [] if matched_everyone else leaders
    slots = [Slot(n, "Alacrity") for n in sorted(first, key=lambda n: -users[n])]
    late = sorted((n for n in users if n not in first), key=lambda n: -users[n])
    slots += [Slot(n, "Alacrity") for n in late]
    slots += [Slot(n, "normal") for n in names]
    for index, level in enumerate(LEVELS[1:], start=2):
        ready = sorted((n for n, lv in users.items() if lv >= index), key=lambda n: -users[n])
        slots += [Slot(n, level) for n in ready]
    return slots


def matched(attacker_level: int, target_level: int) -> bool:
    """C15: a target of Celerity actions it cannot match bids only Stamina-based traits."""
    return target_level >= attacker_level
