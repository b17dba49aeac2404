"""The case runner itself can fail: wrong answers and missing refusals are caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.rules.adapters.challenges import run_challenge
from tests.rules.casekit import Case, CaseMismatch, case_dirs

BASE = {
    "mode": "contested",
    "category": "physical",
    "attacker": {"traits": 9, "bid": "Quick"},
    "defender": {"traits": 8, "bid": "Tough"},
}


def _case(steps: list, expect: dict) -> Case:
    return Case("x-1", "met_classic", "challenge", "C3", BASE, steps, expect, Path("x.json"))


def test_it_fails_a_case_whose_answer_differs() -> None:
    with pytest.raises(CaseMismatch, match="winner: expected 'defender'"):
        run_challenge(_case([{"throw": ["rock", "scissors"]}], {"winner": "defender"}))


def test_it_fails_a_case_whose_refused_step_was_allowed() -> None:
    with pytest.raises(CaseMismatch, match="should have been refused"):
        run_challenge(_case([{"throw": ["rock", "scissors"]}], {"refused": [0]}))


def test_it_compares_lost_traits_as_multisets() -> None:
    run_challenge(
        _case([{"throw": ["rock", "scissors"]}], {"lost": {"defender": ["Tough"], "attacker": []}})
    )
    with pytest.raises(CaseMismatch, match="lost"):
        run_challenge(_case([{"throw": ["rock", "scissors"]}], {"lost": {"defender": []}}))


def test_it_reads_the_folders_named_by_rules_cases_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RULES_CASES_DIR", str(tmp_path))
    assert case_dirs()[-1] == tmp_path
    monkeypatch.setenv("RULES_CASES_DIR", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="not a folder"):
        case_dirs()
