"""The storyteller's roster: everyone in the fight with their health, and whom it waits on.

The tablet's people panel shows, beside each participant in a running fight, an open
challenge or a running chase, the health track as the sheet draws it (each level's boxes,
worst damage first, D2) and what the fight waits on them for (initiative, a declaration, an
answer, a throw, a Celerity action, an action on their initiative, a maneuver). The
storyteller's alone: hidden NPCs are in it by name; no player's page reads it. Read once
per change's renderings (:mod:`combat.render_cache`): the sheets, the running fight and the
scene's challenges are the ones every other region of the change reads.
"""

from __future__ import annotations

from typing import Any

from characters.models import HEALTH_TRACKS
from characters.selectors import filled_track
from chases import waiting as chase_waits
from combat.challenges import waiting as challenge_waits
from combat.models import Participant, Scene
from combat.render_cache import health_now
from combat.rounds import selectors as rounds
from combat.rounds import waiting as round_waits


def _quick_health(scene: Scene, damage: int) -> dict[str, Any]:
    """A quick NPC has no sheet: its ruleset's track, with the fight's damage untyped."""
    track = HEALTH_TRACKS["wod_dice" if scene.ruleset == "wod_dice" else "met"]
    return filled_track(track, {"": damage})


def fight_rows(scene: Scene, participants: list[Participant]) -> dict[int, dict[str, Any]]:
    """For each participant in the fight (the running round's members, the open challenges'
    sides and mobs, the running chase's sides), by participant id: ``health`` (the sheet's
    ``damage`` and ``health``) and ``waiting`` (what the fight waits on them for, or "").

    A step of an open challenge (an answer, a throw) comes before what the round waits on
    them for (a MET round's next Celerity action is taken by a challenge, C15)."""
    combat = rounds.running(scene)
    in_fight = set(combat.members) if combat is not None else set()
    in_fight |= challenge_waits.fighting(scene)
    in_fight |= chase_waits.chasing(scene)
    fighters = [p for p in participants if p.pk in in_fight]
    if not fighters:
        return {}
    waiting = {
        **chase_waits.waiting_on(scene),
        **round_waits.waiting_on(scene),
        **challenge_waits.waiting_on(scene),
    }
    npc_damage = {**chase_waits.npc_damage(scene)}
    if combat is not None:
        npc_damage.update(combat.npc_damage or {})
    # their health alone: no whole sheet copied for it (render_cache.health_now)
    sheets = health_now(p.character_id for p in fighters if p.character_id)
    out: dict[int, dict[str, Any]] = {}
    for p in fighters:
        found = sheets.get(p.character_id) if p.character_id else None
        if found is not None:
            health = {"damage": found["damage"], "health": found["health"]}
        else:
            health = _quick_health(scene, int(npc_damage.get(str(p.pk), 0)))
        out[p.pk] = {"health": health, "waiting": waiting.get(p.pk, "")}
    return out
