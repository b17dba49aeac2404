"""G2-G7: a grapple held on the Grappler's resolution, a third party helping or pulling it apart,
and the effects paid in Control.
"""

from __future__ import annotations

import random
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from combat.models import Combat, Participant
from combat.rounds.damage import roll_damage, roll_noted
from combat.rounds.planning import grapple_from, grapple_of
from combat.rounds.reads import is_visible, who_of, wod_state
from combat.rounds.sheets import Stats
from combat.rules.errors import RuleError
from combat.rules.grapple import (
    Effect,
    Grapple,
    Intent,
    Over,
    single_effect,
)
from combat.rules.wod_round import WodRound


def grapple_hold(
    combat: Combat,
    plan: dict[str, Any],
    participants: dict[int, Participant],
    stats: dict[int, Stats],
    work: dict,
    by: AbstractBaseUser,
    rng: random.Random,
    overrides: dict[str, Any],
) -> tuple[str, list[dict], bool, list[Participant]]:
    """G2, G3: on the Grappler's resolution both roll grapple pools; the Victim resists or
    reverses as it declared (a relent pins it, G5)."""
    g = plan["grapple"]
    state = wod_state(combat)
    grappler, victim = participants[int(g["grappler"])], participants[int(g["victim"])]
    theirs = state.declaration(g["victim"])
    grapple = grapple_from(g)
    rolls: list[dict] = []
    public = is_visible(grappler) and is_visible(victim)
    if theirs is not None and theirs.action == "relent":
        grapple = grapple.relent()
        replace_grapple(combat, g, grapple)
        return (
            f"{victim.name} relents: pinned by {grappler.name} (G5)",
            rolls,
            public,
            [grappler, victim],
        )
    a = plan["attack"]
    d = plan["defense"]
    a_roll = roll_noted(
        rolls,
        f"Grapple ({a['parts']})",
        a["dice"],
        overrides["attack_difficulty"] or a["difficulty"],
        rng,
        typed=overrides["attack_dice"],
        who=grappler.name,
    )
    d_roll = roll_noted(
        rolls,
        f"Grapple ({d['parts']})",
        d["dice"],
        overrides["defense_difficulty"] or d["difficulty"],
        rng,
        typed=overrides["defense_dice"],
        who=victim.name,
    )
    intent = Intent.REVERSE if theirs is not None and theirs.action == "reverse" else Intent.RESIST
    grapple = grapple.roll(grappler=a_roll.successes, victim=d_roll.successes, intent=intent)
    text = (
        f"Grapple: {grappler.name} {a_roll.successes} against {victim.name}"
        f" {d_roll.successes}, Control {grapple.control}"
    )
    replace_grapple(combat, g, grapple)
    if overrides["effect"] and grapple.over is None:
        text += apply_effect(
            combat, who_of(grappler), overrides["effect"], participants, stats, by, rng, rolls
        )
    if grapple.over is not None:
        text += f" — over: {grapple.over.value} (G5)"
    work["spent"] = [*work.get("spent", []), g["victim"]]
    return text, rolls, public, [grappler, victim]


def third_party(
    combat: Combat,
    state: WodRound,
    plan: dict[str, Any],
    participants: dict[int, Participant],
    rng: random.Random,
    overrides: dict[str, Any],
) -> tuple[str, list[dict], bool, list[Participant]]:
    """G7: a helper's successes move Control (1 per 2); G5: pulling the grapple apart before
    either side has acted negates both their actions this phase."""
    me = participants[int(plan["who"])]
    g = plan.get("grapple")
    if g is None:
        return f"{me.name}: the grapple is over, nothing to do", [], is_visible(me), [me]
    grappler, victim = participants[int(g["grappler"])], participants[int(g["victim"])]
    public = all(is_visible(x) for x in (me, grappler, victim))
    concerns = [me, grappler, victim]
    grapple = grapple_from(g)
    if plan["kind"] == "break_up":
        if g["grappler"] in state.resolved or g["victim"] in state.resolved:
            raise RuleError("G5", "Too late: one side of the grapple has already acted.")
        replace_grapple(combat, g, grapple.break_up())
        combat.state = state.negate(
            *[w for w in (g["grappler"], g["victim"]) if state.declaration(w) is not None]
        ).to_dict()
        text = f"{me.name} pulls {grappler.name} and {victim.name} apart (G5)"
        return text, [], public, concerns
    side = "grappler" if plan["target"] == g["grappler"] else "victim"
    a = plan["attack"]
    rolls: list[dict] = []
    a_roll = roll_noted(
        rolls,
        f"Help ({a['parts']})",
        a["dice"],
        overrides["attack_difficulty"] or a["difficulty"],
        rng,
        typed=overrides["attack_dice"],
        who=me.name,
    )
    grapple = grapple.assist(side=side, successes=a_roll.successes)
    replace_grapple(combat, g, grapple)
    helped = grappler if side == "grappler" else victim
    text = f"{me.name} helps {helped.name}: Control {grapple.control} (G7)"
    if grapple.over is not None:
        text += f" — {victim.name} breaks free (G5)"
    return text, rolls, public, concerns


def replace_grapple(combat: Combat, old: dict, new: Grapple) -> None:
    """Keep a grapple that holds (or pins, or owes a lost action, G5); drop one that ended."""
    kept = [x for x in combat.grapples if x != old]
    keep = new.over in (None, Over.PINNED) or new.released_from_pin
    data = {**new.to_dict(), "round": old.get("round", combat.round_number)}
    combat.grapples = [*kept, data] if keep else kept


def apply_effect(
    combat: Combat,
    grappler: str,
    name: str,
    participants: dict[int, Participant],
    stats: dict[int, Stats],
    by: AbstractBaseUser,
    rng: random.Random,
    rolls: list[dict],
    *,
    single: bool = False,
) -> str:
    """G6 (G8 when ``single``): one effect paid in Control; Slam, Clinch and Crack roll
    damage the Victim soaks."""
    g = grapple_of(combat, grappler)
    if g is None:
        raise RuleError("G6", "No grapple to use an effect in.")
    grapple = grapple_from(g)
    try:
        effect = Effect(name)
    except ValueError as error:
        raise RuleError("G6", f"Unknown grapple effect {name!r}.") from error
    label = effect.value.replace("_", " ")
    try:
        grapple = single_effect(grapple, effect) if single else grapple.effect(effect)
    except RuleError as error:
        # The effect was chosen before the roll; a result that allows none (the Victim won,
        # too little Control) skips it: the roll stands (no rolling again for a better one).
        return f"; no {label}: {error}"
    text = f"; {label} (G6)"
    if single:
        text += ": a single-effect grapple, all its Control spent, so the grapple ends (G8)"
    if grapple.last_damage is not None:
        victim = participants[int(grapple.victim)]
        hitter = participants[int(grapple.grappler)]
        overrides = {"damage_dice": None, "soak_dice": None}
        taken = roll_damage(
            combat,
            hitter,
            victim,
            grapple.last_damage.pool,
            grapple.last_damage.type,
            stats,
            by,
            rng,
            overrides,
            rolls,
        )
        text += f", {taken} {grapple.last_damage.type}"
    replace_grapple(combat, g, grapple)
    return text
