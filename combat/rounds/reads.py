"""Reads of a fight's row (no writes, no locks): its members, where they are (out, away in a
chase), their initiative and haste, the declarations as people read them. The selectors and the
round steps share them.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from combat import steps
from combat.models import Combat, Participant, Scene
from combat.render_cache import cached, known
from combat.rounds import wod
from combat.rules.wod_initiative import Combatant
from combat.rules.wod_round import Declaration, Step, WodRound
from config.prepared import Prepared


def fight_members(combat: Combat) -> dict[int, Participant]:
    """The fight's members by id: read once for all the renderings of a change (the board,
    the public part, each player's prompts, :mod:`combat.render_cache`), every time for a
    step."""

    def read() -> dict[int, Participant]:
        # the scene's participants, when this change's renderings read them already (in the
        # same order as the query's): every member still in the scene is there
        held = known(("participants", combat.scene_id))
        members = set(combat.members)
        if held is not None:
            found = {p.pk: p for p in held if p.pk in members}
            if len(found) == len(members):
                return found
        if not combat.members:
            return {}
        return {p.pk: p for p in _MEMBERS.run(list(combat.members))}

    return cached(("fight_members", combat.pk, tuple(combat.members)), read)


def _members(pks: list[int]) -> QuerySet[Participant]:
    return Participant.objects.filter(pk__in=pks).select_related("character", "character__player")


# by how many: its SQL compiled once
_MEMBERS: Prepared[Participant] = Prepared(_members, model=Participant)


def player_ids_of(participants: dict[int, Participant]) -> list[int]:
    return [p.character.player_id for p in participants.values() if p.character_id]


def wod_state(combat: Combat) -> WodRound:
    return WodRound.from_dict(combat.state)


def who_of(participant: Participant | int) -> str:
    return str(participant if isinstance(participant, int) else participant.pk)


def is_visible(participant: Participant) -> bool:
    return not participant.hidden


#: Kept in ``combat.work`` from phase to phase and round to round: the members taken out of
#: the fight (``out``), those away in a chase that came from it (``chase``, D9, K4) and the
#: surviving escapes waiting on the attacker's choice to pursue (``pursuits``, K4).
# the tokens (``move_tokens``) go on too, so an old one never comes back
KEPT = ("out", "chase", "pursuits", "where", "token", "players_token", "players_at")


def kept_work(work: dict | None) -> dict[str, Any]:
    return {k: work[k] for k in KEPT if k in (work or {})}


def out_of(combat: Combat) -> list[str]:
    """Members the storyteller took out of the fight (they roll no initiative, act in no
    round) until brought back in."""
    return list((combat.work or {}).get("out", []))


def chasing(combat: Combat) -> list[str]:
    """D9, K4: members away in a chase that came from this fight (Prey and Predators), who
    have no turn in it while the chase runs."""
    return list((combat.work or {}).get("chase", []))


def away(combat: Combat) -> set[str]:
    """Members with no part in the fight's next rounds: out of it, or away in its chase."""
    return set(out_of(combat)) | set(chasing(combat))


def pursuits_waiting(combat: Combat) -> list[dict[str, Any]]:
    """K4: surviving escapes whose attacker has not chosen yet to pursue or let go."""
    return list((combat.work or {}).get("pursuits", []))


def combatant(who: str, entry: dict) -> Combatant:
    return Combatant(
        name=who,
        roll=entry["roll"],
        wits=entry["wits"],
        dexterity=entry["dexterity"],
        wound_penalty=entry["wound_penalty"],
        bonus=entry.get("bonus", 0),
    )


def combatants(combat: Combat) -> list[Combatant]:
    out = away(combat)
    return [
        combatant(who, entry) for who, entry in sorted(combat.initiative.items()) if who not in out
    ]


def haste_map(combat: Combat) -> dict[str, int]:
    """D4: the haste actions of this round: the ones announced (carried over until changed),
    but none for a character passed over in the Main Phase (``work["no_haste"]``)."""
    none = set((combat.work or {}).get("no_haste", []))
    return {
        who: n
        for who, n in combat.haste.items()
        if who in combat.initiative and n > 0 and who not in none and who not in away(combat)
    }


def tied(state: WodRound) -> set[str]:
    """D3: characters tied on initiative, who declare privately to the storyteller."""
    tied: set[str] = set()
    for slot in state.phase.declare:
        if isinstance(slot, frozenset):
            tied |= set(slot)
    return tied


def editable(state: WodRound, who: str) -> bool:
    """A declaration can be changed until the next character declares; the last one of the
    phase is being resolved as soon as it is made (the fastest resolves first), so no longer."""
    mine = state.declaration(who)
    if mine is None or state.resolved or (mine.action in ("pending", "none") and mine.aborted):
        return False
    return state.declarations[-1].who == who and state.step is Step.DECLARE


def early_declaration(early: dict[str, Any], who: str) -> Declaration:
    shown = early["shown"]
    return Declaration(**{**shown, "who": who, "extra": tuple(tuple(x) for x in shown["extra"])})


def describe(d: Declaration, participants: dict[int, Participant], *, haste: int = 0) -> str:
    """A declaration as a line people read."""
    text = wod.ACTION_LABELS.get(d.action, d.action)
    if d.maneuver != "basic":
        text = f"{d.maneuver} {text.lower()}"
    if d.target:
        target = participants.get(int(d.target))
        text += f" on {target.name if target else '?'}"
    for action, on in d.extra:
        text += f", + {wod.ACTION_LABELS.get(action, action).lower()}"
        if on:
            target = participants.get(int(on))
            text += f" on {target.name if target else '?'}"
    if d.actions > 1:
        text += f" (split in {d.actions})"
    if haste:
        text += f", {haste} haste"
    return text


def running_combat(scene: Scene, *, lock: bool = False) -> Combat | None:
    """The scene's running fight. ``lock``: a post's read, in its transaction after the
    scene's, is its step's lock (:func:`combat.steps.hold`)."""
    found = _RUNNING.first(scene.pk, lock=lock)
    return steps.hold(found) if lock else found


def _running(scene_id: int, *, lock: bool) -> QuerySet[Combat]:
    found = Combat.objects.filter(scene_id=scene_id, ended_at__isnull=True)
    if lock:
        found = found.select_for_update()
    return (found if found.ordered else found.order_by("pk"))[:1]  # as ``first()`` reads


_RUNNING: Prepared[Combat] = Prepared(_running, model=Combat)  # its SQL compiled once
