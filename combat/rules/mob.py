"""C16: mob scenes: several attackers on one defender (or one attacker on several)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from combat.rules.errors import RuleError

MOST_ATTACKERS = 5


def primary_victim(targets: Mapping[str, str]) -> str:
    """C16: everyone reveals a target at once; the character with the most attackers is the
    primary victim. A tie is the storyteller's call (refused here, naming the tied)."""
    counts = Counter(targets.values())
    if not counts:
        raise RuleError("C16", "Nobody has named a target.")
    most = max(counts.values())
    tied = sorted(name for name, count in counts.items() if count == most)
    if len(tied) > 1:
        raise RuleError("C16", f"{' and '.join(tied)} have as many attackers: storyteller's call.")
    return tied[0]


@dataclass(frozen=True)
class Mob:
    """Everyone revealed their targets at once; this is one primary victim's mob."""

    victim: str
    attackers: tuple[str, ...]
    primary: str

    @classmethod
    def form(cls, victim: str, attackers: list[str], primary: str, *, agreed: bool) -> Mob:
        """C16: only with every player's agreement (or the storyteller's insistence); at most
        five attackers, who pick a primary attacker to throw."""
        if not agreed:
            raise RuleError(
                "C16", "A mob scene needs every player's agreement or the storyteller's call."
            )
        if not attackers:
            raise RuleError("C16", "A mob needs attackers.")
        if len(attackers) > MOST_ATTACKERS:
            raise RuleError("C16", f"At most {MOST_ATTACKERS} attackers can mob one character.")
        if primary not in attackers:
            raise RuleError("C16", "The primary attacker must be one of the mob.")
        return cls(victim, tuple(attackers), primary)

    @property
    def defender_penalty(self) -> int:
        """C5, C16: the defender is -1 on a draw for each attacker beyond the first."""
        return len(self.attackers) - 1

    def drop_out(self, attacker: str, replacement: str | None = None) -> Mob:
        """C16: an attacker who cannot match the negatives named drops out; another may
        step in."""
        if attacker not in self.attackers:
            raise RuleError("C16", f"{attacker} is not in this mob.")
        rest = [a for a in self.attackers if a != attacker]
        if replacement:
            rest.append(replacement)
        primary = self.primary if self.primary != attacker else (rest[0] if rest else "")
        if not rest:
            raise RuleError("C16", "The last attacker cannot drop out; the mob breaks up.")
        return Mob(self.victim, tuple(rest), primary)

    def losers(self, defender_won: bool) -> tuple[str, ...]:
        """C16: if the defender wins every attacker loses its bid; otherwise the defender
        suffers the single most damaging effect (the primary attacker picks when unclear)."""
        return self.attackers if defender_won else (self.victim,)
