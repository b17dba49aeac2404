"""D9, K1, K4: a chase that started from an escape defense hands its people back to its fight.

The chases app sends ``chases.signals.chase_ended(sender, chase, outcome, origin)``; a chase
that began in a round carries ``origin={"round_id": <combat id>}``. While it ran, its Prey and
Predators were away in the chase (``combat.work["chase"]``: no turn in the fight). On its end:

- caught (K10), or the Prey out at an obstacle (K9): Prey and Predators are back in the fight;
- escaped (K10), or the last Predator out at an obstacle (K9): the Prey has left the fight
  (taken out, the storyteller may bring it back), the Predators are back in it;
- both out at an obstacle (K9) or called off: everyone is back in the fight, and the
  storyteller takes out by hand whoever is not there (**decision**).

Each is said in words in the log, one line a character; a line naming a hidden NPC is the
storyteller's alone. A caught Prey is also a reminder read at Book Keeping.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from chases import signals
from combat.models import Combat, LogKind
from combat.rounds.reads import fight_members, player_ids_of
from combat.services import SceneError, lock_open_scene, record_change

CAUGHT = {"caught", "prey_caught"}
#: The Prey got away from every Predator: it has left the fight (K9, K10).
GOT_AWAY = {"escaped", "predator_out"}


def _sides(chase: Any) -> tuple[list[Any], list[Any]]:
    """The chase's Prey members and Predators (participants)."""
    sides = getattr(chase, "sides", None)
    if sides is None:  # a bare stand-in naming only its Prey
        group = getattr(chase, "prey", None)
        prey = getattr(group, "participants", None)
        return (list(prey) if prey is not None else [group] if group else []), []
    rows = list(sides.select_related("participant"))
    prey = [s.participant for s in rows if s.role == "prey"]
    return prey, [s.participant for s in rows if s.role != "prey"]


def chase_ended(
    sender: Any, chase: Any = None, outcome: Any = None, origin: Any = None, **_: Any
) -> None:
    """Bring the chase's people back into the fight it came from, or not (D9, K1, K4)."""
    round_id = (origin or {}).get("round_id") if isinstance(origin, dict) else None
    value = str(getattr(outcome, "value", outcome))
    if not round_id:
        return
    combat = Combat.objects.filter(pk=round_id, ended_at__isnull=True).first()
    if combat is None:
        return
    prey, predators = _sides(chase)
    with transaction.atomic():
        try:
            scene = lock_open_scene(combat.scene)
        except SceneError:
            return
        combat = Combat.objects.select_for_update().get(pk=combat.pk)
        work = dict(combat.work or {})
        ids = {str(p.pk) for p in (*prey, *predators) if getattr(p, "pk", None)}
        work["chase"] = [w for w in work.get("chase", []) if w not in ids]
        lines: list[tuple[Any, str]] = []
        left = value in GOT_AWAY
        for p in prey:
            if left:
                work["out"] = [*(w for w in work.get("out", []) if w != str(p.pk)), str(p.pk)]
                lines.append((p, f"{p.name} got away in the chase and has left the fight (K10)"))
            elif value in CAUGHT:
                lines.append((p, f"{p.name} was caught in the chase: back in the fight (K1, D9)"))
            else:
                lines.append((p, f"{p.name} is back in the fight: the chase is over (K9)"))
        for p in predators:
            lines.append((p, f"{p.name} is back in the fight from the chase (K1)"))
        combat.work = work
        if value in CAUGHT:
            note = f"{getattr(chase.prey, 'name', '') or 'The Prey'} was caught in the chase:"
            combat.reminders = [*combat.reminders, {"who": "", "text": f"{note} back in the fight"}]
        combat.save(update_fields=["work", "reminders"])
        players = player_ids_of(fight_members(combat))
        for p, text in lines:
            record_change(
                scene,
                by=None,
                kind=LogKind.COMBAT,
                text=text,
                public=not getattr(p, "hidden", False),
                data={"combat": combat.pk, "round": combat.round_number},
                private_user_ids=players,
                regions=("combat",),
            )


def connect() -> None:
    """Listen to the chases' signal (called from the combat app's ``ready``)."""
    signals.chase_ended.connect(chase_ended, dispatch_uid="combat.rounds.chase_ended")
