"""The challenges adapter honours every ``expect`` key of FORMAT.md: each can fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.rules.adapters.challenges import run_challenge
from tests.rules.casekit import Case, CaseMismatch

DUEL = {
    "mode": "contested",
    "category": "physical",
    "attacker": {"traits": 9, "bid": "Quick", "abilities": {"brawl": 2}},
    "defender": {"traits": 8, "bid": "Tough", "temper": {"willpower": 1}},
}
BNS = {
    "mode": "contested",
    "category": "physical",
    "attacker": {"pool": 9, "damage": {"base": 1, "bonus": 1}},
    "defender": {"pool": 8},
}
EXTENDED = {
    "mode": "extended",
    "category": "physical",
    "difficulty": 12,
    "attacker": {"traits": 10, "bid": "Nimble"},
}
WON = [{"throw": ["rock", "scissors"]}]
UNHELD_BID = {**DUEL, "attacker": {"traits": {"Quick": 2}, "bid": "Strong"}}


def _run(given: dict[str, Any], steps: list, expect: dict, ruleset: str = "met_classic") -> None:
    run_challenge(Case("k-1", ruleset, "challenge", "C3", given, steps, expect, Path("k.json")))


@pytest.mark.parametrize(
    ("given", "ruleset", "steps", "right", "wrong"),
    [
        (DUEL, "met_classic", WON, {"winner": "attacker"}, {"winner": "defender"}),
        (DUEL, "met_classic", WON, {"throws": 1}, {"throws": 2}),
        (DUEL, "met_classic", WON, {"lost": {"defender": ["Tough"]}}, {"lost": {"defender": []}}),
        (DUEL, "met_classic", WON, {"lost": {"defender": 1}}, {"lost": {"defender": 2}}),
        (DUEL, "met_classic", WON, {"spent": {"defender": {}}}, {"spent": {"defender": {"x": 1}}}),
        (BNS, "met_bns", WON, {"damage": 2}, {"damage": 1}),
        (EXTENDED, "met_werewolf", WON, {"wins": 1}, {"wins": 2}),
        (EXTENDED, "met_werewolf", WON, {"success": True}, {"success": False}),
    ],
)
def test_it_fails_a_case_on_every_expect_key(
    given: dict, ruleset: str, steps: list, right: dict, wrong: dict
) -> None:
    _run(given, steps, right, ruleset)
    with pytest.raises(CaseMismatch, match=next(iter(wrong))):
        _run(given, steps, wrong, ruleset)


def test_it_fails_a_case_whose_challenge_should_not_have_started() -> None:
    with pytest.raises(CaseMismatch, match="should not have started"):
        _run(DUEL, [], {"refused_start": True})
    _run(UNHELD_BID, [], {"refused_start": True})


def test_it_fails_a_case_whose_challenge_was_refused_unexpectedly() -> None:
    with pytest.raises(CaseMismatch, match="was refused"):
        _run(UNHELD_BID, WON, {"winner": "attacker"})


def test_it_fails_a_case_on_a_refused_step_allowed_or_an_allowed_step_refused() -> None:
    with pytest.raises(CaseMismatch, match="should have been refused"):
        _run(DUEL, WON, {"refused": [0]})
    retest = {"retest": {"by": "defender", "kind": "willpower"}}  # physical: no willpower
    _run(DUEL, [*WON, retest], {"refused": [1]})
    with pytest.raises(CaseMismatch, match="step 1 refused"):
        _run(DUEL, [*WON, retest], {})


def test_it_checks_a_steps_own_expect() -> None:
    steps = [{"throw": ["rock", "scissors"], "expect": {"throws": 1}}]
    _run(DUEL, steps, {})
    with pytest.raises(CaseMismatch, match="after step 0"):
        _run(DUEL, [{"throw": ["rock", "scissors"], "expect": {"throws": 2}}], {})
