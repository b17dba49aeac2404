"""Running a chase (K2, K6, K10, K12): roll a round, change the course, call it off."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from chases import rules, selectors
from chases.dice import roll_pool
from chases.models import Chase, ChaseRoll, Phase, StepKind
from chases.pools import sheet_values
from chases.recording import (
    CALLED_OFF,
    after_maneuvers,
    announce_end,
    chase_step,
    leads,
    record,
    runner,
    sides_of,
)
from chases.refusals import WRONG_PHASE, ChaseError, rule_error
from combat import steps
from combat.models import Scene
from combat.rules.dice import RollResult
from combat.rules.errors import RuleError

#: K6: the storyteller rolls a round.
ROUND = chase_step("chase.round")
#: K6: the storyteller changes the course difficulty between rounds.
COURSE = chase_step("chase.course")
#: The storyteller ends a chase the rules did not end.
CALL_OFF = chase_step("chase.call_off")


def chase_round(
    *,
    chase: Chase,
    by: AbstractBaseUser,
    token: str | None = None,
    dice: Mapping[str, Sequence[int] | None] | None = None,
    pools: Mapping[str, int] | None = None,
    key: str | None = None,
    rng: Any = None,
) -> Chase:
    """K6: the Prey and every Predator still running roll their chase pools (K2, from the
    sheets, Stamina on foot after the sprint) at the course difficulty; the engine moves each
    Lead by the margin and ends the chase when K10 says so. The game clock runs fifteen
    seconds (K12). ``dice`` by engine key (``prey`` or a Predator's key): the table's dice,
    else the server rolls; ``pools``: a storyteller's other pool for a side (K2)."""
    dice, pools = dict(dice or {}), dict(pools or {})
    payload = {"chase": chase.pk, "dice": dice, "pools": pools}

    def apply(scene: Scene, chase: Chase) -> Chase:
        if chase.phase != Phase.ROLL:
            raise ChaseError(WRONG_PHASE[Phase(chase.phase)], rule="K6")
        state = selectors.engine(chase)
        sides = sides_of(chase)
        values = sheet_values(s.participant for s in sides.values())
        parts = state.pool
        difficulty = state.difficulty()
        rolling = [rules.PREY, *(p.predator for p in state.pursuits if p.running)]
        named = selectors.names(chase, public=False)
        rolls = []
        results: dict[str, RollResult] = {}
        for who in rolling:
            side, counted = runner(
                sides, who, values, parts.attribute, parts.ability, split=state.split(who)
            )
            pool = pools.get(who, counted.dice)
            if not 0 <= pool <= 30:
                raise ChaseError("A pool is 0 to 30 dice.")
            results[who] = roll_pool(
                pool, difficulty[who], dice.get(who), rng, named[who], "chase pool"
            )
            rolled = len(results[who].dice)  # the pool: typed dice are the whole of it (D1)
            rolls.append((side, ChaseRoll.Purpose.ROUND, rolled, results[who], bool(dice.get(who))))
        try:
            new = state.play_round(
                results[rules.PREY].successes,
                {who: r.successes for who, r in results.items() if who != rules.PREY},
            )
        except RuleError as error:
            raise rule_error(error) from None
        scene.game_time += rules.ROUND_SECONDS  # K12
        chase.pending = {
            "maneuvers": [
                {"pursuit": p.predator, "role": p.winner.value}
                for p in new.pursuits
                if p.running and p.winner is not None
            ]
        }
        after_maneuvers(chase, new)
        shown = selectors.names(chase, public=True)
        rolled = ", ".join(f"{shown[w]} {r.successes}" for w, r in results.items())
        text = f"Chase round {new.rounds}: {rolled}; {leads(new, shown)}"
        record(
            scene,
            chase,
            new,
            by=by,
            kind=StepKind.ROUND,
            text=text,
            sides=sides,
            rolls=rolls,
            data={"successes": {w: r.successes for w, r in results.items()}},
        )
        return chase

    return steps.run(ROUND, chase, by=by, key=key, payload=payload, seen=token, rules=apply)


def chase_set_course(
    *,
    chase: Chase,
    by: AbstractBaseUser,
    difficulty: int,
    token: str | None = None,
    key: str | None = None,
) -> Chase:
    """K6: the storyteller changes the course difficulty between rounds (an empty highway 4,
    rush hour 9)."""
    payload = {"chase": chase.pk, "difficulty": difficulty}

    def apply(scene: Scene, chase: Chase) -> Chase:
        if chase.phase != Phase.ROLL:
            raise ChaseError("The course changes between rounds (K6).", rule="K6")
        if not 2 <= int(difficulty) <= 10:
            raise ChaseError("The course difficulty is 2 to 10 (K6, D1).", rule="K6")
        state = selectors.engine(chase)
        before = state.course.difficulty
        new = replace(state, course=replace(state.course, difficulty=int(difficulty)))
        text = f"Chase course difficulty {before} → {int(difficulty)}"
        record(
            scene,
            chase,
            new,
            by=by,
            kind=StepKind.COURSE,
            text=text,
            sides=sides_of(chase),
            data={"difficulty": int(difficulty)},
        )
        return chase

    return steps.run(COURSE, chase, by=by, key=key, payload=payload, seen=token, rules=apply)


def chase_call_off(
    *, chase: Chase, by: AbstractBaseUser, token: str | None = None, key: str | None = None
) -> Chase:
    """The storyteller ends a chase the rules did not end (the scene moved on, someone left):
    announced like any ending, with the outcome ``called_off``."""
    payload = {"chase": chase.pk}

    def apply(scene: Scene, chase: Chase) -> Chase:
        state = selectors.engine(chase)
        chase.phase, chase.pending, chase.outcome = Phase.OVER, {}, CALLED_OFF
        chase.ended_at = timezone.now()
        record(
            scene,
            chase,
            state,
            by=by,
            kind=StepKind.END,
            text="Chase over: the storyteller called it off",
            sides=sides_of(chase),
        )
        announce_end(chase)
        return chase

    return steps.run(CALL_OFF, chase, by=by, key=key, payload=payload, seen=token, rules=apply)
