"""Obstacles (K9): the storyteller sets one, Nope! or Damnit! passes it (K7, K8), the rest
roll against it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from chases import rules, selectors
from chases.actors import require_actor, sides_named_by
from chases.dice import roll_pool
from chases.models import Chase, ChaseRoll, Phase, StepKind
from chases.pools import sheet_values
from chases.recording import chase_step, leads, on_running, record, runner, sides_of
from chases.refusals import WRONG_PHASE, ChaseError, rule_error
from combat import steps
from combat.models import Scene
from combat.rules.errors import RuleError


def _may_pass(by: AbstractBaseUser, scene: Scene, chase: Chase, payload: Mapping[str, Any]) -> None:
    """K7, K8: the side's own player passes it (the storyteller for an NPC); the side the form
    names is found first, a hidden NPC's key answering as a key of nobody."""
    on_running(by, scene, chase, payload)
    require_actor(by, scene, sides_named_by(chase, scene, by, payload["who"]))


#: K9: the storyteller sets an obstacle, its pool and difficulty.
OBSTACLE_SET = chase_step("chase.obstacle_set")
#: K7 Nope!, K8 Damnit!: a side facing the obstacle passes it without a roll.
OBSTACLE_CHOICE = chase_step("chase.obstacle_choice", may_act=_may_pass)
#: K9: who faces the obstacle rolls against it.
OBSTACLE_ROLL = chase_step("chase.obstacle_roll")


def chase_obstacle_set(
    *,
    chase: Chase,
    by: AbstractBaseUser,
    label: str,
    difficulty: int,
    pool: tuple[str, str],
    facing: Sequence[str] = (),
    token: str | None = None,
    key: str | None = None,
) -> Chase:
    """K9: the storyteller sets an obstacle, its pool and difficulty: between rounds for
    whom they choose (``facing``: engine keys), or for whoever a maneuver put in front of one
    (Quick Reverse, Never Tell Me The Odds)."""
    label = (label or "").strip()[:120] or "An obstacle"
    payload = {
        "chase": chase.pk,
        "label": label,
        "difficulty": difficulty,
        "pool": list(pool),
        "facing": list(facing),
    }

    def apply(scene: Scene, chase: Chase) -> Chase:
        if not 2 <= int(difficulty) <= 10:
            raise ChaseError("An obstacle's difficulty is 2 to 10 (K9, D1).", rule="K9")
        state = selectors.engine(chase)
        pending = chase.pending.get("obstacle")
        if chase.phase == Phase.OBSTACLE and pending and not pending.get("set"):
            faced = pending["facing"]
        elif chase.phase == Phase.ROLL:
            running = {rules.PREY, *(p.predator for p in state.pursuits if p.running)}
            faced = list(dict.fromkeys(facing))
            if not faced or not set(faced) <= running:
                raise ChaseError(
                    "Say who faces the obstacle: the Prey or Predators still running (K9).",
                    rule="K9",
                )
        else:
            raise ChaseError(WRONG_PHASE[Phase(chase.phase)], rule="K9")
        chase.phase = Phase.OBSTACLE
        chase.pending = {
            "obstacle": {
                "facing": list(faced),
                "set": True,
                "label": label,
                "difficulty": int(difficulty),
                "pool": {"attribute": pool[0], "ability": pool[1]},
                "choices": {},
            }
        }
        sides = sides_of(chase)
        shown = selectors.names(chase, public=True)
        text = (
            f"Obstacle: {label} ({pool[0].title()} + {pool[1].title()}, difficulty "
            f"{int(difficulty)}) for {', '.join(shown[k] for k in faced)}"
        )
        record(
            scene,
            chase,
            state,
            by=by,
            kind=StepKind.OBSTACLE_SET,
            text=text,
            sides=sides,
            data={"obstacle": chase.pending["obstacle"]},
        )
        return chase

    return steps.run(OBSTACLE_SET, chase, by=by, key=key, payload=payload, seen=token, rules=apply)


