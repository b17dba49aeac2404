"""met_bns complex scenarios, one declared step each (B4-B11): the storyteller's mediation
and frozen assessment, the surprise action, each character's standard and simple action on its
initiative, delay and the +5 for forgoing, fair escapes, prone, and up to three Celerity
rounds for those whose activated Celerity grants them.

The engine is ``combat.rules.bns_round.Combat``; its state is kept on the fight's row as JSON.
The same roles hold as in wod_dice: only the storyteller mediates, assesses, ends rounds and
the fight; a player acts only for their own characters, on their own initiative.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from django.contrib.auth.models import AbstractBaseUser

from combat import steps
from combat.challenges.refusals import ChallengeError
from combat.challenges.starting import challenge_start
from combat.models import Combat, CombatStage, Participant, Scene
from combat.rounds.bns_reads import (
    ACTION_LABELS,
    celerity_cap,
    engine_of,
    may_act_now,
    may_intend,
)
from combat.rounds.errors import PAUSED, RoundError, refusal_of
from combat.rounds.fight import (
    record_round,
    require_member,
    round_step,
    take,
)
from combat.rounds.reads import fight_members, is_visible, who_of
from combat.rounds.sheets import stats_for
from combat.rounds.starting import start_fight
from combat.rules import bns_round as bns
from combat.rules.bns_initiative import TURN_SECONDS
from combat.rules.bns_initiative import Combatant as BnsCombatant
from combat.rules.errors import RuleError


def bns_start(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    participants: Sequence[Participant],
    rng: random.Random | None = None,
    key: str | None = None,
) -> Combat:
    """B11: a complex scenario opens with mediation; B4's random tie-break is drawn now."""

    def make(scene: Scene, present: list[Participant]) -> Combat:
        stats = stats_for(present)
        sheets = [
            BnsCombatant(
                name=who_of(p),
                physical=stats[p.pk].dot("Physical"),
                mental=stats[p.pk].dot("Mental"),
                social=stats[p.pk].dot("Social"),
            )
            for p in present
        ]
        try:
            state = bns.Combat.begin(sheets, rng=rng or random.SystemRandom())
        except RuleError as error:
            raise refusal_of(error) from error
        combat = Combat.objects.create(
            scene=scene,
            ruleset="met_bns",
            members=sorted(p.pk for p in present),
            started_by=by,
            stage=CombatStage.ROUND,
            state=state.to_dict(),
        )
        text = "Conflict! Mediation first: can it be settled by agreement?"
        record_round(scene, combat, by, text)
        return combat

    return start_fight(scene=scene, by=by, participants=participants, make=make, key=key)


BNS_MEDIATE_STEP = round_step("round.bns.mediate", storyteller=True)


def bns_mediate(
    *, combat: Combat, by: AbstractBaseUser, agreed: bool, key: str | None = None
) -> Combat:
    """B11: an agreed outcome the storyteller approves ends it; else the scene freezes."""

    def rules(scene: Scene, combat: Combat) -> None:
        try:
            state = engine_of(combat).mediate(agreed=agreed, approved=True)
        except RuleError as error:
            raise refusal_of(error) from error
        combat.state = state.to_dict()
        if state.phase is bns.Phase.OVER:
            combat.stage = CombatStage.OVER
        text = "Settled by agreement (B11)" if agreed else "No agreement: the scene freezes (B11)"
        record_round(scene, combat, by, text)

    payload = {"agreed": agreed}
    return take(BNS_MEDIATE_STEP, combat, by=by, key=key, payload=payload, rules=rules)


BNS_ASSESS_STEP = round_step("round.bns.assess", storyteller=True)


def bns_assess(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participants: Sequence[Participant],
    started_by: Participant | None = None,
    key: str | None = None,
) -> Combat:
    """B11 assessment, B7: the storyteller names who takes part and whose action started it
    (that action goes first, outside initiative)."""

    def rules(scene: Scene, combat: Combat) -> None:
        for p in participants:
            require_member(combat, p)
        state = engine_of(combat)
        try:
            state = _with_celerity(
                state.assess(
                    [who_of(p) for p in participants], who_of(started_by) if started_by else None
                ),
                combat,
            )
        except RuleError as error:
            raise refusal_of(error) from error
        combat.members = [p.pk for p in participants]
        combat.state = state.to_dict()
        names = ", ".join(p.name for p in participants if is_visible(p))
        text = f"The storyteller names who takes part: {names}"
        if started_by is not None and is_visible(started_by):
            text += f"; {started_by.name} acts first (B7)"
        record_round(scene, combat, by, text)

    payload = {"p": [p.pk for p in participants], "s": started_by.pk if started_by else None}
    return take(BNS_ASSESS_STEP, combat, by=by, key=key, payload=payload, rules=rules)


