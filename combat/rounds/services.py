"""Writes to combat rounds: start, initiative, declarations, resolution, book keeping.

Every function runs in one transaction, locks the scene (``lock_open_scene``) and the
combat row (``select_for_update``), steps the engine (``combat.rules.wod_round``), writes
the ledger for damage and costs, and records the change (``record_change``: seq, log,
push on commit). Only the scene's storyteller starts, advances, skips, pauses or ends a
round; a player acts only for their own characters. A refused step raises
:class:`RoundError` with the rule ID and changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import random
import secrets
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from characters.models import LedgerKind
from characters.services import LedgerError, ledger_damage, ledger_spend
from combat import steps
from combat.access import NOT_HERE
from combat.models import Combat, CombatStage, LogKind, Participant, Scene
from combat.rounds import wod
from combat.rounds.sheets import Stats, stats_for
from combat.rules import exchange
from combat.rules.dice import RollKind, RollResult
from combat.rules.errors import RuleError
from combat.rules.grapple import (
    Effect,
    Grapple,
    Intent,
    Over,
    hostage_block_lands,
    single_effect,
)
from combat.rules.penalties import split
from combat.rules.wod_initiative import Combatant, round_phases
from combat.rules.wod_round import Answer, Declaration, Step, TimedEffect, WodRound, check_split
from combat.services import SceneError, is_storyteller_of_scene, lock_open_scene, record_change
from combat.steps import Refused

#: RULES.md, Shared terms (Game clock): a wod_dice round is fifteen seconds of game time.
ROUND_SECONDS = {"wod_dice": 15, "met_bns": 3}
RESULTS_KEPT = 12

NOT_STORYTELLER = "Only the storyteller of this scene can do that."
NOT_YOURS = "{name} is not your character: you act only for your own."
NO_COMBAT = "No fight is running in this scene."
ALREADY_FIGHTING = "A fight is already running in this scene."
NEEDS_TWO = "A fight needs at least two characters of this scene."
PAUSED = "The storyteller paused the round."
# A soft timer: when a declaration takes longer, the tablet asks the storyteller (declare for
# them or pass over); nothing is ever filled in for a player.
DECLARE_SECONDS = 60
MOVED_ON = "The round moved on since you looked; nothing was changed. Look again."
WRONG_STAGE = "Not now: the fight is at {stage}."
MISSING_INITIATIVE = "Initiative still missing for {names} (D3)."
UNSUPPORTED = "Rounds for {ruleset} are not run here yet."
NOT_IN_FIGHT = "{name} is not in this fight."


class RoundError(Refused):
    """A round step refused, with a sentence for people (naming the rule where one refuses)."""


UNSEEN_CHARACTER = "an unseen character"  # a hidden NPC in a refusal's words


def _rule(error: RuleError) -> RoundError:
    """A refusal of the engine, which knows characters by participant id, worded with their
    names (players read it): a hidden NPC stays unseen, whoever reads it."""
    ids = {int(who) for who in error.names if who.isdigit()}
    rows = Participant.objects.filter(pk__in=ids).values_list("pk", "name", "hidden")
    names = {str(pk): UNSEEN_CHARACTER if hidden else name for pk, name, hidden in rows}
    return RoundError(error.worded(lambda who: names.get(who, who)), error.rule)


# -- locking and roles ---------------------------------------------------------------


def _lock(combat: Combat) -> tuple[Scene, Combat]:
    try:
        scene = lock_open_scene(combat.scene)
    except SceneError as error:
        raise RoundError(str(error)) from error
    locked = Combat.objects.select_for_update().get(pk=combat.pk)
    if locked.ended_at is not None:
        raise RoundError(NO_COMBAT)
    return scene, locked


def _lock_for(
    combat: Combat, by: AbstractBaseUser, participant: Participant
) -> tuple[Scene, Combat]:
    """Lock the fight for a step ``participant`` takes: a member of it, acted for by its own
    player or the storyteller."""
    scene, locked = _lock(combat)
    _member(locked, participant)
    _require_for(by, scene, participant)
    return scene, locked


def _begin(
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
    _member(locked, participant)
    _require_for(by, scene, participant)
    return scene, locked, False


def _require_st(by: AbstractBaseUser, scene: Scene) -> None:
    if not is_storyteller_of_scene(by, scene):
        raise RoundError(NOT_STORYTELLER)


def _may_act_for(by: AbstractBaseUser, scene: Scene, participant: Participant) -> bool:
    """The storyteller acts for anyone (NPCs, or a player who asked); a player for their own."""
    if participant.character_id and participant.character.player_id == by.pk:
        return True
    return is_storyteller_of_scene(by, scene)


def _require_for(by: AbstractBaseUser, scene: Scene, participant: Participant) -> None:
    if not _may_act_for(by, scene, participant):
        if participant.hidden:  # a hidden NPC is nobody to a player (combat.access)
            raise RoundError(NOT_HERE)
        raise RoundError(NOT_YOURS.format(name=participant.name))


def _member(combat: Combat, participant: Participant) -> None:
    if participant.pk not in combat.members or participant.scene_id != combat.scene_id:
        raise RoundError(NOT_IN_FIGHT.format(name=participant.name))


def _participants(combat: Combat) -> dict[int, Participant]:
    return {
        p.pk: p
        for p in Participant.objects.filter(pk__in=combat.members).select_related(
            "character", "character__player"
        )
    }


def _player_ids(participants: dict[int, Participant]) -> list[int]:
    return [p.character.player_id for p in participants.values() if p.character_id]


def _where(combat: Combat) -> str:
    """A digest of where the fight stands, hidden declarations included (the parts of a
    split resolved so far count, D14, and a declaration held until its turn). Never sent to
    anyone: it only tells :func:`_record` that the state moved, and the soft timer when."""
    work = combat.work or {}
    where = [combat.state or {}, work.get("parts", {})]
    if work.get("early"):
        where.append(work["early"])
    return hashlib.sha256(json.dumps(where, sort_keys=True).encode()).hexdigest()


def state_token(combat: Combat, *, players: bool = False) -> str:
    """Where the fight stands, as a form carries it so a tap made on an older state is
    refused: a random value drawn each time the state moves (:func:`_bump`), so nothing in
    the state can be recovered from it. ``players``: the token the phones carry, which moves
    only with a change players see (a hidden NPC's own step leaves it)."""
    work = combat.work or {}
    drawn = work.get("players_token" if players else "token")
    if drawn is None:  # nothing drawn yet: one the server's secret keys to this fight
        drawn = steps.token("round.players" if players else "round", combat.pk, 0)
    return f"{combat.round_number}-{combat.stage}-{drawn}"


def _bump(combat: Combat, *, players: bool) -> None:
    """The state moved (:func:`_where`): the storyteller's token moves, and the phones' too
    when players see the change."""
    work = dict(combat.work or {})
    where = _where(combat)
    if work.get("where") != where:
        work["where"] = where
        work["token"] = secrets.token_hex(8)
        if players:
            work["players_token"] = secrets.token_hex(8)
    combat.work = work


def _mark_since(combat: Combat) -> None:
    """Note when the fight reached the state it is in (or was paused or resumed), for the soft
    timer of the declaration it waits on (:func:`declare_deadline`): the tablet's, and the
    phones', which a hidden NPC's own step does not restart."""
    work = dict(combat.work or {})
    now = timezone.now().isoformat()
    for since, players in (("since", False), ("players_since", True)):
        mark = f"{state_token(combat, players=players)}|{combat.paused}"
        if (work.get(since) or {}).get("mark") != mark:
            work[since] = {"mark": mark, "at": now}
    combat.work = work


def declare_deadline(combat: Combat, *, players: bool = False) -> datetime | None:
    """When the soft timer of the declaration the round waits on runs out (None while paused,
    or before anything was noted); ``players``: as the phones show it."""
    since = (combat.work or {}).get("players_since" if players else "since") or {}
    mark = f"{state_token(combat, players=players)}|{combat.paused}"
    if combat.paused or since.get("mark") != mark:
        return None
    return datetime.fromisoformat(since["at"]) + timedelta(seconds=DECLARE_SECONDS)


def _check_token(combat: Combat, at: str | None) -> None:
    """The token the actor saw: the tablet's, or a phone's (which a hidden NPC's own step
    does not move, so a player's tap is never refused for a change they cannot see)."""
    if at is not None and at not in (state_token(combat), state_token(combat, players=True)):
        raise RoundError(MOVED_ON)


def _record(
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
    _bump(combat, players=players)
    _mark_since(combat)
    combat.save()
    participants = participants if participants is not None else _participants(combat)
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
        private_user_ids=_player_ids(participants) if players else told,
        players=players,
    )


def _round(combat: Combat) -> WodRound:
    return WodRound.from_dict(combat.state)


def _who(participant: Participant | int) -> str:
    return str(participant if isinstance(participant, int) else participant.pk)


def _visible(participant: Participant) -> bool:
    return not participant.hidden


# -- start, initiative ---------------------------------------------------------------


def combat_start(
    *, scene: Scene, by: AbstractBaseUser, participants: Sequence[Participant]
) -> Combat:
    """D3, D4: the storyteller starts a fight with some of the scene's characters."""
    if scene.ruleset != "wod_dice":
        raise RoundError(UNSUPPORTED.format(ruleset=scene.get_ruleset_display()))
    with transaction.atomic():
        try:
            scene = lock_open_scene(scene)
        except SceneError as error:
            raise RoundError(str(error)) from error
        _require_st(by, scene)
        if Combat.objects.filter(scene=scene, ended_at__isnull=True).exists():
            raise RoundError(ALREADY_FIGHTING)
        ids = sorted({p.pk for p in participants})
        present = list(Participant.objects.filter(pk__in=ids, scene=scene, removed_at__isnull=True))
        if len(present) < 2 or len(present) != len(ids):
            raise RoundError(NEEDS_TWO)
        combat = Combat(
            scene=scene,
            ruleset=scene.ruleset,
            members=ids,
            started_by=by,
            haste={},
        )
        combat.save()
        names = ", ".join(p.name for p in present if _visible(p))
        _record(scene, combat, by, f"Combat! Roll initiative: {names}")
    return combat


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
    with transaction.atomic():
        payload = {"c": combat.pk, "p": participant.pk, "r": roll}
        scene, combat, replay = _begin(combat, by, participant, "round.initiative", key, payload)
        if replay:
            return combat
        if combat.stage != CombatStage.INITIATIVE:
            raise RoundError(WRONG_STAGE.format(stage=combat.get_stage_display()))
        who = _who(participant)
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
        total = _combatant(who, entry).total
        text = f"{participant.name} initiative {total} (die {die}{', typed' if typed else ''})"
        _record(
            scene,
            combat,
            by,
            text,
            public=_visible(participant),
            concerns=[participant],
        )
    return combat


def combat_roll_missing(
    *, combat: Combat, by: AbstractBaseUser, rng: random.Random | None = None
) -> Combat:
    """D3: the storyteller rolls initiative on the server for everyone who has not."""
    rng = rng or random.SystemRandom()
    participants = _participants(combat)
    stats = stats_for(participants.values())
    for pid in combat.members:
        fresh = Combat.objects.get(pk=combat.pk)
        if _who(pid) in fresh.initiative or _who(pid) in _away(fresh) or not stats[pid].can_act:
            continue  # out of the fight, or Incapacitated (D2): no initiative to roll
        combat_initiative(combat=combat, by=by, participant=participants[pid], rng=rng)
    return Combat.objects.get(pk=combat.pk)


#: Kept in ``combat.work`` from phase to phase and round to round: the members taken out of
#: the fight (``out``), those away in a chase that came from it (``chase``, D9, K4) and the
#: surviving escapes waiting on the attacker's choice to pursue (``pursuits``, K4).
# the tokens (``_bump``) go on too, so an old one never comes back
KEPT = ("out", "chase", "pursuits", "where", "token", "players_token")


def _kept(work: dict | None) -> dict[str, Any]:
    return {k: work[k] for k in KEPT if k in (work or {})}


def _out(combat: Combat) -> list[str]:
    """Members the storyteller took out of the fight (they roll no initiative, act in no
    round) until brought back in."""
    return list((combat.work or {}).get("out", []))


def _chasing(combat: Combat) -> list[str]:
    """D9, K4: members away in a chase that came from this fight (Prey and Predators), who
    have no turn in it while the chase runs."""
    return list((combat.work or {}).get("chase", []))


def _away(combat: Combat) -> set[str]:
    """Members with no part in the fight's next rounds: out of it, or away in its chase."""
    return set(_out(combat)) | set(_chasing(combat))


def combat_set_out(
    *, combat: Combat, by: AbstractBaseUser, participant: Participant, out: bool
) -> Combat:
    """The storyteller takes a member out of the fight (unconscious, fled, no longer in it)
    or brings it back in. It counts from the next round's initiative (D3); in a round under
    way the storyteller passes over it."""
    with transaction.atomic():
        scene, combat = _lock(combat)
        _require_st(by, scene)
        _member(combat, participant)
        who = _who(participant)
        kept = [w for w in _out(combat) if w != who]
        combat.work = {**combat.work, "out": [*kept, who] if out else kept}
        if out and combat.stage == CombatStage.INITIATIVE:
            combat.initiative = {k: v for k, v in combat.initiative.items() if k != who}
        verb = "is out of the fight" if out else "is back in the fight"
        _record(
            scene,
            combat,
            by,
            f"{participant.name} {verb}",
            public=_visible(participant),
            concerns=[participant],
        )
    return combat


def _combatant(who: str, entry: dict) -> Combatant:
    return Combatant(
        name=who,
        roll=entry["roll"],
        wits=entry["wits"],
        dexterity=entry["dexterity"],
        wound_penalty=entry["wound_penalty"],
        bonus=entry.get("bonus", 0),
    )


def _combatants(combat: Combat) -> list[Combatant]:
    out = _away(combat)
    return [
        _combatant(who, entry) for who, entry in sorted(combat.initiative.items()) if who not in out
    ]


def _haste_map(combat: Combat) -> dict[str, int]:
    """D4: the haste actions of this round: the ones announced (carried over until changed),
    but none for a character passed over in the Main Phase (``work["no_haste"]``)."""
    none = set((combat.work or {}).get("no_haste", []))
    return {
        who: n
        for who, n in combat.haste.items()
        if who in combat.initiative and n > 0 and who not in none and who not in _away(combat)
    }


def _afford_haste(
    combat: Combat, participants: dict[int, Participant], stats: dict[int, Stats]
) -> list[str]:
    """D4: a Garou pays one Rage for each haste action; a choice carried over from an earlier
    round that its Rage no longer pays for is cut to what it pays for. The storyteller's
    notes on what was cut."""
    notes = []
    haste = dict(combat.haste)
    for who, n in _haste_map(combat).items():
        st = stats.get(int(who))
        if st is not None and st.creature == "werewolf" and st.rage < n:
            haste[who] = max(st.rage, 0)
            notes.append(
                f"{participants[int(who)].name} has {st.rage} Rage for {n} haste actions:"
                f" {haste[who]} this round (D4)"
            )
    combat.haste = haste
    return notes


def combat_begin_round(*, combat: Combat, by: AbstractBaseUser, at: str | None = None) -> Combat:
    """D4: with every initiative in, the storyteller opens the Main Phase (declare low to
    high). Haste actions chosen last round carry over until their owner changes them."""
    with transaction.atomic():
        scene, combat = _lock(combat)
        _require_st(by, scene)
        _check_token(combat, at)
        if combat.stage != CombatStage.INITIATIVE:
            raise RoundError(WRONG_STAGE.format(stage=combat.get_stage_display()))
        participants = _participants(combat)
        stats = stats_for(participants.values())
        out = _away(combat)
        waiting = [
            pid
            for pid in combat.members
            if _who(pid) not in combat.initiative and _who(pid) not in out and pid in participants
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
            state = WodRound.start(_combatants(combat), _haste_map(combat), lost_main=lost)
        except RuleError as error:
            raise _rule(error) from error
        combat.grapples = [g for g in combat.grapples if not g.get("released_from_pin")]
        combat.state = state.to_dict()
        combat.stage = CombatStage.ROUND
        combat.work = {"phase_index": 0, **_kept(combat.work)}
        _record(scene, combat, by, f"Round {combat.round_number}: declare, slowest first")
        if cut:
            _record(scene, combat, by, "; ".join(cut), public=False, participants=participants)
        if unable:
            names = ", ".join(p.name for p in unable)
            _record(
                scene,
                combat,
                by,
                f"Not in this round: {names} (Incapacitated, D2)",
                public=all(_visible(p) for p in unable),
                concerns=unable,
            )
    return combat


# -- declarations --------------------------------------------------------------------


def _ties(state: WodRound) -> set[str]:
    """D3: characters tied on initiative, who declare privately to the storyteller."""
    tied: set[str] = set()
    for slot in state.phase.declare:
        if isinstance(slot, frozenset):
            tied |= set(slot)
    return tied


def _editable(state: WodRound, who: str) -> bool:
    """A declaration can be changed until the next character declares; the last one of the
    phase is being resolved as soon as it is made (the fastest resolves first), so no longer."""
    mine = state.declaration(who)
    if mine is None or state.resolved or (mine.action in ("pending", "none") and mine.aborted):
        return False
    return state.declarations[-1].who == who and state.step is Step.DECLARE


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
    with transaction.atomic():
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
        scene, combat, replay = _begin(combat, by, participant, "round.declare", key, payload)
        if replay:
            return combat
        if combat.paused:
            raise RoundError(PAUSED)
        if combat.stage != CombatStage.ROUND:
            raise RoundError(WRONG_STAGE.format(stage=combat.get_stage_display()))
        _check_token(combat, at)
        participants = _participants(combat)
        spec = {
            "action": action,
            "target": target.pk if target else None,
            "maneuver": maneuver,
            "weapon": weapon,
            "actions": actions,
            "extra": [[a, t.pk if t else None] for a, t in extra],
            "haste": haste,
        }
        state = _round(combat)
        who = _who(participant)
        if (
            state.step is Step.DECLARE
            and who not in state.up
            and state.declaration(who) is None
            and _behind_hidden(state, participants, who)
        ):
            _declare_early(scene, combat, by, participant, participants, state, spec)
            return combat
        _declare_locked(scene, combat, by, participant, participants, spec)
        _apply_early(scene, combat, by, participants)
        _skip_away(scene, combat, by, participants)
    return combat


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
    state = _round(combat)
    who = _who(participant)
    declaration = _spec_declaration(combat, state, participant, participants, spec)
    # D4: who declared last before this one (their chance to change it ends now)
    before = [participants[int(state.declarations[-1].who)]] if state.declarations else []
    mine = state.declaration(who)
    editing = mine is not None and mine.action != "pending" and _editable(state, who)
    try:
        if editing:
            state = state.change(declaration)
        elif mine is not None and mine.action == "pending":
            state = state.redeclare(declaration)
        else:
            state = state.declare(declaration)
    except RuleError as error:
        raise _rule(error) from error
    work = dict(combat.work)
    work.setdefault("detail", {})[who] = {"weapon": spec["weapon"]}
    haste = spec["haste"]
    if haste is not None and state.phase_index == 0 and not state.resolved:
        _check_haste(participant, haste)
        combat.haste = {**combat.haste, who: haste}
        main = state.phases[0]
        later = round_phases(_combatants(combat), _haste_map(combat))[1:]
        state = replace(state, phases=(main, *later))
    combat.state = state.to_dict()
    combat.work = work
    hidden_decl = (
        not _visible(participant)
        or who in _ties(state)
        or any(participants[int(t)].hidden for t in declaration.attack_targets())
    )
    text = f"{participant.name} {'changes to' if editing else 'declares'}: " + describe(
        declaration, participants, haste=combat.haste.get(who, 0)
    )
    _record(
        scene,
        combat,
        by,
        text,
        public=not hidden_decl,
        concerns=[participant] if _visible(participant) else [],
        participants=participants,
        # D5: a hidden NPC's committed attack is answered (unnamed) by its visible target;
        # any other declaration of a hidden NPC is seen by no player
        players=_visible(participant)
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


def _early_declaration(early: dict[str, Any], who: str) -> Declaration:
    shown = early["shown"]
    return Declaration(**{**shown, "who": who, "extra": tuple(tuple(x) for x in shown["extra"])})


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
    who = _who(participant)
    declaration = _spec_declaration(combat, state, participant, participants, spec)
    slot = next(
        i
        for i, s in enumerate(state.phase.declare)
        if who in (s if isinstance(s, frozenset) else {s})
    )
    try:
        replace(state, cursor=slot).declare(declaration)
    except RuleError as error:
        raise _rule(error) from error
    if spec["haste"] is not None and state.phase_index == 0:
        _check_haste(participant, spec["haste"])
    shown = {**vars(declaration), "extra": [list(x) for x in declaration.extra]}
    early = {**combat.work.get("early", {}), who: {"spec": spec, "shown": shown}}
    combat.work = {**combat.work, "early": early}
    _record(
        scene,
        combat,
        by,
        f"{participant.name} has declared and waits for its turn (after those you hide)",
        public=False,
        participants=participants,
    )


def _apply_early(
    scene: Scene, combat: Combat, by: AbstractBaseUser, participants: dict[int, Participant]
) -> None:
    """Declarations made ahead of their turn (:func:`_declare_early`) take their place once
    the hidden characters before them have declared; one that no longer stands is dropped
    (its player declares anew, the storyteller reads why)."""
    while True:
        state = _round(combat)
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
            _record(
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
    grapple = _grapple_of(combat, _who(participant))
    if grapple is None and action in (*wod.GRAPPLER_ACTIONS, *wod.VICTIM_ACTIONS):
        raise RoundError(f"{participant.name} is in no grapple (G2).")
    victim = grapple is not None and grapple["grappler"] != _who(participant)
    if grapple is not None and not victim:
        if action not in wod.GRAPPLER_ACTIONS:
            raise RoundError("The Grappler sustains the grapple or releases it (G2).")
    elif victim and action not in wod.VICTIM_ACTIONS:
        raise RoundError("A grappled Victim can only resist, reverse or relent (G2).")
    if action in wod.THIRD_PARTY_ACTIONS and (
        target is None or _grapple_of(combat, _who(target)) is None
    ):
        raise RoundError("Name someone in a grapple to help or to pull apart (G5, G7).")
    if action in wod.ATTACK_ACTIONS and action != "guard" and target is None:
        raise RoundError("Name the target of the attack (D5).")
    if target is not None:
        _member(combat, target)
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
            _member(combat, extra_target)
            if extra_target.pk == participant.pk:
                raise RoundError("A character does not attack itself (D5).")
        further.append((extra_action, _who(extra_target) if extra_action == "attack" else None))
    # G2: beside its sustain a Grappler may defend without splitting; anything else splits.
    counted = [a for a, _t in further if not (action == "sustain" and a in wod.DEFENSE_ACTIONS)]
    actions = max(actions, 1 + len(counted))
    try:
        split(actions, max(stats.dot("Wits"), 1))
        declaration = Declaration(
            who=_who(participant),
            action=action,
            target=_who(target) if target else None,
            maneuver=maneuver,
            actions=actions,
            extra=tuple(further),
        )
        check_split(declaration)
    except RuleError as error:
        raise _rule(error) from error
    return declaration


def describe(d: Declaration, participants: dict[int, Participant], *, haste: int = 0) -> str:
    """A declaration as a line people read."""
    text = wod.ACTION_LABELS.get(d.action, d.action)
    if d.maneuver != "basic":
        text = f"{d.maneuver} {text.lower()}"
    if d.target:
        target = participants.get(int(d.target))
        text += f" on {target.name if target else '?'}"
    for action, on in d.extra:
        text += f", + {wod.ACTION_LABELS.get(action, action).lower()}"
        if on:
            target = participants.get(int(on))
            text += f" on {target.name if target else '?'}"
    if d.actions > 1:
        text += f" (split in {d.actions})"
    if haste:
        text += f", {haste} haste"
    return text


def combat_skip(
    *, combat: Combat, by: AbstractBaseUser, participant: Participant, at: str | None = None
) -> Combat:
    """The storyteller passes over a character who does not declare (no action this phase):
    a timeout never fills in an action by itself, the storyteller decides."""
    with transaction.atomic():
        scene, combat = _lock(combat)
        _require_st(by, scene)
        _member(combat, participant)
        _check_token(combat, at)
        _require_no_pursuit(combat)
        state = _round(combat)
        who = _who(participant)
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
                    later = round_phases(_combatants(combat), _haste_map(combat))[1:]
                    state = replace(state, phases=(state.phases[0], *later))
            else:
                state = state.resolve(who)
        except RuleError as error:
            raise _rule(error) from error
        combat.state = state.to_dict()
        early = {k: v for k, v in combat.work.get("early", {}).items() if k != who}
        combat.work = {**combat.work, "early": early}
        _reset_phase_work(combat, state)
        participants = _participants(combat)
        _record(
            scene,
            combat,
            by,
            f"{participant.name} is passed over",
            public=_visible(participant),
            concerns=[participant],
            participants=participants,
        )
        _apply_early(scene, combat, by, participants)
        _skip_away(scene, combat, by, participants)
    return combat


def combat_pause(*, combat: Combat, by: AbstractBaseUser, paused: bool) -> Combat:
    """Only the storyteller pauses and resumes a round."""
    with transaction.atomic():
        scene, combat = _lock(combat)
        _require_st(by, scene)
        combat.paused = paused
        _record(scene, combat, by, "Round paused" if paused else "Round resumed")
    return combat


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
    with transaction.atomic():
        payload = {"c": combat.pk, "a": attacker.pk if attacker else None, "x": answer}
        scene, combat, replay = _begin(combat, by, participant, "round.committed", key, payload)
        if replay:
            return combat
        state = _round(combat)
        if attacker is None:
            attacker = _unseen_committed(combat, state, participant)
        try:
            state = state.answer_committed(_who(participant), _who(attacker), Answer(answer))
        except RuleError as error:
            raise _rule(error) from error
        except ValueError as error:
            raise RoundError(str(error)) from error
        combat.state = state.to_dict()
        label = {
            "accept": "accepts",
            "harder": "takes +2 difficulty against",
            "abort": "aborts to a defense against",
        }[answer]
        _record(
            scene,
            combat,
            by,
            f"{participant.name} {label} {attacker.name}'s committed attack",
            public=_visible(participant) and _visible(attacker),
            concerns=[participant, attacker],  # a hidden attacker: the storyteller's line
        )
    return combat


def _unseen_committed(combat: Combat, state: WodRound, target: Participant) -> Participant:
    """D5: the hidden attacker whose committed attack on ``target`` waits for an answer."""
    participants = _participants(combat)
    who = _who(target)
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
    with transaction.atomic():
        payload = {"c": combat.pk, "p": participant.pk, "r": reason, "d": dice}
        scene, combat, replay = _begin(combat, by, participant, "round.abort", key, payload)
        if replay:
            return combat
        if combat.paused:
            raise RoundError(PAUSED)
        state = _round(combat)
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
                _who(participant),
                successes=result.successes,
                reason=reason,
                attacker=_who(attacker) if attacker else None,
            )
        except RuleError as error:
            raise _rule(error) from error
        except ValueError as error:
            raise RoundError(str(error)) from error
        combat.state = state.to_dict()
        ok = result.successes > 0
        _add_result(
            combat,
            f"{participant.name} aborts: {'declares anew' if ok else 'the action stands'}",
            [wod.roll_dict("Willpower", result, who=participant.name, typed=typed is not None)],
            public=_visible(participant),
        )
        _record(
            scene,
            combat,
            by,
            f"{participant.name} tries to abort (Willpower {result.successes} successes):"
            f" {'may declare anew' if ok else 'failed'}",
            public=_visible(participant),
            concerns=[participant],
        )
    return combat


# -- resolution ----------------------------------------------------------------------


def _reset_phase_work(combat: Combat, state: WodRound) -> None:
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


def _add_result(combat: Combat, text: str, rolls: list[dict], *, public: bool) -> None:
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


def resolution_preview(combat: Combat, who: str) -> dict[str, Any]:
    """What the tablet shows before the storyteller rolls ``who``'s action: the pools and
    difficulties the rules give (D5, D6, D13-D15), which the storyteller may override."""
    state = _round(combat)
    participants = _participants(combat)
    stats = stats_for(participants.values())
    return _plan(combat, state, who, participants, stats)


def resolving_parts(declaration: Declaration | None) -> list[Declaration]:
    """D14: what a character's resolution rolls, one part at a time: the main action, then
    each attack split off it (a main action that rolls nothing is left out when attacks
    follow). A defense split off is no part: it answers the attacks on the character."""
    if declaration is None:
        return [None]
    attacks = [
        replace(declaration, action=action, target=target, maneuver="basic", extra=())
        for action, target in declaration.extra
        if action == "attack"
    ]
    quiet = declaration.action in (*wod.DEFENSE_ACTIONS, "none", "move", "other")
    return attacks if attacks and quiet else [declaration, *attacks]


def _part(combat: Combat, state: WodRound, who: str) -> tuple[int, int, Declaration | None]:
    """Which part of ``who``'s resolution comes next: (index, how many, the part)."""
    parts = resolving_parts(state.declaration(who))
    index = min(combat.work.get("parts", {}).get(who, 0), len(parts) - 1)
    return index, len(parts), parts[index]


def _plan(
    combat: Combat,
    state: WodRound,
    who: str,
    participants: dict[int, Participant],
    stats: dict[int, Stats],
) -> dict[str, Any]:
    index, count, mine = _part(combat, state, who)
    work = combat.work
    me = stats[int(who)]
    detail = work.get("detail", {}).get(who, {})
    plan: dict[str, Any] = {
        "who": who,
        "kind": "nothing",
        "declaration": mine,
        "part": index + 1,
        "parts": count,
    }
    if mine is None or mine.action in ("none", "move", "other", "pending"):
        return plan
    if who in work.get("spent", []) and index == 0:
        return {**plan, "kind": "spent"}
    if who in state.negated:
        return {**plan, "kind": "negated"}
    grapple = _grapple_of(combat, who)
    if mine.action in wod.VICTIM_ACTIONS:
        return {**plan, "kind": "victim"}
    if mine.action in wod.THIRD_PARTY_ACTIONS:
        held = _grapple_of(combat, mine.target or "")
        plan.update(kind=mine.action, target=mine.target, grapple=held)
        if mine.action == "assist" and held is not None:
            plan["attack"] = wod.action_pool(me, "grapple").as_dict()  # G7: the same pool
        return plan
    if mine.action == "release":
        return {**plan, "kind": "release", "grapple": grapple}
    holding = index == 0 and grapple is not None and grapple["grappler"] == who
    if holding and grapple.get("over") == "pinned":
        return {**plan, "kind": "pin", "grapple": grapple}
    if holding:
        victim = grapple["victim"]
        vstats = stats[int(victim)]
        split_pen = -state.split_penalty(who, max(me.dot("Wits"), 1))
        # G7 with D14: a Victim that split its pool to block rolls its grapple pool split too.
        vsplit = 0
        if state.declaration(victim) is not None:
            vsplit = -state.split_penalty(victim, max(vstats.dot("Wits"), 1))
        return {
            **plan,
            "kind": "grapple_hold",
            "target": victim,
            "attack": wod.action_pool(me, "grapple", penalty=split_pen).as_dict(),
            "defense": wod.action_pool(vstats, "grapple", penalty=vsplit).as_dict(),
            "grapple": grapple,
        }
    if mine.action not in ("attack", "grapple"):
        return {**plan, "kind": "defense_only" if mine.action != "guard" else "guard"}
    target = mine.target
    tstats = stats[int(target)]
    theirs = state.declaration(target)
    # D8, D13: in a haste phase a target that declares nothing now keeps its Main Phase
    # defense (the action itself was resolved: no counter, no guard from it).
    carried = theirs is None and state.phase_index > 0
    if carried:
        theirs = state.standing(target)
    weapon = wod.weapon_for(me, detail.get("weapon"))
    split_pen = -state.split_penalty(who, max(me.dot("Wits"), 1))
    attack = wod.action_pool(
        me, mine.action, weapon=weapon.name, maneuver=mine.maneuver, penalty=split_pen
    )
    attack = replace(attack, difficulty=min(10, attack.difficulty))
    plan.update(kind="attack", target=target, weapon=weapon.name, attack=attack.as_dict())
    harder = state.difficulty_modifier(target)
    attack_number = work.get("attacks_on", {}).get(target, 0) + 1
    # D8 counts a hidden NPC's attack too; a line players read counts only the ones they saw
    seen_number = attack_number - work.get("attacks_on_unseen", {}).get(target, 0)
    theirs_detail = work.get("detail", {}).get(target, {})
    defense_action = None
    if (
        theirs is not None
        and not carried
        and target not in state.resolved
        and target not in work.get("spent", [])
    ):
        if (
            theirs.action in ("attack", "grapple")
            and theirs.target == who
            and weapon.pool != "firearms"
        ):
            defense_action = "counter"  # D7: attack against attack
        elif theirs.action == "guard" and target not in work.get("guard_used", []):
            defense_action = "guard"
        elif theirs.action in wod.DEFENSE_ACTIONS:
            defense_action = theirs.action
        elif theirs.split_defense():
            defense_action = theirs.split_defense()
    elif (
        theirs is not None
        and theirs.action in wod.DEFENSE_ACTIONS
        and target not in work.get("spent", [])
    ):
        defense_action = theirs.action  # a defense holds all round (D8, D13)
    if defense_action is None and theirs is not None and theirs.split_defense():
        defense_action = theirs.split_defense()  # D14: the defense split off holds all round
    held = _grapple_of(combat, target)
    if held and held["victim"] == target and held["grappler"] != who:
        # G7: a grappled Victim defends against a third party only by blocking.
        defense_action = defense_action if defense_action == "block" else None
    if (
        held
        and held["grappler"] == target
        and held.get("over") is None
        and who != held["victim"]
        and mine.action == "attack"
    ):
        # G6 with G7: the Grappler may answer a third party's attack with a forced effect,
        # paid in Control even past what it has: a defense roll (Shrug Off) or the Victim
        # held up as a shield (Hostage Block). Either rolls the Grappler's block pool (D6).
        tpen = -state.split_penalty(target, max(tstats.dot("Wits"), 1)) if theirs else 0
        forced = wod.action_pool(tstats, "block", against=weapon, penalty=tpen)
        plan["forced"] = [(e.value, e.cost) for e in (Effect.SHRUG_OFF, Effect.HOSTAGE_BLOCK)]
        plan["forced_pool"] = replace(
            forced, difficulty=min(10, forced.difficulty + harder)
        ).as_dict()
        plan["grapple"] = held
    plan["defense_action"] = defense_action
    if defense_action is None:
        plan["defense"] = None
        return plan
    tsplit = 0
    if theirs is not None:
        tsplit = -state.split_penalty(target, max(tstats.dot("Wits"), 1))
    if defense_action in ("counter", "guard"):
        tweapon = wod.weapon_for(tstats, theirs_detail.get("weapon"))
        tact = "attack" if defense_action == "guard" else theirs.action
        pool = wod.action_pool(
            tstats, tact, weapon=tweapon.name, maneuver=theirs.maneuver, penalty=tsplit
        )
        plan["counter_weapon"] = tweapon.name
    else:
        pool = wod.action_pool(tstats, defense_action, against=weapon, penalty=tsplit)
        dice = state.defense_dice(target, pool.dice, attack_number)
        pool = replace(
            pool,
            dice=dice,
            parts=pool.parts + (f", attack {seen_number}" if seen_number > 1 else ""),
        )
    pool = replace(pool, difficulty=min(10, pool.difficulty + harder))
    plan["defense"] = pool.as_dict()
    if defense_action == "escape" and target in work.get("escape", {}):
        plan["escape_rolled"] = work["escape"][target]
    return plan


def _grapple_of(combat: Combat, who: str) -> dict | None:
    """The grapple ``who`` is in (held, or a Pin held), if any (G1-G5)."""
    return next(
        (
            g
            for g in combat.grapples
            if who in (g["grappler"], g["victim"]) and g.get("over") in (None, "pinned")
        ),
        None,
    )


def _g(data: dict) -> Grapple:
    return Grapple.from_dict({k: v for k, v in data.items() if k != "round"})


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
    with transaction.atomic():
        scene, combat = _lock(combat)
        _require_st(by, scene)
        _member(combat, participant)
        if combat.paused:
            raise RoundError(PAUSED)
        _check_token(combat, at)
        if combat.stage != CombatStage.ROUND:
            raise RoundError(WRONG_STAGE.format(stage=combat.get_stage_display()))
        _require_no_pursuit(combat)
        state = _round(combat)
        who = _who(participant)
        if state.step is not Step.RESOLVE or who not in state.up:
            raise RoundError(f"It is not {participant.name}'s turn to resolve (D4).")
        mine = state.declaration(who)
        if mine is not None and mine.action == "pending":
            raise RoundError(
                f"{participant.name} aborted and has not named the new action: declare it for"
                " them or pass over them (D16)."
            )
        participants = _participants(combat)
        stats = stats_for(participants.values())
        unpaid: list[str] = []
        if state.phase_index == 0 and not combat.work.get("rage_paid"):
            unpaid = _pay_rage(combat, by, participants, stats)
        if unpaid:
            later = round_phases(_combatants(combat), _haste_map(combat))[1:]
            state = replace(state, phases=(state.phases[0], *later))
            combat.state = state.to_dict()
            _record(scene, combat, by, "; ".join(unpaid), public=False, participants=participants)
        plan = _plan(combat, state, who, participants, stats)
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
            state = _round(combat)  # a break-up (G5) negated actions meanwhile
            if plan["part"] < plan["parts"] and plan["kind"] != "negated":
                work["parts"] = {**work.get("parts", {}), who: plan["part"]}  # D14: next one
            else:
                state = state.resolve(who)
        except RuleError as error:
            raise _rule(error) from error
        combat.work = work
        combat.state = state.to_dict()
        _add_result(combat, text, rolls, public=public)
        _reset_phase_work(combat, state)
        _record(
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
        _skip_away(scene, combat, by, participants)
    return combat


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
    for who, n in _haste_map(combat).items():
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
        grapple = _g(g)
        victim = participants[int(g["victim"])]
        if kind == "pin":
            return f"{me.name} holds {victim.name} pinned (G5)", [], _visible(me), [me, victim]
        _replace_grapple(combat, g, grapple.release())
        return f"{me.name} releases {victim.name} (G5)", [], _visible(me), [me, victim]
    if kind in ("nothing", "spent", "negated", "defense_only", "guard", "victim", "release"):
        label = {
            "victim": "rolls on the Grappler's resolution (G3)",
            "spent": "already met in an exchange",
            "negated": "negated: the grapple was broken up (G5)",
            "guard": "guards: no one attacked, nothing happens (D6)",
        }.get(kind)
        if label is None:
            label = describe(mine, participants) if mine else "nothing"
        return f"{me.name}: {label}", [], _visible(me), [me]
    if kind in ("assist", "break_up"):
        return _third_party(combat, state, plan, participants, rng, overrides)
    if kind == "grapple_hold":
        return _grapple_hold(combat, plan, participants, stats, work, by, rng, overrides)
    target = participants[int(plan["target"])]
    attack = plan["attack"]
    a_diff = overrides["attack_difficulty"] or attack["difficulty"]
    rolls: list[dict] = []
    a_label = f"{wod.ACTION_LABELS[mine.action]} ({attack['parts']})"
    typed = overrides["attack_dice"]
    a_roll = _roll_noted(rolls, a_label, attack["dice"], a_diff, rng, typed=typed, who=me.name)
    public = _visible(me) and _visible(target)
    attacks_on = dict(work.get("attacks_on", {}))
    attacks_on[plan["target"]] = attacks_on.get(plan["target"], 0) + 1
    work["attacks_on"] = attacks_on
    if not _visible(me):
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
            d_roll = _roll_noted(
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
            text += _apply_effect(
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
    taken = _damage(combat, hitter, hit, pool, dtype, stats, by, rng, overrides, rolls)
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
    grapple = _g(g).effect(effect)
    pool = plan["forced_pool"]
    label = effect.value.replace("_", " ").title()
    b_label = f"{label} ({pool['parts']})"
    b_diff = overrides["forced_difficulty"] or pool["difficulty"]
    typed = overrides["forced_dice"]
    b_roll = _roll_noted(rolls, b_label, pool["dice"], b_diff, rng, typed=typed, who=target.name)
    victim = participants[int(g["victim"])]
    concerns = [me, target, victim]
    public = public and _visible(victim)
    head = f"{me.name} → {target.name}: {target.name} answers with {label}"
    head += f" (G6, −{effect.cost} Control)"
    a, b = a_roll.successes, b_roll.successes
    _replace_grapple(combat, g, grapple)
    if effect is Effect.SHRUG_OFF:
        hit, net = (target, a - b) if a > b else (None, 0)
    elif a == 0:
        hit, net = None, 0
    else:
        lands = hostage_block_lands(_g(g), attack=a, block=b)
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
    taken = _damage(combat, me, hit, pool_size, dtype, stats, by, rng, overrides, rolls)
    shield = " (the hostage takes the base damage)" if hit is victim else ""
    return (
        f"{head}: {me.name} hits {hit.name}{shield} ({net} net), {taken} {dtype}",
        rolls,
        public,
        concerns,
    )


_POOL_NAMES = {RollKind.DAMAGE: "damage pool", RollKind.SOAK: "soak pool"}


def _roll_noted(
    rolls: list[dict],
    label: str,
    pool: int,
    difficulty: int,
    rng: random.Random,
    *,
    typed: tuple[int, ...] | None,
    who: str,
    kind: RollKind = RollKind.ACTION,
) -> RollResult:
    """D1: roll ``who``'s pool (or take the dice typed in from the table: as many as the
    pool, refused naming whose pool it is) and note the roll in ``rolls`` under ``label``,
    typed or not. A damage or a soak roll (``kind``) counts successes only (D11, D12)."""
    what = _POOL_NAMES.get(kind, "pool")
    result = wod.roll(pool, difficulty, rng, typed=typed, kind=kind, who=who, what=what)
    rolls.append(wod.roll_dict(label, result, who=who, typed=typed is not None))
    return result


def _damage(
    combat: Combat,
    hitter: Participant,
    hit: Participant,
    pool: int,
    dtype: str,
    stats: dict[int, Stats],
    by: AbstractBaseUser,
    rng: random.Random,
    overrides: dict[str, Any],
    rolls: list[dict],
) -> int:
    """D11, D12: roll damage at 6, the target soaks at 6; what is left goes on the track."""
    label = f"Damage ({pool} dice, {dtype})"
    typed = overrides["damage_dice"]
    dmg = _roll_noted(
        rolls, label, pool, 6, rng, typed=typed, who=hitter.name, kind=RollKind.DAMAGE
    )
    st = stats[hit.pk]
    soak = wod.soak_dice(st, dtype)
    label, typed = f"Soak ({soak} dice)", overrides["soak_dice"]
    soaked = _roll_noted(rolls, label, soak, 6, rng, typed=typed, who=hit.name, kind=RollKind.SOAK)
    taken = max(dmg.successes - soaked.successes, 0)
    _wound(combat, hit, taken, dtype, st, by)
    return taken


def _wound(
    combat: Combat, hit: Participant, taken: int, dtype: str, st: Stats, by: AbstractBaseUser
) -> None:
    """D2: damage on the health track: through the ledger for a sheet, on the fight for a
    quick NPC. A full track takes what fits."""
    if taken <= 0:
        return
    if st.character is None:
        key = _who(hit)
        combat.npc_damage = {**combat.npc_damage, key: combat.npc_damage.get(key, 0) + taken}
        return
    ledger_damage(
        character=st.character,
        by=by,
        damage_type=dtype,
        amount=taken,
        empty_boxes=st.health_boxes - st.damage,
        reason=f"round {combat.round_number}",
        source=f"combat {combat.pk}",
    )


def _hand_to_chase(
    scene: Scene,
    combat: Combat,
    by: AbstractBaseUser,
    predator: Participant,
    prey: Participant,
    head_start: int,
    round_number: int,
) -> tuple[str, bool]:
    """D9, K4: the attacker who elects to pursue a surviving escape starts a chase with its
    remaining successes as head start. Returns the words for the log and whether the
    attacker is now in a chase after ``prey``.

    ``scene`` is the scene this resolution locked: the chase's log line takes the next seq on
    it. D13: the escape is one roll every attacker compares against, so a later attacker it
    beat in the same round joins the chase the first one started (before its first round) as
    another Predator with its own Lead (K1). When the chases app refuses (another chase is
    already running in the scene, K1) the fight goes on: the line says so and the
    storyteller gets a reminder to start it by hand.
    """
    from chases.refusals import ChaseError
    from chases.starting import join_escape_chase, start_chase

    origin = {"round_id": combat.pk, "round": round_number}
    try:
        joined = join_escape_chase(
            scene=scene,
            by=by,
            predator=predator,
            prey=prey,
            head_start=head_start,
            origin=origin,
        )
    except ChaseError as error:
        note = f"{predator.name} does not join the chase after {prey.name}: {error}"
        combat.reminders = [*combat.reminders, {"who": "", "text": note}]
        return f"; {predator.name} does not join the chase ({error})", False
    if joined is not None:
        return (
            f"; {predator.name} joins the chase as another Predator, Lead {head_start} (K1)",
            True,
        )
    try:
        start_chase(
            scene=scene,
            by=by,
            predators=[predator],
            prey=prey,
            start="escape",
            head_start=head_start,
            origin=origin,
        )
    except ChaseError as error:
        note = (
            f"No chase started for {prey.name} (head start {head_start}, K4): {error}"
            " Start it by hand when you can."
        )
        combat.reminders = [*combat.reminders, {"who": "", "text": note}]
        return f"; no chase started ({error}) — the storyteller starts it by hand", False
    return f"; a chase starts, head start {head_start} (K4)", True


def _pursuits(combat: Combat) -> list[dict[str, Any]]:
    """K4: surviving escapes whose attacker has not chosen yet to pursue or let go."""
    return list((combat.work or {}).get("pursuits", []))


def _require_no_pursuit(combat: Combat) -> None:
    """K4: the fight waits while an escape waits on its attacker's choice (so the Prey's
    place, in the fight or in the chase, is known before anyone acts again)."""
    waiting = _pursuits(combat)
    if waiting:
        participants = _participants(combat)
        offer = waiting[0]
        predator = participants[int(offer["predator"])].name
        prey = participants[int(offer["prey"])].name
        raise RoundError(f"First: does {predator} pursue {prey}? Pursue or let go (K4).")


def combat_pursue(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    predator: Participant,
    pursue: bool,
    at: str | None = None,
) -> Combat:
    """K4, D9, D13: the attacker a surviving escape beat elects to pursue or not; the
    storyteller taps the choice on the tablet (for a player's attacker, on their word).

    Pursue: a chase starts with the escape's remaining successes as head start, or the
    attacker joins the chase the same escape started as another Predator (K1); Prey and
    Predator are then away in the chase (no turn in the fight while it runs). Let go: the
    escaper leaves the fight (taken out; the storyteller may bring it back).
    """
    with transaction.atomic():
        scene, combat = _lock(combat)
        _require_st(by, scene)
        _member(combat, predator)
        _check_token(combat, at)
        who = _who(predator)
        waiting = _pursuits(combat)
        offer = next((o for o in waiting if o["predator"] == who), None)
        if offer is None:
            raise RoundError(f"No escape waits on {predator.name}'s choice to pursue (K4).")
        participants = _participants(combat)
        prey = participants[int(offer["prey"])]
        work = {**combat.work, "pursuits": [o for o in waiting if o is not offer]}
        if pursue:
            combat.work = work
            words, started = _hand_to_chase(
                scene, combat, by, predator, prey, int(offer["head_start"]), int(offer["round"])
            )
            text = f"{predator.name} pursues {prey.name}{words}"
            if started:
                away = [w for w in _chasing(combat) if w not in (who, offer["prey"])]
                work["chase"] = [*away, offer["prey"], who]
        else:
            kept = [w for w in _out(combat) if w != offer["prey"]]
            work["out"] = [*kept, offer["prey"]]
            text = f"{predator.name} lets {prey.name} go: {prey.name} leaves the fight (K4)"
        combat.work = work
        _record(
            scene,
            combat,
            by,
            text,
            public=_visible(predator) and _visible(prey),
            concerns=[predator, prey],
            participants=participants,
        )
        _skip_away(scene, combat, by, participants)
    return combat


def _skip_away(
    scene: Scene, combat: Combat, by: AbstractBaseUser, participants: dict[int, Participant]
) -> None:
    """D9, K4: while the chase runs, its Prey and Predators have no turn in the fight it came
    from: each of their turns still to come this round is passed over (no action), with a
    line (the storyteller's alone for a hidden NPC)."""
    away = set(_chasing(combat))
    if not away or combat.stage != CombatStage.ROUND or not combat.state:
        return
    state = _round(combat)
    passed: list[str] = []
    try:
        while state.step in (Step.DECLARE, Step.RESOLVE):
            if state.step is Step.DECLARE:
                due = [w for w in state.up if w in away and state.declaration(w) is None]
            else:
                due = [w for w in state.up if w in away and w not in state.resolved]
            if not due:
                break
            who = due[0]
            mine = state.declaration(who)
            if state.step is Step.DECLARE:
                state = state.declare(Declaration(who=who, action="none"))
            else:
                if mine is not None and mine.action == "pending":
                    state = state.pass_over(who)
                state = state.resolve(who)
            passed.append(who)
    except RuleError:
        pass  # a turn the engine will not pass by itself: the storyteller passes it over
    if not passed:
        return
    combat.state = state.to_dict()
    _reset_phase_work(combat, state)
    for who in dict.fromkeys(passed):
        p = participants.get(int(who))
        if p is None:
            continue
        _record(
            scene,
            combat,
            by,
            f"{p.name} is away in the chase: no turn in the fight (K4)",
            public=_visible(p),
            concerns=[p],
            participants=participants,
        )


# -- grapples ------------------------------------------------------------------------


def _grapple_hold(
    combat: Combat,
    plan: dict[str, Any],
    participants: dict[int, Participant],
    stats: dict[int, Stats],
    work: dict,
    by: AbstractBaseUser,
    rng: random.Random,
    overrides: dict[str, Any],
) -> tuple[str, list[dict], bool, list[Participant]]:
    """G2, G3: on the Grappler's resolution both roll grapple pools; the Victim resists or
    reverses as it declared (a relent pins it, G5)."""
    g = plan["grapple"]
    state = _round(combat)
    grappler, victim = participants[int(g["grappler"])], participants[int(g["victim"])]
    theirs = state.declaration(g["victim"])
    grapple = _g(g)
    rolls: list[dict] = []
    public = _visible(grappler) and _visible(victim)
    if theirs is not None and theirs.action == "relent":
        grapple = grapple.relent()
        _replace_grapple(combat, g, grapple)
        return (
            f"{victim.name} relents: pinned by {grappler.name} (G5)",
            rolls,
            public,
            [grappler, victim],
        )
    a = plan["attack"]
    d = plan["defense"]
    a_roll = _roll_noted(
        rolls,
        f"Grapple ({a['parts']})",
        a["dice"],
        overrides["attack_difficulty"] or a["difficulty"],
        rng,
        typed=overrides["attack_dice"],
        who=grappler.name,
    )
    d_roll = _roll_noted(
        rolls,
        f"Grapple ({d['parts']})",
        d["dice"],
        overrides["defense_difficulty"] or d["difficulty"],
        rng,
        typed=overrides["defense_dice"],
        who=victim.name,
    )
    intent = Intent.REVERSE if theirs is not None and theirs.action == "reverse" else Intent.RESIST
    grapple = grapple.roll(grappler=a_roll.successes, victim=d_roll.successes, intent=intent)
    text = (
        f"Grapple: {grappler.name} {a_roll.successes} against {victim.name}"
        f" {d_roll.successes}, Control {grapple.control}"
    )
    _replace_grapple(combat, g, grapple)
    if overrides["effect"] and grapple.over is None:
        text += _apply_effect(
            combat, _who(grappler), overrides["effect"], participants, stats, by, rng, rolls
        )
    if grapple.over is not None:
        text += f" — over: {grapple.over.value} (G5)"
    work["spent"] = [*work.get("spent", []), g["victim"]]
    return text, rolls, public, [grappler, victim]


def _third_party(
    combat: Combat,
    state: WodRound,
    plan: dict[str, Any],
    participants: dict[int, Participant],
    rng: random.Random,
    overrides: dict[str, Any],
) -> tuple[str, list[dict], bool, list[Participant]]:
    """G7: a helper's successes move Control (1 per 2); G5: pulling the grapple apart before
    either side has acted negates both their actions this phase."""
    me = participants[int(plan["who"])]
    g = plan.get("grapple")
    if g is None:
        return f"{me.name}: the grapple is over, nothing to do", [], _visible(me), [me]
    grappler, victim = participants[int(g["grappler"])], participants[int(g["victim"])]
    public = all(_visible(x) for x in (me, grappler, victim))
    concerns = [me, grappler, victim]
    grapple = _g(g)
    if plan["kind"] == "break_up":
        if g["grappler"] in state.resolved or g["victim"] in state.resolved:
            raise RuleError("G5", "Too late: one side of the grapple has already acted.")
        _replace_grapple(combat, g, grapple.break_up())
        combat.state = state.negate(
            *[w for w in (g["grappler"], g["victim"]) if state.declaration(w) is not None]
        ).to_dict()
        text = f"{me.name} pulls {grappler.name} and {victim.name} apart (G5)"
        return text, [], public, concerns
    side = "grappler" if plan["target"] == g["grappler"] else "victim"
    a = plan["attack"]
    rolls: list[dict] = []
    a_roll = _roll_noted(
        rolls,
        f"Help ({a['parts']})",
        a["dice"],
        overrides["attack_difficulty"] or a["difficulty"],
        rng,
        typed=overrides["attack_dice"],
        who=me.name,
    )
    grapple = grapple.assist(side=side, successes=a_roll.successes)
    _replace_grapple(combat, g, grapple)
    helped = grappler if side == "grappler" else victim
    text = f"{me.name} helps {helped.name}: Control {grapple.control} (G7)"
    if grapple.over is not None:
        text += f" — {victim.name} breaks free (G5)"
    return text, rolls, public, concerns


def _replace_grapple(combat: Combat, old: dict, new: Grapple) -> None:
    """Keep a grapple that holds (or pins, or owes a lost action, G5); drop one that ended."""
    kept = [x for x in combat.grapples if x != old]
    keep = new.over in (None, Over.PINNED) or new.released_from_pin
    data = {**new.to_dict(), "round": old.get("round", combat.round_number)}
    combat.grapples = [*kept, data] if keep else kept


def _apply_effect(
    combat: Combat,
    grappler: str,
    name: str,
    participants: dict[int, Participant],
    stats: dict[int, Stats],
    by: AbstractBaseUser,
    rng: random.Random,
    rolls: list[dict],
    *,
    single: bool = False,
) -> str:
    """G6 (G8 when ``single``): one effect paid in Control; Slam, Clinch and Crack roll
    damage the Victim soaks."""
    g = _grapple_of(combat, grappler)
    if g is None:
        raise RuleError("G6", "No grapple to use an effect in.")
    grapple = _g(g)
    try:
        effect = Effect(name)
    except ValueError as error:
        raise RuleError("G6", f"Unknown grapple effect {name!r}.") from error
    label = effect.value.replace("_", " ")
    try:
        grapple = single_effect(grapple, effect) if single else grapple.effect(effect)
    except RuleError as error:
        # The effect was chosen before the roll; a result that allows none (the Victim won,
        # too little Control) skips it: the roll stands (no rolling again for a better one).
        return f"; no {label}: {error}"
    text = f"; {label} (G6)"
    if grapple.last_damage is not None:
        victim = participants[int(grapple.victim)]
        hitter = participants[int(grapple.grappler)]
        overrides = {"damage_dice": None, "soak_dice": None}
        taken = _damage(
            combat,
            hitter,
            victim,
            grapple.last_damage.pool,
            grapple.last_damage.type,
            stats,
            by,
            rng,
            overrides,
            rolls,
        )
        text += f", {taken} {grapple.last_damage.type}"
    _replace_grapple(combat, g, grapple)
    return text


def grapple_effects(combat: Combat, who: str) -> list[tuple[str, int]]:
    """G6: the effects the Grappler can afford now (name, cost); Throw and Action are
    costed by Control and the storyteller."""
    g = _grapple_of(combat, who)
    if g is None or g["grappler"] != who:
        return []
    out = []
    for effect in Effect:
        if effect.forced:
            continue
        cost = effect.cost if effect.cost is not None else g["control"]
        if effect is Effect.ACTION:
            continue
        if cost <= g["control"]:
            out.append((effect.value, cost))
    return out


# -- book keeping, next round, end ----------------------------------------------------


def combat_book_keeping(*, combat: Combat, by: AbstractBaseUser, at: str | None = None) -> Combat:
    """D17, G4: effects measured in rounds tick down and expire, sustained grapples lose a
    point of Control, the reminders players raised are read; the game clock moves on one
    round (fifteen seconds)."""
    with transaction.atomic():
        scene, combat = _lock(combat)
        _require_st(by, scene)
        _check_token(combat, at)
        if combat.stage != CombatStage.BOOK_KEEPING:
            raise RoundError(WRONG_STAGE.format(stage=combat.get_stage_display()))
        _require_no_pursuit(combat)
        state = _round(combat)
        effects = [TimedEffect(**e) for e in combat.effects]
        ending = [e for e in effects if e.rounds_left <= 1]
        try:
            state, running = state.book_keeping(effects)
        except RuleError as error:
            raise _rule(error) from error
        grapples = []
        for g in combat.grapples:
            grapple = _g(g)
            if grapple.over is None and grapple.sustained_this_round:
                grapple = grapple.end_round()  # G4
            elif grapple.over is None:
                grapple = replace(grapple, may_perform_effect=False)
            if grapple.over in (None, Over.PINNED) or grapple.released_from_pin:
                grapples.append({**grapple.to_dict(), "round": g.get("round")})
        combat.grapples = grapples
        combat.effects = [vars(e) for e in running]
        combat.state = state.to_dict()
        combat.work = {**combat.work, "booked": True, "expired": list(state.expired)}
        scene.game_time += ROUND_SECONDS.get(combat.ruleset, 15)
        participants = _participants(combat)

        def seen(who: str) -> bool:
            p = participants.get(int(who)) if who.isdigit() else None
            return p is None or _visible(p)

        # Players hear what expired on the characters they see; the reminders (each player's
        # own, read to the storyteller, D17) and anything of a hidden NPC are the storyteller's.
        shown = ", ".join(e.name for e in ending if seen(e.who)) or "nothing"
        _record(
            scene,
            combat,
            by,
            f"Book keeping, round {combat.round_number}: expired {shown}",
            participants=participants,
        )
        expired = ", ".join(state.expired) or "nothing"
        reminders = "; ".join(r["text"] for r in combat.reminders) or "none"
        _record(
            scene,
            combat,
            by,
            f"Book keeping, round {combat.round_number} (storyteller): expired {expired};"
            f" reminders {reminders}",
            public=False,
            participants=participants,
        )
    return combat


def combat_next_round(*, combat: Combat, by: AbstractBaseUser, at: str | None = None) -> Combat:
    """D4: after Book Keeping the next round starts with initiative rolled anew."""
    with transaction.atomic():
        scene, combat = _lock(combat)
        _require_st(by, scene)
        _check_token(combat, at)
        if combat.stage != CombatStage.BOOK_KEEPING or not combat.work.get("booked"):
            raise RoundError("Book keeping comes first (D17).")
        combat.round_number += 1
        combat.stage = CombatStage.INITIATIVE
        combat.initiative = {}
        combat.state = {}
        combat.work = _kept(combat.work)
        combat.reminders = []
        _record(scene, combat, by, f"Round {combat.round_number}: roll initiative")
    return combat


def combat_end(*, combat: Combat, by: AbstractBaseUser) -> Combat:
    with transaction.atomic():
        scene, combat = _lock(combat)
        _require_st(by, scene)
        combat.stage = CombatStage.OVER
        combat.ended_at = timezone.now()
        _record(scene, combat, by, f"The fight ends after round {combat.round_number}")
    return combat


def combat_add_effect(
    *, combat: Combat, by: AbstractBaseUser, participant: Participant, name: str, rounds: int
) -> Combat:
    """D17: the storyteller notes an effect lasting some rounds; Book Keeping expires it."""
    name = (name or "").strip()[:80]
    if not name or not 1 <= rounds <= 100:
        raise RoundError("Name the effect and give it 1 to 100 rounds (D17).")
    with transaction.atomic():
        scene, combat = _lock(combat)
        _require_st(by, scene)
        _member(combat, participant)
        effect = TimedEffect(
            name=f"{name} ({participant.name})", who=_who(participant), rounds_left=rounds
        )
        combat.effects = [*combat.effects, vars(effect)]
        _record(
            scene,
            combat,
            by,
            f"{participant.name}: {name} for {rounds} round(s)",
            public=_visible(participant),
            concerns=[participant],
        )
    return combat


def combat_remind(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    text: str,
    key: str | None = None,
) -> Combat:
    """D17: a player raises a reminder for Book Keeping (read before the next declarations)."""
    text = (text or "").strip()[:200]
    if not text:
        raise RoundError("Say what to remind the storyteller of.")
    with transaction.atomic():
        payload = {"c": combat.pk, "p": participant.pk, "t": text}
        scene, combat, replay = _begin(combat, by, participant, "round.remind", key, payload)
        if replay:
            return combat
        combat.reminders = [
            *combat.reminders,
            {"who": _who(participant), "text": f"{participant.name}: {text}"},
        ]
        combat.save()
        # A reminder is for the storyteller: the other players do not read it.
        record_change(
            scene,
            by=by,
            kind=LogKind.COMBAT,
            text=f"Reminder from {participant.name}: {text}",
            public=False,
            characters=[participant.character] if participant.character_id else [],
            private_user_ids=[by.pk],
        )
    return combat


def running_combat(scene: Scene) -> Combat | None:
    return Combat.objects.filter(scene=scene, ended_at__isnull=True).first()
