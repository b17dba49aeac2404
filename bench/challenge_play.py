"""What a bench pair plays next: the bids it still has and who wins (no Django, no I/O).

A pair plays contested met_classic challenges: the attacker starts with a bid, the defender
bids back in the same category, both throw, the loser accepts (C1-C3). The winner alternates
(rock against scissors, then rock against paper: never a draw), and each side bids the trait
it has most of left in the category where both have most left, so a pair plays as many
challenges as its sheets allow (``challenge_setup.py`` doubles the demo's counts).
"""

from __future__ import annotations

from dataclasses import dataclass, field

THROWS = {"attacker": ("rock", "scissors"), "defender": ("rock", "paper")}  # winner -> (a, d)


@dataclass
class Challenge:
    category: str
    bids: dict[str, str]  # side -> trait
    winner: str

    @property
    def loser(self) -> str:
        return "defender" if self.winner == "attacker" else "attacker"

    @property
    def throws(self) -> dict[str, str]:
        a, d = THROWS[self.winner]
        return {"attacker": a, "defender": d}


@dataclass
class Pair:
    traits: dict[str, dict[str, dict[str, int]]]  # side -> category -> trait -> count left
    played: int = 0
    current: Challenge | None = field(default=None, repr=False)

    def next(self) -> Challenge | None:
        """The next challenge, or None when no category has a bid left on both sides."""
        best = None
        for category in self.traits["attacker"]:
            left = [
                sum(self.traits[side].get(category, {}).values())
                for side in ("attacker", "defender")
            ]
            if min(left) > 0 and (best is None or min(left) > best[0]):
                best = (min(left), category)
        if best is None:
            return None
        category = best[1]
        bids = {
            side: max(self.traits[side][category].items(), key=lambda kv: kv[1])[0]
            for side in ("attacker", "defender")
        }
        self.current = Challenge(category, bids, "attacker" if self.played % 2 == 0 else "defender")
        return self.current

    def resolved(self) -> None:
        """The current challenge ended: its loser's bid is one less."""
        ch = self.current
        assert ch is not None
        self.traits[ch.loser][ch.category][ch.bids[ch.loser]] -= 1
        self.played += 1
        self.current = None
