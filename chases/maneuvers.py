"""Maneuvers (K7, K8): the winner of a round's pursuit takes one, or none."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from chases import rules, selectors
from chases.actors import require_actor, sides_named_by
from chases.models import Chase, Phase, Role, StepKind
from chases.recording import (
    after_maneuvers,
    chase_step,
    leads,
    on_running,
    record,
    sides_of,
)
from chases.refusals import ChaseError, rule_error
from combat import steps
from combat.models import Scene
from combat.rules.errors import RuleError
from combat.services import is_storyteller_of_scene


def _may_maneuver(
    by: AbstractBaseUser, scene: Scene, chase: Chase, payload: Mapping[str, Any]
) -> None:
    """K7, K8: the winning side's own player (the storyteller for an NPC) chooses; the
    storyteller may move on without a choice. Who the form names is found first, a hidden
    NPC's key answering as a key of nobody (the Prey's player names the Predator it won
    against, so a Prey's maneuver checks only the Prey)."""
    on_running(by, scene, chase, payload)
    if payload["maneuver"] is None and is_storyteller_of_scene(by, scene):
        return
    who = rules.PREY if payload["role"] == Role.PREY else payload["pursuit"]
    require_actor(by, scene, sides_named_by(chase, scene, by, who))


#: K7, K8: the winner of a pursuit's maneuver (a player's for their side).
MANEUVER = chase_step("chase.maneuver", may_act=_may_maneuver)


def chase_maneuver(
    *,
    chase: Chase,
    by: AbstractBaseUser,
    pursuit: str,
    role: str,
    maneuver: str | None,
    pick: str | None = None,
    token: str | None = None,
    key: str | None = None,
) -> Chase:
    """K7, K8: the winner of ``pursuit`` (a Predator's key) in the round just rolled takes one
    maneuver (``maneuver=None``: none this round). The Prey's player chooses for the Prey, a
    Predator's for that Predator, the storyteller for NPCs; the storyteller may also move on
    without a choice (the maneuver is optional)."""
    payload = {
        "chase": chase.pk,
        "pursuit": pursuit,
        "role": role,
        "maneuver": maneuver,
        "pick": pick,
    }

    def apply(scene: Scene, chase: Chase) -> Chase:
        if chase.phase != Phase.MANEUVER:
            raise ChaseError(
                "No maneuver is open now: only the winner of the round just "
                "rolled may maneuver (K6).",
                rule="K6",
            )
        pending = chase.pending.get("maneuvers", [])
        entry = {"pursuit": pursuit, "role": role}
        if entry not in pending:
            raise ChaseError("Only the winner of the round just rolled may maneuver (K6).", "K6")
        sides = sides_of(chase)
        state = selectors.engine(chase)
        shown = selectors.names(chase, public=True)
        who = rules.PREY if role == Role.PREY else pursuit
        if pick is not None and maneuver is None:
            raise ChaseError(
                "Only In there! and Herd pick a part of the chase pool (K7, K8).",
                rule="K7" if role == Role.PREY else "K8",
            )
        if maneuver is not None and pick is None and rules.changes_course(who, maneuver):
            # K7, K8: the engine takes In there! and Herd without a pick; the tablet asks.
            raise ChaseError(
                "Pick the part of the chase pool the new course uses (K7, K8).",
                rule="K7" if role == Role.PREY else "K8",
            )
        if pick is not None and pick not in selectors.COURSE_PARTS:
            raise ChaseError(
                f"A new course uses one part of a chase pool; {pick!r} is not one (K7, K8).",
                rule="K7" if role == Role.PREY else "K8",
            )
        if maneuver is None:
            new, kind = state, StepKind.PASS
            text = f"{shown[who]} makes no maneuver"
        else:
            try:
                new = state.maneuver(
                    who, maneuver, against=pursuit if role == Role.PREY else None, pick=pick
                )
            except (RuleError, ValueError) as error:
                if isinstance(error, RuleError):
                    raise rule_error(error) from None
                raise ChaseError(f"Unknown maneuver {maneuver!r}.") from None
            kind = StepKind.MANEUVER
            move = rules.maneuver_of(who, maneuver)
            text = f"{shown[who]}: {selectors.MANEUVER_LABELS[move]}"
            if role == Role.PREY and len(state.pursuits) > 1:
                text += f" against {shown[pursuit]}"
            if pick:
                text += f" (new course: {pick.title()})"
            text += f"; {leads(new, shown)}"
        chase.pending = {**chase.pending, "maneuvers": [m for m in pending if m != entry]}
        after_maneuvers(chase, new)
        record(
            scene,
            chase,
            new,
            by=by,
            kind=kind,
            text=text,
            sides=sides,
            data={"maneuver": maneuver, "pursuit": pursuit, "role": role, "pick": pick},
        )
        return chase

    return steps.run(MANEUVER, chase, by=by, key=key, payload=payload, seen=token, rules=apply)
