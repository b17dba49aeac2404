"""Refusals of the rules engine.

Every step the engine will not take raises :class:`RuleError`, naming the rule of
RULES.md that forbids it and a sentence a player understands. A refused step never
changes state: engine states are frozen, a step returns a new state or raises.
"""

from __future__ import annotations


class RuleError(Exception):
    """A step the rules refuse.

    ``RuleError("C9", "Overbid already used in this challenge")`` reads
    "Overbid already used in this challenge (C9)".
    """

    def __init__(self, rule: str, reason: str) -> None:
        self.rule = rule
        self.reason = reason
        super().__init__(f"{reason} ({rule})")

    def __repr__(self) -> str:
        return f"RuleError({self.rule!r}, {self.reason!r})"
