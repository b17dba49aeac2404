"""What the features' regions of a scene's screens read (:mod:`combat.regions`).

Imported once the apps are loaded (``combat.apps``): it reads the features' selectors, which
the scene's own selectors never import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from chases import selectors as chases
from combat import regions
from combat.challenges import reads as challenge_reads
from combat.challenges import selectors as challenges
from combat.models import Scene
from combat.rounds import selectors as rounds


def _chase_board(scene: Scene, context: Mapping[str, Any]) -> Any:
    """The chase's start form lists the board's ``rows`` of participants, when it has them."""
    return chases.board_state(scene, [row["participant"] for row in context.get("rows", [])])


def _rows_of(context: Mapping[str, Any]) -> tuple[tuple[int, str], ...]:
    """What of the board's rows the chase's start form shows (its id is made of them)."""
    return tuple(
        (row["participant"].pk, row["participant"].name) for row in context.get("rows", [])
    )


def _mine(read: Callable[[Scene, Any], Any]) -> regions.Reader:
    """A private read: an anonymous or missing player has nothing to read."""

    def private(scene: Scene, context: Mapping[str, Any]) -> Any:
        player = context.get("player")
        return read(scene, player) if getattr(player, "is_authenticated", False) else None

    return private


def connect() -> None:
    """Register every feature region's read."""
    board, public, private = "board", "public", "private"
    regions.provide(
        "challenge_board", board, lambda s, c: challenges.board_cards(s), region="challenges"
    )
    regions.provide("round_board", board, lambda s, c: rounds.board(s), region="combat")
    regions.provide("chase_board", board, _chase_board, region="chase", key=_rows_of)
    regions.provide("challenge_public", public, lambda s, c: challenges.public_lines(s))
    regions.provide("round_public", public, lambda s, c: rounds.public(s))
    regions.provide("chase_public", public, lambda s, c: chases.chase_state(s, public=True))
    regions.provide("challenge_prompts", private, _mine(challenges.player_cards))
    regions.provide("round_prompts", private, lambda s, c: rounds.prompts(s, c.get("player")))
    regions.provide("chase_prompts", private, lambda s, c: chases.prompts_state(s, c.get("player")))
    regions.flag(challenge_reads.CHALLENGE_FLAG, challenge_reads.any_challenge)
    # without a running fight the region is its start form (names); a chase's region shows
    # pools while one runs, and its last one's ending after
    regions.flag(rounds.FIGHT_FLAG, rounds.running_fights, sheets_shown_in="combat")
    regions.flag(chases.CHASE_FLAG, chases.any_chase, sheets_shown_in="chase")
