"""What the storyteller's roster says of the running wod_dice fight: whom it waits on and for
what. The storyteller's own steps wait on nobody."""

from __future__ import annotations

from combat.models import CombatStage, Scene
from combat.rounds import reads
from combat.rounds import selectors as rounds
from combat.rules.wod_round import Step, WodRound

# What the storyteller's roster says a fighter is waited on for (the tablet, at a glance).
ROLL_INITIATIVE = "to roll initiative"
TO_DECLARE = "to declare"
TO_DECLARE_ANEW = "to name the new action (D16)"
TO_ANSWER_COMMITTED = "to answer a committed attack (D5)"
TO_PURSUE = "to pursue or let go (K4)"


def waiting_on(scene: Scene) -> dict[int, str]:
    """Who the running wod_dice fight waits on, by participant id, and for what: dice of
    initiative not in, the slot declaring now (slowest first, D4), an abort's new action
    (D16), an answer to a committed attack (D5), a pursuit to choose (K4). The storyteller's
    own steps (resolving, book keeping) wait on nobody."""
    combat = rounds.running(scene)
    if combat is None or combat.ruleset != "wod_dice":
        return {}
    away = reads.away(combat)
    out: dict[int, str] = {}
    for o in reads.pursuits_waiting(combat):
        out[int(o["predator"])] = TO_PURSUE
    if combat.stage == CombatStage.INITIATIVE:
        for pid in combat.members:
            if str(pid) not in away and str(pid) not in combat.initiative:
                out.setdefault(int(pid), ROLL_INITIATIVE)
        return out
    if combat.stage != CombatStage.ROUND or not combat.state:
        return out
    state = WodRound.from_dict(combat.state)
    for d in state.declarations:
        if d.action == "pending":
            out.setdefault(int(d.who), TO_DECLARE_ANEW)
        elif (
            d.maneuver == "committed"
            and d.target
            and d.who not in state.resolved
            and not any(a == d.who and t == d.target for a, t, _x in state.answers)
        ):
            out.setdefault(int(d.target), TO_ANSWER_COMMITTED)
    if state.step is Step.DECLARE:
        for who in state.up:
            if state.declaration(who) is None:
                out.setdefault(int(who), TO_DECLARE)
    return out
