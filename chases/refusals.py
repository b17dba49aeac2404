"""What a chase step refuses, in one type (:class:`ChaseError`, a :class:`combat.steps.Refused`)
and the sentences it says."""

from __future__ import annotations

from chases.models import Phase
from combat.rules.errors import RuleError
from combat.steps import Refused

NOT_STORYTELLER = "Only the storyteller runs the chase."
NOT_YOURS = "{name} is not your character: you act only for your own."
NPC_IS_THE_STORYTELLERS = "{name} is an NPC: the storyteller acts for it."
STALE = "The chase moved on since you loaded it; nothing was changed. Look again."
OVER = "The chase is over."
ALREADY = "A chase is already running in this scene: finish it first."
NOT_IN_SCENE = "{name} is not in this scene."
WRONG_PHASE = {
    Phase.ROLL: "The round is to be rolled now, not that (K6).",
    Phase.MANEUVER: "The winners of the round choose their maneuver first (K6).",
    Phase.OBSTACLE: "First face the obstacle (K9).",
    Phase.OVER: OVER,
}


class ChaseError(Refused):
    """A chase step refused, with a sentence for people (naming the rule when one refused)."""

    def __init__(self, message: str, rule: str | None = None) -> None:
        self.rule = rule
        super().__init__(message)


def rule_error(error: RuleError) -> ChaseError:
    return ChaseError(str(error), rule=error.rule)
