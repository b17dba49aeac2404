"""The pure engine's side of K11: an attack is part of the next round and splits the
attacker's chase roll for that round only (D14)."""

from __future__ import annotations

import pytest

from chases.rules import PREY, AttackMeans, Chase, split_penalty
from combat.rules.errors import RuleError


@pytest.mark.rules("D14")
@pytest.mark.parametrize(("actions", "penalty"), [(1, 0), (2, 3), (3, 4)])
def test_split_penalty(actions, penalty):
    assert split_penalty(actions) == penalty


@pytest.mark.rules("K11", "D14")
def test_an_attack_splits_the_attackers_next_chase_roll_and_no_more():
    chase = Chase.with_lead({"a": 3, "b": 3}).attack("a", AttackMeans.WEAPON, PREY)
    assert (chase.split("a"), chase.split("b"), chase.split(PREY)) == (3, 0, 0)
    assert Chase.from_dict(chase.to_dict()) == chase
    rolled = chase.play_round(1, {"a": 1, "b": 1})
    assert rolled.attacks == () and rolled.split("a") == 0


@pytest.mark.rules("K11", "D14")
def test_attack_refusals_name_their_rule():
    chase = Chase.with_lead({"a": 3, "b": 6})
    with pytest.raises(RuleError) as refused:
        chase.attack("a", "weapon", "b")
    assert refused.value.rule == "K11"
    with pytest.raises(RuleError) as refused:
        chase.attack(PREY, "weapon", "b")  # Lead 6 on b: no weapons
    assert refused.value.rule == "K11"
    once = chase.attack(PREY, "power", "b")
    with pytest.raises(RuleError) as refused:
        once.attack(PREY, "weapon", "a")
    assert refused.value.rule == "D14"
    with pytest.raises(RuleError) as refused:
        chase.attack("nobody", "weapon", PREY)
    assert refused.value.rule == "K1"


@pytest.mark.rules("K8", "K11")
def test_attack_run_lapses_once_the_next_round_is_rolled():
    won = Chase.with_lead(6).play_round(1, 2)  # the Predator won round 1: Lead 5
    run = won.maneuver("predator", "attack_run")  # Lead 6, counted as 2 for its attacks
    assert run.attack_run_active("predator")
    assert run.can_attack("predator", AttackMeans.WEAPON)
    after = run.play_round(1, 1)  # round 2, the next round, rolled: Lead 6
    assert not after.attack_run_active("predator")
    assert not after.can_attack("predator", AttackMeans.WEAPON)
