"""The fight a round step changes: lock it (the scene, then the row), who may act in it (the
storyteller for anyone, a player for their own characters; a hidden NPC is nobody to a player),
the token the actor saw, and :func:`record_round` (save, log, move the tokens, publish on commit).
Also the row's per-phase book (:func:`reset_phase_work`) and the results kept for the screens.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True)
class Turn:
    """What a round step acts on: the fight, and the participant it is taken for (None: a
    step of the fight as a whole, the storyteller's)."""

    combat: Combat
    participant: Participant | None = None


def lock_turn(turn: Turn) -> tuple[Scene, Turn]:
    """Lock the scene (open), then the fight's row."""
    try:
        scene = lock_open_scene(turn.combat.scene_id)  # by id: the fight's scene is not read first
    except SceneError as error:
        raise RoundError(str(error)) from error
    locked = steps.held(Combat, turn.combat.pk)  # the request's view locked it already
    if locked is None or locked.scene_id != scene.pk:
        locked = Combat.objects.select_for_update().get(pk=turn.combat.pk)
    locked.scene = scene
    return scene, Turn(locked, turn.participant)


def players_may_act(
    by: AbstractBaseUser, scene: Scene, turn: Turn, payload: Mapping[str, Any]
) -> None:
    """A step a member of the fight takes: its own player, or the storyteller for anyone (a
    hidden NPC is nobody to a player: the sentence of an id of nobody)."""
    if turn.combat.ended_at is not None:
        raise RoundError(NO_COMBAT)
    assert turn.participant is not None
    require_member(turn.combat, turn.participant)
    require_acting_for(by, scene, turn.participant)


def storyteller_may_act(
    by: AbstractBaseUser, scene: Scene, turn: Turn, payload: Mapping[str, Any]
) -> None:
    """A step only the scene's storyteller takes (on a member of the fight, if it names one)."""
    if turn.combat.ended_at is not None:
        raise RoundError(NO_COMBAT)
    require_storyteller(by, scene)
    if turn.participant is not None:
        require_member(turn.combat, turn.participant)


def turn_tokens(turn: Turn) -> tuple[str, str]:
    """The tokens a current screen carries: the tablet's, and the phones' (which a hidden
    NPC's own step does not move, so a player's tap is never refused for a change they cannot
    see)."""
    return state_token(turn.combat), state_token(turn.combat, players=True)


def round_step(action: str, *, storyteller: bool = False) -> steps.Step[Turn, Turn]:
    """Declare a round step (:func:`combat.steps.declare`): taken by the storyteller only, or
    for a member of the fight by its player or the storyteller."""
    return steps.declare(
        steps.Step(
            action=action,
            lock=lock_turn,
            may_act=storyteller_may_act if storyteller else players_may_act,
            tokens=turn_tokens,
            refusal=RoundError,
            moved_on=MOVED_ON,
        )
    )


def take(
    step: steps.Step[Turn, Turn],
    combat: Combat,
    participant: Participant | None = None,
    *,
    by: AbstractBaseUser,
    rules: Callable[[Scene, Combat], None],
    key: str | None = None,
    payload: Mapping[str, Any] | None = None,
    seen: str | None = None,
) -> Combat:
    """Take a declared round step (:func:`combat.steps.run`: lock, the key, who may act, the
    token ``seen``, then ``rules(scene, combat)`` on the locked fight); the fight as it stands
    after (a replay: as it stands, unchanged)."""

    def run_rules(scene: Scene, turn: Turn) -> Combat:
        rules(scene, turn.combat)
        return turn.combat

    return steps.run(
        step,
        Turn(combat, participant),
        by=by,
        key=key,
        payload={"c": combat.pk, **(payload or {})},
        seen=seen,
        rules=run_rules,
        replayed=lambda scene, turn: turn.combat,
    )


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
        rows=[combat],  # saved with the scene: one statement on PostgreSQL
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
