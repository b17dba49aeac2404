"""The case runner itself can fail: every adapter honours every ``expect`` key of FORMAT.md.

For each adapter the table gives a case that passes and a ``given`` the engine refuses at the
start. A wrong value under any key, a refusal that does not come, a refusal nobody expected, a
refused step that is allowed and a refused index past the last step must each fail the case.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.rules.adapters.challenges import run_challenge
from tests.rules.casekit import ADAPTERS, Case, CaseMismatch, case_dirs
from tests.rules.test_cases import run_case

BASE = {
    "mode": "contested",
    "category": "physical",
    "attacker": {"traits": 9, "bid": "Quick"},
    "defender": {"traits": 8, "bid": "Tough"},
}
BOBBY = {"name": "Bobby", "physical": 8, "mental": 5, "social": 4, "celerity": 1}
GANG = {"name": "Gang", "physical": 4, "mental": 2, "social": 2}
JANE = {"name": "Jane", "roll": 7, "wits": 5, "dexterity": 5}

#: (kind, ruleset): (given, steps, an expect that passes naming every key, a refused given)
TABLE: dict[tuple[str, str], tuple[dict, list, dict, dict | None]] = {
    ("roll", "wod_dice"): (
        {"dice": [7, 3, 10, 1, 6], "difficulty": 6, "roll": "action"},
        [],
        {"successes": 2, "botch": False},
        {"dice": [11, 3], "difficulty": 6},
    ),
    ("initiative", "wod_dice"): (
        {"combatants": [JANE], "haste": {}},
        [],
        {
            "totals": {"Jane": 17},
            "phases": [{"phase": "main", "declare": ["Jane"], "resolve": ["Jane"]}],
        },
        {"combatants": [JANE, JANE]},
    ),
    ("initiative", "met_bns"): (
        {"combatants": [BOBBY, GANG]},
        [],
        {
            "initiative": {"Bobby": 8, "Gang": 4},
            "rounds": [
                {"round": "everyman", "order": ["Bobby", "Gang"]},
                {"round": "celerity 1", "order": ["Bobby"]},
            ],
        },
        {"combatants": [GANG, GANG]},
    ),
    ("exchange", "wod_dice"): (
        {
            "attacker": {"action": "attack", "successes": 5, "damage": 2},
            "defender": {"action": "block", "successes": 3},
        },
        [],
        {
            "lands": "attacker",
            "net": 2,
            "damage_pool": 3,
            "chase_head_start": None,
            "grapple": None,
        },
        {
            "attacker": {"action": "attack", "successes": -1},
            "defender": {"action": "block", "successes": 3},
        },
    ),
    ("difficulty", "wod_dice"): (
        {"action": "block", "pool": "brawl", "against": "brawl"},
        [],
        {"difficulty": 4},
        {"action": "block", "pool": "dodge", "against": "brawl"},
    ),
    ("penalty", "wod_dice"): (
        {"rule": "split", "actions": 2, "wits": 3},
        [],
        {"penalty": -3},
        {"rule": "split", "actions": 4, "wits": 3},
    ),
    ("soak_pool", "wod_dice"): (
        {"creature": "mortal", "stamina": 3, "armor": 2, "damage": "bashing"},
        [],
        {"pool": 5},
        {"creature": "robot", "stamina": 3, "armor": 2, "damage": "bashing"},
    ),
    ("grapple", "wod_dice"): (
        {"state": {"grappler": "Ted", "victim": "Peter", "control": 4}, "strength": {"Ted": 3}},
        [{"effect": "clinch"}],
        {
            "grappler": "Ted",
            "victim": "Peter",
            "control": 3,
            "over": None,
            "damage": {"type": "bashing", "pool": 4},
            "thrown_yards": None,
        },
        {"state": {"grappler": "Ted", "victim": "Peter", "control": 0}},
    ),
    ("chase", "wod_dice"): (
        {"start": "cold", "prey_successes": 2},
        [{"round": {"prey": 3, "predator": 1}}],
        {"lead": 5, "over": None, "difficulty": {"prey": 6, "predator": 6}},
        {"start": "escape", "prey_successes": 1, "predator_successes": 3},
    ),
    ("round", "met_bns"): (
        {"combatants": [BOBBY, GANG]},
        [{"act": {"who": "Bobby", "standard": "move"}}],
        {
            "fair_escape": {},
            "round": "everyman",
            "order": ["Bobby", "Gang"],
            "initiative": {"Bobby": 8, "Gang": 4},
            "current": "Bobby",
        },
        {"combatants": [GANG, GANG]},
    ),
    ("throw", "met_classic"): (
        {"a": "rock", "b": "scissors"},
        [],
        {"winner": "a"},
        {"a": "lizard", "b": "rock"},
    ),
    ("challenge", "met_classic"): (
        BASE,
        [{"throw": ["rock", "scissors"]}],
        {"winner": "attacker", "lost": {"defender": ["Tough"]}, "throws": 1},
        {**BASE, "attacker": {"traits": 9, "bid": "Quick", "health": "incapacitated"}},
    ),
}

#: Step expects per kind (FORMAT.md): the key and the step that shows it.
STEP_KEYS = {
    ("grapple", "wod_dice"): ["grappler", "victim", "control", "over", "damage", "thrown_yards"],
    ("chase", "wod_dice"): ["lead", "over", "difficulty"],
    ("round", "met_bns"): ["fair_escape"],
}


def _case(kind: str, ruleset: str, given: Any, steps: list, expect: dict) -> Case:
    return Case("x-1", ruleset, kind, "X0", given, steps, expect, Path("x.json"))


def _run(kind: str, ruleset: str, given: Any, steps: list, expect: dict) -> None:
    run_case(_case(kind, ruleset, given, steps, expect))


class Wrong:
    """Equal to nothing the engine can answer."""

    def __eq__(self, other: object) -> bool:
        return False

    def __repr__(self) -> str:
        return "<wrong>"


MET_ADAPTER: set[tuple[str, str]] = set()
#: A wrong answer that a real value (not an opaque object) must stand for.
WRONG_VALUE = {"phases": []}

ROWS = sorted(TABLE)
OWN_ROWS = [row for row in ROWS if row not in MET_ADAPTER]
KEY_ROWS = [(row, key) for row in ROWS for key in TABLE[row][2]]
REFUSAL_ROWS = [row for row in OWN_ROWS if TABLE[row][3] is not None]


def test_it_has_a_row_for_every_adapter() -> None:
    kinds = {kind for kind, _ruleset in ADAPTERS}
    assert kinds == {kind for kind, _ruleset in TABLE}


@pytest.mark.parametrize("row", ROWS, ids=["/".join(r) for r in ROWS])
def test_it_passes_the_right_answers(row: tuple[str, str]) -> None:
    given, steps, expect, _refused = TABLE[row]
    _run(*row, given, steps, expect)


@pytest.mark.parametrize(("row", "key"), KEY_ROWS, ids=[f"{'/'.join(r)}-{k}" for r, k in KEY_ROWS])
def test_it_fails_a_wrong_answer_under_every_key(row: tuple[str, str], key: str) -> None:
    given, steps, _expect, _refused = TABLE[row]
    with pytest.raises(AssertionError, match=key):
        _run(*row, given, steps, {key: WRONG_VALUE.get(key, Wrong())})


@pytest.mark.parametrize("row", OWN_ROWS, ids=["/".join(r) for r in OWN_ROWS])
def test_it_fails_a_case_that_should_not_have_started(row: tuple[str, str]) -> None:
    given, steps, _expect, _refused = TABLE[row]
    with pytest.raises(CaseMismatch, match="should not"):
        _run(*row, given, steps, {"refused_start": True})


@pytest.mark.parametrize("row", REFUSAL_ROWS, ids=["/".join(r) for r in REFUSAL_ROWS])
def test_it_honours_a_refused_start(row: tuple[str, str]) -> None:
    _given, steps, expect, refused = TABLE[row]
    _run(*row, refused, steps, {"refused_start": True})
    with pytest.raises(CaseMismatch, match="refused"):
        _run(*row, refused, steps, expect)


@pytest.mark.parametrize("row", list(STEP_KEYS), ids=["/".join(r) for r in STEP_KEYS])
def test_it_fails_a_refused_step_that_was_allowed_and_a_wrong_step_expect(
    row: tuple[str, str],
) -> None:
    given, steps, _expect, _refused = TABLE[row]
    with pytest.raises(AssertionError, match="refused"):
        _run(*row, given, steps, {"refused": [0]})
    with pytest.raises(AssertionError, match="refused"):
        _run(*row, given, steps, {"refused": [len(steps)]})
    for key in STEP_KEYS[row]:
        wrong = [{**steps[0], "expect": {key: Wrong()}}]
        with pytest.raises(AssertionError, match=key):
            _run(*row, given, wrong, {})


def test_it_fails_a_case_whose_answer_differs() -> None:
    case = _case("challenge", "met_classic", BASE, [{"throw": ["rock", "scissors"]}], {})
    with pytest.raises(CaseMismatch, match="winner: expected 'defender'"):
        run_challenge(replace_expect(case, {"winner": "defender"}))


def test_it_compares_lost_traits_as_multisets() -> None:
    steps = [{"throw": ["rock", "scissors"]}]
    _run("challenge", "met_classic", BASE, steps, {"lost": {"defender": ["Tough"], "attacker": []}})
    with pytest.raises(CaseMismatch, match="lost"):
        _run("challenge", "met_classic", BASE, steps, {"lost": {"defender": []}})


def replace_expect(case: Case, expect: dict) -> Case:
    return Case(
        case.id, case.ruleset, case.kind, case.rule, case.given, case.steps, expect, case.source
    )


def test_it_reads_the_folders_named_by_rules_cases_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RULES_CASES_DIR", str(tmp_path))
    assert case_dirs()[-1] == tmp_path
    monkeypatch.setenv("RULES_CASES_DIR", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="not a folder"):
        case_dirs()
