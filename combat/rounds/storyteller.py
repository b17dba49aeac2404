"""The storyteller's own round steps: take a member out of the fight or back in, pass over a
character who does not declare, pause and resume, note a timed effect (D17), end the fight.
"""

from __future__ import annotations

from dataclasses import replace

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from combat.models import Combat, CombatStage, Participant, Scene
from combat.rounds.declaring import apply_early
from combat.rounds.errors import WRONG_STAGE, RoundError, refusal_of
from combat.rounds.fight import (
    record_round,
    reset_phase_work,
    round_step,
    take,
)
from combat.rounds.pursuit import require_no_pursuit, skip_away
from combat.rounds.reads import (
    combatants,
    fight_members,
    haste_map,
    is_visible,
    out_of,
    who_of,
    wod_state,
)
from combat.rules.errors import RuleError
from combat.rules.wod_initiative import round_phases
from combat.rules.wod_round import Declaration, Step, TimedEffect

SET_OUT_STEP = round_step("round.set_out", storyteller=True)


def combat_set_out(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    out: bool,
    key: str | None = None,
) -> Combat:
    """The storyteller takes a member out of the fight (unconscious, fled, no longer in it)
    or brings it back in. It counts from the next round's initiative (D3); in a round under
    way the storyteller passes over it."""

    def rules(scene: Scene, combat: Combat) -> None:
        who = who_of(participant)
        kept = [w for w in out_of(combat) if w != who]
        combat.work = {**combat.work, "out": [*kept, who] if out else kept}
        if out and combat.stage == CombatStage.INITIATIVE:
            combat.initiative = {k: v for k, v in combat.initiative.items() if k != who}
        verb = "is out of the fight" if out else "is back in the fight"
        record_round(
            scene,
            combat,
            by,
            f"{participant.name} {verb}",
            public=is_visible(participant),
            concerns=[participant],
        )

    payload = {"p": participant.pk, "out": out}
    return take(SET_OUT_STEP, combat, participant, by=by, key=key, payload=payload, rules=rules)


SKIP_STEP = round_step("round.skip", storyteller=True)


def combat_skip(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    at: str | None = None,
    key: str | None = None,
) -> Combat:
    """The storyteller passes over a character who does not declare (no action this phase):
    a timeout never fills in an action by itself, the storyteller decides."""

    def rules(scene: Scene, combat: Combat) -> None:
        require_no_pursuit(combat)
        state = wod_state(combat)
        who = who_of(participant)
        mine = state.declaration(who)
        try:
            if state.step not in (Step.DECLARE, Step.RESOLVE):
                raise RoundError(WRONG_STAGE.format(stage="book keeping"))
            if mine is not None and mine.action == "pending":
                # D16: an abort whose new action never came: no action this phase.
                state = state.pass_over(who)
                if state.step is Step.RESOLVE and who in state.up:
                    state = state.resolve(who)
            elif state.step is Step.DECLARE:
                state = state.declare(Declaration(who=who, action="none"))
                if state.phase_index == 0 and combat.haste.get(who):
                    # D4: haste is announced with the declaration: none, no haste phases
                    # this round (and no Rage paid); the choice still carries over.
                    combat.work = {
                        **combat.work,
                        "no_haste": [*combat.work.get("no_haste", []), who],
                    }
                    later = round_phases(combatants(combat), haste_map(combat))[1:]
                    state = replace(state, phases=(state.phases[0], *later))
            else:
                state = state.resolve(who)
        except RuleError as error:
            raise refusal_of(error) from error
        combat.state = state.to_dict()
        early = {k: v for k, v in combat.work.get("early", {}).items() if k != who}
        combat.work = {**combat.work, "early": early}
        reset_phase_work(combat, state)
        participants = fight_members(combat)
        record_round(
            scene,
            combat,
            by,
            f"{participant.name} is passed over",
            public=is_visible(participant),
            concerns=[participant],
            participants=participants,
        )
        apply_early(scene, combat, by, participants)
        skip_away(scene, combat, by, participants)

    payload = {"p": participant.pk}
    return take(
        SKIP_STEP, combat, participant, by=by, key=key, payload=payload, seen=at, rules=rules
    )


PAUSE_STEP = round_step("round.pause", storyteller=True)


def combat_pause(
    *, combat: Combat, by: AbstractBaseUser, paused: bool, key: str | None = None
) -> Combat:
    """Only the storyteller pauses and resumes a round."""

    def rules(scene: Scene, combat: Combat) -> None:
        combat.paused = paused
        record_round(scene, combat, by, "Round paused" if paused else "Round resumed")

    return take(PAUSE_STEP, combat, by=by, key=key, payload={"paused": paused}, rules=rules)


EFFECT_STEP = round_step("round.effect", storyteller=True)


def combat_add_effect(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    name: str,
    rounds: int,
    key: str | None = None,
) -> Combat:
    """D17: the storyteller notes an effect lasting some rounds; Book Keeping expires it."""
    name = (name or "").strip()[:80]
    if not name or not 1 <= rounds <= 100:
        raise RoundError("Name the effect and give it 1 to 100 rounds (D17).")

    def rules(scene: Scene, combat: Combat) -> None:
        effect = TimedEffect(
            name=f"{name} ({participant.name})", who=who_of(participant), rounds_left=rounds
        )
        combat.effects = [*combat.effects, vars(effect)]
        record_round(
            scene,
            combat,
            by,
            f"{participant.name}: {name} for {rounds} round(s)",
            public=is_visible(participant),
            concerns=[participant],
        )

    payload = {"p": participant.pk, "n": name, "r": rounds}
    return take(EFFECT_STEP, combat, participant, by=by, key=key, payload=payload, rules=rules)


END_STEP = round_step("round.end", storyteller=True)


def combat_end(*, combat: Combat, by: AbstractBaseUser, key: str | None = None) -> Combat:

    def rules(scene: Scene, combat: Combat) -> None:
        combat.stage = CombatStage.OVER
        combat.ended_at = timezone.now()
        record_round(scene, combat, by, f"The fight ends after round {combat.round_number}")

    return take(END_STEP, combat, by=by, key=key, rules=rules)
