"""Template tags of the combat rounds: each hands its include the round as the scene's
selectors read it before the render (:mod:`combat.regions`); no query runs in a render."""

from __future__ import annotations

from typing import Any

from django import template

from combat import regions

register = template.Library()


def _read(context: template.Context, name: str, scene: Any) -> Any:
    return context[name] if name in context else regions.read_one(name, scene, context.flatten())


@register.simple_tag(takes_context=True)
def round_board(context: template.Context, scene: Any) -> dict[str, Any]:
    """The storyteller's round (everything, hidden NPCs too)."""
    return _read(context, "round_board", scene)


@register.simple_tag(takes_context=True)
def round_public(context: template.Context, scene: Any) -> dict[str, Any]:
    """The round as every player of the scene may see it."""
    return _read(context, "round_public", scene)


@register.simple_tag(takes_context=True)
def round_prompts(context: template.Context, scene: Any, player: Any) -> dict[str, Any]:
    """This player's prompts in the round."""
    return _read(context, "round_prompts", scene)


@register.filter
def die_class(die: int, difficulty: int) -> str:
    """D1: a die at the difficulty is a success, a 1 cancels one."""
    if die == 1:
        return "one"
    return "hit" if die >= difficulty else "miss"
