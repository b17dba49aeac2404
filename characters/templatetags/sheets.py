"""Template helpers for drawing sheets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template

from characters import sheet_html

register = template.Library()


@register.simple_tag
def sheet_body(sheet: Mapping[str, Any]) -> str:
    """``{% sheet_body s %}``: the body of one sheet (``characters/_sheet_body.html`` with
    :func:`characters.selectors.sheet`'s values), kept per process while nothing it shows
    changes (:mod:`characters.sheet_html`)."""
    return sheet_html.body(sheet)


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
