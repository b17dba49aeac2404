"""A player's answers in a round: to a committed attack (D5), and an abort on Willpower (D16)."""

from __future__ import annotations

import random

from django.contrib.auth.models import AbstractBaseUser

from combat.models import Combat, Participant, Scene
from combat.rounds import wod
from combat.rounds.errors import PAUSED, RoundError, refusal_of
from combat.rounds.fight import add_result, record_round, round_step, take
from combat.rounds.reads import fight_members, is_visible, who_of, wod_state
from combat.rounds.sheets import stats_for
from combat.rules.errors import RuleError
from combat.rules.wod_round import Answer, WodRound

COMMITTED_STEP = round_step("round.committed")


def combat_answer_committed(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    attacker: Participant | None,
    answer: str,
    key: str | None = None,
) -> Combat:
    """D5: the target of a committed attack accepts it, takes +2 difficulty, or aborts to a
    defense without a roll (then declares the defense).

    ``attacker`` None: the committed attack of an attacker hidden from the target's player
    (its phone never names it): the first such attack still waiting for an answer."""
    payload = {"c": combat.pk, "a": attacker.pk if attacker else None, "x": answer}

    def rules(scene: Scene, combat: Combat) -> None:
        state = wod_state(combat)
        against = attacker or _unseen_committed(combat, state, participant)
        try:
            state = state.answer_committed(who_of(participant), who_of(against), Answer(answer))
        except RuleError as error:
            raise refusal_of(error) from error
        except ValueError as error:
            raise RoundError(str(error)) from error
        combat.state = state.to_dict()
        label = {
            "accept": "accepts",
            "harder": "takes +2 difficulty against",
            "abort": "aborts to a defense against",
        }[answer]
        record_round(
            scene,
            combat,
            by,
            f"{participant.name} {label} {against.name}'s committed attack",
            public=is_visible(participant) and is_visible(against),
            concerns=[participant, against],  # a hidden attacker: the storyteller's line
        )

    return take(COMMITTED_STEP, combat, participant, by=by, key=key, payload=payload, rules=rules)


def _unseen_committed(combat: Combat, state: WodRound, target: Participant) -> Participant:
    """D5: the hidden attacker whose committed attack on ``target`` waits for an answer."""
    participants = fight_members(combat)
    who = who_of(target)
    for d in state.declarations:
        theirs = participants.get(int(d.who))
        if (
            theirs is not None
            and theirs.hidden
            and d.target == who
            and d.maneuver == "committed"
            and d.who not in state.resolved
            and not any(a == d.who and t == who for a, t, _x in state.answers)
        ):
            return theirs
    raise RoundError(f"No unseen committed attack on {target.name} waits for an answer (D5).")


ABORT_STEP = round_step("round.abort")


def combat_abort(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    reason: str = "void",
    attacker: Participant | None = None,
    dice: str | None = None,
    rng: random.Random | None = None,
    key: str | None = None,
) -> Combat:
    """D16: Willpower at difficulty 8 (server dice, or typed in); one success opens a new
    declaration (a defense when it answers a later attack)."""
    payload = {"c": combat.pk, "p": participant.pk, "r": reason, "d": dice}

    def rules(scene: Scene, combat: Combat) -> None:
        if combat.paused:
            raise RoundError(PAUSED)
        state = wod_state(combat)
        stats = stats_for([participant])[participant.pk]
        try:
            typed = wod.parse_dice(dice)
            result = wod.roll(
                stats.willpower,
                8,
                rng or random.SystemRandom(),
                typed=typed,
                who=participant.name,
                what="Willpower pool",
            )
            state = state.abort(
                who_of(participant),
                successes=result.successes,
                reason=reason,
                attacker=who_of(attacker) if attacker else None,
            )
        except RuleError as error:
            raise refusal_of(error) from error
        except ValueError as error:
            raise RoundError(str(error)) from error
        combat.state = state.to_dict()
        ok = result.successes > 0
        add_result(
            combat,
            f"{participant.name} aborts: {'declares anew' if ok else 'the action stands'}",
            [wod.roll_dict("Willpower", result, who=participant.name, typed=typed is not None)],
            public=is_visible(participant),
        )
        record_round(
            scene,
            combat,
            by,
            f"{participant.name} tries to abort (Willpower {result.successes} successes):"
            f" {'may declare anew' if ok else 'failed'}",
            public=is_visible(participant),
            concerns=[participant],
        )

    return take(ABORT_STEP, combat, participant, by=by, key=key, payload=payload, rules=rules)
