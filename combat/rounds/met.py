"""met_classic and met_werewolf: fights are challenges; the tablet helps with the order of
Celerity follow-ups (C15) and mob scenes (C16).

The fight's row keeps this round's :class:`~combat.rules.celerity.CelerityRound` (levels,
follow-ups announced with their blood, actions taken) and the mob formed this round. Blood for
announced follow-ups is spent at once through the ledger, used or not (C15).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.contrib.auth.models import AbstractBaseUser

from characters.models import LedgerKind
from characters.services import LedgerError, ledger_spend
from combat.models import Combat, CombatStage, Participant, Scene
from combat.rounds.errors import RoundError, refusal_of
from combat.rounds.fight import (
    record_round,
    require_member,
    round_step,
    take,
)
from combat.rounds.met_reads import celerity_of
from combat.rounds.reads import fight_members, is_visible, who_of
from combat.rounds.starting import start_fight
from combat.rules.celerity import CelerityRound
from combat.rules.errors import RuleError
from combat.rules.mob import Mob, primary_victim

TURN_SECONDS = 3  # RULES.md, Shared terms (Game clock): about three seconds a turn


def _store(combat: Combat, celerity: CelerityRound) -> None:
    combat.state = {
        **combat.state,
        "celerity": {
            "levels": [list(x) for x in celerity.levels],
            "targets": [list(x) for x in celerity.targets],
            "announced": [list(x) for x in celerity.announced],
            "taken": [list(x) for x in celerity.taken],
        },
    }


def met_start(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    participants: Sequence[Participant],
    key: str | None = None,
) -> Combat:
    """The storyteller opens a fight's helper for a MET scene."""

    def make(scene: Scene, present: list[Participant]) -> Combat:
        combat = Combat.objects.create(
            scene=scene,
            ruleset=scene.ruleset,
            members=sorted(p.pk for p in present),
            started_by=by,
            stage=CombatStage.ROUND,
            state={"celerity": {}, "mob": None},
        )
        record_round(scene, combat, by, "Fight: challenges on the phones; Celerity and mobs here")
        return combat

    return start_fight(scene=scene, by=by, participants=participants, make=make, key=key)


MET_CELERITY_STEP = round_step("round.met.celerity")


def met_celerity_announce(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    level: int,
    follow_ups: int,
    target: Participant | None = None,
    key: str | None = None,
) -> Combat:
    """C15: the Celerity a character uses this round and the follow-ups it states up front,
    each paid with a blood now (spent even if the action cannot be used)."""

    def rules(scene: Scene, combat: Combat) -> None:
        if target is not None:
            require_member(combat, target)
        try:
            celerity = celerity_of(combat).announce(
                who_of(participant),
                level=level,
                follow_ups=follow_ups,
                target=who_of(target) if target else None,
            )
        except RuleError as error:
            raise refusal_of(error) from error
        if follow_ups and participant.character_id:
            try:
                ledger_spend(
                    character=participant.character,
                    kind=LedgerKind.BLOOD_SPENT,
                    by=by,
                    amount=follow_ups,
                    reason=f"Celerity: {follow_ups} follow-up(s) announced (C15)",
                    source=f"combat {combat.pk}",
                )
            except LedgerError as error:
                raise RoundError(f"{error} (C15)") from error
        _store(combat, celerity)
        record_round(
            scene,
            combat,
            by,
            f"{participant.name} uses Celerity {level}: {follow_ups} follow-up(s) (C15)",
            public=is_visible(participant),
            concerns=[participant],
        )

    payload = {
        "p": participant.pk,
        "l": level,
        "f": follow_ups,
        "t": target.pk if target else None,
    }
    return take(
        MET_CELERITY_STEP, combat, participant, by=by, key=key, payload=payload, rules=rules
    )


MET_TAKE_STEP = round_step("round.met.take", storyteller=True)


def met_celerity_take(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    action: str,
    key: str | None = None,
) -> Combat:
    """C15: the storyteller ticks off a Celerity action taken, in its order."""

    def rules(scene: Scene, combat: Combat) -> None:
        try:
            celerity = celerity_of(combat).take(who_of(participant), action)
        except RuleError as error:
            raise refusal_of(error) from error
        _store(combat, celerity)
        record_round(
            scene,
            combat,
            by,
            f"{participant.name}: {action}",
            public=is_visible(participant),
            concerns=[participant],
        )

    payload = {"p": participant.pk, "a": action}
    return take(MET_TAKE_STEP, combat, participant, by=by, key=key, payload=payload, rules=rules)


MET_MOB_STEP = round_step("round.met.mob", storyteller=True)


def met_mob(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    targets: Mapping[Participant, Participant],
    agreed: bool,
    key: str | None = None,
) -> Combat:
    """C16: everyone reveals a target at once; the character with most attackers is the
    primary victim, mobbed by at most five; the first of them throws (primary attacker)."""

    def rules(scene: Scene, combat: Combat) -> None:
        named = {who_of(a): who_of(v) for a, v in targets.items()}
        try:
            victim = primary_victim(named)
            attackers = [a for a, v in named.items() if v == victim]
            mob = Mob.form(victim, attackers, attackers[0], agreed=agreed)
        except RuleError as error:
            raise refusal_of(error) from error
        combat.state = {
            **combat.state,
            "mob": {"victim": mob.victim, "attackers": list(mob.attackers), "primary": mob.primary},
        }
        members = fight_members(combat)
        names = ", ".join(members[int(a)].name for a in mob.attackers)
        record_round(
            scene,
            combat,
            by,
            f"Mob scene: {names} on {members[int(victim)].name}, who is"
            f" -{mob.defender_penalty} on a draw (C16)",
            public=all(is_visible(members[int(x)]) for x in (victim, *mob.attackers)),
            participants=members,
        )

    payload = {"t": sorted([a.pk, v.pk] for a, v in targets.items()), "agreed": agreed}
    return take(MET_MOB_STEP, combat, by=by, key=key, payload=payload, rules=rules)


MET_NEXT_STEP = round_step("round.met.next", storyteller=True)


def met_next_round(*, combat: Combat, by: AbstractBaseUser, key: str | None = None) -> Combat:
    """A new round: Celerity is announced afresh, the mob breaks up; the clock moves on."""

    def rules(scene: Scene, combat: Combat) -> None:
        combat.round_number += 1
        combat.state = {"celerity": {}, "mob": None}
        scene.game_time += TURN_SECONDS
        record_round(scene, combat, by, f"Round {combat.round_number}")

    return take(MET_NEXT_STEP, combat, by=by, key=key, rules=rules)
