"""The fight a round step changes: lock it (the scene, then the row), who may act in it (the
storyteller for anyone, a player for their own characters; a hidden NPC is nobody to a player),
the token the actor saw, and :func:`record_round` (save, log, move the tokens, publish on commit).
Also the row's per-phase book (:func:`reset_phase_work`) and the results kept for the screens.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser

from combat import steps
from combat.access import NOT_HERE
from combat.models import Combat, CombatStage, LogKind, Participant, Scene
from combat.rounds.errors import (
    MOVED_ON,
    NO_COMBAT,
    NOT_IN_FIGHT,
    NOT_STORYTELLER,
    NOT_YOURS,
    RoundError,
)
from combat.rounds.reads import KEPT, fight_members, player_ids_of
from combat.rounds.tokens import mark_since, move_tokens, state_token
from combat.rules.wod_round import Step, WodRound
from combat.services import SceneError, is_storyteller_of_scene, lock_open_scene, record_change

#: RULES.md, Shared terms (Game clock): a wod_dice round is fifteen seconds of game time.
ROUND_SECONDS = {"wod_dice": 15, "met_bns": 3}


RESULTS_KEPT = 12


def lock_fight(combat: Combat) -> tuple[Scene, Combat]:
    try:
        scene = lock_open_scene(combat.scene)
    except SceneError as error:
        raise RoundError(str(error)) from error
    locked = Combat.objects.select_for_update().get(pk=combat.pk)
    if locked.ended_at is not None:
        raise RoundError(NO_COMBAT)
    return scene, locked


def lock_fight_for(
    combat: Combat, by: AbstractBaseUser, participant: Participant
) -> tuple[Scene, Combat]:
    """Lock the fight for a step ``participant`` takes: a member of it, acted for by its own
    player or the storyteller."""
    scene, locked = lock_fight(combat)
    require_member(locked, participant)
    require_acting_for(by, scene, participant)
    return scene, locked


def begin_for(
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    action: str,
    key: str | None,
    payload: dict,
) -> tuple[Scene, Combat, bool]:
    """The start of a step ``participant`` takes (:func:`combat.steps.begin`): lock the scene
    and the fight, claim the key (a replay answers as the first did, before any other check:
    not the pause, the stage or the token), then who may act for ``participant``. True third
    when it is a replay: change nothing."""

    def lock() -> tuple[Scene, Combat]:
        try:
            scene = lock_open_scene(combat.scene)
        except SceneError as error:
            raise RoundError(str(error)) from error
        return scene, Combat.objects.select_for_update().get(pk=combat.pk)

    begun = steps.begin(
        lock=lock, by=by, action=action, key=key, payload=payload, refusal=RoundError
    )
    scene, locked = begun.scene, begun.row
    if begun.replay:
        return scene, locked, True
    if locked.ended_at is not None:
        raise RoundError(NO_COMBAT)
    require_member(locked, participant)
    require_acting_for(by, scene, participant)
    return scene, locked, False


def require_storyteller(by: AbstractBaseUser, scene: Scene) -> None:
    if not is_storyteller_of_scene(by, scene):
        raise RoundError(NOT_STORYTELLER)


def may_act_for(by: AbstractBaseUser, scene: Scene, participant: Participant) -> bool:
    """The storyteller acts for anyone (NPCs, or a player who asked); a player for their own."""
    if participant.character_id and participant.character.player_id == by.pk:
        return True
    return is_storyteller_of_scene(by, scene)


def require_acting_for(by: AbstractBaseUser, scene: Scene, participant: Participant) -> None:
    if not may_act_for(by, scene, participant):
        if participant.hidden:  # a hidden NPC is nobody to a player (combat.access)
            raise RoundError(NOT_HERE)
        raise RoundError(NOT_YOURS.format(name=participant.name))


def require_member(combat: Combat, participant: Participant) -> None:
    if participant.pk not in combat.members or participant.scene_id != combat.scene_id:
        raise RoundError(NOT_IN_FIGHT.format(name=participant.name))


def check_token(combat: Combat, at: str | None) -> None:
    """The token the actor saw: the tablet's, or a phone's (which a hidden NPC's own step
    does not move, so a player's tap is never refused for a change they cannot see)."""
    if at is not None and at not in (state_token(combat), state_token(combat, players=True)):
        raise RoundError(MOVED_ON)


def record_round(
    scene: Scene,
    combat: Combat,
    by: AbstractBaseUser,
    text: str,
    *,
    public: bool = True,
    concerns: Sequence[Participant] = (),
    participants: dict[int, Participant] | None = None,
    players: bool | None = None,
    told: Sequence[int] = (),
) -> None:
    """Save the step, log it, bump the tokens and publish on commit. ``players``: whether any
    player sees the change; by default yes, unless the step concerns only hidden NPCs and is
    not public (then no phone gets a fragment, a ``seq`` or a new token from it, except the
    players in ``told``, whose own prompt the step changed)."""
    if players is None:
        players = public or not concerns or any(not p.hidden for p in concerns)
    move_tokens(combat, players=players)
    mark_since(combat)
    combat.save()
    participants = participants if participants is not None else fight_members(combat)
    if any(p.hidden for p in concerns):
        concerns = ()  # a line naming a hidden NPC is the storyteller's alone
    record_change(
        scene,
        by=by,
        kind=LogKind.COMBAT,
        text=text,
        public=public,
        characters=[p.character for p in concerns if p.character_id],
        data={"combat": combat.pk, "round": combat.round_number},
        private_user_ids=player_ids_of(participants) if players else told,
        players=players,
    )


def reset_phase_work(combat: Combat, state: WodRound) -> None:
    if combat.work.get("phase_index") != state.phase_index:
        # Per phase: the parts resolved, the actions spent in an exchange, the guards used.
        # For the whole round (D8, D13): the attacks counted on each target (haste actions
        # count as further attackers), the escape rolls, the Rage paid (D4).
        work = combat.work
        keep = ("attacks_on", "attacks_on_unseen", "escape", "rage_paid", *KEPT)
        keep = keep if state.phase_index else KEPT
        combat.work = {
            **{k: work[k] for k in keep if k in work},
            "phase_index": state.phase_index,
            "detail": work.get("detail", {}) if state.phase_index else {},
        }
    if state.step is Step.BOOK_KEEPING:
        combat.stage = CombatStage.BOOK_KEEPING


def add_result(combat: Combat, text: str, rolls: list[dict], *, public: bool) -> None:
    entry = {
        "round": combat.round_number,
        "phase": (combat.state.get("phases") or [{"name": "main"}])[
            combat.state.get("phase_index", 0)
        ]["name"]
        if combat.state
        else "",
        "text": text,
        "rolls": rolls,
        "public": public,
    }
    combat.results = [*combat.results, entry][-RESULTS_KEPT:]
