"""What the storyteller's roster says of the running fight (wod_dice, met_classic and
met_werewolf, met_bns): whom it waits on and for what. The storyteller's own steps wait on
nobody."""

from __future__ import annotations

from combat.models import Combat, CombatStage, Scene
from combat.rounds import reads
from combat.rounds import selectors as rounds
from combat.rounds.bns_reads import engine_of
from combat.rounds.met_reads import MET_RULESETS, celerity_of
from combat.rules import bns_round as bns
from combat.rules.wod_round import Step, WodRound

# What the storyteller's roster says a fighter is waited on for (the tablet, at a glance).
ROLL_INITIATIVE = "to roll initiative"
TO_DECLARE = "to declare"
TO_DECLARE_ANEW = "to name the new action (D16)"
TO_ANSWER_COMMITTED = "to answer a committed attack (D5)"
TO_PURSUE = "to pursue or let go (K4)"
# met_classic / met_werewolf: the next Celerity action of the round's order (C15).
TO_TAKE_CELERITY = "to take {action} (C15)"
# met_bns: whose action the order of action resolves now.
TO_ACT_SURPRISE = "to take the surprise action (B7)"
TO_ACT_BACK = "to act, back from a delay (B8)"
TO_ACT = "to act on their initiative (B4)"
TO_ACT_CELERITY = "to act in celerity round {n} (B5)"


def waiting_on(scene: Scene) -> dict[int, str]:
    """Who the scene's running fight waits on, by participant id, and for what (its
    ruleset's reading: :func:`wod_waiting_on`, :func:`met_waiting_on`,
    :func:`bns_waiting_on`)."""
    combat = rounds.running(scene)
    if combat is None:
        return {}
    if combat.ruleset == "wod_dice":
        return wod_waiting_on(combat)
    if combat.ruleset in MET_RULESETS:
        return met_waiting_on(combat)
    if combat.ruleset == "met_bns":
        return bns_waiting_on(combat)
    return {}


def met_waiting_on(combat: Combat) -> dict[int, str]:
    """C15: the fight's attacks are challenges (their own waits); the round waits on the
    character whose Celerity action comes next in the order (Alacrity before the normal
    actions, then Swiftness, Rapidity, Fleetness) until the storyteller ticks it off."""
    celerity = celerity_of(combat)
    taken = set(celerity.taken)
    normal = [str(pid) for pid in combat.members]
    for slot in celerity.order(normal):
        if slot.action != "normal" and (slot.who, slot.action) not in taken:
            return {int(slot.who): TO_TAKE_CELERITY.format(action=slot.action)}
    return {}


def bns_waiting_on(combat: Combat) -> dict[int, str]:
    """B4-B9: the character whose action is resolved now: the surprise action's owner (B7),
    a delayer stepping back in (B8), or the next on its initiative (B4), in the everyman round
    or a Celerity round (B5). Mediation and assessment (B11) and a fair escape's call for
    intents (B9) are the storyteller's: nobody is waited on."""
    state = engine_of(combat)
    if state.phase not in (bns.Phase.ORDER_OF_ACTION, bns.Phase.CELERITY_ROUNDS):
        return {}
    if (combat.work or {}).get("escape_call"):
        return {}
    who = state.current
    if who is None:
        return {}
    if state.surprise_by == who:
        what = TO_ACT_SURPRISE
    elif state.queue and state.queue[0] == who:
        what = TO_ACT_BACK
    elif state.round:
        what = TO_ACT_CELERITY.format(n=state.round)
    else:
        what = TO_ACT
    return {int(who): what}


def wod_waiting_on(combat: Combat) -> dict[int, str]:
    """Who the running wod_dice fight waits on, by participant id, and for what: dice of
    initiative not in, the slot declaring now (slowest first, D4), an abort's new action
    (D16), an answer to a committed attack (D5), a pursuit to choose (K4). The storyteller's
    own steps (resolving, book keeping) wait on nobody."""
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