def _with_celerity(state: bns.Combat, combat: Combat) -> bns.Combat:
    """B5: the Celerity each character activated (carried over until changed) decides who
    acts in Celerity rounds; applied while the everyman round runs."""
    if state.round != 0:
        return state
    fighters = tuple(
        replace(f, sheet=replace(f.sheet, celerity=int(combat.haste.get(f.name, 0))))
        for f in state.fighters
    )
    return replace(state, fighters=fighters)


BNS_CELERITY_STEP = round_step("round.bns.celerity")


def bns_celerity(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    rounds: int,
    key: str | None = None,
) -> Combat:
    """B5: how many Celerity rounds a character activates; it carries over to the next turns
    until changed, and counts from the everyman round under way (else the next turn's)."""

    def rules(scene: Scene, combat: Combat) -> None:
        cap = celerity_cap(stats_for([participant])[participant.pk])
        if not 0 <= rounds <= cap:
            raise RoundError(f"{participant.name} can activate 0 to {cap} Celerity rounds (B5).")
        combat.haste = {**combat.haste, who_of(participant): rounds}
        state = engine_of(combat)
        if state.phase in (bns.Phase.ORDER_OF_ACTION, bns.Phase.CELERITY_ROUNDS):
            combat.state = _with_celerity(state, combat).to_dict()
        record_round(
            scene,
            combat,
            by,
            f"{participant.name} activates Celerity for {rounds} round(s)",
            public=is_visible(participant),
            concerns=[participant],
        )

    payload = {"p": participant.pk, "r": rounds}
    return take(
        BNS_CELERITY_STEP, combat, participant, by=by, key=key, payload=payload, rules=rules
    )


def _action(value: str | None) -> bns.Action | None:
    if not value:
        return None
    try:
        return bns.Action(value)
    except ValueError as error:
        raise RoundError(f"Unknown action {value!r} (B6).") from error


BNS_ACT_STEP = round_step("round.bns.act")


def bns_act(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    standard: str | None = None,
    simple: str | None = None,
    target: Participant | None = None,
    against_physical: bool = False,
    pool: dict | None = None,
    ranged_far: bool = False,
    at: str | None = None,
    key: str | None = None,
) -> Combat:
    """B6, B7, B10: the character whose initiative it is takes its standard and/or simple
    action (the starter's first action is the surprise action, B7). An attack, a challenge or
    a power on a target opens a met_bns challenge on both sides' screens
    (:func:`resolve_attack`), with the test pool ``pool`` names (attribute, skill, weapon);
    ``ranged_far``: a physical ranged attack from more than three steps (B10)."""
    payload = {"c": combat.pk, "p": participant.pk, "s": standard, "m": simple}

    payload["t"] = target.pk if target else None

    def rules(scene: Scene, combat: Combat) -> None:
        if combat.paused:
            raise RoundError(PAUSED)
        if target is not None:
            require_member(combat, target)
        state = engine_of(combat)
        who = who_of(participant)
        std, smp = _action(standard), _action(simple)
        try:
            if state.surprise_by == who:
                action = std or smp
                if action is None:
                    raise RuleError("B7", "Say which action starts the combat.")
                state = state.surprise(
                    who,
                    action,
                    target=who_of(target) if target else None,
                    against_physical=against_physical,
                )
            else:
                state = state.act(
                    who,
                    standard=std,
                    simple=smp,
                    target=who_of(target) if target else None,
                    against_physical=against_physical,
                )
        except RuleError as error:
            raise refusal_of(error) from error
        combat.state = state.to_dict()
        participants = fight_members(combat)
        used = " and ".join(ACTION_LABELS[a.value] for a in (std, smp) if a is not None)
        text = f"{participant.name}: {used}"
        if target is not None:
            text += f" on {target.name}"
            text += resolve_attack(
                scene,
                combat,
                by,
                participant,
                target,
                _challenging(std, smp),
                pool or {},
                prone=state.fighter(who_of(target)).prone,
                ranged_far=ranged_far,
            )
        public = is_visible(participant) and (target is None or is_visible(target))
        concerns = [participant] + ([target] if target else [])
        record_round(
            scene, combat, by, text, public=public, concerns=concerns, participants=participants
        )

    return take(
        BNS_ACT_STEP, combat, participant, by=by, key=key, payload=payload, seen=at, rules=rules
    )


