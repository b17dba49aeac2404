"""What a resolution rolls before it is rolled (D5-D15, G2-G7): the pools and difficulties the
rules give for the action whose turn it is, which the storyteller may override; the grapple a
character is in and the effects its Grappler can afford. Reads only.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from combat.models import Combat, Participant
from combat.rounds import wod
from combat.rounds.reads import fight_members, wod_state
from combat.rounds.sheets import Stats, stats_for
from combat.rules.grapple import (
    Effect,
    Grapple,
)
from combat.rules.wod_round import Declaration, WodRound


def resolution_preview(combat: Combat, who: str) -> dict[str, Any]:
    """What the tablet shows before the storyteller rolls ``who``'s action: the pools and
    difficulties the rules give (D5, D6, D13-D15), which the storyteller may override."""
    state = wod_state(combat)
    participants = fight_members(combat)
    stats = stats_for(participants.values())
    return plan_for(combat, state, who, participants, stats)


def resolving_parts(declaration: Declaration | None) -> list[Declaration]:
    """D14: what a character's resolution rolls, one part at a time: the main action, then
    each attack split off it (a main action that rolls nothing is left out when attacks
    follow). A defense split off is no part: it answers the attacks on the character."""
    if declaration is None:
        return [None]
    attacks = [
        replace(declaration, action=action, target=target, maneuver="basic", extra=())
        for action, target in declaration.extra
        if action == "attack"
    ]
    quiet = declaration.action in (*wod.DEFENSE_ACTIONS, "none", "move", "other")
    return attacks if attacks and quiet else [declaration, *attacks]


def next_part(combat: Combat, state: WodRound, who: str) -> tuple[int, int, Declaration | None]:
    """Which part of ``who``'s resolution comes next: (index, how many, the part)."""
    parts = resolving_parts(state.declaration(who))
    index = min(combat.work.get("parts", {}).get(who, 0), len(parts) - 1)
    return index, len(parts), parts[index]


