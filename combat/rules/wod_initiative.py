"""D3, D4: wod_dice initiative and the phases of a combat round.

Declarations run from the lowest initiative to the highest, resolutions from the highest to
the lowest. Characters tied on the total and on the part that was not rolled form a group that
declares (privately to the storyteller) and resolves at the same time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby

from combat.rules.errors import RuleError

Slot = str | frozenset[str]


@dataclass(frozen=True)
class Combatant:
    name: str
    roll: int
    wits: int
    dexterity: int
    wound_penalty: int = 0
    bonus: int = 0

    @property
    def fixed(self) -> int:
        """D3: the part of the total that was not rolled."""
        return self.wits + self.dexterity + self.bonus - self.wound_penalty

    @property
    def total(self) -> int:
        """D3: d10 + Wits + Dexterity + bonuses - wound penalty."""
        return self.roll + self.fixed


@dataclass(frozen=True)
class Phase:
    name: str  # "main", "haste 1", …
    declare: tuple[Slot, ...]
    resolve: tuple[Slot, ...]


def resolution_order(combatants: Sequence[Combatant]) -> tuple[Slot, ...]:
    """D3: highest total first; ties by the higher non-rolled part; still tied, a group."""
    ranked = sorted(combatants, key=lambda c: (c.total, c.fixed), reverse=True)
    order: list[Slot] = []
    for _key, tied in groupby(ranked, key=lambda c: (c.total, c.fixed)):
        names = [c.name for c in tied]
        order.append(names[0] if len(names) == 1 else frozenset(names))
    return tuple(order)


def round_phases(
    combatants: Sequence[Combatant], haste: Mapping[str, int] | None = None
) -> tuple[Phase, ...]:
    """D4: the Main Phase, then haste phase n for everyone with n or more haste actions."""
    names = [c.name for c in combatants]
    if len(set(names)) != len(names):
        raise RuleError("D3", f"Each character rolls initiative once: {', '.join(names)}")
    for c in combatants:
        if not 1 <= c.roll <= 10:
            raise RuleError("D3", f"{c.name}'s initiative die shows 1 to 10, not {c.roll}.")
        if c.wound_penalty < 0 or c.wits < 0 or c.dexterity < 0:
            raise RuleError("D3", f"{c.name}: traits and the wound penalty are counted from 0.")
    haste = haste or {}
    if any(n < 0 for n in haste.values()):
        raise RuleError("D4", "Haste actions are counted from 0 up.")
    resolve = resolution_order(combatants)
    phases = [Phase("main", tuple(reversed(resolve)), resolve)]
    n = 1
    while True:
        acting = [c for c in combatants if haste.get(c.name, 0) >= n]
        if not acting:
            break
        order = resolution_order(acting)
        phases.append(Phase(f"haste {n}", tuple(reversed(order)), order))
        n += 1
    return tuple(phases)
