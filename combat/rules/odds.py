"""The exact chance that a side wins a challenge from where it stands.

Every pair of throws is equally likely (1 in 9). From a state the engine is stepped through
every pair; a draw declares full totals; a losing side uses its retests in the order its
:class:`RetestPolicy` gives, the first one the rules allow; when none is allowed the result
stands. An equal-totals re-throw (C4) that comes back to the same state is summed as the
geometric series it is, so the answer is exact: a :class:`fractions.Fraction`, no sampling.

:func:`odds` reads every value of the state, both sides' hidden ones too. What a side is
shown comes from :func:`blind_odds`: the same calculation averaged over the opponents that
side cannot tell apart, so the number moves only with what it may know (its own sheet,
what the rules have revealed), never with the other side's hidden total or ratings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from itertools import product

from combat.rules.challenge import CHOICE, Challenge, Contender, Phase
from combat.rules.errors import RuleError
from combat.rules.profiles import Family
from combat.rules.terms import Health, RetestKind, Side, Throw

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
    return _odds(state, Side(side), policy or RetestPolicy(), {})


def _odds(
    state: Challenge, side: Side, policy: RetestPolicy, memo: dict[Challenge, Fraction]
) -> Fraction:
    """:func:`odds` with the caller's memo (one per side and policy: it can be shared by
    calls from states of the same challenge)."""

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


# -- what one side may know ------------------------------------------------------------------

#: The opponent's hidden traits (or test pool, or temper) are taken as equally likely within
#: this many of the viewer's own, never below 1 nor below a total it has declared already.
SPREAD = 2
#: C8: the opponent's rating in the opposing ability, unknown until named: 0 to 5, alike.
RATINGS = tuple(range(6))
UNKNOWN_ABILITY = "(their ability)"


def _hidden_total_range(state: Challenge, side: Side) -> range:
    """The opponent's hidden traits (test pool, temper), before the modifiers said at the
    table: within :data:`SPREAD` of this side's own counted the same way."""
    me = state.side(side)
    own = state.total(side) + dict(state.penalties).get(side.value, 0)
    temper = bool(state.category and state.category.is_temper)
    if state.profile.family is not Family.POOLS and not temper:
        own += state.guess_penalty(side) - me.blood - me.blood_kept
    low = max(1, own - SPREAD)
    declared = dict(state.declared).get(side.other.value)
    if declared is not None:  # C4: a declared total is said aloud; theirs is at least that
        low = max(low, declared)
    return range(low, max(low, own + SPREAD) + 1)


def _known_negatives(state: Challenge, side: Side, opponent: Contender) -> tuple[str, ...]:
    """C5, W8: the opponent's negative traits this side has named rightly (said at once)."""
    return tuple(
        trait
        for who, trait, correct in state.guesses
        if who == side.value and correct and trait in opponent.negatives
    )


def _ratings(state: Challenge, side: Side) -> list[tuple[int, Fraction]]:
    """C8: the opposing rating, weighted. In met_classic it only counts against this side's
    ratings (its retest happens when its rating is higher; theirs, when theirs is higher
    than this side's in the ability it uses), so ratings alike there are taken together."""
    if state.profile.family is not Family.CLASSIC:
        return [(1, Fraction(1))]  # W10: a point to spend or cancel with; B: no abilities
    me = state.side(side)
    retesting = me.rating(me.ability or next((n for n, r in me.abilities if r > 0), None))
    opposing = me.rating(me.ability)
    groups: dict[tuple[bool, bool], list[int]] = {}
    for rating in RATINGS:
        groups.setdefault((retesting > rating, rating > opposing), []).append(rating)
    share = Fraction(1, len(RATINGS))
    return [(found[0], share * len(found)) for found in groups.values()]