def plan_for(
    combat: Combat,
    state: WodRound,
    who: str,
    participants: dict[int, Participant],
    stats: dict[int, Stats],
) -> dict[str, Any]:
    index, count, mine = next_part(combat, state, who)
    work = combat.work
    me = stats[int(who)]
    detail = work.get("detail", {}).get(who, {})
    plan: dict[str, Any] = {
        "who": who,
        "kind": "nothing",
        "declaration": mine,
        "part": index + 1,
        "parts": count,
    }
    if mine is None or mine.action in ("none", "move", "other", "pending"):
        return plan
    if who in work.get("spent", []) and index == 0:
        return {**plan, "kind": "spent"}
    if who in state.negated:
        return {**plan, "kind": "negated"}
    grapple = grapple_of(combat, who)
    if mine.action in wod.VICTIM_ACTIONS:
        return {**plan, "kind": "victim"}
    if mine.action in wod.THIRD_PARTY_ACTIONS:
        held = grapple_of(combat, mine.target or "")
        plan.update(kind=mine.action, target=mine.target, grapple=held)
        if mine.action == "assist" and held is not None:
            plan["attack"] = wod.action_pool(me, "grapple").as_dict()  # G7: the same pool
        return plan
    if mine.action == "release":
        return {**plan, "kind": "release", "grapple": grapple}
    holding = index == 0 and grapple is not None and grapple["grappler"] == who
    if holding and grapple.get("over") == "pinned":
        return {**plan, "kind": "pin", "grapple": grapple}
    if holding:
        victim = grapple["victim"]
        vstats = stats[int(victim)]
        split_pen = -state.split_penalty(who, max(me.dot("Wits"), 1))
        # G7 with D14: a Victim that split its pool to block rolls its grapple pool split too.
        vsplit = 0
        if state.declaration(victim) is not None:
            vsplit = -state.split_penalty(victim, max(vstats.dot("Wits"), 1))
        return {
            **plan,
            "kind": "grapple_hold",
            "target": victim,
            "attack": wod.action_pool(me, "grapple", penalty=split_pen).as_dict(),
            "defense": wod.action_pool(vstats, "grapple", penalty=vsplit).as_dict(),
            "grapple": grapple,
        }
    if mine.action not in ("attack", "grapple"):
        return {**plan, "kind": "defense_only" if mine.action != "guard" else "guard"}
    target = mine.target
    tstats = stats[int(target)]
    theirs = state.declaration(target)
    # D8, D13: in a haste phase a target that declares nothing now keeps its Main Phase
    # defense (the action itself was resolved: no counter, no guard from it).
    carried = theirs is None and state.phase_index > 0
    if carried:
        theirs = state.standing(target)
    weapon = wod.weapon_for(me, detail.get("weapon"))
    split_pen = -state.split_penalty(who, max(me.dot("Wits"), 1))
    attack = wod.action_pool(
        me, mine.action, weapon=weapon.name, maneuver=mine.maneuver, penalty=split_pen
    )
    attack = replace(attack, difficulty=min(10, attack.difficulty))
    plan.update(kind="attack", target=target, weapon=weapon.name, attack=attack.as_dict())
    harder = state.difficulty_modifier(target)
    attack_number = work.get("attacks_on", {}).get(target, 0) + 1
    # D8 counts a hidden NPC's attack too; a line players read counts only the ones they saw
    seen_number = attack_number - work.get("attacks_on_unseen", {}).get(target, 0)
    theirs_detail = work.get("detail", {}).get(target, {})
    defense_action = None
    if (
        theirs is not None
        and not carried
        and target not in state.resolved
        and target not in work.get("spent", [])
    ):
        if (
            theirs.action in ("attack", "grapple")
            and theirs.target == who
            and weapon.pool != "firearms"
        ):
            defense_action = "counter"  # D7: attack against attack
        elif theirs.action == "guard" and target not in work.get("guard_used", []):
            defense_action = "guard"
        elif theirs.action in wod.DEFENSE_ACTIONS:
            defense_action = theirs.action
        elif theirs.split_defense():
            defense_action = theirs.split_defense()
    elif (
        theirs is not None
        and theirs.action in wod.DEFENSE_ACTIONS
        and target not in work.get("spent", [])
    ):
        defense_action = theirs.action  # a defense holds all round (D8, D13)
    if defense_action is None and theirs is not None and theirs.split_defense():
        defense_action = theirs.split_defense()  # D14: the defense split off holds all round
    held = grapple_of(combat, target)
    if held and held["victim"] == target and held["grappler"] != who:
        # G7: a grappled Victim defends against a third party only by blocking.
        defense_action = defense_action if defense_action == "block" else None
    if (
        held
        and held["grappler"] == target
        and held.get("over") is None
        and who != held["victim"]
        and mine.action == "attack"
    ):
        # G6 with G7: the Grappler may answer a third party's attack with a forced effect,
        # paid in Control even past what it has: a defense roll (Shrug Off) or the Victim
        # held up as a shield (Hostage Block). Either rolls the Grappler's block pool (D6).
        tpen = -state.split_penalty(target, max(tstats.dot("Wits"), 1)) if theirs else 0
        forced = wod.action_pool(tstats, "block", against=weapon, penalty=tpen)
        plan["forced"] = [(e.value, e.cost) for e in (Effect.SHRUG_OFF, Effect.HOSTAGE_BLOCK)]
        plan["forced_pool"] = replace(
            forced, difficulty=min(10, forced.difficulty + harder)
        ).as_dict()
        plan["grapple"] = held
    plan["defense_action"] = defense_action
    if defense_action is None:
        plan["defense"] = None
        return plan
    tsplit = 0
    if theirs is not None:
        tsplit = -state.split_penalty(target, max(tstats.dot("Wits"), 1))
    if defense_action in ("counter", "guard"):
        tweapon = wod.weapon_for(tstats, theirs_detail.get("weapon"))
        tact = "attack" if defense_action == "guard" else theirs.action
        pool = wod.action_pool(
            tstats, tact, weapon=tweapon.name, maneuver=theirs.maneuver, penalty=tsplit
        )
        plan["counter_weapon"] = tweapon.name
    else:
        pool = wod.action_pool(tstats, defense_action, against=weapon, penalty=tsplit)
        dice = state.defense_dice(target, pool.dice, attack_number)
        pool = replace(
            pool,
            dice=dice,
            parts=pool.parts + (f", attack {seen_number}" if seen_number > 1 else ""),
        )
    pool = replace(pool, difficulty=min(10, pool.difficulty + harder))
    plan["defense"] = pool.as_dict()
    if defense_action == "escape" and target in work.get("escape", {}):
        plan["escape_rolled"] = work["escape"][target]
    return plan


def grapple_of(combat: Combat, who: str) -> dict | None:
    """The grapple ``who`` is in (held, or a Pin held), if any (G1-G5)."""
    return next(
        (
            g
            for g in combat.grapples
            if who in (g["grappler"], g["victim"]) and g.get("over") in (None, "pinned")
        ),
        None,
    )


def grapple_from(data: dict) -> Grapple:
    return Grapple.from_dict({k: v for k, v in data.items() if k != "round"})


def grapple_effects(combat: Combat, who: str) -> list[tuple[str, int]]:
    """G6: the effects the Grappler can afford now (name, cost); Throw and Action are
    costed by Control and the storyteller."""
    g = grapple_of(combat, who)
    if g is None or g["grappler"] != who:
        return []
    out = []
    for effect in Effect:
        if effect.forced:
            continue
        cost = effect.cost if effect.cost is not None else g["control"]
        if effect is Effect.ACTION:
            continue
        if cost <= g["control"]:
            out.append((effect.value, cost))
    return out
