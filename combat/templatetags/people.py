"""``{% person_row %}…{% endperson_row %}``: a row of the board's people panel rendered once
per what it shows, not on every change of the scene.

The people panel is pushed with every challenge step (it says whom the challenges wait on),
and a shared scene's holds every pair: each change re-rendered every row (with its health
track, box by box) though one or two changed. A row's html is a function of what it shows:
the participant as the row reads it (pk, name, hidden, NPC, a quick NPC's pools, the player's
name), whether its player is connected, its place in the fight (its health, what the fight
waits on it for: plain data, keyed by its ``repr``), the scene (its pk: the form's URL; open
or closed: the form), and whether its form carries a CSRF token (kept with a mark in the
token's place, each request's put in: :func:`combat.templatetags.finished_cards.render_kept`).
It is kept in a small process-local LRU under exactly these.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from django import template
from django.utils.safestring import SafeString

from combat.challenges.finished import Memo
from combat.templatetags.finished_cards import kept_block

register = template.Library()

SIZE = 4096  # rows (about 1 KB each)
_memo: Memo[SafeString] = Memo(SIZE)
stats = _memo.stats


def clear() -> None:
    """Forget every kept row, and the kept lists of them (combat.templatetags.board_kept)."""
    from combat.templatetags import board_kept

    _memo.clear()
    board_kept.clear()


def row_key(context: template.Context) -> Hashable | None:
    """What a people panel row's html is a function of (see the module), or None."""
    row, scene = context.get("row"), context.get("scene")
    p = row.get("participant") if isinstance(row, dict) else None
    if p is None or scene is None:
        return None
    return (
        p.pk,
        p.name,
        p.hidden,
        # an NPC: its quick pools (a repr, None never); a player's character: its player
        repr(p.quick_pools) if p.npc else None,
        None if p.npc else _player_name(p),
        row.get("connected"),
        repr(row.get("fight")),
        scene.pk,
        scene.is_open,
        bool(context.get("csrf_token")),  # with the mark in the token's place
    )


def _player_name(p: Any) -> tuple[str, str] | None:
    """The player's names as the row shows them (``get_full_name|default:username``)."""
    player = getattr(p.character, "player", None) if p.character_id else None
    return None if player is None else (player.get_full_name(), player.username)


kept_block(register, "person_row", row_key, _memo)
