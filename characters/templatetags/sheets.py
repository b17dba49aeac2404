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


# Marks of the paper sheets: / bashing, X lethal, * aggravated; a box without a type is filled.
DAMAGE_MARKS = {"bashing": "/", "lethal": "X", "aggravated": "*", "untyped": "■"}


@register.filter
def damage_mark(box: str | None) -> str:
    """The mark drawn in one health box (nothing when it is empty)."""
    return "" if box is None else DAMAGE_MARKS.get(box, "■")
