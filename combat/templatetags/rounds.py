"""Template tags of the combat rounds: each region reads its own state from the scene."""

from __future__ import annotations

from typing import Any

from django import template

from combat.rounds import selectors

register = template.Library()


@register.simple_tag
def round_board(scene) -> dict[str, Any]:
    """The storyteller's round (everything, hidden NPCs too)."""
    return selectors.board(scene)


@register.simple_tag
def round_public(scene) -> dict[str, Any]:
    """The round as every player of the scene may see it."""
    return selectors.public(scene)


@register.simple_tag
def round_prompts(scene, player) -> dict[str, Any]:
    """This player's prompts in the round."""
    return selectors.prompts(scene, player)


@register.filter
def die_class(die: int, difficulty: int) -> str:
    """D1: a die at the difficulty is a success, a 1 cancels one."""
    if die == 1:
        return "one"
    return "hit" if die >= difficulty else "miss"