def chase_obstacle_choice(
    *,
    chase: Chase,
    by: AbstractBaseUser,
    who: str,
    token: str | None = None,
    key: str | None = None,
) -> Chase:
    """K7 Nope! (the Prey) or K8 Damnit! (a Predator): pass the set obstacle without a roll.
    Nope! costs 3 on every Lead and is refused if any would drop to 0 or below."""
    payload = {"chase": chase.pk, "who": who}

    def apply(scene: Scene, chase: Chase) -> Chase:
        pending = chase.pending.get("obstacle")
        if chase.phase != Phase.OBSTACLE or not pending or not pending.get("set"):
            raise ChaseError(
                "Nope! and Damnit! are used only when an obstacle is confronted (K8).", rule="K8"
            )
        if who not in pending["facing"]:
            raise ChaseError("Only who faces the obstacle may pass it (K9).", rule="K9")
        if who in pending.get("choices", {}):
            raise ChaseError("Already passing this obstacle without a roll (K8).", rule="K8")
        sides = sides_of(chase)
        state = selectors.engine(chase)
        if selectors.offer_on_obstacle(chase, state, who) is None:
            raise ChaseError("Nope! would cost the Prey its whole Lead (K8).", rule="K8")
        choice = rules.Obstacle.NOPE.value if who == rules.PREY else rules.Obstacle.DAMNIT.value
        pending = {**pending, "choices": {**pending.get("choices", {}), who: choice}}
        chase.pending = {"obstacle": pending}
        shown = selectors.names(chase, public=True)
        label = "Nope!" if who == rules.PREY else "Damnit!"
        text = f"{shown[who]}: {label} (passes {pending['label']} without a roll)"
        record(
            scene,
            chase,
            state,
            by=by,
            kind=StepKind.MANEUVER,
            text=text,
            sides=sides,
            data={"maneuver": choice, "who": who},
        )
        return chase

    return steps.run(
        OBSTACLE_CHOICE, chase, by=by, key=key, payload=payload, seen=token, rules=apply
    )


def chase_obstacle_roll(
    *,
    chase: Chase,
    by: AbstractBaseUser,
    token: str | None = None,
    dice: Mapping[str, Sequence[int] | None] | None = None,
    pools: Mapping[str, int] | None = None,
    key: str | None = None,
    rng: Any = None,
) -> Chase:
    """K9: everyone facing the set obstacle who did not pass it by Nope!/Damnit! rolls the
    storyteller's pool at its difficulty; no success puts that participant out (the engine
    ends the chase for the Prey, the last Predator, or both)."""
    dice, pools = dict(dice or {}), dict(pools or {})
    payload = {"chase": chase.pk, "dice": dice, "pools": pools}

    def apply(scene: Scene, chase: Chase) -> Chase:
        pending = chase.pending.get("obstacle")
        if chase.phase != Phase.OBSTACLE or not pending or not pending.get("set"):
            raise ChaseError("Set the obstacle's pool and difficulty first (K9).", rule="K9")
        sides = sides_of(chase)
        values = sheet_values(s.participant for s in sides.values())
        outcome: dict[str, Any] = dict(pending.get("choices", {}))
        named = selectors.names(chase, public=False)
        rolls = []
        for who in pending["facing"]:
            if who in outcome:
                continue
            side, counted = runner(
                sides, who, values, pending["pool"]["attribute"], pending["pool"]["ability"]
            )
            pool = pools.get(who, counted.dice)
            result = roll_pool(pool, pending["difficulty"], dice.get(who), rng, named[who])
            rolled = len(result.dice)
            rolls.append((side, ChaseRoll.Purpose.OBSTACLE, rolled, result, bool(dice.get(who))))
            outcome[who] = result.successes > 0
        state = selectors.engine(chase)
        try:
            new = state.face_obstacle(outcome)
        except RuleError as error:
            raise rule_error(error) from None
        chase.phase, chase.pending = Phase.ROLL, {}
        shown = selectors.names(chase, public=True)
        said = {True: "passed", False: "failed: out", "nope": "Nope!", "damnit": "Damnit!"}
        text = (
            f"{pending['label']}: "
            + ", ".join(f"{shown[w]} {said[r]}" for w, r in outcome.items())
            + f"; {leads(new, shown)}"
        )
        record(
            scene,
            chase,
            new,
            by=by,
            kind=StepKind.OBSTACLE,
            text=text,
            sides=sides,
            rolls=rolls,
            data={"outcome": {w: str(r) for w, r in outcome.items()}},
        )
        return chase

    return steps.run(OBSTACLE_ROLL, chase, by=by, key=key, payload=payload, seen=token, rules=apply)
