"""Template filters of the scene pages."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import template
from django.utils.safestring import mark_safe

from combat import board_log, own_log
from combat.gametime import format_game_time

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
