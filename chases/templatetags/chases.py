"""Template tags of the chase regions: they hand their include the chase as the scene's
selectors read it before the render (:mod:`combat.regions`), so the scene's board, public and
private parts include the chase without knowing about it, and no query runs in a render."""

from __future__ import annotations

from typing import Any

from django import template

from combat import regions

register = template.Library()


def _read(context: template.Context, name: str) -> Any:
    if name in context:
        return context[name]
    return regions.read_one(name, context["scene"], context.flatten())


@register.simple_tag(takes_context=True)
def chase_board(context: template.Context) -> dict[str, Any]:
    """The storyteller's chase region (read with the board's ``rows`` of participants)."""
    return _read(context, "chase_board")


@register.simple_tag(takes_context=True)
def chase_public(context: template.Context) -> dict[str, Any] | None:
    """What every player of the scene sees of the chase (hidden NPCs unnamed)."""
    return _read(context, "chase_public")


@register.simple_tag(takes_context=True)
def chase_prompts(context: template.Context) -> dict[str, Any]:
    """This player's maneuvers and obstacle passes (the private part has ``player``)."""
    return _read(context, "chase_prompts")
