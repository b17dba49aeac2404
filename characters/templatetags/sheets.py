"""Template helpers for drawing sheets."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def times(count: int) -> range:
    """``{% for _ in 3|times %}``: draw one bubble per trait."""
    try:
        return range(max(int(count), 0))
    except (TypeError, ValueError):
        return range(0)
