"""What the screens show of a met_bns fight (B4-B11): the order of action and who acts now,
the tablet's and each player's prompts. Reads only; a hidden NPC is left out for the phones
(no row, no "now", no gap in the order)."""

from __future__ import annotations

from typing import Any

from combat.challenges import sheets
from combat.models import Combat, Participant
from combat.rounds import bns_reads, tokens
from combat.rounds.sheets import stats_for
from combat.rules import bns_round as bns


def bns_view(combat: Combat, members: dict[int, Participant], *, public: bool) -> dict[str, Any]:
    state = bns_reads.engine_of(combat)
    visible = {w for w in (str(pid) for pid in members) if not (public and members[int(w)].hidden)}
    current, following = public_now_next(state, visible)
    rows = []
    for index, who in enumerate(state.order):
        if who not in visible:
            continue
        f = state.fighter(who)
        rows.append(
            {
                "p": members[int(who)],
                "initiative": f.initiative,
                "now": who == current,
                "done": f.done,
                "delaying": f.delaying,
                "prone": f.prone,
                "escape": f.escape.value.replace("_", " ") if f.escape else "",
                "used": " and ".join(bns_reads.ACTION_LABELS[a.value] for a in f.actions_used),
                "boosted": f.boosted,
                "index": index,
            }
        )
    nxt = members[int(following)] if following else None
    call = combat.work.get("escape_call")
    if call and call["who"] not in visible:
        call = None
    acting = state.surprise_by or current
    return {
        "kind": "met_bns",
        "combat": combat,
        "pool": test_pool(members[int(acting)]) if acting and not public else None,
        "bns": state,
        "phase": state.phase.value,
        "turn": state.turn,
        "round_label": state.round_label,
        "rows": rows,
        "now": members[int(current)] if current and current in visible else None,
        "next": nxt,
        "surprise": members[int(state.surprise_by)]
        if state.surprise_by and state.surprise_by in visible
        else None,
        "escape_call": {
            "who": members[int(call["who"])],
            "intents": [members[int(w)] for w in call["intents"] if w in visible],
        }
        if call
        else None,
        "token": tokens.state_token(combat, players=public),
        "paused": combat.paused,
        "actions": list(bns_reads.ACTION_LABELS.items()),
        # The soft timer of the action the round waits on (words only; the storyteller
        # decides, nothing is filled in): the tablet's alone, the phones' is on their prompt.
        "deadline": tokens.declare_deadline(combat) if state.current and not public else None,
    }


def public_now(state: Any, visible: set[str]) -> str | None:
    """Whose turn the order shows, over the ``visible`` characters only: the fight as it would
    run without the hidden NPCs. While a hidden NPC acts (its surprise action, its initiative
    or its stepping back in, B7, B8) the order already shows the first visible character after
    it who still acts this round, exactly what it would show if that NPC did not exist: no
    "the storyteller" of its own, no row left unlit, no gap."""
    current = state.current
    if current is None or current in visible:
        return current
    if state.surprise_by == current or (state.queue and state.queue[0] == current):
        start = state.cursor
    else:
        start = state.order.index(current) + 1 if current in state.order else state.cursor
    for who in state.order[start:]:
        f = state.fighter(who)
        if who in visible and not (f.done or f.out or f.delaying):
            return who
    return None


def public_now_next(state: Any, visible: set[str]) -> tuple[str | None, str | None]:
    """Now and next over the ``visible`` characters (:func:`public_now`); next is the first
    visible character after now who has not finished this round."""
    now = public_now(state, visible)
    if now not in state.order:
        return now, None
    for who in state.order[state.order.index(now) + 1 :]:
        if who in visible and not state.fighter(who).done:
            return now, who
    return now, None


def test_pool(participant: Participant) -> dict[str, Any]:
    """B1: what a challenge an action opens may be tested with, from the sheet."""
    sheet = sheets.load(participant)
    return {
        "attributes": sorted(sheet.attributes()),
        "abilities": sorted(sheet.abilities().items()),
        "weapons": sheet.weapons(),
    }


def bns_prompts(
    combat: Combat,
    members: dict[int, Participant],
    own: list[Participant],
    *,
    storyteller: bool = False,
) -> dict:
    """B5, B6, B8, B9: what each of ``own`` may do now (a player's phone), or, with
    ``storyteller``, what the tablet may do for the NPCs (hidden ones included)."""
    state = bns_reads.engine_of(combat)
    stats = stats_for(own)
    call = combat.work.get("escape_call")
    mine = []
    in_round = state.phase in (bns.Phase.ORDER_OF_ACTION, bns.Phase.CELERITY_ROUNDS)
    for p in own:
        who = str(p.pk)
        item: dict[str, Any] = {"p": p, "celerity_cap": bns_reads.celerity_cap(stats[p.pk])}
        item["celerity"] = int(combat.haste.get(who, 0))
        item["celerity_choices"] = range(item["celerity_cap"] + 1)
        if in_round and any(f.name == who for f in state.fighters):
            f = state.fighter(who)
            item["act_now"] = not f.out and not f.delaying and bns_reads.may_act_now(state, who)
            item["surprise"] = state.surprise_by == who
            item["may_escape"] = (
                item["act_now"] and not f.begun and not item["surprise"] and not call
            )
            item["delaying"] = f.delaying and not f.out
            item["escape"] = f.escape.value.replace("_", " ") if f.escape else ""
            item["prone"] = f.prone
            # While a hidden NPC acts, the order shows the next visible character as now
            # (public_now): that one, and the one after it, are told they are next.
            seen = {w for w in state.order if storyteller or not members[int(w)].hidden}
            now, following = public_now_next(state, seen | {who})
            item["next"] = not item["act_now"] and not f.done and who in (now, following)
            item["intend"] = (
                members[int(call["who"])]
                if call
                and (storyteller or not members[int(call["who"])].hidden)  # B9: tablet only
                and bns_reads.may_intend(state, who, call["who"])
                and who not in call["intents"]
                else None
            )
            item["targets"] = [
                members[int(w.name)]
                for w in state.fighters
                if w.name != who and not w.out and (storyteller or not members[int(w.name)].hidden)
            ]
            if item["act_now"]:
                item["pool"] = test_pool(p)
        mine.append(item)
    return {
        "kind": "met_bns",
        "combat": combat,
        "mine": mine,
        "token": tokens.state_token(combat, players=not storyteller),
        "paused": combat.paused,
        "actions": list(bns_reads.ACTION_LABELS.items()),
        "phase": state.phase.value,
        # The soft timer of the action the round waits on, shown to who may act now.
        "deadline": tokens.declare_deadline(combat, players=not storyteller) if in_round else None,
    }
