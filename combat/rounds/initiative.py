"""D3, D4: initiative (rolled on the server or typed in), the storyteller rolling what is missing,
and the Main Phase opening once every initiative is in (haste carried over, D4).
"""

from __future__ import annotations

import random

from django.contrib.auth.models import AbstractBaseUser

from combat.models import Combat, CombatStage, Participant, Scene
from combat.rounds.errors import MISSING_INITIATIVE, WRONG_STAGE, RoundError, refusal_of
from combat.rounds.fight import (
    record_round,
    round_step,
    take,
)
from combat.rounds.reads import (
    away,
    combatant,
    combatants,
    fight_members,
    haste_map,
    is_visible,
    kept_work,
    who_of,
)
from combat.rounds.sheets import Stats, stats_for
from combat.rules.errors import RuleError
from combat.rules.wod_round import WodRound

INITIATIVE_STEP = round_step("round.initiative")


def combat_initiative(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    roll: int | None = None,
    rng: random.Random | None = None,
    key: str | None = None,
) -> Combat:
    """D3: d10 + Wits + Dexterity − wound penalty; the die from the server or typed in by the
    player (or the storyteller). A character's initiative is rolled once a round."""
    payload = {"c": combat.pk, "p": participant.pk, "r": roll}

    def rules(scene: Scene, combat: Combat) -> None:
        if combat.stage != CombatStage.INITIATIVE:
            raise RoundError(WRONG_STAGE.format(stage=combat.get_stage_display()))
        who = who_of(participant)
        if who in combat.initiative:
            raise RoundError(f"{participant.name} has rolled initiative this round (D3).")
        typed = roll is not None
        if typed and not 1 <= int(roll) <= 10:
            raise RoundError("An initiative die shows 1 to 10 (D3).")
        die = int(roll) if typed else (rng or random.SystemRandom()).randint(1, 10)
        stats = stats_for([participant])[participant.pk]
        if not stats.can_act:
            raise RoundError(f"{participant.name} is Incapacitated and cannot act (D2).")
        entry = {
            "roll": die,
            "typed": typed,
            "wits": stats.dot("Wits"),
            "dexterity": stats.dot("Dexterity"),
            "wound_penalty": stats.wound_penalty,
            "bonus": 0,
        }
        combat.initiative = {**combat.initiative, who: entry}
        total = combatant(who, entry).total
        text = f"{participant.name} initiative {total} (die {die}{', typed' if typed else ''})"
        record_round(
            scene,
            combat,
            by,
            text,
            public=is_visible(participant),
            concerns=[participant],
        )

    return take(INITIATIVE_STEP, combat, participant, by=by, key=key, payload=payload, rules=rules)


def combat_roll_missing(
    *, combat: Combat, by: AbstractBaseUser, rng: random.Random | None = None
) -> Combat:
    """D3: the storyteller rolls initiative on the server for everyone who has not."""
    rng = rng or random.SystemRandom()
    participants = fight_members(combat)
    stats = stats_for(participants.values())
    for pid in combat.members:
        fresh = Combat.objects.get(pk=combat.pk)
        if who_of(pid) in fresh.initiative or who_of(pid) in away(fresh) or not stats[pid].can_act:
            continue  # out of the fight, or Incapacitated (D2): no initiative to roll
        combat_initiative(combat=combat, by=by, participant=participants[pid], rng=rng)
    return Combat.objects.get(pk=combat.pk)


def _afford_haste(
    combat: Combat, participants: dict[int, Participant], stats: dict[int, Stats]
) -> list[str]:
    """D4: a Garou pays one Rage for each haste action; a choice carried over from an earlier
    round that its Rage no longer pays for is cut to what it pays for. The storyteller's
    notes on what was cut."""
    notes = []
    haste = dict(combat.haste)
    for who, n in haste_map(combat).items():
        st = stats.get(int(who))
        if st is not None and st.creature == "werewolf" and st.rage < n:
            haste[who] = max(st.rage, 0)
            notes.append(
                f"{participants[int(who)].name} has {st.rage} Rage for {n} haste actions:"
                f" {haste[who]} this round (D4)"
            )
    combat.haste = haste
    return notes


BEGIN_STEP = round_step("round.begin", storyteller=True)


def combat_begin_round(
    *, combat: Combat, by: AbstractBaseUser, at: str | None = None, key: str | None = None
) -> Combat:
    """D4: with every initiative in, the storyteller opens the Main Phase (declare low to
    high). Haste actions chosen last round carry over until their owner changes them."""

    def rules(scene: Scene, combat: Combat) -> None:
        if combat.stage != CombatStage.INITIATIVE:
            raise RoundError(WRONG_STAGE.format(stage=combat.get_stage_display()))
        participants = fight_members(combat)
        stats = stats_for(participants.values())
        out = away(combat)
        waiting = [
            pid
            for pid in combat.members
            if who_of(pid) not in combat.initiative
            and who_of(pid) not in out
            and pid in participants
        ]
        missing = [participants[pid].name for pid in waiting if stats[pid].can_act]
        if missing:
            raise RoundError(MISSING_INITIATIVE.format(names=", ".join(missing)))
        # D2: an Incapacitated character rolls no initiative and acts in no phase.
        unable = [participants[pid] for pid in waiting if not stats[pid].can_act]
        lost = [
            g["victim"]
            for g in combat.grapples
            if g.get("released_from_pin") and g["victim"] in combat.initiative
        ]
        cut = _afford_haste(combat, participants, stats)
        try:
            state = WodRound.start(combatants(combat), haste_map(combat), lost_main=lost)
        except RuleError as error:
            raise refusal_of(error) from error
        combat.grapples = [g for g in combat.grapples if not g.get("released_from_pin")]
        combat.state = state.to_dict()
        combat.stage = CombatStage.ROUND
        combat.work = {"phase_index": 0, **kept_work(combat.work)}
        text = f"Round {combat.round_number}: declare, slowest first"
        record_round(scene, combat, by, text, participants=participants)  # its members, read once
        if cut:
            record_round(scene, combat, by, "; ".join(cut), public=False, participants=participants)
        if unable:
            names = ", ".join(p.name for p in unable)
            record_round(
                scene,
                combat,
                by,
                f"Not in this round: {names} (Incapacitated, D2)",
                public=all(is_visible(p) for p in unable),
                concerns=unable,
            )

    return take(BEGIN_STEP, combat, by=by, key=key, seen=at, rules=rules)
