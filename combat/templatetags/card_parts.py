"""Parts of a challenge card that read nothing of its viewer, rendered once for all of them.

A change to an open challenge renders its card for each side's phone and for the board (the
tap's answer takes what the push rendered), and none of them can be kept whole: each side's
card holds its own moves, which read its sheet, and every write moves the card's ``step``.
Three parts of the card read only the challenge's row and its card data, the same for both
sides (a side's card and the other side's show the same sides' line, last reveal and history;
the board's differs only by the names a hidden NPC has there):

- ``{% kept_sides %}``: the sides' line (names, bids, blood, effects, who has locked in);
- ``{% kept_reveal %}``: the last throw's lines (``screens.reveal``);
- ``{% kept_history %}``: the history's last lines (``challenges.history_tail``).

Each is kept by exactly what it shows, spelt out from the context (values with their type,
so two values that print alike but render apart never share a key), not by the row's
``step``: nothing is read from the database for a key, and a part is never served for
values other than its own, in any process. None holds a form.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from django import template
from django.utils.safestring import SafeString

from combat.challenges.finished import Memo
from combat.templatetags.challenges import HISTORY_SHOWN
from combat.templatetags.finished_cards import kept_block
from combat.templatetags.screens import reveal

register = template.Library()

SIZE = 2048  # parts (well under 1 KB each): a night's open cards at their recent steps
_memo: Memo[SafeString] = Memo(SIZE)
stats = _memo.stats

SIDES = ("attacker", "defender")


def clear() -> None:
    _memo.clear()


def _typed(value: Any) -> tuple[str, str]:
    """A value as a key holds it: its type and its repr (a list is no key; ``1`` and
    ``True``, or a str and a safe str, render apart)."""
    return type(value).__name__, repr(value)


def _of(data: Any, name: str) -> Any:
    """``data.name`` as a template reads it from a card's data (a dict, or nothing)."""
    return data.get(name) if isinstance(data, dict) else None


def _rendering(context: template.Context) -> tuple[bool, Any]:
    """How the context renders what it is given (escaped, localized)."""
    return context.autoescape, context.use_l10n


def sides_key(context: template.Context) -> Hashable | None:
    """What ``_card.html``'s sides' line shows (see the module), or None: render it."""
    c, ch = context.get("c"), context.get("ch")
    if not isinstance(c, dict) or ch is None:
        return None
    per_side = tuple(
        _typed(_of(c.get(part), side))
        for side in SIDES
        for part in ("names", "bids", "blood", "locked", "declared")
    )
    return (
        "sides",
        _rendering(context),
        per_side,
        _typed(ch.attacker_effect),
        _typed(ch.defender_effect),
        bool(ch.is_open),
        _typed(c.get("phase")),
        bool(c.get("must_drop")),
    )


def reveal_key(context: template.Context) -> Hashable | None:
    """The last reveal's lines ``_card.html`` shows (``screens.reveal``), or None."""
    ch = context.get("ch")
    if ch is None:
        return None
    return ("reveal", _rendering(context), *(_typed(line) for line in reveal(ch)))


def history_key(context: template.Context) -> Hashable | None:
    """What ``_card.html``'s history shows: whether it is open (the challenge is over), how
    many earlier lines it does not show and each shown line's text and count, or None."""
    ch = context.get("ch")
    if ch is None:
        return None
    history = ch.history or []
    shown = history[-HISTORY_SHOWN:]
    if not all(isinstance(h, dict) for h in shown):
        return None
    lines = tuple((_typed(h.get("text")), _typed(h.get("times"))) for h in shown)
    return ("history", _rendering(context), bool(ch.is_open), len(history) - len(shown), lines)


kept_block(register, "kept_sides", sides_key, _memo, forms=False)
kept_block(register, "kept_reveal", reveal_key, _memo, forms=False)
kept_block(register, "kept_history", history_key, _memo, forms=False)
