"""Template tags of the challenge regions: each takes the scene (and the player), so the
scene's own selectors need not know about challenges."""

from __future__ import annotations

from typing import Any

from django import template

from combat.challenges import selectors

register = template.Library()


@register.simple_tag
def challenge_prompts(scene: Any, player: Any) -> dict[str, Any]:
    """This player's challenge cards and start form (the phone's private part)."""
    if scene is None or player is None or not getattr(player, "is_authenticated", False):
        return {"cards": [], "starts": []}
    return selectors.player_cards(scene, player)


@register.simple_tag
def challenge_board(scene: Any) -> dict[str, Any]:
    """Every challenge of the scene as the storyteller's board shows it."""
    return selectors.board_cards(scene) if scene is not None else {"cards": []}


@register.simple_tag
def challenge_public(scene: Any) -> list[dict[str, Any]]:
    """The public line of each challenge (no bid, throw or total)."""
    return selectors.public_lines(scene) if scene is not None else []


@register.filter
def side_label(side: str) -> str:
    return {"attacker": "Attacker", "defender": "Defender"}.get(side, side)


@register.filter
def words(text: str) -> list[str]:
    return str(text).split()


@register.filter
def get_side(names: dict[str, str], side: str) -> str:
    return names.get(side, "")


HISTORY_SHOWN = 12  # lines of a challenge's history a card shows; the log keeps them all


@register.filter
def history_tail(history: list[dict[str, Any]]) -> dict[str, Any]:
    """The last lines of a challenge's history and how many earlier ones are not shown, so
    what a phone receives stays bounded however long the challenge runs."""
    history = history or []
    return {"lines": history[-HISTORY_SHOWN:], "earlier": max(len(history) - HISTORY_SHOWN, 0)}
