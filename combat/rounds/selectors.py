"""Reads of combat rounds: what the tablet, every phone and one player's prompts show.

Each audience gets only what the rules let it see: players never see a hidden NPC (not its
name, not its slot in the order, not a highlighted row), nor a tied character's declaration
before it resolves (D3), nor a result involving a hidden NPC. Declarations are otherwise
heard by everyone as they are made (D4: the faster declare knowing what the slower do; D16:
an abort answers a later-declared attack).
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import OuterRef, QuerySet

from combat import selectors as scene_selectors
from combat.models import Combat, CombatStage, Participant, Scene
from combat.offers import Offers
from combat.regions import says_none
from combat.render_cache import cached
from combat.rounds import met_reads, planning, reads, tokens, wod
from combat.rounds.bns_selectors import bns_prompts, bns_view
from combat.rounds.sheets import stats_for
from combat.rules.wod_round import Step, WodRound

DIRECTION = {"declare": "Declaring, slowest first ↑", "resolve": "Resolving, fastest first ↓"}


# The scene's row, as a change's renderings read it, says whether it has a running fight
# (combat.regions.flag): a scene without one reads none.
FIGHT_FLAG = "fight_running"


def running_fights() -> QuerySet[Combat]:
    """The running fight of the scene ``OuterRef("pk")`` (its flag's rows)."""
    return Combat.objects.filter(scene=OuterRef("pk"), ended_at__isnull=True)


def running(scene: Scene) -> Combat | None:
    """The scene's running combat (read once for all the renderings of a change; none when
    the scene's row says it has none)."""

    def read() -> Combat | None:
        if says_none(scene, FIGHT_FLAG):
            return None
        return Combat.objects.filter(scene=scene, ended_at__isnull=True).first()

    return cached(("running_combat", scene.pk), read)


def _members(combat: Combat) -> dict[int, Participant]:
    return reads.fight_members(combat)


def _order(state: WodRound) -> list[tuple[str, ...]]:
    slots = state.phase.declare if state.step is Step.DECLARE else state.phase.resolve
    return [tuple(sorted(s)) if isinstance(s, frozenset) else (s,) for s in slots]


def _initiative_rows(combat: Combat, members: dict[int, Participant]) -> list[dict]:
    rows = []
    for pid in combat.members:
        p = members.get(pid)
        if p is None:
            continue
        entry = combat.initiative.get(str(pid))
        total = reads.combatant(str(pid), entry).total if entry else None
        out = str(pid) in reads.out_of(combat)
        chasing = str(pid) in reads.chasing(combat)
        rows.append({"p": p, "entry": entry, "total": total, "out": out, "chasing": chasing})
    rows.sort(key=lambda r: (r["total"] is None, -(r["total"] or 0), r["p"].name))
    return rows


def _grapples(combat: Combat, members: dict[int, Participant], *, public: bool) -> list[dict]:
    results = [r for r in combat.results if r.get("public") or not public]
    out = []
    for g in combat.grapples:
        grappler, victim = members.get(int(g["grappler"])), members.get(int(g["victim"]))
        if grappler is None or victim is None:
            continue
        if public and (grappler.hidden or victim.hidden):
            continue
        control = max(int(g.get("control", 0)), 0)
        out.append(
            {
                "grappler": grappler,
                "victim": victim,
                "control": control,
                "boxes": range(min(control, 15)),
                "decayed": _decayed(g, control, grappler.name, results),
                "over": g.get("over"),
                "prone": g.get("victim_prone"),
                "effects": planning.grapple_effects(combat, g["grappler"]),
            }
        )
    return out


_CONTROL = re.compile(r"Control (\d+)")


def _decayed(g: dict[str, Any], control: int, grappler: str, results: list[dict]) -> int | None:
    """G4: the Control the last result about this grapple said, when book keeping has since
    taken its point off (the track would otherwise contradict the line beside it)."""
    if not g.get("control_decay", True) or g.get("over"):
        return None
    for result in reversed(results):
        text = result.get("text", "")
        said = _CONTROL.findall(text)
        if grappler in text and said:
            return int(said[-1]) if int(said[-1]) == control + 1 else None
    return None


def _base(combat: Combat, members: dict[int, Participant], *, public: bool) -> dict[str, Any]:
    ctx: dict[str, Any] = {
        "combat": combat,
        "stage": combat.stage,
        "round": combat.round_number,
        "paused": combat.paused,
        "token": tokens.state_token(combat, players=public),
        "grapples": _grapples(combat, members, public=public),
        "initiative": [
            r for r in _initiative_rows(combat, members) if not (public and r["p"].hidden)
        ],
    }
    results = combat.results if not public else [r for r in combat.results if r["public"]]
    ctx["results"] = list(reversed(results[-6:]))
    if combat.stage == CombatStage.ROUND and combat.state:
        state = WodRound.from_dict(combat.state)
        if public:
            state = as_players_see(state, members)
        ctx["state"] = state
        ctx["phase"] = state.phase.name
        ctx["direction"] = DIRECTION.get(state.step.value, "")
        ctx["step"] = state.step.value
    return ctx


def _rows(
    combat: Combat, state: WodRound, members: dict[int, Participant], *, public: bool
) -> list[dict]:
    """The order of the step under way, with each slot's state (done, now, later)."""
    ties = reads.tied(state)
    at = _now_index(state, members, public=public)
    rows = []
    for index, slot in enumerate(_order(state)):
        for who in slot:
            p = members.get(int(who))
            if p is None or (public and p.hidden):
                continue
            d = state.declaration(who)
            seen = d is not None and (
                not public
                or (
                    (who not in ties or who in state.resolved)
                    and d.action != "pending"
                    and not any(
                        members[int(t)].hidden for t in d.attack_targets() if int(t) in members
                    )
                )
            )
            done = d is not None if state.step is Step.DECLARE else who in state.resolved
            rows.append(
                {
                    "p": p,
                    "now": index == at and not done,
                    "done": done,
                    "tied": len(slot) > 1,
                    "declaration": reads.describe(d, members, haste=combat.haste.get(who, 0))
                    if seen and d
                    else ("declared" if d is not None else ""),
                    "resolved": who in state.resolved,
                }
            )
    return rows


def _now_index(state: WodRound, members: dict[int, Participant], *, public: bool) -> int:
    """The slot shown as "now". Players never see a hidden NPC's turn, not even as a pause
    with nobody highlighted: while one is up they see the next visible character as now."""
    order = _order(state)
    if not public:
        return state.cursor
    for index in range(state.cursor, len(order)):
        if any(not members[int(w)].hidden for w in order[index]):
            return index
    return len(order)


def as_players_see(state: WodRound, members: dict[int, Participant]) -> WodRound:
    """The round as the players see it: while only hidden NPCs are left to declare (or to
    resolve) in this step, it has moved on for them, as it would have without the hidden
    NPCs; never "Now: the storyteller" after every visible character has declared."""

    def seen(slot: tuple[str, ...]) -> bool:
        return any(not members[int(w)].hidden for w in slot if int(w) in members)

    while state.step in (Step.DECLARE, Step.RESOLVE) and not any(
        seen(slot) for slot in _order(state)[state.cursor :]
    ):
        state = state._advance(skip=False)
    return state


def _visible_slots(
    state: WodRound, members: dict[int, Participant]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The slots players see as now and next (hidden NPCs left out, their turns no gap)."""
    order = _order(state)
    at = _now_index(state, members, public=True)
    now = order[at] if at < len(order) else ()
    following = next((s for s in order[at + 1 :] if any(not members[int(w)].hidden for w in s)), ())
    return now, following


def _now_next(
    state: WodRound, members: dict[int, Participant], *, public: bool
) -> tuple[list[Participant], list[Participant]]:
    order = _order(state)
    at = _now_index(state, members, public=public)

    def shown(slot: tuple[str, ...]) -> list[Participant]:
        return [members[int(w)] for w in slot if not (public and members[int(w)].hidden)]

    now = shown(order[at]) if at < len(order) else []
    following: list[Participant] = []
    for slot in order[at + 1 :]:
        following = shown(slot)
        if following:
            break
    return now, following


def board(scene: Scene) -> dict[str, Any]:
    """The storyteller's view: everything, with the forms to run the round."""
    combat = running(scene)
    if combat is None:
        return Offers(
            combat=None,
            startable=scene.is_open,
            candidates=scene_selectors.active_participants(scene),
        )
    members = _members(combat)
    if combat.ruleset in met_reads.MET_RULESETS:
        return Offers(met_reads.met_view(combat, members, public=False))
    if combat.ruleset == "met_bns":
        ctx = Offers(bns_view(combat, members, public=False))
        ctx["members"] = [members[pid] for pid in combat.members if pid in members]
        npcs = [m for m in ctx["members"] if m.npc]
        # B5, B8, B9: the storyteller's forms for the NPCs, the same the phones have.
        ctx["npc_prompts"] = bns_prompts(combat, members, npcs, storyteller=True)["mine"]
        return ctx
    ctx = Offers(_base(combat, members, public=False))
    ctx["members"] = [members[pid] for pid in combat.members if pid in members]
    ctx["action_choices"] = [(a, wod.ACTION_LABELS[a]) for a in wod.ACTIONS]
    ctx["effects"] = combat.effects
    ctx["out"] = [members[int(w)] for w in reads.out_of(combat) if int(w) in members]
    ctx["reminders"] = combat.reminders
    ctx["work"] = Offers(combat.work or {})  # the book-keeping's notes, most absent
    # K4: surviving escapes waiting on the attacker's choice; D9: who is away in the chase.
    ctx["pursuits"] = [
        {
            "predator": members[int(o["predator"])],
            "prey": members[int(o["prey"])],
            "head_start": o["head_start"],
        }
        for o in reads.pursuits_waiting(combat)
        if int(o["predator"]) in members and int(o["prey"]) in members
    ]
    ctx["chasing"] = [members[int(w)] for w in reads.chasing(combat) if int(w) in members]
    ctx["npc_damage"] = {
        members[int(k)].name: v for k, v in combat.npc_damage.items() if int(k) in members
    }
    if "state" in ctx:
        state = ctx["state"]
        ctx["rows"] = _rows(combat, state, members, public=False)
        ctx["now"], ctx["next"] = _now_next(state, members, public=False)
        if state.step is Step.DECLARE:
            ctx["declare_deadline"] = tokens.declare_deadline(combat)
            stats = stats_for(ctx["now"])
            ctx["declaring"] = [
                {
                    "p": p,
                    "split": split_choices(
                        combat,
                        p,
                        [m for m in ctx["members"] if m.pk != p.pk],
                        stats[p.pk],
                        None,
                        victim=_victim(combat, p),
                    )
                    if state.phase_index == 0
                    else None,
                }
                for p in ctx["now"]
            ]
        if state.step is Step.RESOLVE:
            ctx["previews"] = [
                _preview(combat, state, who, members)
                for who in state.up
                if who not in state.resolved
            ]
        # D16: an abort whose new action has not come: declare it for them or pass over.
        ctx["pending"] = [
            members[int(d.who)]
            for d in state.declarations
            if d.action == "pending" and int(d.who) in members
        ]
        ctx["committed_waiting"] = [
            (members[int(d.who)], members[int(d.target)])
            for d in state.declarations
            if d.maneuver == "committed"
            and d.target
            and d.who not in state.resolved
            and not any(a == d.who and t == d.target for a, t, _x in state.answers)
        ]
    return ctx


def _victim(combat: Combat, p: Participant) -> bool:
    g = planning.grapple_of(combat, str(p.pk))
    return g is not None and g["grappler"] != str(p.pk)


def _preview(
    combat: Combat, state: WodRound, who: str, members: dict[int, Participant]
) -> dict[str, Any]:
    plan = planning.resolution_preview(combat, who)
    d = plan.get("declaration")
    return {
        "p": members[int(who)],
        "plan": Offers(plan),  # a dodge's plan has no attack
        "text": reads.describe(d, members) if d else "nothing declared",
        "target": members.get(int(plan["target"])) if plan.get("target") else None,
        "defense_label": _defense_label(state, plan),
        "effects": planning.grapple_effects(combat, who)
        if plan["kind"] in ("grapple_hold", "attack")
        else [],
        "grapple_start": plan.get("declaration") is not None
        and plan["declaration"].action == "grapple",
    }


def _defense_label(state: WodRound, plan: dict[str, Any]) -> str:
    """What the other side's roll in the preview is: G2, G3, a held Victim rolls the answer it
    declared (resist, reverse); else the defense it stands on (D6, D7), or none."""
    action = plan.get("defense_action") or ""
    if plan["kind"] == "grapple_hold":
        answer = state.standing(plan["target"])
        action = answer.action if answer is not None else ""
    return wod.ACTION_LABELS.get(action, "") or {
        "counter": "Attacks back (D7)",
        "guard": "Guard (D6)",
    }.get(action, "No defense")


def public(scene: Scene) -> dict[str, Any]:
    """What every player of the scene sees of the round."""
    combat = running(scene)
    if combat is None:
        return Offers(combat=None)
    members = _members(combat)
    if combat.ruleset in met_reads.MET_RULESETS:
        return Offers(met_reads.met_view(combat, members, public=True))
    if combat.ruleset == "met_bns":
        return Offers(bns_view(combat, members, public=True))
    ctx = Offers(_base(combat, members, public=True))
    if "state" in ctx:
        state = ctx["state"]
        ctx["rows"] = _rows(combat, state, members, public=True)
        ctx["now"], ctx["next"] = _now_next(state, members, public=True)
        ctx["waiting_on_storyteller"] = not ctx["now"]
    return ctx


def prompts(scene: Scene, player: AbstractBaseUser) -> dict[str, Any]:
    """One player's prompts: roll initiative, "Declare now", "You're next", changes, aborts,
    committed attacks to answer, reminders."""
    combat = running(scene)
    if combat is None or player is None:
        return Offers(combat=None, mine=[])
    members = _members(combat)
    own = [
        p
        for pid, p in members.items()
        if p.character_id and p.character.player_id == player.pk and pid in combat.members
    ]
    if not own:
        return Offers(combat=None, mine=[])
    if combat.ruleset in met_reads.MET_RULESETS:
        return Offers(_met_prompts(combat, members, own))
    if combat.ruleset == "met_bns":
        return Offers(bns_prompts(combat, members, own))
    state = (
        WodRound.from_dict(combat.state)
        if combat.stage == CombatStage.ROUND and combat.state
        else None
    )
    # The sheets are read only when a prompt needs them (the initiative's D2 check, a declare
    # form): most changes of a round change neither for most players.
    stats: dict[int, Any] = {}

    def stats_of(p: Participant) -> Any:
        if not stats:
            stats.update(stats_for(own))
        return stats[p.pk]

    if state is not None:
        # Now and next over the slots players see (a hidden NPC's turn is no gap): while
        # one is up, the next visible character is shown "now" everywhere, and may declare
        # ahead of its turn (held until the hidden ones have declared).
        now_slot, next_slot = _visible_slots(state, members)
        seen = as_players_see(state, members)
        seen_now = _visible_slots(seen, members)[0]
    mine = []
    for p in own:
        who = str(p.pk)
        item: dict[str, Any] = Offers(p=p)
        if combat.stage == CombatStage.INITIATIVE:
            # out of the fight (let go, taken out) or Incapacitated (D2): no initiative to roll
            item["away"] = who in reads.away(combat)
            item["incapacitated"] = not stats_of(p).can_act
            item["roll_initiative"] = (
                who not in combat.initiative and not item["away"] and not item["incapacitated"]
            )
            entry = combat.initiative.get(who)
            item["initiative"] = reads.combatant(who, entry).total if entry else None
        if state is not None:
            d = state.declaration(who)
            item["declaration"] = reads.describe(d, members) if d else ""
            pending = d is not None and d.action == "pending"
            item["pending"] = pending
            item["editable"] = d is not None and reads.editable(state, who) and not pending
            early = (combat.work or {}).get("early", {}).get(who)
            item["declare_now"] = pending or (
                state.step is Step.DECLARE and who in now_slot and d is None and not early
            )
            if early and d is None:
                item["declaration"] = reads.describe(reads.early_declaration(early, who), members)
                item["editable"] = True
            item["next"] = (
                state.step is Step.DECLARE and who in next_slot and d is None and not early
            )
            item["resolving"] = seen.step is Step.RESOLVE and who in seen_now
            item["may_abort"] = (
                d is not None and not pending and who not in state.resolved and d.action != "none"
            )
            item["later_attackers"] = [
                members[int(x.who)]
                for x in state.declarations
                if who in x.attack_targets()
                and d is not None
                and state.declarations.index(x) > state.declarations.index(d)
                and not members[int(x.who)].hidden
            ]
            # D5: a hidden attacker's committed attack is answered without its name.
            item["committed"] = [
                {"name": "An unseen attacker", "value": ""}
                if members[int(x.who)].hidden
                else {"name": members[int(x.who)].name, "value": x.who}
                for x in state.declarations
                if x.target == who
                and x.maneuver == "committed"
                and x.who not in state.resolved
                and not any(a == x.who and t == who for a, t, _y in state.answers)
            ]
            if item["declare_now"] or item["editable"]:
                item["form"] = _declare_choices(combat, state, p, members, stats_of(p))
        mine.append(item)
    return Offers(
        {
            "combat": combat,
            "mine": mine,
            "token": tokens.state_token(combat, players=True),
            "stage": combat.stage,
            "paused": combat.paused,
            "deadline": None if state is None else tokens.declare_deadline(combat, players=True),
        }
    )


def _declare_choices(
    combat: Combat,
    state: WodRound,
    p: Participant,
    members: dict[int, Participant],
    stats,
) -> dict[str, Any]:
    who = str(p.pk)
    g = planning.grapple_of(combat, who)
    if g is not None and g["grappler"] == who:
        actions = wod.GRAPPLER_ACTIONS
    elif g is not None:
        actions = wod.VICTIM_ACTIONS
    else:
        actions = tuple(
            a for a in wod.ACTIONS if a not in (*wod.GRAPPLER_ACTIONS, *wod.VICTIM_ACTIONS)
        )
    d = state.declaration(who)
    if d is not None and d.action == "pending" and d.abort_reason != "void":
        actions = tuple(a for a in actions if a in wod.DEFENSE_ACTIONS)  # D16
    away = reads.away(combat)  # out of the fight or in its chase: no target here
    targets = [
        members[pid]
        for pid in combat.members
        if pid != p.pk and pid in members and not members[pid].hidden and str(pid) not in away
    ]
    main = state.phase_index == 0 and state.step is Step.DECLARE
    current = d if d is not None and d.action != "pending" else None
    early = (combat.work or {}).get("early", {}).get(who)
    if current is None and early and d is None:
        current = reads.early_declaration(early, who)  # held until its turn (D4)
    may_split = state.phase_index == 0 and not (
        d is not None and d.action == "pending" and d.abort_reason != "void"
    )
    detail = combat.work.get("detail", {}).get(who, {})
    carried = [w.name for w in stats.weapons[1:]]  # after the bare hands every sheet has
    return {
        "actions": [(a, wod.ACTION_LABELS[a], " ".join(_NEEDS.get(a, ()))) for a in actions],
        "targets": targets,
        "weapons": [w.name for w in stats.weapons],
        # Issue 19, good defaults: what was declared, else the weapon the character carries
        "weapon": detail.get("weapon") or (carried[0] if carried else stats.weapons[0].name),
        "max_actions": max(stats.dot("Wits"), 1),
        "haste": combat.haste.get(who, 0) if main else None,
        # nothing declared: an empty Offers (falsy; the form's selects ask its fields)
        "current": current if current is not None else Offers(),
        "detail": detail,
        "split": split_choices(
            combat, p, targets, stats, current, victim=g is not None and g["grappler"] != who
        )
        if may_split
        else None,
    }


# What each action of the declare form needs besides itself (the phone shows only those,
# static/js/declare.js): a target (D5, G5, G7), a kind of attack (D5), a weapon (D6, D7).
_NEEDS: dict[str, tuple[str, ...]] = {
    "attack": ("target", "maneuver", "weapon"),
    "grapple": ("target", "maneuver"),
    "guard": ("weapon",),
    "assist": ("target",),
    "break_up": ("target",),
}


def split_choices(
    combat: Combat,
    p: Participant,
    targets: list[Participant],
    stats,
    current,
    *,
    victim: bool = False,
) -> dict[str, Any]:
    """D14: one select per further action a split may add (Wits - 1 of them), each offering
    a dodge, a block or an attack on someone (a grappled Victim only blocks, G7), with what
    was declared already selected. Haste actions are never split (no selects then)."""
    options = [("block", "+ block")]
    if not victim:
        options.insert(0, ("dodge", "+ dodge"))
        options += [(f"attack:{t.pk}", f"+ attack on {t.name}") for t in targets]
    chosen = [f"{a}:{t}" if t else a for a, t in (current.extra if current else ())]
    slots = max(stats.dot("Wits"), 1) - 1
    chosen = (chosen + [""] * slots)[:slots]
    return {"options": options, "slots": [(i, v) for i, v in enumerate(chosen)]}


# -- met_bns ---------------------------------------------------------------------------


def _met_prompts(combat: Combat, members: dict[int, Participant], own: list[Participant]) -> dict:
    """C15: a character with Celerity announces this round's level and follow-ups."""
    stats = stats_for(own)
    announced = {w for w, _f, _b in met_reads.celerity_of(combat).announced}
    mine = [
        {
            "p": p,
            "celerity": stats[p.pk].dot("Celerity"),
            "levels": range(stats[p.pk].dot("Celerity") + 1),
            "announced": str(p.pk) in announced,
        }
        for p in own
    ]
    return {"kind": "met", "combat": combat, "mine": mine}
