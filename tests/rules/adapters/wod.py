"""Runs the wod_dice cases (but chases): rolls, initiative, exchanges, difficulties,
penalties, soak pools and grapples."""

from __future__ import annotations

from typing import Any

from combat.rules import difficulty as diff
from combat.rules.dice import RollKind, count
from combat.rules.errors import RuleError
from combat.rules.exchange import Action, Maneuver, Move, resolve
from combat.rules.grapple import Effect, Grapple, Intent, Over
from combat.rules.penalties import Stance, piling_on, split
from combat.rules.soak import DamageType, soak_pool
from combat.rules.wod_initiative import Combatant, round_phases
from tests.rules.casekit import Case, adapter, check, started, step_through


@adapter("roll", "wod_dice")
def run_roll(case: Case) -> None:
    g = case.given
    result = started(
        case, lambda: count(g["dice"], g["difficulty"], RollKind(g.get("roll", "action")))
    )
    if result is None:
        return
    check(case, case.expect, {"successes": result.successes, "botch": result.botch})


def _slots(order: tuple) -> list:
    return [sorted(s) if isinstance(s, frozenset) else s for s in order]


def _expected_slots(order: list) -> list:
    return [sorted(s) if isinstance(s, list) else s for s in order]


@adapter("initiative", "wod_dice")
def run_initiative(case: Case) -> None:
    combatants = [Combatant(**c) for c in case.given["combatants"]]
    phases = started(case, lambda: round_phases(combatants, case.given.get("haste")))
    if phases is None:
        return
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
    out = started(
        case,
        lambda: resolve(
            _move(case.given["attacker"]),
            _move(case.given["defender"]),
            first_attack=case.given.get("first_attack", True),
        ),
    )
    if out is None:
        return
    observed: dict[str, Any] = {
        "lands": out.lands,
        "net": out.net,
        "damage_pool": out.damage_pool,
        "chase_head_start": out.chase_head_start,
        "grapple": {"grappler": out.grappler, "control": out.control} if out.grappler else None,
    }
    check(case, case.expect, observed)


@adapter("difficulty", "wod_dice")
def run_difficulty(case: Case) -> None:
    value = started(case, lambda: _difficulty(case.given))
    if value is None:
        return
    check(case, case.expect, {"difficulty": value})


def _difficulty(g: Any) -> int:
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
    elif action == "firearms":
        value = diff.firearms(
            range_=g.get("range"),
            distance=g.get("distance"),
            in_melee=g.get("in_melee", False),
            weapon=g.get("weapon"),
            defender_aware=g.get("defender_aware", True),
        )
    else:
        raise RuleError("D6", f"No difficulty for a {action!r} roll")
    return value


@adapter("penalty", "wod_dice")
def run_penalty(case: Case) -> None:
    g = case.given
    if g["rule"] == "split":
        value = started(case, lambda: split(g["actions"], g["wits"]))
    else:
        value = started(case, lambda: piling_on(Stance(g["stance"]), g["attack_number"]))
    if value is None:
        return
    check(case, case.expect, {"penalty": value})


@adapter("soak_pool", "wod_dice")
def run_soak(case: Case) -> None:
    g = case.given
    pool = started(
        case,
        lambda: soak_pool(
            creature=g["creature"],
            stamina=g["stamina"],
            armor=g.get("armor", 0),
            damage=DamageType(g["damage"]),
            breed_form=g.get("breed_form", False),
            fortitude=g.get("fortitude", 0),
        ),
    )
    if pool is None:
        return
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
    if step.get("stand_up"):
        return grapple.stand_up()
    raise AssertionError(f"unknown grapple step {step}")


@adapter("grapple", "wod_dice")
def run_grapple(case: Case) -> None:
    g = case.given
    strength = g.get("strength", {})
    if "start" in g:
        grapple = started(case, lambda: Grapple.start(**g["start"], strength=strength))
    else:
        state = g["state"]
        grapple = started(
            case,
            lambda: Grapple.held(
                grappler=state["grappler"],
                victim=state["victim"],
                control=state["control"],
                strength=strength,
            ),
        )
    if grapple is None:
        return
    grapple = step_through(case, grapple, _grapple_step, lambda state, _step: _observe(state))
    check(case, case.expect, _observe(grapple))
    assert grapple.over in (None, *Over)