def _masked(state: Challenge, side: Side, total: int, rating: int) -> Challenge:
    """The state with the opponent's hidden values replaced: its traits (pool, temper) by
    ``total``, its ability by one rated ``rating``, its powers by those it has shown (an
    announced power retest), a point of willpower it may spend; what is said at the table
    stays: the bid, blood traits, Wounded (C6), surprise, the negatives named rightly."""
    opponent = state.side(side.other)
    announced = state.announced
    shown = (
        (announced.power,)
        if announced is not None and announced.by is side.other and announced.power
        else ()
    )
    spent = state.spent_by(side.other)
    temper = {"willpower": 1 + spent.get("willpower", 0)}
    if state.category is not None and state.category.is_temper:
        name = state.category.value
        temper[name] = total + spent.get(name, 0)
    classic = state.profile.family is Family.CLASSIC
    masked = Contender(
        traits=total,
        bid=opponent.bid,
        ability=UNKNOWN_ABILITY if classic else None,
        abilities=((UNKNOWN_ABILITY, rating),),
        powers=shown,
        temper=tuple(sorted(temper.items())),
        health=Health.WOUNDED if opponent.health.wounded else Health.HEALTHY,
        negatives=_known_negatives(state, side, opponent),
        blood=opponent.blood,
        blood_per_turn=opponent.blood_per_turn,
        blood_kept=opponent.blood_kept,
        surprised=opponent.surprised,
        pool=total,
        name=opponent.name,
        outpaced=opponent.outpaced,
        armed=opponent.armed,
    )
    if side.other is Side.ATTACKER:
        return replace(state, attacker=masked)
    return replace(state, defender=masked)


def unknown_opponents(state: Challenge, side: Side | str) -> list[tuple[Challenge, Fraction]]:
    """The states ``side`` cannot tell apart, each with its weight (they add up to 1).

    A test against a difficulty (C11, C13, W13's static or race) hides nothing: the state
    itself. Otherwise the opponent's hidden total and opposing rating run over their ranges.
    """
    side = Side(side)
    if state.defender is None:
        return [(state, Fraction(1))]
    totals = _hidden_total_range(state, side)
    share = Fraction(1, len(totals))
    return [
        (_masked(state, side, total, rating), share * weight)
        for total in totals
        for rating, weight in _ratings(state, side)
    ]


def _without(policy: RetestPolicy, side: Side, kind: RetestKind) -> RetestPolicy:
    order = tuple(k for k in policy.order(side) if k is not kind)
    if side is Side.ATTACKER:
        return replace(policy, attacker=order)
    return replace(policy, defender=order)


def blind_odds(
    state: Challenge,
    side: Side | str,
    policy: RetestPolicy | None = None,
    *,
    first: tuple[RetestKind, ...] = (),
    hidden: bool = True,
) -> dict[RetestKind | None, Fraction]:
    """The chance ``side`` wins as far as it can know: :func:`odds` averaged over
    :func:`unknown_opponents`; under ``None`` from here (its retests as ``policy`` says),
    under each kind of ``first`` when it calls that retest now (where a state refuses it,
    nothing is used up and it goes on as :func:`odds` would without it).
    ``hidden=False``: the opponent is a difficulty the side was told (nothing to average)."""
    side = Side(side)
    policy = policy or RetestPolicy()
    states = unknown_opponents(state, side) if hidden else [(state, Fraction(1))]
    out: dict[RetestKind | None, Fraction] = {k: Fraction(0) for k in (None, *first)}
    for each, weight in states:
        memo: dict[Challenge, Fraction] = {}
        out[None] += weight * _odds(each, side, policy, memo)
        for kind in first:
            try:
                after = retest_with(each, side, kind)
            except RuleError:
                out[kind] += weight * _odds(each, side, _without(policy, side, kind), {})
                continue
            out[kind] += weight * _odds(after, side, policy, memo)
    return out


def blind_retests(state: Challenge, side: Side | str, *, hidden: bool = True) -> list[RetestKind]:
    """The retest kinds ``side`` may call in at least one state it cannot tell apart (which
    of them the rules allow may hang on the other side's hidden values)."""
    side = Side(side)
    states = unknown_opponents(state, side) if hidden else [(state, Fraction(1))]
    kinds: dict[RetestKind, None] = {}
    for each, _weight in states:
        for kind, _rule in each.allowed_retests(side):
            kinds[kind] = None
    return [k for k in RetestKind if k in kinds]


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
