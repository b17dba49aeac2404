"""met_bns initiative and the rounds of a turn (B4, B5, B8).

B4: initiative is the greater of the Physical and Mental attributes; ties go to the higher
Mental, then Physical, then Social, and characters tied on all of them are ordered at random.
The random draw is made once, with a ``random.Random`` the caller owns, and kept as a
``tiebreak`` (a permutation of the names) so that a persisted combat orders ties the same way
every round. B8 adds 5 for a character that forwent both its actions in the last round in
which it could act. B5: a turn is the everyman round, then up to three Celerity rounds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from random import Random
from typing import Any

from combat.rules.errors import RuleError

#: B8: the initiative bonus for forgoing both actions of a round (not cumulative).
FORGO_BONUS = 5
#: B5 decision: a Celerity rating of k grants k Celerity rounds, at most three.
MAX_CELERITY_ROUNDS = 3
#: Game clock: a met_bns turn lasts about three seconds of game time.
TURN_SECONDS = 3


class Attribute(Enum):
    """The three met_bns attributes."""

    PHYSICAL = "physical"
    SOCIAL = "social"
    MENTAL = "mental"


@dataclass(frozen=True)
class Combatant:
    """A character's sheet as the initiative count needs it.

    ``celerity`` is the activated Celerity rating; ``forwent_last_round`` is B8's pending +5.
    """

    name: str
    physical: int
    mental: int
    social: int
    celerity: int = 0
    forwent_last_round: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "physical": self.physical,
            "mental": self.mental,
            "social": self.social,
            "celerity": self.celerity,
            "forwent_last_round": self.forwent_last_round,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Combatant:
        return cls(
            name=str(data["name"]),
            physical=int(data["physical"]),
            mental=int(data["mental"]),
            social=int(data["social"]),
            celerity=int(data.get("celerity", 0)),
            forwent_last_round=bool(data.get("forwent_last_round", False)),
        )


def initiative(combatant: Combatant, forgo_bonus: bool | None = None) -> int:
    """B4: the greater of Physical and Mental; B8: +5 after forgoing both actions.

    ``forgo_bonus`` overrides the sheet's ``forwent_last_round`` (a running combat knows
    better whether the bonus is still pending).
    """
    bonus = combatant.forwent_last_round if forgo_bonus is None else forgo_bonus
    return max(combatant.physical, combatant.mental) + (FORGO_BONUS if bonus else 0)


def celerity_rounds(combatant: Combatant) -> int:
    """B5: how many Celerity rounds the activated Celerity grants (k rounds, at most 3)."""
    return max(0, min(combatant.celerity, MAX_CELERITY_ROUNDS))


def draw_tiebreak(names: Iterable[str], rng: Random) -> tuple[str, ...]:
    """B4: the random order of characters tied on everything, drawn once from ``rng``."""
    shuffled = sorted(names)
    rng.shuffle(shuffled)
    return tuple(shuffled)


def initiative_order(
    combatants: Sequence[Combatant],
    tiebreak: Sequence[str],
    initiatives: Mapping[str, int] | None = None,
) -> tuple[str, ...]:
    """B4: names from highest initiative to lowest.

    Ties: higher Mental first, then higher Physical, then higher Social, then the random
    ``tiebreak``. ``initiatives`` overrides the computed values (B8 bonuses in a combat).
    """
    rank = {name: index for index, name in enumerate(tiebreak)}
    missing = [c.name for c in combatants if c.name not in rank]
    if missing:
        raise ValueError(f"the tiebreak does not order {missing}")

    def key(c: Combatant) -> tuple[int, int, int, int, int]:
        value = initiatives[c.name] if initiatives is not None else initiative(c)
        return (-value, -c.mental, -c.physical, -c.social, rank[c.name])

    return tuple(c.name for c in sorted(combatants, key=key))


class RoundKind(Enum):
    """B5: the everyman round, or a Celerity round."""

    EVERYMAN = "everyman"
    CELERITY = "celerity"


@dataclass(frozen=True)
class RoundPlan:
    """One round of a turn: which characters act in it, in order.

    ``number`` is 0 for the everyman round and k for Celerity round k.
    """

    number: int
    order: tuple[str, ...]

    @property
    def kind(self) -> RoundKind:
        return RoundKind.EVERYMAN if self.number == 0 else RoundKind.CELERITY

    @property
    def label(self) -> str:
        """``"everyman"`` or ``"celerity 2"``."""
        return "everyman" if self.number == 0 else f"celerity {self.number}"

    def to_dict(self) -> dict[str, Any]:
        return {"number": self.number, "order": list(self.order)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RoundPlan:
        return cls(number=int(data["number"]), order=tuple(data["order"]))


def forgo_bonus_counts(number: int) -> bool:
    """B8 with B5: a pending +5 counts in the everyman round (0), never in a Celerity round."""
    return number == 0


def round_initiative(combatant: Combatant, number: int) -> int:
    """B4, B5, B8: a character's initiative in round ``number`` of a turn.

    B8's +5 (``forwent_last_round``: the bonus still pending) counts in the everyman round
    only: it is never added in a Celerity round, the everyman round being the next round in
    which everybody acts.
    """
    pending = combatant.forwent_last_round
    return initiative(combatant, forgo_bonus=forgo_bonus_counts(number) and pending)


def acts_in_round(combatant: Combatant, number: int) -> bool:
    """B5: everyone acts in the everyman round; in Celerity round k only those granted k."""
    return number == 0 or celerity_rounds(combatant) >= number


@dataclass(frozen=True)
class TurnPlan:
    """B4, B5: everyone's initiative and the rounds of a turn, as it stands at its start.

    The Celerity rounds use the plain initiative: B8's +5 is spent in the everyman round,
    the first round in which everybody acts (:func:`round_initiative`, shared with
    :class:`~combat.rules.bns_round.Combat`).
    """

    initiative: Mapping[str, int]
    rounds: tuple[RoundPlan, ...]
    tiebreak: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "initiative": dict(self.initiative),
            "rounds": [r.to_dict() for r in self.rounds],
            "tiebreak": list(self.tiebreak),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TurnPlan:
        return cls(
            initiative={str(k): int(v) for k, v in data["initiative"].items()},
            rounds=tuple(RoundPlan.from_dict(r) for r in data["rounds"]),
            tiebreak=tuple(data["tiebreak"]),
        )


def plan_round(
    combatants: Sequence[Combatant],
    number: int,
    tiebreak: Sequence[str],
) -> RoundPlan:
    """B4, B5, B8: the order of round ``number`` (0 everyman, k Celerity k) among those who
    act in it. The one place an order is computed: the turn plan and a running
    :class:`~combat.rules.bns_round.Combat` both call it (a pending B8 bonus is the sheet's
    ``forwent_last_round``, counted in the everyman round only)."""
    acting = [c for c in combatants if acts_in_round(c, number)]
    values = {c.name: round_initiative(c, number) for c in acting}
    return RoundPlan(number=number, order=initiative_order(acting, tiebreak, values))


def plan_turn(
    combatants: Sequence[Combatant],
    rng: Random | None = None,
    tiebreak: Sequence[str] | None = None,
) -> TurnPlan:
    """B4, B5, B8: the turn's initiatives and its rounds.

    Give either a ``tiebreak`` already drawn or an ``rng`` to draw one.
    """
    if tiebreak is None:
        if rng is None:
            raise ValueError("plan_turn needs an rng or a tiebreak to order full ties (B4)")
        tiebreak = draw_tiebreak((c.name for c in combatants), rng)
    names = [c.name for c in combatants]
    if len(set(names)) != len(names):
        raise RuleError("B4", f"Each character takes part once: {', '.join(names)}")
    for c in combatants:
        if min(c.physical, c.mental, c.social, c.celerity) < 0:
            raise RuleError("B4", f"{c.name}: attributes and Celerity are counted from 0.")
    everyman = {c.name: round_initiative(c, 0) for c in combatants}
    most = max((celerity_rounds(c) for c in combatants), default=0)
    rounds = [plan_round(combatants, k, tiebreak) for k in range(0, most + 1)]
    return TurnPlan(initiative=everyman, rounds=tuple(rounds), tiebreak=tuple(tiebreak))
