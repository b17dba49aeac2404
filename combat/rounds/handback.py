"""D9, K1: a chase that started from an escape defense hands a catch back to its round.

The chases app sends ``chases.signals.chase_ended(sender, chase, outcome, origin)``; a chase
that began in a round carries ``origin={"round_id": <combat id>}``. A caught Prey is back in
that fight: the storyteller is reminded at Book Keeping and the log says so (to the
storyteller alone when a member of the Prey is a hidden NPC, whose name never reaches a
player).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from combat.models import Combat, LogKind
from combat.services import SceneError, lock_open_scene, record_change

CAUGHT = {"caught", "prey_caught"}


def chase_ended(
    sender: Any, chase: Any = None, outcome: Any = None, origin: Any = None, **_: Any
) -> None:
    """Hand a caught Prey back to the round the chase came from (nothing for other chases)."""
    round_id = (origin or {}).get("round_id") if isinstance(origin, dict) else None
    value = getattr(outcome, "value", outcome)
    if not round_id or str(value) not in CAUGHT:
        return
    combat = Combat.objects.filter(pk=round_id, ended_at__isnull=True).first()
    if combat is None:
        return
    group = getattr(chase, "prey", None)
    prey = getattr(group, "name", None) or "The Prey"
    # A line naming a hidden NPC is the storyteller's alone (as the round's own lines are).
    public = not any(getattr(p, "hidden", False) for p in getattr(group, "participants", ()))
    with transaction.atomic():
        try:
            scene = lock_open_scene(combat.scene)
        except SceneError:
            return
        combat = Combat.objects.select_for_update().get(pk=combat.pk)
        note = f"{prey} was caught in the chase: back in the fight (K1, D9)"
        combat.reminders = [*combat.reminders, {"who": "", "text": note}]
        combat.save(update_fields=["reminders"])
        record_change(scene, by=None, kind=LogKind.COMBAT, text=note, public=public)


def connect() -> None:
    """Listen to the chases' signal once the chases app provides it."""
    try:
        from chases import signals
    except ImportError:
        return
    signal = getattr(signals, "chase_ended", None)
    if signal is not None:
        signal.connect(chase_ended, dispatch_uid="combat.rounds.chase_ended")
