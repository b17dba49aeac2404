"""What the storyteller's roster says of a scene's running chase: who is in it, and whom it
waits on for what (a winner's maneuver, K7 and K8; Nope! or Damnit! before a set obstacle's
rolls, K9). The rolls of a round, setting an obstacle and rolling it are the storyteller's:
nobody is waited on for them.

For the storyteller's tablet only (hidden NPCs included, by their own names); a player's page
never reads it.
"""

from __future__ import annotations

from chases import rules
from chases.models import Chase, Phase, Role, Side
from chases.selectors import engine, offer_on_obstacle, running_chase
from combat.models import Scene

# What the storyteller's roster says a chaser is waited on for (the tablet, at a glance).
TO_MANEUVER_PREY = "to choose a maneuver (K7)"
TO_MANEUVER_PREDATOR = "to choose a maneuver (K8)"
TO_FACE = "to pass or face {obstacle} (K7, K8, K9)"


def _sides_of(chase: Chase, key: str) -> list[Side]:
    """The sides an engine key names: ``prey`` is the whole fleeing group (K1), any other
    key one Predator."""
    sides = list(chase.sides.all())
    if key == rules.PREY:
        return [s for s in sides if s.role == Role.PREY]
    return [s for s in sides if s.role == Role.PREDATOR and s.key == key]


def chasing(scene: Scene) -> set[int]:
    """Everyone in the scene's running chase (the Prey's group and every Predator)."""
    chase = running_chase(scene)
    return {s.participant_id for s in chase.sides.all()} if chase is not None else set()


def waiting_on(scene: Scene) -> dict[int, str]:
    """Who the scene's running chase waits on, by participant id, and for what: each winner
    of the round just rolled still to choose a maneuver (K6: the Prey's whole group, K7; a
    Predator, K8), each side facing a set obstacle that may still pass it (Nope!, Damnit!)
    and has not chosen (K9)."""
    chase = running_chase(scene)
    if chase is None:
        return {}
    out: dict[int, str] = {}
    if chase.phase == Phase.MANEUVER:
        for m in chase.pending.get("maneuvers", []):
            prey = m.get("role") == Role.PREY
            key = rules.PREY if prey else m.get("pursuit", "")
            what = TO_MANEUVER_PREY if prey else TO_MANEUVER_PREDATOR
            for side in _sides_of(chase, key):
                out.setdefault(side.participant_id, what)
    elif chase.phase == Phase.OBSTACLE:
        pending = chase.pending.get("obstacle") or {}
        if pending.get("set"):
            what = TO_FACE.format(obstacle=pending.get("label") or "the obstacle")
            chosen = pending.get("choices", {})
            state = engine(chase)
            for key in pending.get("facing", []):
                if key not in chosen and offer_on_obstacle(chase, state, key) is not None:
                    for side in _sides_of(chase, key):
                        out.setdefault(side.participant_id, what)
    return out


def npc_damage(scene: Scene) -> dict[str, int]:
    """K11: the damage quick NPCs took in the running chase, by participant id."""
    chase = running_chase(scene)
    return dict(chase.npc_damage or {}) if chase is not None else {}
