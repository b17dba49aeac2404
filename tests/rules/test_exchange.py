"""D6-D10 exchanges beyond the cases: a guard against the first and a later attacker."""

from __future__ import annotations

import pytest

from combat.rules.errors import RuleError
from combat.rules.exchange import Action, Move, resolve


@pytest.mark.rules("D6", "D7")
def test_it_turns_a_guard_into_an_attack_on_the_first_attacker_only() -> None:
    attack = Move(Action.ATTACK, successes=3, damage=2)
    guard = Move(Action.GUARD, successes=5, damage=3)
    first = resolve(attack, guard)
    assert (first.lands, first.net, first.damage_pool) == ("defender", 2, 4)
    later = resolve(attack, guard, first_attack=False)
    assert (later.lands, later.net, later.damage_pool) == ("attacker", 3, 4)
    with pytest.raises(RuleError):
        resolve(Move(Action.ATTACK, successes=-1), guard)