CHALLENGES = {
    bns.Action.ATTACK: "physical",
    bns.Action.PHYSICAL_CHALLENGE: "physical",
    bns.Action.MENTAL_CHALLENGE: "mental",
    bns.Action.SOCIAL_CHALLENGE: "social",
    bns.Action.PHYSICAL_POWER: "physical",
    bns.Action.MENTAL_POWER: "mental",
    bns.Action.SOCIAL_POWER: "social",
}


def _challenging(*actions: bns.Action | None) -> bns.Action | None:
    """The action of a turn that is tested against its target (an attack first)."""
    found = [a for a in actions if a in CHALLENGES]
    return min(found, key=lambda a: a is not bns.Action.ATTACK) if found else None


def resolve_attack(
    scene: Scene,
    combat: Combat,
    by: AbstractBaseUser,
    attacker: Participant,
    target: Participant,
    action: bns.Action | None,
    pool: dict,
    *,
    prone: bool = False,
    ranged_far: bool = False,
) -> str:
    """B1-B3: an attack, a challenge or a power used on a target opens a met_bns challenge
    between the two, in this transaction: the target's phone (the storyteller's board for an
    NPC) answers with its own test pool and both sides throw, retest and take the result as any
    challenge (combat/challenges/), damage by B3 for an attack. B10: the target's prone state
    in the round goes into its defense pool (-2 within three steps, +2 against a physical
    ranged attack from further, ``ranged_far``). Returns the log line's tail."""
    category = CHALLENGES.get(action) if action is not None else None
    if category is None:
        return ""
    label = ACTION_LABELS[action.value]
    try:
        challenge = challenge_start(
            scene=scene,
            by=by,
            attacker=attacker,
            defender=target,
            category=category,
            attack=action is bns.Action.ATTACK,
            attribute=pool.get("attribute") or "",
            skill=pool.get("skill") or "",
            weapon=pool.get("weapon"),
            what=label.casefold(),
            effect=f"{label} in round {combat.round_number}",
            in_round=True,
            defender_prone=prone,
            ranged=ranged_far,
            ranged_far=ranged_far,
        )
    except ChallengeError as error:
        raise RoundError(str(error)) from None
    return f" — challenge #{challenge.pk} opened (B1-B3)"


BNS_DELAY_STEP = round_step("round.bns.delay")
BNS_FINISH_STEP = round_step("round.bns.finish")
BNS_RESUME_STEP = round_step("round.bns.resume")


def bns_delay(
    *, combat: Combat, by: AbstractBaseUser, participant: Participant, key: str | None = None
) -> Combat:
    """B8: hold the remaining actions for later in the round."""
    return _step(BNS_DELAY_STEP, combat, by, participant, "delay", "delays (B8)", key)


def bns_finish(
    *, combat: Combat, by: AbstractBaseUser, participant: Participant, key: str | None = None
) -> Combat:
    """B6: leave the remaining actions unused (forgoing both gives +5 next round, B8)."""
    return _step(BNS_FINISH_STEP, combat, by, participant, "finish", "is done this round", key)


def bns_resume(
    *, combat: Combat, by: AbstractBaseUser, participant: Participant, key: str | None = None
) -> Combat:
    """B8: a delayer steps back in now, before the next character on its initiative."""
    return _step(BNS_RESUME_STEP, combat, by, participant, "resume", "steps back in (B8)", key)


def _step(
    step: steps.Step,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    verb: str,
    label: str,
    key: str | None = None,
) -> Combat:
    def rules(scene: Scene, combat: Combat) -> None:
        if combat.paused:
            raise RoundError(PAUSED)
        try:
            state = getattr(engine_of(combat), verb)(who_of(participant))
        except RuleError as error:
            raise refusal_of(error) from error
        combat.state = state.to_dict()
        record_round(
            scene,
            combat,
            by,
            f"{participant.name} {label}",
            public=is_visible(participant),
            concerns=[participant],
        )

    payload = {"p": participant.pk}
    return take(step, combat, participant, by=by, key=key, payload=payload, rules=rules)


BNS_ESCAPE_STEP = round_step("round.bns.escape")


