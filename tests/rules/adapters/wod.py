"""Runs the wod_dice cases (but chases): rolls, initiative, exchanges, difficulties,
penalties, soak pools and grapples."""

from __future__ import annotations

from typing import Any

import pytest

from combat.rules import difficulty as diff
from combat.rules.dice import RollKind, count
from combat.rules.errors import RuleError
from combat.rules.exchange import Action, Maneuver, Move, resolve
from combat.rules.grapple import Effect, Grapple, Intent, Over
from combat.rules.penalties import Stance, piling_on, split
from combat.rules.soak import DamageType, soak_pool
from combat.rules.wod_initiative import Combatant, round_phases
from tests.rules.casekit import Case, adapter, check, step_through


def _refused_start(case: Case, run: Any) -> None:
    with pytest.raises(RuleError) as refused:
        run()
    assert refused.value.rule, f"{case.label}: refusal names no rule"


@adapter("roll", "wod_dice")
def run_roll(case: Case) -> None:
    g = case.given
    result = count(g["dice"], g["difficulty"], RollKind(g.get("roll", "action")))
    check(case, case.expect, {"successes": result.successes, "botch": result.botch})


def _slots(order: tuple) -> list:
    return [sorted(s) if isinstance(s, frozenset) else s for s in order]


def _expected_slots(order: list) -> list:
    return [sorted(s) if isinstance(s, list) else s for s in order]


@adapter("initiative", "wod_dice")
def run_initiative(case: Case) -> None:
    combatants = [Combatant(**c) for c in case.given["combatants"]]
    phases = round_phases(combatants, case.given.get("haste"))
    observed = {
        "totals": {c.name: c.total for c in combatants},
        "phases": [
            {"phase": p.name, "declare": _slots(p.declare), "resolve": _slots(p.resolve)}
            for p in phases
        ],
    }
    expect = dict(case.expect)
    if "phases" in expect:
        expect["phases"] = [
            {
                **p,
                "declare": _expected_slots(p["declare"]),
                "resolve": _expected_slots(p["resolve"]),
            }
            for p in expect["phases"]
        ]
    check(case, expect, observed)


def _move(raw: dict) -> Move:
    return Move(
        action=Action(raw["action"]),
        successes=raw["successes"],
        damage=raw.get("damage", 0),
        maneuver=Maneuver(raw.get("maneuver", "basic")),
    )


@adapter("exchange", "wod_dice")
def run_exchange(case: Case) -> None:
    out = resolve(
        _move(case.given["attacker"]),
        _move(case.given["defender"]),
        first_attack=case.given.get("first_attack", True),
    )
    observed: dict[str, Any] = {
        "lands": out.lands,
        "net": out.net,
        "damage_pool": out.damage_pool,
        "chase_head_start": out.chase_head_start,
    }
    if out.grappler:
        observed["grapple"] = {"grappler": out.grappler, "control": out.control}
    check(case, case.expect, observed)


@adapter("difficulty", "wod_dice")
def run_difficulty(case: Case) -> None:
    g = case.given
    action = g["action"]
    if action == "block":
        value = diff.block(
            g["pool"], diff.Against(g["against"]), hand_to_hand=g.get("hand_to_hand", False)
        )
    elif action == "dodge":
        cover = diff.Cover(g["cover"]) if g.get("cover") else None
        value = diff.dodge(diff.Against(g.get("against", "brawl")), cover)
    elif action == "escape":
        value = diff.ESCAPE_DIFFICULTY
    elif action == "abort":
        value = diff.ABORT_DIFFICULTY
    else:
        value = diff.firearms(
            range_=g.get("range"),
            distance=g.get("distance"),
            in_melee=g.get("in_melee", False),
            weapon=g.get("weapon"),
            defender_aware=g.get("defender_aware", True),
        )
    check(case, case.expect, {"difficulty": value})


@adapter("penalty", "wod_dice")
def run_penalty(case: Case) -> None:
    g = case.given
    if g["rule"] == "split":
        if case.expect.get("refused_start"):
            _refused_start(case, lambda: split(g["actions"], g["wits"]))
            return
        value = split(g["actions"], g["wits"])
    else:
        value = piling_on(Stance(g["stance"]), g["attack_number"])
    check(case, case.expect, {"penalty": value})


@adapter("soak_pool", "wod_dice")
def run_soak(case: Case) -> None:
    g = case.given
    pool = soak_pool(
        creature=g["creature"],
        stamina=g["stamina"],
        armor=g.get("armor", 0),
        damage=DamageType(g["damage"]),
        breed_form=g.get("breed_form", False),
        fortitude=g.get("fortitude", 0),
    )
    check(case, case.expect, {"pool": pool})


def _observe(grapple: Grapple) -> dict[str, Any]:
    damage = grapple.last_damage
    return {
        "grappler": grapple.grappler,
        "victim": grapple.victim,
        "control": grapple.control,
        "over": grapple.over.value if grapple.over else None,
        "damage": {"type": damage.type, "pool": damage.pool} if damage else None,
        "thrown_yards": grapple.thrown_yards,
    }


def _grapple_step(grapple: Grapple, step: dict) -> Grapple:
    if "roll" in step:
        roll = step["roll"]
        return grapple.roll(
            grappler=roll["grappler"],
            victim=roll["victim"],
            intent=Intent(roll.get("victim_intent", "resist")),
        )
    if "effect" in step:
        return grapple.effect(Effect(step["effect"]), cost=step.get("cost"))
    if "assist" in step:
        return grapple.assist(side=step["assist"]["side"], successes=step["assist"]["successes"])
    if step.get("end_round"):
        return grapple.end_round()
    if step.get("release"):
        return grapple.release()
    if step.get("relent"):
        return grapple.relent()
    raise AssertionError(f"unknown grapple step {step}")


@adapter("grapple", "wod_dice")
def run_grapple(case: Case) -> None:
    g = case.given
    strength = g.get("strength", {})
    if "start" in g:
        grapple = Grapple.start(**g["start"], strength=strength)
    else:
        state = g["state"]
        grapple = Grapple(
            grappler=state["grappler"],
            victim=state["victim"],
            control=state["control"],
            strength=tuple(sorted(strength.items())),
        )
    grapple = step_through(case, grapple, _grapple_step, lambda state, _step: _observe(state))
    check(case, case.expect, _observe(grapple))
    assert grapple.over in (None, *Over)
