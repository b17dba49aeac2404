"""The exact chance that a side wins a challenge from where it stands.

Every pair of throws is equally likely (1 in 9). From a state the engine is stepped through
every pair; a draw declares full totals; a losing side uses its retests in the order its
:class:`RetestPolicy` gives, the first one the rules allow; when none is allowed the result
stands. An equal-totals re-throw (C4) that comes back to the same state is summed as the
geometric series it is, so the answer is exact: a :class:`fractions.Fraction`, no sampling.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from itertools import product

from combat.rules.challenge import CHOICE, Challenge, Phase
from combat.rules.errors import RuleError
from combat.rules.terms import RetestKind, Side, Throw

CHEAPEST_FIRST = (
    RetestKind.FREE,
    RetestKind.POWER,
    RetestKind.ABILITY,
    RetestKind.OVERBID,
    RetestKind.WILLPOWER,
)
PAIRS = tuple(product(Throw, Throw))
NINTH = Fraction(1, 9)


@dataclass(frozen=True)
class RetestPolicy:
    """Which retest kinds each side uses when losing, in order (default: every one allowed,
    cheapest first). A side given ``()`` never retests."""

    attacker: tuple[RetestKind, ...] = CHEAPEST_FIRST
    defender: tuple[RetestKind, ...] = CHEAPEST_FIRST

    def order(self, side: Side) -> tuple[RetestKind, ...]:
        return self.attacker if side is Side.ATTACKER else self.defender


def _full_declarations(state: Challenge) -> Challenge:
    if state.defender is None:
        return state.declare(state.total(Side.ATTACKER))
    return state.declare(state.total(Side.ATTACKER), state.total(Side.DEFENDER))


def _spare_trait(state: Challenge, side: Side) -> str | None:
    """W11: another current trait to risk (another copy of the bid counts)."""
    contender = state.side(side)
    if isinstance(contender.traits, int):
        return CHOICE
    for name, _count in contender.traits:
        if state._can_risk(side, name):
            return name
    return None


def retest_with(state: Challenge, side: Side, kind: RetestKind) -> Challenge:
    """Call a retest the way a player would, with the obvious arguments; may be refused."""
    contender = state.side(side)
    opponent = state.side(side.other) if state.defender is not None else None
    return state.retest(
        side,
        kind,
        ability=contender.ability or next((n for n, r in contender.abilities if r > 0), None),
        opposing=opponent.ability if opponent else None,
        power=contender.powers[0] if contender.powers else None,
        trait=_spare_trait(state, side) if kind is RetestKind.OVERBID else None,
    )


def _after_losing(state: Challenge, policy: RetestPolicy) -> Challenge:
    loser = state.loser
    assert loser is not None
    for kind in policy.order(loser):
        try:
            return retest_with(state, loser, kind)
        except RuleError:
            continue
    return state.accept()


def _settle(state: Challenge, policy: RetestPolicy) -> Challenge:
    """Step through every decision that is not a throw."""
    while True:
        if state.phase is Phase.DECLARATIONS:
            state = _full_declarations(state)
        elif state.phase is Phase.RETESTS:
            state = _after_losing(state, policy)
        else:
            return state


def _key(state: Challenge) -> Challenge:
    return replace(state, throws=0)


def odds(state: Challenge, side: Side | str, policy: RetestPolicy | None = None) -> Fraction:
    """The exact probability that ``side`` wins the challenge from ``state``."""
    side = Side(side)
    policy = policy or RetestPolicy()
    memo: dict[Challenge, Fraction] = {}

    def value(current: Challenge) -> Fraction:
        current = _settle(current, policy)
        if current.phase is Phase.OVER:
            return Fraction(1) if current.winner is side else Fraction(0)
        key = _key(current)
        if key in memo:
            return memo[key]
        if current.pending:
            raise ValueError("odds are computed before or after a pair of throws, not between")
        settled = Fraction(0)
        again = Fraction(0)
        for first, second in PAIRS:
            nxt = _settle(current.throw_both(first, second), policy)
            if nxt.phase is not Phase.OVER and _key(nxt) == key:
                again += NINTH  # C4: equal totals, the same state is thrown again
            else:
                settled += NINTH * value(nxt)
        memo[key] = settled / (1 - again)
        return memo[key]

    return value(state)


def simulate(
    state: Challenge, side: Side | str, rng: object, runs: int, policy: RetestPolicy | None = None
) -> float:
    """The same question answered by playing ``runs`` challenges with random throws from the
    caller's ``random.Random`` (for checking :func:`odds`)."""
    side = Side(side)
    policy = policy or RetestPolicy()
    throws = list(Throw)
    wins = 0
    for _ in range(runs):
        current = _settle(state, policy)
        while current.phase is not Phase.OVER:
            pick = rng.choice  # type: ignore[attr-defined]
            current = _settle(current.throw_both(pick(throws), pick(throws)), policy)
        wins += current.winner is side
    return wins / runs
