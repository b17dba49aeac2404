"""A challenge's refusal: one type (:class:`ChallengeError`, a :class:`combat.steps.Refused`),
the sentences tests check, and the engine's refusals turned into it (:func:`by_the_rules`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from combat.rules.errors import RuleError
from combat.steps import Refused


class ChallengeError(Refused):
    """A step refused, with a sentence for people; ``rule`` names the rule when one did."""

    def __init__(self, message: str, rule: str | None = None) -> None:
        self.rule = rule
        super().__init__(f"{message} ({rule})" if rule and f"({rule})" not in message else message)


@contextmanager
def by_the_rules() -> Iterator[None]:
    """The engine's rules (and the night's locks, C15's Celerity) refuse a step by raising
    :class:`RuleError`: the step is refused with its reason, naming the rule ID."""
    try:
        yield
    except RuleError as error:
        raise ChallengeError(error.reason, error.rule) from None


MOVED_ON = "The challenge moved on since you looked; nothing was changed. Look again."


NOT_YOURS = "You do not play that side of this challenge."


NOT_ST = "Only a storyteller of this chronicle can do that."


CLOSED = "This challenge is over."


OWN_CHARACTER = "You cannot challenge your own character."


NOT_IN_SCENE = "That character is not in this scene."


NOTHING_SEALED = "There is nothing to throw right now."
