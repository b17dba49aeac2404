"""Template tags of the chase regions: they read the chase of the scene in the context, so
the scene's board, public and private parts include the chase without knowing about it."""

from __future__ import annotations

from typing import Any

from django import template

from chases import selectors

register = template.Library()


@register.simple_tag(takes_context=True)
def chase_board(context: template.Context) -> dict[str, Any]:
    """The storyteller's chase region (the board's context has ``rows`` of participants)."""
    participants = [row["participant"] for row in context.get("rows", [])]
    return selectors.board_state(context["scene"], participants)


@register.simple_tag(takes_context=True)
def chase_public(context: template.Context) -> dict[str, Any] | None:
    """What every player of the scene sees of the chase (hidden NPCs unnamed)."""
    return selectors.chase_state(context["scene"], public=True)


@register.simple_tag(takes_context=True)
def chase_prompts(context: template.Context) -> dict[str, Any]:
    """This player's maneuvers and obstacle passes (the private part has ``player``)."""
    return selectors.prompts_state(context["scene"], context.get("player"))
