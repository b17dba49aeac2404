"""Refusals of the rules engine.

Every step the engine will not take raises :class:`RuleError`, naming the rule of
RULES.md that forbids it and a sentence a player understands. A refused step never
changes state: engine states are frozen, a step returns a new state or raises.

The engine knows characters by the keys its caller gives it (the app gives participant
ids). A refusal that names one marks it with :func:`named`, so the caller can put the name
a reader should see in its place (:meth:`RuleError.worded`); ``str()`` shows the key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

_MARK = "\u2063"  # an invisible separator: never typed into a name
_MARKED = re.compile(f"{_MARK}([^{_MARK}]*){_MARK}")


def named(who: object) -> str:
    """A character in a refusal's sentence, marked so that the caller may word it."""
    return f"{_MARK}{who}{_MARK}"


def all_named(whos: Iterable[object], sep: str = ", ") -> str:
    """Several characters in a refusal's sentence, each marked (:func:`named`)."""
    return sep.join(named(who) for who in whos)


class RuleError(Exception):
    """A step the rules refuse.

    ``RuleError("C9", "Overbid already used in this challenge")`` reads
    "Overbid already used in this challenge (C9)".
    """

    def __init__(self, rule: str, reason: str) -> None:
        self.rule = rule
        self._marked = reason
        self.reason = _MARKED.sub(r"\1", reason)
        super().__init__(f"{self.reason} ({rule})")

    @property
    def names(self) -> list[str]:
        """The keys of the characters the sentence names, in order."""
        return _MARKED.findall(self._marked)

    def worded(self, name: Callable[[str], str]) -> str:
        """The refusal with each named character's key replaced by ``name(key)``."""
        return f"{_MARKED.sub(lambda m: name(m.group(1)), self._marked)} ({self.rule})"

    def __repr__(self) -> str:
        return f"RuleError({self.rule!r}, {self.reason!r})"
