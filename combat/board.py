"""The storyteller's board: its people panel (everyone, hidden NPCs too, with presence and,
for those in the fight, health and what the fight waits on them for) and the whole board.

Apart from :mod:`combat.selectors` because the people panel reads the features' fights
(:mod:`combat.roster`), whose selectors read the scene's."""

from __future__ import annotations

from typing import Any

from combat import regions
from combat.models import Scene
from combat.roster import fight_rows
from combat.selectors import active_participants, clock_state, connected_user_ids, log_state


def people_state(scene: Scene) -> dict[str, Any]:
    """The board's people panel: everyone (hidden NPCs too) with presence; those in the fight
    with their health and what the fight waits on them for (:mod:`combat.roster`)."""
    connected = connected_user_ids(scene)
    participants = active_participants(scene)
    fight = fight_rows(scene, participants)
    rows = [
        {
            "participant": p,
            "connected": p.player_id in connected if p.player_id else None,
            "fight": fight.get(p.pk),
        }
        for p in participants
    ]
    return {
        **clock_state(scene),
        "rows": rows,
        "waiting_on": [r for r in rows if r["fight"] and r["fight"]["waiting"]],
        "players_connected": sum(1 for r in rows if r["connected"]),
        "players_total": sum(1 for r in rows if r["connected"] is not None),
    }


def board_state(scene: Scene) -> dict[str, Any]:
    """The storyteller's board: everyone (hidden NPCs too) with presence, clock, the log, and
    what the features' regions show."""
    context = {**people_state(scene), **log_state(scene)}
    return {**context, **regions.read(scene, "board", context)}
