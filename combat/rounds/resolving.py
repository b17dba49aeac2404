"""D4, D7-D12: the storyteller resolves the action whose turn it is: the exchange, damage and
soak, Rage paid for haste (D4), a forced effect answering a third party's attack (G6, G7).
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from characters.models import LedgerKind
from characters.services import LedgerError, ledger_spend
from combat.models import Combat, CombatStage, Participant, Scene
from combat.rounds import wod
from combat.rounds.damage import roll_damage, roll_noted
from combat.rounds.errors import PAUSED, WRONG_STAGE, RoundError, refusal_of
from combat.rounds.fight import (
    add_result,
    record_round,
    reset_phase_work,
    round_step,
    take,
)
from combat.rounds.grapples import apply_effect, grapple_hold, replace_grapple, third_party
from combat.rounds.planning import grapple_from, plan_for
from combat.rounds.pursuit import require_no_pursuit, skip_away
from combat.rounds.reads import (
    combatants,
    describe,
    fight_members,
    haste_map,
    is_visible,
    who_of,
    wod_state,
)
from combat.rounds.sheets import Stats, stats_for
from combat.rules import exchange
from combat.rules.errors import RuleError
from combat.rules.grapple import (
    Effect,
    Grapple,
    hostage_block_lands,
)
from combat.rules.wod_initiative import round_phases
from combat.rules.wod_round import Step, WodRound

RESOLVE_STEP = round_step("round.resolve", storyteller=True)


def combat_resolve(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    attack_difficulty: int | None = None,
    defense_difficulty: int | None = None,
    attack_dice: str | None = None,
    defense_dice: str | None = None,
    damage_dice: str | None = None,
    soak_dice: str | None = None,
    effect: str = "",
    forced: str = "",
    forced_difficulty: int | None = None,
    forced_dice: str | None = None,
    rng: random.Random | None = None,
    at: str | None = None,
    key: str | None = None,
) -> Combat:
    """D4, D7-D12: the storyteller resolves the action whose turn it is on the tablet.

    ``forced``: when the attack is a third party's on a Grappler, the Grappler's answer (G6
    with G7): ``shrug_off`` or ``hostage_block``, paid in Control (its block roll at
    ``forced_difficulty``, or typed in as ``forced_dice``); empty, none.

    The pools come from the sheets (``resolution_preview``); the difficulties may be
    overridden; any roll may be typed in from real dice, the rest are rolled on the server.
    A landed attack rolls damage and the target soaks; the damage goes on the health track
    through the ledger. A surviving grapple starts a grapple (G1); a surviving escape waits
    on its attacker's choice to pursue (D9, K4: ``combat_pursue``), and the fight with it.
    """
    rng = rng or random.SystemRandom()

    def rules(scene: Scene, combat: Combat) -> None:
        if combat.paused:
            raise RoundError(PAUSED)
        if combat.stage != CombatStage.ROUND:
            raise RoundError(WRONG_STAGE.format(stage=combat.get_stage_display()))
        require_no_pursuit(combat)
        state = wod_state(combat)
        who = who_of(participant)
        if state.step is not Step.RESOLVE or who not in state.up:
            raise RoundError(f"It is not {participant.name}'s turn to resolve (D4).")
        mine = state.declaration(who)
        if mine is not None and mine.action == "pending":
            raise RoundError(
                f"{participant.name} aborted and has not named the new action: declare it for"
                " them or pass over them (D16)."
            )
        participants = fight_members(combat)
        stats = stats_for(participants.values())
        unpaid: list[str] = []
        if state.phase_index == 0 and not combat.work.get("rage_paid"):
            unpaid = _pay_rage(combat, by, participants, stats)
        if unpaid:
            later = round_phases(combatants(combat), haste_map(combat))[1:]
            state = replace(state, phases=(state.phases[0], *later))
            combat.state = state.to_dict()
            record_round(
                scene, combat, by, "; ".join(unpaid), public=False, participants=participants
            )
        plan = plan_for(combat, state, who, participants, stats)
        work = dict(combat.work)
        try:
            text, rolls, public, concerns = _carry_out(
                scene,
                combat,
                state,
                plan,
                participants,
                stats,
                work,
                by,
                rng,
                overrides={
                    "attack_difficulty": attack_difficulty,
                    "defense_difficulty": defense_difficulty,
                    "attack_dice": wod.parse_dice(attack_dice),
                    "defense_dice": wod.parse_dice(defense_dice),
                    "damage_dice": wod.parse_dice(damage_dice),
                    "soak_dice": wod.parse_dice(soak_dice),
                    "effect": effect,
                    "forced": forced,
                    "forced_difficulty": forced_difficulty,
                    "forced_dice": wod.parse_dice(forced_dice),
                },
            )
            state = wod_state(combat)  # a break-up (G5) negated actions meanwhile
            if plan["part"] < plan["parts"] and plan["kind"] != "negated":
                work["parts"] = {**work.get("parts", {}), who: plan["part"]}  # D14: next one
            else:
                state = state.resolve(who)
        except RuleError as error:
            raise refusal_of(error) from error
        combat.work = work
        combat.state = state.to_dict()
        add_result(combat, text, rolls, public=public)
        reset_phase_work(combat, state)
        record_round(
            scene,
            combat,
            by,
            text,
            public=public,
            concerns=concerns,
            # the round reaching Book Keeping is seen by everyone, whoever resolved last
            players=None if combat.stage == CombatStage.ROUND else True,
            participants=participants,
        )
        skip_away(scene, combat, by, participants)

    payload = {
        "p": participant.pk,
        "o": [attack_difficulty, defense_difficulty, attack_dice, defense_dice, damage_dice],
        "x": [soak_dice, effect, forced, forced_difficulty, forced_dice],
    }
    return take(
        RESOLVE_STEP, combat, participant, by=by, key=key, payload=payload, seen=at, rules=rules
    )


def _pay_rage(
    combat: Combat,
    by: AbstractBaseUser,
    participants: dict[int, Participant],
    stats: dict[int, Stats],
) -> list[str]:
    """D4: a Garou pays one Rage for each haste action announced with its declaration (none
    for one passed over). Returns the storyteller's notes on haste it could not pay for."""
    cut: list[str] = []
    notes: list[str] = []
    for who, n in haste_map(combat).items():
        st = stats[int(who)]
        if n and st.creature == "werewolf" and st.character is not None:
            try:
                ledger_spend(
                    character=st.character,
                    kind=LedgerKind.RAGE_SPENT,
                    by=by,
                    amount=n,
                    reason=f"{n} haste action(s), round {combat.round_number} (D4)",
                    source=f"combat {combat.pk}",
                )
            except LedgerError as error:
                # Rage spent since the round began: no haste this round, nothing charged.
                cut.append(who)
                notes.append(
                    f"{participants[int(who)].name} cannot pay {n} Rage for haste ({error}):"
                    " no haste actions this round (D4)"
                )
    combat.work = {
        **combat.work,
        "rage_paid": True,
        "no_haste": [*combat.work.get("no_haste", []), *cut],
    }
    return notes


