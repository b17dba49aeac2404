"""What every chase step shares: its declaration (:func:`chase_step`: lock the scene, then the
chase; who may act; the chase's token, for :func:`combat.steps.run`), the sides behind an
engine key, and writing its outcome (the chase's state, its own step and rolls, the scene's
log line, an ending announced on commit with :data:`chases.signals.chase_ended`)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from chases import pools, rules, selectors
from chases.actors import require_storyteller
from chases.models import Chase, ChaseRoll, ChaseStep, Phase, Role, Side, StepKind
from chases.refusals import OVER, STALE, ChaseError
from chases.signals import chase_ended
from chases.tokens import token_of
from combat import steps
from combat.models import LogKind, Participant, Scene
from combat.rules.dice import RollResult
from combat.services import lock_open_scene, record_change

#: Not a rules ending: the storyteller stopped the chase.
CALLED_OFF = "called_off"


def side_key(participant: Participant) -> str:
    """A Predator's key in the chase (and a group member's, after ``prey-``): its participant
    id, or for a hidden NPC a key drawn at random, so nothing a phone gets (the track, the
    Prey's maneuver against it) carries an id derived from it."""
    if participant.hidden:
        return f"u{secrets.token_hex(4)}"
    return f"p{participant.pk}"


def engine_key(side: Side) -> str:
    return rules.PREY if side.role == Role.PREY else side.key


def lock_chase(chase: Chase) -> tuple[Scene, Chase]:
    """Lock the scene, then the chase (every chase step's order)."""
    scene = lock_open_scene(chase.scene)
    locked = Chase.objects.select_for_update().get(pk=chase.pk)
    locked.scene = scene
    return scene, locked


def on_running(
    by: AbstractBaseUser, scene: Scene, chase: Chase, payload: Mapping[str, Any]
) -> None:
    """A step players take too (their side's maneuver, Nope! or Damnit!): on a running chase;
    the step's own ``may_act`` says whose side it is."""
    if not chase.running:
        raise ChaseError(OVER)


def storyteller_on_running(
    by: AbstractBaseUser, scene: Scene, chase: Chase, payload: Mapping[str, Any]
) -> None:
    """Only the storyteller runs the chase, while it runs."""
    require_storyteller(by, scene)
    on_running(by, scene, chase, payload)


def chase_tokens(chase: Chase) -> tuple[str, ...]:
    """The one token a current chase screen carries, the tablet's and the phones' alike."""
    return (token_of(chase),)


def chase_step(
    action: str,
    may_act: Callable[[AbstractBaseUser, Scene, Chase, Mapping[str, Any]], None] = (
        storyteller_on_running
    ),
) -> steps.Step[Chase, Chase]:
    """Declare a step on a running chase (:func:`combat.steps.declare`): it locks the scene,
    then the chase; ``may_act`` (by default the storyteller's alone); the chase's token."""
    return steps.declare(
        steps.Step(
            action=action,
            lock=lock_chase,
            may_act=may_act,
            tokens=chase_tokens,
            refusal=ChaseError,
            moved_on=STALE,
        )
    )


def sides_of(chase: Chase) -> dict[str, Side]:
    """Every side by its own key (a group Prey has one side per member, K1)."""
    return {
        s.key: s
        for s in Side.objects.filter(chase=chase).select_related(
            "participant", "participant__character"
        )
    }


def members(sides: Mapping[str, Side], who: str) -> list[Side]:
    """The sides behind an engine key: every member of the Prey, or one Predator."""
    if who == rules.PREY:
        return [s for s in sides.values() if s.role == Role.PREY]
    return [sides[who]]


def runner(
    sides: Mapping[str, Side],
    who: str,
    values: Mapping[int, dict[str, int]],
    attribute: str,
    ability: str,
    *,
    split: int = 0,
) -> tuple[Side, pools.Pool]:
    """Who rolls for an engine key and its pool (a group Prey: its slowest member, K1)."""
    return pools.runner(members(sides, who), dict(values), attribute, ability, split=split)


def player_ids(sides: Mapping[str, Side]) -> list[int]:
    return [s.participant.player_id for s in sides.values() if s.participant.player_id]


def sheet_characters(sides: Mapping[str, Side]) -> list[Any]:
    return [s.participant.character for s in sides.values() if s.participant.character_id]


def leads(state: rules.Chase, shown: Mapping[str, str]) -> str:
    parts = []
    for p in state.pursuits:
        label = f"Lead {p.lead}" if p.running else p.status.value
        parts.append(f"{label} on {shown[p.predator]}" if len(state.pursuits) > 1 else label)
    return ", ".join(parts)


def record(
    scene: Scene,
    chase: Chase,
    state: rules.Chase,
    *,
    by: AbstractBaseUser | None,
    kind: str,
    text: str,
    sides: Mapping[str, Side],
    rolls: Sequence[tuple[Side, str, int, RollResult, bool]] = (),
    data: dict[str, Any] | None = None,
) -> ChaseStep:
    """Write the new state, the chase's own step and rolls, the scene log line; end the chase
    when the engine says it is over, announcing it on commit."""
    chase.state = state.to_dict()
    chase.step += 1
    if state.over is not None and chase.ended_at is None:
        chase.phase = Phase.OVER
        chase.pending = {}
        chase.outcome = state.over.value
        chase.ended_at = timezone.now()
    chase.save()
    step = ChaseStep.objects.create(
        chase=chase,
        number=chase.step,
        round=state.rounds,
        kind=kind,
        text=text[:500],
        data={**(data or {}), "leads": {p.predator: p.lead for p in state.pursuits}},
        by=by if by is not None and by.is_authenticated else None,
    )
    ChaseRoll.objects.bulk_create(
        ChaseRoll(
            step=step,
            side=side,
            purpose=purpose,
            pool=pool,
            difficulty=result.difficulty,
            dice=list(result.dice),
            successes=result.successes,
            botch=result.botch,
            typed=typed,
        )
        for side, purpose, pool, result, typed in rolls
    )
    record_change(
        scene,
        by=by,
        kind=LogKind.CHASE,
        text=text,
        public=True,
        characters=sheet_characters(sides),
        data={"chase": chase.pk, "step": chase.step, "kind": kind, **(data or {})},
        private_user_ids=player_ids(sides),
    )
    if chase.phase == Phase.OVER and kind != StepKind.END:
        shown = selectors.names(chase, public=True)
        ending = selectors.OUTCOME_TEXT[chase.outcome].format(prey=shown[rules.PREY])
        ChaseStep.objects.create(
            chase=chase, number=chase.step, round=state.rounds, kind=StepKind.END, text=ending
        )
        record_change(
            scene,
            by=by,
            kind=LogKind.CHASE,
            text=f"Chase over: {ending}",
            public=True,
            characters=sheet_characters(sides),
            data={"chase": chase.pk, "outcome": chase.outcome},
            private_user_ids=player_ids(sides),
        )
        announce_end(chase)
    return step


def announce_end(chase: Chase) -> None:
    """On commit: :data:`chases.signals.chase_ended`, with the outcome and where it came from."""
    transaction.on_commit(
        partial(
            chase_ended.send,
            sender=Chase,
            chase=chase,
            outcome=chase.outcome,
            origin=chase.origin,
        )
    )


def after_maneuvers(chase: Chase, state: rules.Chase) -> None:
    """Once no winner is left to choose: an obstacle a maneuver set up, else the next roll."""
    if chase.pending.get("maneuvers"):
        chase.phase = Phase.MANEUVER
    elif state.obstacle:
        chase.phase = Phase.OBSTACLE
        chase.pending = {"obstacle": {"facing": list(state.obstacle), "set": False}}
    else:
        chase.phase = Phase.ROLL
        chase.pending = {}
