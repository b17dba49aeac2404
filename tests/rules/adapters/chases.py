"""Runs the chase cases (K1–K12) one step at a time, as the storyteller's tablet would."""

from __future__ import annotations

from typing import Any

from chases.rules import PREDATOR, AttackMeans, Chase, Course
from tests.rules.casekit import Case, adapter, check, started, step_through


def _start(given: dict[str, Any]) -> Chase:
    runs = given.get("run", {})
    setup: dict[str, Any] = {"prey_run": runs.get("prey"), "predator_run": runs.get("predator")}
    if given.get("difficulty") is not None:
        # K6: a course difficulty set at the start holds for both sides until changed.
        setup["course"] = Course(difficulty=int(given["difficulty"]))
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
        # beyond FORMAT.md, for the project's own cases: the chase pool of the next round
        "pool": chase.pool.to_dict(),
    }
    if allowed is not None:
        observed["allowed"] = allowed
    return observed


def _who(side: str) -> str:
    return side if side == "prey" else PREDATOR


def _step(chase: Chase, step: dict[str, Any]) -> Chase:
    if "round" in step:
        return chase.play_round(step["round"]["prey"], step["round"]["predator"])
    if "maneuver" in step:
        move = step["maneuver"]
        # K7, K8: In there! and Herd may carry the pick of the new course's pool part.
        return chase.maneuver(_who(move["by"]), move["name"], pick=move.get("pick"))
    if "obstacle" in step:
        return chase.face_obstacle({_who(k): v for k, v in step["obstacle"].items()})
    if "can_attack" in step:
        return chase  # a question, answered in _observe_step
    raise AssertionError(f"unknown chase step {step}")


def _observe_step(chase: Chase, step: dict[str, Any]) -> dict[str, Any]:
    allowed = None
    if "can_attack" in step:
        ask = step["can_attack"]
        allowed = chase.can_attack(_who(ask["by"]), AttackMeans(ask["with"]))
    return _observe(chase, allowed)


@adapter("chase", "wod_dice")
def run_chase(case: Case) -> None:
    chase = started(case, lambda: _start(case.given))
    if chase is None:
        return
    chase = step_through(case, chase, _step, _observe_step)
    check(case, case.expect, _observe(chase))