def _carry_out(
    scene: Scene,
    combat: Combat,
    state: WodRound,
    plan: dict[str, Any],
    participants: dict[int, Participant],
    stats: dict[int, Stats],
    work: dict,
    by: AbstractBaseUser,
    rng: random.Random,
    overrides: dict[str, Any],
) -> tuple[str, list[dict], bool, list[Participant]]:
    who = plan["who"]
    me = participants[int(who)]
    kind = plan["kind"]
    mine = plan["declaration"]
    if kind in ("release", "pin") and plan.get("grapple"):
        g = plan["grapple"]
        grapple = grapple_from(g)
        victim = participants[int(g["victim"])]
        if kind == "pin":
            return f"{me.name} holds {victim.name} pinned (G5)", [], is_visible(me), [me, victim]
        replace_grapple(combat, g, grapple.release())
        return f"{me.name} releases {victim.name} (G5)", [], is_visible(me), [me, victim]
    if kind in ("nothing", "spent", "negated", "defense_only", "guard", "victim", "release"):
        label = {
            "victim": "rolls on the Grappler's resolution (G3)",
            "spent": "already met in an exchange",
            "negated": "negated: the grapple was broken up (G5)",
            "guard": "guards: no one attacked, nothing happens (D6)",
        }.get(kind)
        if label is None:
            label = describe(mine, participants) if mine else "nothing"
        return f"{me.name}: {label}", [], is_visible(me), [me]
    if kind in ("assist", "break_up"):
        return third_party(combat, state, plan, participants, rng, overrides)
    if kind == "grapple_hold":
        return grapple_hold(combat, plan, participants, stats, work, by, rng, overrides)
    target = participants[int(plan["target"])]
    attack = plan["attack"]
    a_diff = overrides["attack_difficulty"] or attack["difficulty"]
    rolls: list[dict] = []
    a_label = f"{wod.ACTION_LABELS[mine.action]} ({attack['parts']})"
    typed = overrides["attack_dice"]
    a_roll = roll_noted(rolls, a_label, attack["dice"], a_diff, rng, typed=typed, who=me.name)
    public = is_visible(me) and is_visible(target)
    attacks_on = dict(work.get("attacks_on", {}))
    attacks_on[plan["target"]] = attacks_on.get(plan["target"], 0) + 1
    work["attacks_on"] = attacks_on
    if not is_visible(me):
        unseen = dict(work.get("attacks_on_unseen", {}))
        unseen[plan["target"]] = unseen.get(plan["target"], 0) + 1
        work["attacks_on_unseen"] = unseen
    if overrides.get("forced"):
        return _forced(
            combat, plan, me, target, a_roll, rolls, public, participants, stats, by, rng, overrides
        )
    defense_action = plan.get("defense_action")
    d_successes = 0
    if defense_action and plan.get("defense"):
        if defense_action == "escape" and "escape_rolled" in plan:
            d_successes = plan["escape_rolled"]  # D13: one escape roll for every attacker
        else:
            d = plan["defense"]
            d_diff = overrides["defense_difficulty"] or d["difficulty"]
            label = {"counter": "Attack back", "guard": "Guard"}.get(
                defense_action, wod.ACTION_LABELS.get(defense_action, defense_action)
            )
            d_label = f"{label} ({d['parts']})"
            typed = overrides["defense_dice"]
            d_roll = roll_noted(
                rolls, d_label, d["dice"], d_diff, rng, typed=typed, who=target.name
            )
            d_successes = d_roll.successes
            if defense_action == "escape":
                work["escape"] = {**work.get("escape", {}), plan["target"]: d_successes}
        if defense_action == "counter":
            work["spent"] = [*work.get("spent", []), plan["target"]]
        if defense_action == "guard":
            work["guard_used"] = [*work.get("guard_used", []), plan["target"]]
    a_action = exchange.Action.GRAPPLE if mine.action == "grapple" else exchange.Action.ATTACK
    d_map = {
        "counter": exchange.Action.ATTACK,
        "guard": exchange.Action.GUARD,
        "block": exchange.Action.BLOCK,
        "dodge": exchange.Action.DODGE,
        "escape": exchange.Action.ESCAPE,
        "grapple_defense": exchange.Action.BLOCK,
    }
    theirs = state.declaration(plan["target"])
    if defense_action == "counter" and theirs is not None and theirs.action == "grapple":
        d_map["counter"] = exchange.Action.GRAPPLE
    d_action = d_map.get(defense_action or "", exchange.Action.BLOCK)
    if mine.action == "grapple" and defense_action == "grapple_defense":
        d_action = exchange.Action.GRAPPLE  # D10: a grapple defense meets as a grapple
    my_weapon = wod.weapon_for(stats[int(who)], plan.get("weapon"))
    outcome = exchange.resolve(
        exchange.Move(a_action, a_roll.successes, maneuver=exchange.Maneuver(mine.maneuver)),
        exchange.Move(d_action, d_successes if defense_action else 0),
    )
    concerns = [me, target]
    head = f"{me.name} → {target.name}"
    if outcome.grappler:
        grappler = who if outcome.grappler == "attacker" else plan["target"]
        victim = plan["target"] if grappler == who else who
        g = Grapple.held(
            grappler=grappler,
            victim=victim,
            control=outcome.control,
            strength={k: stats[int(k)].dot("Strength") for k in (grappler, victim)},
        )
        combat.grapples = [*combat.grapples, {**g.to_dict(), "round": combat.round_number}]
        holder, held = participants[int(grappler)].name, participants[int(victim)].name
        text = f"{head}: {holder} grapples {held}, Control {outcome.control} (D10, G1)"
        if overrides["effect"]:
            text += apply_effect(
                combat,
                grappler,
                overrides["effect"],
                participants,
                stats,
                by,
                rng,
                rolls,
                single=True,
            )
        return text, rolls, public, concerns
    if outcome.chase_head_start is not None:
        # K4: the chase happens only if the attacker elects to pursue; the storyteller asks
        # (the attacker's player at the table) and taps Pursue or Let go (combat_pursue).
        text = f"{head}: {target.name} escapes with {outcome.chase_head_start} to spare (D9)"
        offer = {
            "predator": who,
            "prey": plan["target"],
            "head_start": outcome.chase_head_start,
            "round": combat.round_number,
        }
        work["pursuits"] = [*work.get("pursuits", []), offer]
        return f"{text}; does {me.name} pursue? (K4)", rolls, public, concerns
    if outcome.lands is None:
        return (
            f"{head}: nothing lands ({a_roll.successes} against {d_successes})",
            rolls,
            public,
            concerns,
        )
    if outcome.lands == "attacker":
        hitter, hit, weapon, maneuver = me, target, my_weapon, mine.maneuver
    else:
        hitter, hit = target, me
        weapon = wod.weapon_for(stats[int(plan["target"])], plan.get("counter_weapon"))
        maneuver = theirs.maneuver if theirs else "basic"
    base, dtype = wod.damage_dice(stats[hitter.pk], weapon)
    pool = exchange.damage_pool(
        exchange.Move(exchange.Action.ATTACK, 0, damage=base, maneuver=exchange.Maneuver(maneuver)),
        outcome.net,
    )
    taken = roll_damage(combat, hitter, hit, pool, dtype, stats, by, rng, overrides, rolls)
    text = f"{head}: {hitter.name} hits {hit.name} ({outcome.net} net), {taken} {dtype}"
    return text, rolls, public, concerns


