"""met_bns cases of kind ``initiative`` (B4, B5, B8) and ``round`` (B6–B9).

Initiative cases read the turn plan a service shows at the start of a turn; round cases
drive a :class:`~combat.rules.bns_round.Combat` step by step as the storyteller's tablet does:
mediation fails, the storyteller names everyone, then each step of the case.
"""

from __future__ import annotations

from collections.abc import Mapping
from random import Random
from typing import Any

from combat.rules.bns_initiative import Combatant, plan_turn
from combat.rules.bns_round import Action, Combat
from tests.rules.casekit import Case, adapter, check, started, step_through


def combatants(case: Case) -> list[Combatant]:
    return [Combatant.from_dict(raw) for raw in case.given["combatants"]]


@adapter("initiative", "met_bns")
def run_initiative(case: Case) -> None:
    plan = started(case, lambda: plan_turn(combatants(case), rng=Random(case.id)))
    if plan is None:
        return
    observed = {
        "initiative": dict(plan.initiative),
        "rounds": [{"round": r.label, "order": list(r.order)} for r in plan.rounds],
    }
    check(case, case.expect, observed)


def _action(name: str | None) -> Action | None:
    return None if name is None else Action(name)


def apply_step(state: Combat, step: Mapping[str, Any]) -> Combat:
    """One case step, as the service would call the engine for it."""
    if "act" in step:
        act = step["act"]
        return state.act(
            act["who"],
            standard=_action(act.get("standard")),
            simple=_action(act.get("simple")),
            target=act.get("target"),
            against_physical=bool(act.get("against_physical", False)),
        )
    if "surprise" in step:
        move = step["surprise"]
        return state.surprise(move["who"], Action(move["action"]), target=move.get("target"))
    if "attack" in step:
        return state.attack(step["attack"]["by"], step["attack"]["target"])
    if "fair_escape" in step:
        escape = step["fair_escape"]
        return state.fair_escape(
            escape["who"],
            tuple(escape.get("announced_by", ())),
            way_out=escape.get("way_out", True),
            can_be_attacked=escape.get("can_be_attacked", True),
        )
    if "delay" in step:
        return state.delay(step["delay"])
    if "resume" in step:
        names = step["resume"]
        return state.resume(*([names] if isinstance(names, str) else names))
    if "finish" in step:
        return state.finish(step["finish"])
    if "end_round" in step:
        return state.end_round()
    raise AssertionError(f"unknown round step {dict(step)!r}")


def observe(state: Combat, _step: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {
        "fair_escape": state.escapes,
        "round": state.round_label,
        "order": list(state.order),
        "initiative": state.initiatives,
        "current": state.current,
    }


@adapter("round", "met_bns")
def run_round(case: Case) -> None:
    names = [c["name"] for c in case.given["combatants"]]

    def begin() -> Combat:
        opened = Combat.begin(combatants(case), rng=Random(case.id)).mediate(agreed=False)
        return opened.assess(names, started_by=case.given.get("started_by"))

    state = started(case, begin)
    if state is None:
        return
    state = step_through(case, state, apply_step, observe)
    check(case, case.expect, observe(state))
