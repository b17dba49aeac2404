"""Template filters of the scene pages."""

from __future__ import annotations

from django import template

from combat.gametime import format_game_time

register = template.Library()


@register.filter
def game_time(seconds: int | None) -> str:
    """Game seconds as the clock shows them: ``1h 05m 30s``, ``4m 00s``, ``15s``."""
    return format_game_time(int(seconds or 0))
