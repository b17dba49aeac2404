"""Reads of a MET fight's row (C15, C16): its Celerity round and what the tablet and the phones
show of it. No writes."""

from __future__ import annotations

from combat.models import Combat, Participant
from combat.rules.celerity import CelerityRound

MET_RULESETS = ("met_classic", "met_werewolf")


def celerity_of(combat: Combat) -> CelerityRound:
    data = combat.state.get("celerity") or {}
    return CelerityRound(
        levels=tuple(tuple(x) for x in data.get("levels", ())),
        targets=tuple(tuple(x) for x in data.get("targets", ())),
        announced=tuple(tuple(x) for x in data.get("announced", ())),
        taken=tuple(tuple(x) for x in data.get("taken", ())),
    )


def met_view(combat: Combat, members: dict[int, Participant], *, public: bool) -> dict:
    """C15 order and C16 mob for the tablet (everything) or the phones (no hidden NPC)."""
    celerity = celerity_of(combat)
    shown = {str(pid) for pid, p in members.items() if not (public and p.hidden)}
    normal = [str(pid) for pid in combat.members if str(pid) in shown]
    taken = set(celerity.taken)
    slots = [
        {
            "p": members[int(s.who)],
            "action": s.action,
            "taken": (s.who, s.action) in taken,
        }
        for s in celerity.order(normal)
        if s.who in shown and (s.action != "normal" or celerity.announced)
    ]
    mob = combat.state.get("mob")
    if mob and (public and not all(x in shown for x in (mob["victim"], *mob["attackers"]))):
        mob = None
    return {
        "kind": "met",
        "combat": combat,
        "round": combat.round_number,
        "slots": slots,
        "blood": {members[int(w)].name: b for w, b in celerity.blood_spent().items() if w in shown},
        "mob": {
            "victim": members[int(mob["victim"])],
            "attackers": [members[int(a)] for a in mob["attackers"]],
            "primary": members[int(mob["primary"])],
            "penalty": len(mob["attackers"]) - 1,
        }
        if mob
        else None,
        "members": [members[pid] for pid in combat.members if str(pid) in shown],
    }
