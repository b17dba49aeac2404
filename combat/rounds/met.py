"""met_classic and met_werewolf: fights are challenges; the tablet helps with the order of
Celerity follow-ups (C15) and mob scenes (C16).

The fight's row keeps this round's :class:`~combat.rules.celerity.CelerityRound` (levels,
follow-ups announced with their blood, actions taken) and the mob formed this round. Blood for
announced follow-ups is spent at once through the ledger, used or not (C15).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from characters.models import LedgerKind
from characters.services import LedgerError, ledger_spend
from combat.models import Combat, CombatStage, Participant, Scene
from combat.rounds.errors import ALREADY_FIGHTING, NEEDS_TWO, RoundError, refusal_of
from combat.rounds.fight import (
    lock_fight,
    lock_fight_for,
    record_round,
    require_member,
    require_storyteller,
)
from combat.rounds.met_reads import celerity_of
from combat.rounds.reads import fight_members, is_visible, who_of
from combat.rules.celerity import CelerityRound
from combat.rules.errors import RuleError
from combat.rules.mob import Mob, primary_victim
from combat.services import SceneError, lock_open_scene

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


def met_start(*, scene: Scene, by: AbstractBaseUser, participants: Sequence[Participant]) -> Combat:
    """The storyteller opens a fight's helper for a MET scene."""
    with transaction.atomic():
        try:
            scene = lock_open_scene(scene)
        except SceneError as error:
            raise RoundError(str(error)) from error
        require_storyteller(by, scene)
        if Combat.objects.filter(scene=scene, ended_at__isnull=True).exists():
            raise RoundError(ALREADY_FIGHTING)
        ids = sorted({p.pk for p in participants})
        if len(ids) < 2 or Participant.objects.filter(pk__in=ids, scene=scene).count() != len(ids):
            raise RoundError(NEEDS_TWO)
        combat = Combat.objects.create(
            scene=scene,
            ruleset=scene.ruleset,
            members=ids,
            started_by=by,
            stage=CombatStage.ROUND,
            state={"celerity": {}, "mob": None},
        )
        record_round(scene, combat, by, "Fight: challenges on the phones; Celerity and mobs here")
    return combat


def met_celerity_announce(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    level: int,
    follow_ups: int,
    target: Participant | None = None,
) -> Combat:
    """C15: the Celerity a character uses this round and the follow-ups it states up front,
    each paid with a blood now (spent even if the action cannot be used)."""
    with transaction.atomic():
        scene, combat = lock_fight_for(combat, by, participant)
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
    return combat


def met_celerity_take(
    *, combat: Combat, by: AbstractBaseUser, participant: Participant, action: str
) -> Combat:
    """C15: the storyteller ticks off a Celerity action taken, in its order."""
    with transaction.atomic():
        scene, combat = lock_fight(combat)
        require_storyteller(by, scene)
        require_member(combat, participant)
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
    return combat


def met_mob(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    targets: Mapping[Participant, Participant],
    agreed: bool,
) -> Combat:
    """C16: everyone reveals a target at once; the character with most attackers is the
    primary victim, mobbed by at most five; the first of them throws (primary attacker)."""
    with transaction.atomic():
        scene, combat = lock_fight(combat)
        require_storyteller(by, scene)
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
    return combat


def met_next_round(*, combat: Combat, by: AbstractBaseUser) -> Combat:
    """A new round: Celerity is announced afresh, the mob breaks up; the clock moves on."""
    with transaction.atomic():
        scene, combat = lock_fight(combat)
        require_storyteller(by, scene)
        combat.round_number += 1
        combat.state = {"celerity": {}, "mob": None}
        scene.game_time += TURN_SECONDS
        record_round(scene, combat, by, f"Round {combat.round_number}")
    return combat
