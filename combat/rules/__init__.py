"""The pure rules engine: RULES.md as code.

No Django, no I/O, no hidden randomness: throws and dice come in as arguments (or as a
``random.Random`` the caller owns). States are frozen dataclasses; every step returns a
new state or raises :class:`~combat.rules.errors.RuleError` naming the rule ID.
"""

from combat.rules.errors import RuleError

__all__ = ["RuleError"]
