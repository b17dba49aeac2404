"""Reads of a met_bns fight's row: its engine state, the action labels, the Celerity a sheet
grants, who may act or intend to attack now (B4-B9). No writes."""

from __future__ import annotations

from combat.models import Combat
from combat.rules import bns_round as bns
from combat.rules.bns_initiative import MAX_CELERITY_ROUNDS
from combat.rules.errors import RuleError

ACTION_LABELS = {
    "attack": "Attack",
    "physical_challenge": "Physical challenge",
    "mental_challenge": "Mental challenge",
    "social_challenge": "Social challenge",
    "physical_power": "Physical power",
    "mental_power": "Mental power",
    "social_power": "Social power",
    "draw": "Draw a weapon",
    "move": "Move 3 steps",
    "jump": "Jump",
    "climb": "Climb",
    "swim": "Swim",
    "drop_prone": "Drop prone",
    "crawl": "Crawl 1 step",
    "stand_up": "Stand up",
}


def engine_of(combat: Combat) -> bns.Combat:
    return bns.Combat.from_dict(combat.state)


def celerity_cap(stats) -> int:
    """B5 decision: a Celerity rating of k grants k rounds, at most three."""
    return min(stats.dot("Celerity") or 0, MAX_CELERITY_ROUNDS)


def may_act_now(state: bns.Combat, who: str) -> bool:
    """B4, B6, B8: whether ``who`` may act now: on its initiative, or the next one once the
    character whose initiative it is has acted, or a delayer stepping back in."""
    try:
        state._turn_for(who)
    except RuleError:
        return False
    return True


def may_intend(state: bns.Combat, who: str, escaper: str) -> bool:
    """B9: only characters yet to act this round (with an action left) may intend to attack."""
    if who == escaper or who not in state.order:
        return False
    f = state.fighter(who)
    return not (f.out or f.done or not f.has_action_left or f.begun)
