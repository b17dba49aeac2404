"""The dice of a chase (D1): the server rolls a pool, or takes the dice the table rolled."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from chases.refusals import ChaseError, rule_error
from combat.rounds import wod
from combat.rules.dice import RollKind, RollResult, count, roll_d10s
from combat.rules.errors import RuleError

#: K3 the cold start's roll, and K5's stalk rolls (no difficulty given: the standard 6).
START_DIFFICULTY = 6
MAX_TYPED_DICE = 40

RNG = random.SystemRandom()


def typed_dice(typed: Sequence[int], pool: int, who: str, what: str) -> Sequence[int]:
    """D1: the dice the table rolled are the whole pool the tablet shows, no more, no fewer."""
    if len(typed) > MAX_TYPED_DICE:
        raise ChaseError(f"At most {MAX_TYPED_DICE} dice.")
    try:
        wod.check_typed(typed, pool, who, what)
    except RuleError as error:
        raise rule_error(error) from None
    return typed


def roll_pool(
    pool: int,
    difficulty: int,
    typed: Sequence[int] | None,
    rng: Any,
    who: str = "",
    what: str = "pool",
) -> RollResult:
    """D1: the server rolls ``pool`` d10s, or takes the dice the table rolled (as many as the
    pool; ``who``'s ``what`` names it in the refusal)."""
    dice = typed_dice(typed, pool, who, what) if typed else roll_d10s(pool, rng or RNG)
    try:
        return count(dice, difficulty)
    except RuleError as error:
        raise rule_error(error) from None


def roll_kind(
    pool: int, typed: Sequence[int] | None, rng: Any, kind: RollKind, who: str = ""
) -> RollResult:
    """D11, D12: damage and soak at difficulty 6, successes only (typed: the whole pool)."""
    what = "damage pool" if kind is RollKind.DAMAGE else "soak pool"
    dice = typed_dice(typed, pool, who, what) if typed else roll_d10s(pool, rng or RNG)
    try:
        return count(dice, 6, kind)
    except RuleError as error:
        raise rule_error(error) from None
