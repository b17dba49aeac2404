"""Template filters of the scene pages."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

from combat import board_log, own_log
from combat.challenges.finished import Memo
from combat.gametime import format_game_time
from combat.templatetags.finished_cards import kept_block

register = template.Library()


@register.filter
def game_time(seconds: int | None) -> str:
    """Game seconds as the clock shows them: ``1h 05m 30s``, ``4m 00s``, ``15s``."""
    return format_game_time(int(seconds or 0))


@register.simple_tag
def board_log_items(log: Iterable[Any]) -> str:
    """The board's log as its ``<li>`` items, newest first (:func:`combat.board_log.items`)."""
    return mark_safe(board_log.items(list(log)))


@register.simple_tag
def own_log_items(log: Iterable[Any]) -> str:
    """The phone's own log as its ``<li>`` items, newest first (:func:`combat.own_log.items`)."""
    return mark_safe(own_log.items(log))


# ``{% kept_here %}…{% endkept_here %}``: the public part's lists of who is here (its names for
# the start forms' selects, and the "Here" list), rendered once per list. The public part goes
# to every phone with every change, and a shared scene's lists hold every character in it
# though they change only when someone joins, leaves or is renamed. The lists show each
# participant's pk, name and whether it is an NPC, in order (the public part's participants:
# hidden NPCs never among them, selectors.public_state): the key is exactly these.
_here: Memo[SafeString] = Memo(256)
here_stats = _here.stats


def here_key(context: template.Context) -> Hashable | None:
    """What the public part's lists of who is here show (see above), or None."""
    participants = context.get("participants")
    if participants is None:
        return None
    return tuple((p.pk, p.name, bool(p.npc)) for p in participants)


def clear() -> None:
    _here.clear()


kept_block(register, "kept_here", here_key, _here, forms=False)  # no form in it
