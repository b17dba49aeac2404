"""D4-D6, D14, D16: declarations, slowest first; a character players see as declaring while hidden
NPCs still have to declares ahead and waits for its turn (D4 with hidden NPCs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from combat.models import Combat, CombatStage, Participant, Scene
from combat.rounds import wod
from combat.rounds.errors import PAUSED, WRONG_STAGE, RoundError, refusal_of
from combat.rounds.fight import (
    record_round,
    require_member,
    round_step,
    take,
)
from combat.rounds.planning import grapple_of
from combat.rounds.pursuit import skip_away
from combat.rounds.reads import (
    combatants,
    describe,
    editable,
    fight_members,
    haste_map,
    is_visible,
    tied,
    who_of,
    wod_state,
)
from combat.rounds.sheets import stats_for
from combat.rules.errors import RuleError
from combat.rules.penalties import split
from combat.rules.wod_initiative import round_phases
from combat.rules.wod_round import Declaration, Step, WodRound, check_split

DECLARE_STEP = round_step("round.declare")


def combat_declare(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    action: str,
    target: Participant | None = None,
    maneuver: str = "basic",
    weapon: str = "",
    actions: int = 1,
    also: str = "",
    extra: Sequence[tuple[str, Participant | None]] = (),
    haste: int | None = None,
    at: str | None = None,
    key: str | None = None,
) -> Combat:
    """D4-D6, D14: the character whose turn it is names its action (its owner's phone, or the
    storyteller); the last declaration of the phase may be changed until the next one.

    ``extra``: the further actions of a split (D14), each ``("attack", target)`` or a defense
    (``("dodge", None)``, ``("block", None)``): N actions in all, each pool losing
    2 + (N - 1) dice, at most Wits actions, never two attacks on one target, never in a haste
    phase. ``also`` is the short form of one defense beside the main action. ``haste``: the
    haste actions announced with the Main Phase declaration (D4; a Garou pays one Rage each
    when the Main Phase resolves); the choice carries over to the next rounds.
    """
    if also:
        extra = [(also, None), *extra]
    payload = {
        "c": combat.pk,
        "p": participant.pk,
        "a": action,
        "t": target.pk if target else None,
        "m": maneuver,
        "w": weapon,
        "n": actions,
        "x": [[a, t.pk if t else None] for a, t in extra],
        "h": haste,
    }

    def rules(scene: Scene, combat: Combat) -> None:
        if combat.paused:
            raise RoundError(PAUSED)
        if combat.stage != CombatStage.ROUND:
            raise RoundError(WRONG_STAGE.format(stage=combat.get_stage_display()))
        participants = fight_members(combat)
        spec = {
            "action": action,
            "target": target.pk if target else None,
            "maneuver": maneuver,
            "weapon": weapon,
            "actions": actions,
            "extra": [[a, t.pk if t else None] for a, t in extra],
            "haste": haste,
        }
        state = wod_state(combat)
        who = who_of(participant)
        if (
            state.step is Step.DECLARE
            and who not in state.up
            and state.declaration(who) is None
            and _behind_hidden(state, participants, who)
        ):
            _declare_early(scene, combat, by, participant, participants, state, spec)
            return
        _declare_locked(scene, combat, by, participant, participants, spec)
        apply_early(scene, combat, by, participants)
        skip_away(scene, combat, by, participants)

    return take(
        DECLARE_STEP, combat, participant, by=by, key=key, payload=payload, seen=at, rules=rules
    )


def _spec_declaration(
    combat: Combat,
    state: WodRound,
    participant: Participant,
    participants: dict[int, Participant],
    spec: dict[str, Any],
) -> Declaration:
    def member(pk: int | None) -> Participant | None:
        if pk is None:
            return None
        if pk not in participants:
            raise RoundError("That character is not in this fight.")
        return participants[pk]

    return _declaration(
        combat,
        state,
        participant,
        participants,
        spec["action"],
        member(spec["target"]),
        spec["maneuver"],
        spec["weapon"],
        spec["actions"],
        [(a, member(t)) for a, t in spec["extra"]],
    )


def _check_haste(participant: Participant, haste: int | None) -> None:
    """D4: 0 to 5 haste actions, a Garou with the Rage to pay for them."""
    if not haste:
        if haste is not None and haste < 0:
            raise RoundError("Haste actions are counted from 0 to 5 (D4).")
        return
    stats = stats_for([participant])[participant.pk]
    if haste < 0 or haste > 5:
        raise RoundError("Haste actions are counted from 0 to 5 (D4).")
    if stats.creature == "werewolf" and stats.rage < haste:
        raise RoundError(
            f"{participant.name} has {stats.rage} Rage for {haste} haste actions (D4)."
        )


def _declare_locked(
    scene: Scene,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    participants: dict[int, Participant],
    spec: dict[str, Any],
) -> None:
    """Step the engine with one declaration (fresh, changed or anew after an abort, D4, D5,
    D14, D16), note its weapon and haste, and log it."""
    state = wod_state(combat)
    who = who_of(participant)
    declaration = _spec_declaration(combat, state, participant, participants, spec)
    # D4: who declared last before this one (their chance to change it ends now)
    before = [participants[int(state.declarations[-1].who)]] if state.declarations else []
    mine = state.declaration(who)
    editing = mine is not None and mine.action != "pending" and editable(state, who)
    try:
        if editing:
            state = state.change(declaration)
        elif mine is not None and mine.action == "pending":
            state = state.redeclare(declaration)
        else:
            state = state.declare(declaration)
    except RuleError as error:
        raise refusal_of(error) from error
    work = dict(combat.work)
    work.setdefault("detail", {})[who] = {"weapon": spec["weapon"]}
    haste = spec["haste"]
    if haste is not None and state.phase_index == 0 and not state.resolved:
        _check_haste(participant, haste)
        combat.haste = {**combat.haste, who: haste}
        main = state.phases[0]
        later = round_phases(combatants(combat), haste_map(combat))[1:]
        state = replace(state, phases=(main, *later))
    combat.state = state.to_dict()
    combat.work = work
    hidden_decl = (
        not is_visible(participant)
        or who in tied(state)
        or any(participants[int(t)].hidden for t in declaration.attack_targets())
    )
    text = f"{participant.name} {'changes to' if editing else 'declares'}: " + describe(
        declaration, participants, haste=combat.haste.get(who, 0)
    )
    record_round(
        scene,
        combat,
        by,
        text,
        public=not hidden_decl,
        concerns=[participant] if is_visible(participant) else [],
        participants=participants,
        # D5: a hidden NPC's committed attack is answered (unnamed) by its visible target;
        # any other declaration of a hidden NPC is seen by no player
        players=is_visible(participant)
        or (
            declaration.maneuver == "committed"
            and any(not participants[int(t)].hidden for t in declaration.attack_targets())
        ),
        # D4: the one who declared before may no longer change theirs (their prompt alone)
        told=[p.player_id for p in before if p.player_id],
    )


def _behind_hidden(state: WodRound, participants: dict[int, Participant], who: str) -> bool:
    """Whether only hidden characters declare before ``who`` now: players see ``who`` as
    the one declaring (a hidden NPC's turn is no gap in the order), so it may declare."""
    slots = [set(s) if isinstance(s, frozenset) else {s} for s in state.phase.declare]
    mine = next((i for i, s in enumerate(slots) if who in s), None)
    if mine is None or mine <= state.cursor:
        return False
    return all(
        participants[int(w)].hidden for s in slots[state.cursor : mine] for w in s
    ) and not any(participants[int(w)].hidden for w in slots[mine])


def _declare_early(
    scene: Scene,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    participants: dict[int, Participant],
    state: WodRound,
    spec: dict[str, Any],
) -> None:
    """D4 with hidden NPCs: a character players see as declaring while hidden ones still
    have to declares now; its declaration is checked as if its turn had come and held until
    the hidden ones have declared (the storyteller does not read it before then)."""
    who = who_of(participant)
    declaration = _spec_declaration(combat, state, participant, participants, spec)
    slot = next(
        i
        for i, s in enumerate(state.phase.declare)
        if who in (s if isinstance(s, frozenset) else {s})
    )
    try:
        replace(state, cursor=slot).declare(declaration)
    except RuleError as error:
        raise refusal_of(error) from error
    if spec["haste"] is not None and state.phase_index == 0:
        _check_haste(participant, spec["haste"])
    shown = {**vars(declaration), "extra": [list(x) for x in declaration.extra]}
    early = {**combat.work.get("early", {}), who: {"spec": spec, "shown": shown}}
    combat.work = {**combat.work, "early": early}
    record_round(
        scene,
        combat,
        by,
        f"{participant.name} has declared and waits for its turn (after those you hide)",
        public=False,
        participants=participants,
    )


def apply_early(
    scene: Scene, combat: Combat, by: AbstractBaseUser, participants: dict[int, Participant]
) -> None:
    """Declarations made ahead of their turn (:func:`_declare_early`) take their place once
    the hidden characters before them have declared; one that no longer stands is dropped
    (its player declares anew, the storyteller reads why)."""
    while True:
        state = wod_state(combat)
        early = dict(combat.work.get("early", {}))
        ready = [w for w in state.up if w in early and state.declaration(w) is None]
        if state.step is not Step.DECLARE or not ready:
            return
        who = ready[0]
        entry = early.pop(who)
        combat.work = {**combat.work, "early": early}
        participant = participants[int(who)]
        try:
            _declare_locked(scene, combat, by, participant, participants, entry["spec"])
        except RoundError as error:
            record_round(
                scene,
                combat,
                by,
                f"{participant.name}'s declaration made ahead of its turn no longer stands"
                f" ({error}): {participant.name} declares anew",
                public=False,
                participants=participants,
            )
            return


def _declaration(
    combat: Combat,
    state: WodRound,
    participant: Participant,
    participants: dict[int, Participant],
    action: str,
    target: Participant | None,
    maneuver: str,
    weapon: str,
    actions: int,
    extra: Sequence[tuple[str, Participant | None]],
) -> Declaration:
    if action not in wod.ACTIONS:
        raise RoundError(f"Unknown action {action!r} (D5, D6).")
    if maneuver not in wod.MANEUVERS:
        raise RoundError(f"Unknown maneuver {maneuver!r} (D5).")
    grapple = grapple_of(combat, who_of(participant))
    if grapple is None and action in (*wod.GRAPPLER_ACTIONS, *wod.VICTIM_ACTIONS):
        raise RoundError(f"{participant.name} is in no grapple (G2).")
    victim = grapple is not None and grapple["grappler"] != who_of(participant)
    if grapple is not None and not victim:
        if action not in wod.GRAPPLER_ACTIONS:
            raise RoundError("The Grappler sustains the grapple or releases it (G2).")
    elif victim and action not in wod.VICTIM_ACTIONS:
        raise RoundError("A grappled Victim can only resist, reverse or relent (G2).")
    if action in wod.THIRD_PARTY_ACTIONS and (
        target is None or grapple_of(combat, who_of(target)) is None
    ):
        raise RoundError("Name someone in a grapple to help or to pull apart (G5, G7).")
    if action in wod.ATTACK_ACTIONS and action != "guard" and target is None:
        raise RoundError("Name the target of the attack (D5).")
    if target is not None:
        require_member(combat, target)
        if target.pk == participant.pk:
            raise RoundError("A character does not attack itself (D5).")
    if maneuver != "basic" and action not in ("attack", "grapple"):
        raise RoundError("Power, feint and committed are kinds of attack (D5).")
    stats = stats_for([participant])[participant.pk]
    if weapon and stats.weapon(weapon) is None:
        raise RoundError(f"{participant.name} carries no {weapon}.")
    further: list[tuple[str, str | None]] = []
    for extra_action, extra_target in extra:
        if extra_action not in wod.SPLIT_ACTIONS:
            raise RoundError("A split adds an attack, a block or a dodge (D14).")
        if victim and extra_action != "block":
            raise RoundError("A grappled Victim splits its pool only to block (G7).")
        if extra_action == "attack":
            if extra_target is None:
                raise RoundError("Name the target of each attack in a split (D14).")
            require_member(combat, extra_target)
            if extra_target.pk == participant.pk:
                raise RoundError("A character does not attack itself (D5).")
        further.append((extra_action, who_of(extra_target) if extra_action == "attack" else None))
    # G2: beside its sustain a Grappler may defend without splitting; anything else splits.
    counted = [a for a, _t in further if not (action == "sustain" and a in wod.DEFENSE_ACTIONS)]
    actions = max(actions, 1 + len(counted))
    try:
        split(actions, max(stats.dot("Wits"), 1))
        declaration = Declaration(
            who=who_of(participant),
            action=action,
            target=who_of(target) if target else None,
            maneuver=maneuver,
            actions=actions,
            extra=tuple(further),
        )
        check_split(declaration)
    except RuleError as error:
        raise refusal_of(error) from error
    return declaration
