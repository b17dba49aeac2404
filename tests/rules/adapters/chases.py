"""Runs the chase cases (K1–K12) one step at a time, as the storyteller's tablet would."""

from __future__ import annotations

from typing import Any

import pytest

from chases.rules import PREDATOR, AttackMeans, Chase
from combat.rules.errors import RuleError
from tests.rules.casekit import Case, adapter, check


def _start(given: dict[str, Any]) -> Chase:
    runs = given.get("run", {})
    setup = {"prey_run": runs.get("prey"), "predator_run": runs.get("predator")}
    start = given["start"]
    if start == "cold":
        return Chase.cold(given["prey_successes"], botch=given.get("prey_botch", False), **setup)
    if start == "escape":
        return Chase.from_escape(given["prey_successes"], given["predator_successes"], **setup)
    if start == "pounce":
        return Chase.pounce(given["prey_successes"], given["predator_successes"], **setup)
    return Chase.with_lead(given["lead"], **setup)


def _observe(chase: Chase, allowed: bool | None = None) -> dict[str, Any]:
    observed: dict[str, Any] = {
        "lead": chase.lead,
        "over": chase.over.value if chase.over else None,
        "difficulty": chase.difficulty(),
    }
    if allowed is not None:
        observed["allowed"] = allowed
    return observed


def _step(chase: Chase, step: dict[str, Any]) -> tuple[Chase, bool | None]:
    if "round" in step:
        return chase.play_round(step["round"]["prey"], step["round"]["predator"]), None
    if "maneuver" in step:
        by = step["maneuver"]["by"]
        return chase.maneuver(by if by == "prey" else PREDATOR, step["maneuver"]["name"]), None
    if "obstacle" in step:
        results = {("prey" if k == "prey" else PREDATOR): v for k, v in step["obstacle"].items()}
        return chase.face_obstacle(results), None
    if "can_attack" in step:
        by = step["can_attack"]["by"]
        means = AttackMeans(step["can_attack"]["with"])
        return chase, chase.can_attack(by if by == "prey" else PREDATOR, means)
    raise AssertionError(f"unknown chase step {step}")


@adapter("chase", "wod_dice")
def run_chase(case: Case) -> None:
    if case.expect.get("refused_start"):
        with pytest.raises(RuleError):
            _start(case.given)
        return
    chase = _start(case.given)
    for index, step in enumerate(case.steps):
        before = chase
        if index in case.refused:
            with pytest.raises(RuleError) as refused:
                _step(chase, step)
            assert refused.value.rule, f"{case.label} step {index}: refusal names no rule"
            assert chase == before
            continue
        chase, allowed = _step(chase, step)
        assert Chase.from_dict(chase.to_dict()) == chase
        check(case, step.get("expect", {}), _observe(chase, allowed), where=f"after step {index}")
    check(case, case.expect, _observe(chase))