def _forced(
    combat: Combat,
    plan: dict[str, Any],
    me: Participant,
    target: Participant,
    a_roll: Any,
    rolls: list[dict],
    public: bool,
    participants: dict[int, Participant],
    stats: dict[int, Stats],
    by: AbstractBaseUser,
    rng: random.Random,
    overrides: dict[str, Any],
) -> tuple[str, list[dict], bool, list[Participant]]:
    """G6 with G7: the Grappler answers a third party's attack with a forced effect. It pays
    the cost in Control (even to 0, which frees the Victim once the attack is over) and rolls
    its block pool. Shrug Off: a defense against the attack (D8). Hostage Block: an attack the
    block fully negates lands on the Victim with its base damage (the damage pool with no
    extra success, D11); otherwise on the Grappler with the successes left."""
    if "forced" not in plan:
        raise RuleError("G6", f"{target.name} holds no one against this attack: no forced effect.")
    try:
        effect = Effect(overrides["forced"])
    except ValueError as error:
        raise RuleError("G6", "A forced effect is Shrug Off or Hostage Block.") from error
    if not effect.forced:
        raise RuleError("G6", "A forced effect is Shrug Off or Hostage Block.")
    g = plan["grapple"]
    grapple = grapple_from(g).effect(effect)
    pool = plan["forced_pool"]
    label = effect.value.replace("_", " ").title()
    b_label = f"{label} ({pool['parts']})"
    b_diff = overrides["forced_difficulty"] or pool["difficulty"]
    typed = overrides["forced_dice"]
    b_roll = roll_noted(rolls, b_label, pool["dice"], b_diff, rng, typed=typed, who=target.name)
    victim = participants[int(g["victim"])]
    concerns = [me, target, victim]
    public = public and is_visible(victim)
    head = f"{me.name} → {target.name}: {target.name} answers with {label}"
    head += f" (G6, −{effect.cost} Control)"
    a, b = a_roll.successes, b_roll.successes
    replace_grapple(combat, g, grapple)
    if effect is Effect.SHRUG_OFF:
        hit, net = (target, a - b) if a > b else (None, 0)
    elif a == 0:
        hit, net = None, 0
    else:
        lands = hostage_block_lands(grapple_from(g), attack=a, block=b)
        hit = victim if lands.on == g["victim"] else target
        net = lands.successes
    if grapple.over is not None:
        head += f"; Control 0: {victim.name} breaks free (G5)"
    if hit is None:
        return f"{head}: nothing lands ({a} against {b})", rolls, public, concerns
    my_weapon = wod.weapon_for(stats[me.pk], plan.get("weapon"))
    base, dtype = wod.damage_dice(stats[me.pk], my_weapon)
    mine = plan["declaration"]
    pool_size = exchange.damage_pool(
        exchange.Move(
            exchange.Action.ATTACK, 0, damage=base, maneuver=exchange.Maneuver(mine.maneuver)
        ),
        net,
    )
    taken = roll_damage(combat, me, hit, pool_size, dtype, stats, by, rng, overrides, rolls)
    shield = " (the hostage takes the base damage)" if hit is victim else ""
    return (
        f"{head}: {me.name} hits {hit.name}{shield} ({net} net), {taken} {dtype}",
        rolls,
        public,
        concerns,
    )