def bns_escape_announce(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    way_out: bool = True,
    key: str | None = None,
) -> Combat:
    """B9: a fair escape is announced at the start of the character's own initiative; those
    yet to act may now announce an intent to attack it."""

    def rules(scene: Scene, combat: Combat) -> None:
        state = engine_of(combat)
        who = who_of(participant)
        if not may_act_now(state, who) or state.fighter(who).begun:
            raise RoundError("A fair escape is declared at the start of your initiative (B9).")
        if not way_out:
            raise RoundError("No logical way out: no fair escape while grappled or locked in (B9).")
        combat.work = {**combat.work, "escape_call": {"who": who, "intents": []}}
        record_round(
            scene,
            combat,
            by,
            f"{participant.name} tries a fair escape: who intends to attack? (B9)",
            public=is_visible(participant),
            concerns=[participant],
        )

    payload = {"p": participant.pk, "w": way_out}
    return take(BNS_ESCAPE_STEP, combat, participant, by=by, key=key, payload=payload, rules=rules)


BNS_INTENT_STEP = round_step("round.bns.intent")


def bns_escape_intent(
    *, combat: Combat, by: AbstractBaseUser, participant: Participant, key: str | None = None
) -> Combat:
    """B9: a character yet to act announces it intends to attack the escaping character."""

    def rules(scene: Scene, combat: Combat) -> None:
        call = combat.work.get("escape_call")
        who = who_of(participant)
        if not call:
            raise RoundError("Nobody is trying to escape (B9).")
        if not may_intend(engine_of(combat), who, call["who"]):
            raise RoundError(f"{participant.name} has no action left to attack with (B9).")
        if who not in call["intents"]:
            call = {**call, "intents": [*call["intents"], who]}
        combat.work = {**combat.work, "escape_call": call}
        participants = fight_members(combat)
        escaper = participants[int(call["who"])]
        record_round(
            scene,
            combat,
            by,
            f"{participant.name} intends to attack {escaper.name} (B9)",
            public=is_visible(participant) and is_visible(escaper),
            concerns=[participant, escaper],  # a hidden escaper: the storyteller's line alone
            participants=participants,
        )

    payload = {"p": participant.pk}
    return take(BNS_INTENT_STEP, combat, participant, by=by, key=key, payload=payload, rules=rules)


BNS_SETTLE_STEP = round_step("round.bns.settle", storyteller=True)


def bns_escape_settle(
    *, combat: Combat, by: AbstractBaseUser, can_be_attacked: bool = True, key: str | None = None
) -> Combat:
    """B9: the storyteller closes the intents: none, or nobody able to attack, and the escape
    succeeds at once; otherwise it is on hold until the end of the round."""

    def rules(scene: Scene, combat: Combat) -> None:
        call = combat.work.get("escape_call")
        if not call:
            raise RoundError("Nobody is trying to escape (B9).")
        try:
            state = engine_of(combat).fair_escape(
                call["who"], tuple(call["intents"]), can_be_attacked=can_be_attacked
            )
        except RuleError as error:
            raise refusal_of(error) from error
        combat.state = state.to_dict()
        combat.work = {k: v for k, v in combat.work.items() if k != "escape_call"}
        participants = fight_members(combat)
        who = participants[int(call["who"])]
        outcome = state.escapes.get(call["who"], "")
        words = {
            "escaped": "escapes",
            "on_hold": "is on hold until the round ends",
            "failed": "fails to escape (attacked first)",
        }
        record_round(
            scene,
            combat,
            by,
            f"{who.name} {words.get(outcome, outcome)} (B9)",
            public=is_visible(who),
            concerns=[who],
            participants=participants,
        )

    payload = {"a": can_be_attacked}
    return take(BNS_SETTLE_STEP, combat, by=by, key=key, payload=payload, rules=rules)


BNS_END_ROUND_STEP = round_step("round.bns.end_round", storyteller=True)


def bns_end_round(
    *, combat: Combat, by: AbstractBaseUser, at: str | None = None, key: str | None = None
) -> Combat:
    """B5, B8, B9: close the round: escapes on hold succeed, the next Celerity round or the
    next turn begins; a new turn moves the game clock about three seconds."""

    def rules(scene: Scene, combat: Combat) -> None:
        before = engine_of(combat)
        try:
            state = before.end_round()
        except RuleError as error:
            raise refusal_of(error) from error
        if state.turn != before.turn:
            state = _with_celerity(state, combat)
            scene.game_time += TURN_SECONDS
            combat.round_number = state.turn
        combat.state = state.to_dict()
        combat.work = {}
        participants = fight_members(combat)
        escaped = [
            participants[int(f.name)]
            for f in state.fighters
            if f.out and not before.fighter(f.name).out
        ]
        text = f"Round over: turn {state.turn}, {state.round_label} round"
        for who in escaped:
            if is_visible(who):
                text += f"; {who.name} escapes (B9)"
        record_round(scene, combat, by, text, participants=participants)

    return take(BNS_END_ROUND_STEP, combat, by=by, key=key, seen=at, rules=rules)
