"""Round refusals: :class:`RoundError` and the sentences people read when a round step is
refused; :func:`refusal_of` words an engine refusal with names (a hidden NPC stays unseen).
"""

from __future__ import annotations

from combat.models import Participant
from combat.rules.errors import RuleError
from combat.steps import Refused

NOT_STORYTELLER = "Only the storyteller of this scene can do that."


NOT_YOURS = "{name} is not your character: you act only for your own."


NO_COMBAT = "No fight is running in this scene."


ALREADY_FIGHTING = "A fight is already running in this scene."


NEEDS_TWO = "A fight needs at least two characters of this scene."


PAUSED = "The storyteller paused the round."


MOVED_ON = "The round moved on since you looked; nothing was changed. Look again."


WRONG_STAGE = "Not now: the fight is at {stage}."


MISSING_INITIATIVE = "Initiative still missing for {names} (D3)."


UNSUPPORTED = "Rounds for {ruleset} are not run here yet."


NOT_IN_FIGHT = "{name} is not in this fight."


class RoundError(Refused):
    """A round step refused, with a sentence for people (naming the rule where one refuses)."""


UNSEEN_CHARACTER = "an unseen character"  # a hidden NPC in a refusal's words


def refusal_of(error: RuleError) -> RoundError:
    """A refusal of the engine, which knows characters by participant id, worded with their
    names (players read it): a hidden NPC stays unseen, whoever reads it."""
    ids = {int(who) for who in error.names if who.isdigit()}
    rows = Participant.objects.filter(pk__in=ids).values_list("pk", "name", "hidden")
    names = {str(pk): UNSEEN_CHARACTER if hidden else name for pk, name, hidden in rows}
    return RoundError(error.worded(lambda who: names.get(who, who)), error.rule)
