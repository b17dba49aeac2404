"""Writes to chases (K1–K12): start, roll a round, maneuver, obstacles, course, attacks.

Each function runs in one transaction: it locks the scene (``lock_open_scene``) and the chase
row, claims the idempotency key (a double tap counts once), refuses a step drawn for an older
state of the chase (``expected_step``), steps the pure engine (``chases.rules``), writes the
chase's own rows (steps and rolls) and goes through ``record_change`` so the scene's seq, log
and fragments follow. An ending is announced on commit with :data:`chases.signals.chase_ended`.
Only the storyteller runs the chase; a player acts only for their own character, and NPC
sides are the storyteller's. A refusal raises :class:`ChaseError`, naming the rule when a rule
refused, and changes nothing.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from characters.idempotency import Claim, idempotency_claim
from characters.services import ledger_damage
from chases import rules, selectors
from chases.models import Chase, ChaseRoll, ChaseStep, Phase, Role, Side, Start, StepKind
from chases.signals import chase_ended
from combat import steps
from combat.access import NOT_HERE
from combat.models import Combat, LogKind, Participant, Scene
from combat.rounds import wod
from combat.rounds.sheets import Stats, stats_for
from combat.rules import difficulty as diff
from combat.rules import exchange, penalties
from combat.rules.dice import RollKind, RollResult, count, roll_d10s
from combat.rules.errors import RuleError
from combat.rules.health import apply_penalty
from combat.services import is_storyteller_of_scene, lock_open_scene, record_change
from combat.steps import Refused

NOT_STORYTELLER = "Only the storyteller runs the chase."
NOT_YOURS = "{name} is not your character: you act only for your own."
NPC_IS_THE_STORYTELLERS = "{name} is an NPC: the storyteller acts for it."
STALE = "The chase moved on since you loaded it; nothing was changed. Look again."
OVER = "The chase is over."
ALREADY = "A chase is already running in this scene: finish it first."
NOT_IN_SCENE = "{name} is not in this scene."
WRONG_PHASE = {
    Phase.ROLL: "The round is to be rolled now, not that (K6).",
    Phase.MANEUVER: "The winners of the round choose their maneuver first (K6).",
    Phase.OBSTACLE: "First face the obstacle (K9).",
    Phase.OVER: OVER,
}
PHASE_LABELS = {
    Phase.ROLL: "rolling the round",
    Phase.MANEUVER: "choosing maneuvers",
    Phase.OBSTACLE: "facing the obstacle",
    Phase.OVER: "over",
}
#: K3 the cold start's roll, and K5's stalk rolls (no difficulty given: the standard 6).
START_DIFFICULTY = 6
MAX_TYPED_DICE = 40
#: Not a rules ending: the storyteller stopped the chase.
CALLED_OFF = "called_off"

_rng = random.SystemRandom()


class ChaseError(Refused):
    """A chase step refused, with a sentence for people (naming the rule when one refused)."""

    def __init__(self, message: str, rule: str | None = None) -> None:
        self.rule = rule
        super().__init__(message)


def _rule(error: RuleError) -> ChaseError:
    return ChaseError(str(error), rule=error.rule)


# Helpers ---------------------------------------------------------------------------------


def _key(side_or_participant: Participant) -> str:
    return f"p{side_or_participant.pk}"


def _engine_key(side: Side) -> str:
    return rules.PREY if side.role == Role.PREY else side.key


def _require_storyteller(by: AbstractBaseUser, scene: Scene) -> None:
    if not is_storyteller_of_scene(by, scene):
        raise ChaseError(NOT_STORYTELLER)


def _require_actor(by: AbstractBaseUser, scene: Scene, side: Side | Sequence[Side]) -> None:
    """The side's own player acts for a player character; the storyteller for an NPC. A
    group fleeing together is one Prey (K1): any member's player acts for it, and the
    storyteller does when an NPC is among them."""
    members = [side] if isinstance(side, Side) else list(side)
    participants = [m.participant for m in members]
    if any(p.player_id == by.pk and not p.npc for p in participants if p.character_id):
        return
    npcs = [p for p in participants if p.npc or p.character_id is None]
    if npcs:
        if not is_storyteller_of_scene(by, scene):
            if any(p.hidden for p in npcs):  # a hidden NPC is nobody to a player
                raise ChaseError(NOT_HERE)
            raise ChaseError(NPC_IS_THE_STORYTELLERS.format(name=npcs[0].name))
        return
    raise ChaseError(NOT_YOURS.format(name=" and ".join(p.name for p in participants)))


def _typed(typed: Sequence[int], pool: int, who: str, what: str) -> Sequence[int]:
    """D1: the dice the table rolled are the whole pool the tablet shows, no more, no fewer."""
    if len(typed) > MAX_TYPED_DICE:
        raise ChaseError(f"At most {MAX_TYPED_DICE} dice.")
    try:
        wod.check_typed(typed, pool, who, what)
    except RuleError as error:
        raise _rule(error) from None
    return typed


def _roll(
    pool: int,
    difficulty: int,
    typed: Sequence[int] | None,
    rng: Any,
    who: str = "",
    what: str = "pool",
) -> RollResult:
    """D1: the server rolls ``pool`` d10s, or takes the dice the table rolled (as many as the
    pool; ``who``'s ``what`` names it in the refusal)."""
    dice = _typed(typed, pool, who, what) if typed else roll_d10s(pool, rng or _rng)
    try:
        return count(dice, difficulty)
    except RuleError as error:
        raise _rule(error) from None


def _claim(
    by: AbstractBaseUser, action: str, key: str | None, payload: dict[str, Any]
) -> Claim | None:
    if key is None:
        return None
    return idempotency_claim(user=by, action=f"chase.{action}", key=key, payload=payload)


def _open_step(
    chase: Chase,
    by: AbstractBaseUser,
    action: str,
    key: str | None,
    payload: dict[str, Any],
    expected_step: int | None,
    *,
    storyteller_only: bool = True,
) -> tuple[Scene, Chase, None] | None:
    """The opening of every step on a running chase, inside the caller's transaction, in the
    one order (:func:`combat.steps.begin`): lock the scene, then the chase; claim the key (a
    replay answers as the first did, before any other check); refuse anyone but the
    storyteller (``storyteller_only``); the chase still running, at the step the form saw
    (``expected_step``). ``None``: a replay, nothing to do."""

    def lock() -> tuple[Scene, Chase]:
        scene = lock_open_scene(chase.scene)
        locked = Chase.objects.select_for_update().get(pk=chase.pk)
        locked.scene = scene
        return scene, locked

    begun = steps.begin(
        lock=lock, by=by, action=f"chase.{action}", key=key, payload=payload, refusal=ChaseError
    )
    if begun.replay:
        return None
    scene, locked = begun.scene, begun.row
    if storyteller_only:
        _require_storyteller(by, scene)
    if not locked.running:
        raise ChaseError(OVER)
    if expected_step is not None and locked.step != expected_step:
        raise ChaseError(STALE)
    return scene, locked, None


def _sides(chase: Chase) -> dict[str, Side]:
    """Every side by its own key (a group Prey has one side per member, K1)."""
    return {
        s.key: s
        for s in Side.objects.filter(chase=chase).select_related(
            "participant", "participant__character"
        )
    }


def _members(sides: Mapping[str, Side], who: str) -> list[Side]:
    """The sides behind an engine key: every member of the Prey, or one Predator."""
    if who == rules.PREY:
        return [s for s in sides.values() if s.role == Role.PREY]
    return [sides[who]]


def _runner(
    sides: Mapping[str, Side],
    who: str,
    values: Mapping[int, dict[str, int]],
    attribute: str,
    ability: str,
    *,
    split: int = 0,
) -> tuple[Side, selectors.Pool]:
    """Who rolls for an engine key and its pool (a group Prey: its slowest member, K1)."""
    return selectors.runner(_members(sides, who), dict(values), attribute, ability, split=split)


def _players(sides: Mapping[str, Side]) -> list[int]:
    return [s.participant.player_id for s in sides.values() if s.participant.player_id]


def _characters(sides: Mapping[str, Side]) -> list[Any]:
    return [s.participant.character for s in sides.values() if s.participant.character_id]


def _leads(state: rules.Chase, shown: Mapping[str, str]) -> str:
    parts = []
    for p in state.pursuits:
        label = f"Lead {p.lead}" if p.running else p.status.value
        parts.append(f"{label} on {shown[p.predator]}" if len(state.pursuits) > 1 else label)
    return ", ".join(parts)


def _record(
    scene: Scene,
    chase: Chase,
    state: rules.Chase,
    *,
    by: AbstractBaseUser | None,
    kind: str,
    text: str,
    sides: Mapping[str, Side],
    rolls: Sequence[tuple[Side, str, int, RollResult, bool]] = (),
    data: dict[str, Any] | None = None,
    claim: Claim | None = None,
) -> ChaseStep:
    """Write the new state, the chase's own step and rolls, the scene log line; end the chase
    when the engine says it is over, announcing it on commit. A ``claim`` keeps the chase as
    the answer to a replay of this request."""
    chase.state = state.to_dict()
    chase.step += 1
    if state.over is not None and chase.ended_at is None:
        chase.phase = Phase.OVER
        chase.pending = {}
        chase.outcome = state.over.value
        chase.ended_at = timezone.now()
    chase.save()
    step = ChaseStep.objects.create(
        chase=chase,
        number=chase.step,
        round=state.rounds,
        kind=kind,
        text=text[:500],
        data={**(data or {}), "leads": {p.predator: p.lead for p in state.pursuits}},
        by=by if by is not None and by.is_authenticated else None,
    )
    ChaseRoll.objects.bulk_create(
        ChaseRoll(
            step=step,
            side=side,
            purpose=purpose,
            pool=pool,
            difficulty=result.difficulty,
            dice=list(result.dice),
            successes=result.successes,
            botch=result.botch,
            typed=typed,
        )
        for side, purpose, pool, result, typed in rolls
    )
    record_change(
        scene,
        by=by,
        kind=LogKind.CHASE,
        text=text,
        public=True,
        characters=_characters(sides),
        data={"chase": chase.pk, "step": chase.step, "kind": kind, **(data or {})},
        private_user_ids=_players(sides),
    )
    if chase.phase == Phase.OVER and kind != StepKind.END:
        shown = selectors.names(chase, public=True)
        ending = selectors.OUTCOME_TEXT[chase.outcome].format(prey=shown[rules.PREY])
        ChaseStep.objects.create(
            chase=chase, number=chase.step, round=state.rounds, kind=StepKind.END, text=ending
        )
        record_change(
            scene,
            by=by,
            kind=LogKind.CHASE,
            text=f"Chase over: {ending}",
            public=True,
            characters=_characters(sides),
            data={"chase": chase.pk, "outcome": chase.outcome},
            private_user_ids=_players(sides),
        )
        _announce_end(chase)
    if claim is not None:
        claim.complete(chase=chase.pk)
    return step


def _announce_end(chase: Chase) -> None:
    """On commit: :data:`chases.signals.chase_ended`, with the outcome and where it came from."""
    transaction.on_commit(
        partial(
            chase_ended.send,
            sender=Chase,
            chase=chase,
            outcome=chase.outcome,
            origin=chase.origin,
        )
    )


def _after_maneuvers(chase: Chase, state: rules.Chase) -> None:
    """Once no winner is left to choose: an obstacle a maneuver set up, else the next roll."""
    if chase.pending.get("maneuvers"):
        chase.phase = Phase.MANEUVER
    elif state.obstacle:
        chase.phase = Phase.OBSTACLE
        chase.pending = {"obstacle": {"facing": list(state.obstacle), "set": False}}
    else:
        chase.phase = Phase.ROLL
        chase.pending = {}


# Start (K3, K4, K5) -------------------------------------------------------------------------


def start_chase(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    predators: list[Participant],
    prey: Participant | Sequence[Participant],
    start: str,
    head_start: int | None = None,
    course_difficulty: int = rules.BASE_DIFFICULTY,
    on_foot: bool = True,
    origin: dict | None = None,
    terrain: str | None = None,
    sprint_rounds: int = 6,
    prey_run: int | None = None,
    predator_run: int | None = None,
    dice: Mapping[str, Sequence[int] | None] | None = None,
    key: str | None = None,
    rng: Any = None,
) -> Chase:
    """Start a chase in ``scene``: one Prey (K1: one character, or a group fleeing together
    given as a list, rolling at its slowest member's pace, see :func:`_runner`), one or more
    Predators each with its own Lead, from a cold start (K3: the Prey's roll at 6 sets the
    head start, a botch is a catch), stalk and pounce (K5) or an escape defense that
    survived (K4, D9: ``head_start`` = the escape's remaining successes).

    The storyteller starts any chase; from an escape, the player of a pursuing Predator may
    too (the attacker elects to pursue). ``on_foot=False`` runs by car unless ``terrain``
    says otherwise (K2). ``dice`` holds the table's dice for the opening rolls by role and
    purpose (``prey``, ``predator:<participant pk>``, ``prey_stalk``, ``predator_stalk:<pk>``);
    what is missing the server rolls. A chase that is over at once (a botched cold start, a
    pounce that lands) is announced like any ending. The caller's ``scene`` gets the new seq.
    """
    dice = dict(dice or {})
    if start not in Start.values:
        raise ChaseError(
            f"Start a chase cold, by stalk and pounce, or from an escape, not {start!r}."
        )
    if not predators:
        raise ChaseError("A chase needs at least one Predator (K1).", rule="K1")
    group = list(prey) if isinstance(prey, Sequence) else [prey]
    if not group:
        raise ChaseError("A chase needs its Prey: one character or a group (K1).", rule="K1")
    chosen = [p.pk for p in [*group, *predators]]
    if len(set(chosen)) != len(chosen):
        raise ChaseError(
            "Each participant takes one side: one Prey, distinct Predators (K1).", "K1"
        )
    if not 2 <= int(course_difficulty) <= 10:
        raise ChaseError("The course difficulty is 2 to 10 (K6, D1).", rule="K6")
    if sprint_rounds not in (5, 6):
        raise ChaseError(
            "On foot the pool switches to Stamina after five or six rounds (K2).", "K2"
        )
    try:
        terrain_value = rules.Terrain(terrain or ("foot" if on_foot else "car"))
    except ValueError:
        raise ChaseError(f"Unknown course {terrain!r} (K2).", rule="K2") from None
    payload = {
        "scene": scene.pk,
        "predators": [p.pk for p in predators],
        "prey": [p.pk for p in group],
        "start": start,
        "head_start": head_start,
        "difficulty": course_difficulty,
        "terrain": terrain_value.value,
    }
    with transaction.atomic():
        locked = lock_open_scene(scene)
        claim = _claim(by, "start", key, payload)
        if claim is not None and claim.replay:
            return Chase.objects.get(pk=claim.result["chase"])
        everyone = [*group, *predators]
        found = {
            p.pk: p
            for p in Participant.objects.select_related("character").filter(
                scene=locked, removed_at__isnull=True, pk__in=[p.pk for p in everyone]
            )
        }
        for p in everyone:
            if p.pk not in found:
                raise ChaseError(NOT_IN_SCENE.format(name=p.name))
        group = [found[p.pk] for p in group]
        predators = [found[p.pk] for p in predators]
        if not is_storyteller_of_scene(by, locked):
            pursuer = any(p.player_id == by.pk and not p.npc for p in predators)
            if not (start == Start.ESCAPE and pursuer):
                raise ChaseError(NOT_STORYTELLER)
        if Chase.objects.filter(scene=locked, ended_at__isnull=True).exists():
            raise ChaseError(ALREADY)
        setup = {
            "course": rules.Course(terrain=terrain_value, difficulty=int(course_difficulty)),
            "prey_run": prey_run,
            "predator_run": predator_run,
            "options": rules.ChaseOptions(sprint_rounds=sprint_rounds),
        }
        names = [_key(p) for p in predators]
        values = selectors.sheet_values(everyone)
        pool = setup["course"].chase_pool
        rolls: list[tuple[Participant, str, int, RollResult, bool]] = []

        def roll(
            who: Participant,
            purpose: str,
            dice_key: str,
            parts: tuple[str, str],
            difficulty: int,
            bonus: int = 0,
        ) -> RollResult:
            counted = selectors.pool_for(values[who.pk], *parts, bonus=bonus)
            typed = dice.get(dice_key)
            what = "stalk pool" if purpose == ChaseRoll.Purpose.STALK else "chase pool"
            result = _roll(counted.dice, difficulty, typed, rng, who.name, what)
            rolls.append((who, purpose, len(result.dice), result, bool(typed)))
            return result

        def prey_roller(parts: tuple[str, str], best: bool = False) -> Participant:
            """K1: the group's slowest member runs for it (``best``: its most alert)."""
            ranked = [(selectors.pool_for(values[p.pk], *parts).dice, p) for p in group]
            return (max if best else min)(ranked, key=lambda item: item[0])[1]

        try:
            if start == Start.ESCAPE:
                if head_start is None or head_start < 1:
                    raise RuleError(
                        "K4",
                        "A chase from an escape needs the escape's remaining successes, 1 or more",
                    )
                state = rules.Chase.from_escape(head_start, dict.fromkeys(names, 0), **setup)
                how = f"from an escape, head start {head_start}"
            elif start == Start.COLD:
                result = roll(
                    prey_roller((pool.attribute, pool.ability)),
                    ChaseRoll.Purpose.START,
                    "prey",
                    (pool.attribute, pool.ability),
                    START_DIFFICULTY,
                )
                state = rules.Chase.cold(
                    result.successes, botch=result.botch, predators=names, **setup
                )
                how = (
                    "cold: the Prey botched"
                    if result.botch
                    else f"cold, head start {result.successes + 1}"
                )
            else:
                seen = roll(
                    prey_roller(("perception", "alertness"), best=True),
                    ChaseRoll.Purpose.STALK,
                    "prey_stalk",
                    ("perception", "alertness"),
                    START_DIFFICULTY,
                )
                hiding = {
                    _key(p): roll(
                        p,
                        ChaseRoll.Purpose.STALK,
                        f"predator_stalk:{p.pk}",
                        ("manipulation", "subterfuge"),
                        START_DIFFICULTY,
                    ).successes
                    for p in predators
                }
                # K5 with several Predators: noticing the least hidden one alerts the Prey.
                bonus = max(rules.stalk_bonus(seen.successes, s) for s in hiding.values())
                difficulty = int(course_difficulty)
                prey_roll = roll(
                    prey_roller((pool.attribute, pool.ability)),
                    ChaseRoll.Purpose.START,
                    "prey",
                    (pool.attribute, pool.ability),
                    difficulty,
                    bonus=bonus,
                )
                pounce = {
                    _key(p): roll(
                        p,
                        ChaseRoll.Purpose.START,
                        f"predator:{p.pk}",
                        (pool.attribute, pool.ability),
                        difficulty,
                    ).successes
                    for p in predators
                }
                state = rules.Chase.pounce(prey_roll.successes, pounce, **setup)
                how = f"by stalk and pounce (+{bonus} dice to the Prey)"
        except RuleError as error:
            raise _rule(error) from None
        try:
            with transaction.atomic():
                chase = Chase.objects.create(
                    scene=locked,
                    start=start,
                    state=state.to_dict(),
                    origin=dict(origin or {}),
                    created_by=by,
                )
        except IntegrityError:
            raise ChaseError(ALREADY) from None
        sides = {}
        for n, p in enumerate(group):
            member_key = rules.PREY if n == 0 else f"{rules.PREY}-{_key(p)}"
            sides[member_key] = Side.objects.create(
                chase=chase, participant=p, role=Role.PREY, key=member_key
            )
        for p in predators:
            sides[_key(p)] = Side.objects.create(
                chase=chase, participant=p, role=Role.PREDATOR, key=_key(p)
            )
        by_participant = {s.participant_id: s for s in sides.values()}
        shown = selectors.names(chase, public=True)
        hunters = ", ".join(shown[n] for n in names)
        text = f"Chase: {hunters} after {shown[rules.PREY]}, {how}; {_leads(state, shown)}"
        _record(
            locked,
            chase,
            state,
            by=by,
            kind=StepKind.START,
            text=text,
            sides=sides,
            rolls=[(by_participant[p.pk], *rest) for p, *rest in rolls],
            data={"start": start, "origin": chase.origin},
            claim=claim,
        )
    scene.seq, scene.game_time = locked.seq, locked.game_time
    return chase


def join_escape_chase(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    predator: Participant,
    prey: Participant,
    head_start: int,
    origin: dict[str, Any],
) -> Chase | None:
    """D13, K1, K4: an escape is one roll every attacker compares against, so a second
    attacker it beat joins the chase the first comparison started, as another Predator with
    its own Lead (``head_start``: the escape's successes left over its own attack).

    The running chase must have started from an escape with the same ``origin`` (the same
    round of the same fight) and the same lone Prey, and not have rolled its first round;
    when no such chase runs, ``None`` (nothing changed: the caller starts one). A chase from
    that escape that already rolled, or that already counts ``predator``, is refused.
    """
    with transaction.atomic():
        locked = lock_open_scene(scene)
        chase = (
            Chase.objects.select_for_update()
            .filter(scene=locked, ended_at__isnull=True, start=Start.ESCAPE)
            .first()
        )
        if chase is None or chase.origin != origin:
            return None
        sides = _sides(chase)
        if [s.participant_id for s in _members(sides, rules.PREY)] != [prey.pk]:
            return None
        if not is_storyteller_of_scene(by, locked) and not (
            predator.player_id == by.pk and not predator.npc
        ):
            raise ChaseError(NOT_STORYTELLER)
        if any(s.participant_id == predator.pk for s in sides.values()):
            raise ChaseError(f"{predator.name} already takes a side in this chase (K1).", "K1")
        if chase.phase != Phase.ROLL:
            raise ChaseError(WRONG_PHASE[Phase(chase.phase)], rule="K1")
        chase.scene = locked
        state = selectors.engine(chase)
        try:
            new = state.join(_key(predator), int(head_start))
        except RuleError as error:
            raise _rule(error) from None
        side = Side.objects.create(
            chase=chase, participant=predator, role=Role.PREDATOR, key=_key(predator)
        )
        sides[side.key] = side
        shown = selectors.names(chase, public=True)
        text = (
            f"Chase: {shown[side.key]} after {shown[rules.PREY]} too, from the same escape, "
            f"head start {int(head_start)} (K1, K4, D13); {_leads(new, shown)}"
        )
        _record(
            locked,
            chase,
            new,
            by=by,
            kind=StepKind.START,
            text=text,
            sides=sides,
            data={"joined": side.key, "origin": chase.origin},
        )
    scene.seq, scene.game_time = locked.seq, locked.game_time
    return chase


# Rounds (K2, K6, K10, K12) -----------------------------------------------------------------


def chase_round(
    *,
    chase: Chase,
    by: AbstractBaseUser,
    expected_step: int | None = None,
    dice: Mapping[str, Sequence[int] | None] | None = None,
    pools: Mapping[str, int] | None = None,
    key: str | None = None,
    rng: Any = None,
) -> Chase:
    """K6: the Prey and every Predator still running roll their chase pools (K2, from the
    sheets, Stamina on foot after the sprint) at the course difficulty; the engine moves each
    Lead by the margin and ends the chase when K10 says so. The game clock runs fifteen
    seconds (K12). ``dice`` by engine key (``prey`` or a Predator's key): the table's dice,
    else the server rolls; ``pools``: a storyteller's other pool for a side (K2)."""
    dice, pools = dict(dice or {}), dict(pools or {})
    payload = {"chase": chase.pk, "step": expected_step, "dice": dice, "pools": pools}
    with transaction.atomic():
        opened = _open_step(chase, by, "round", key, payload, expected_step)
        if opened is None:  # a replay
            return Chase.objects.get(pk=chase.pk)
        scene, chase, claim = opened
        if chase.phase != Phase.ROLL:
            raise ChaseError(WRONG_PHASE[Phase(chase.phase)], rule="K6")
        state = selectors.engine(chase)
        sides = _sides(chase)
        values = selectors.sheet_values(s.participant for s in sides.values())
        parts = state.pool
        difficulty = state.difficulty()
        rolling = [rules.PREY, *(p.predator for p in state.pursuits if p.running)]
        named = selectors.names(chase, public=False)
        rolls = []
        results: dict[str, RollResult] = {}
        for who in rolling:
            side, counted = _runner(
                sides, who, values, parts.attribute, parts.ability, split=state.split(who)
            )
            pool = pools.get(who, counted.dice)
            if not 0 <= pool <= 30:
                raise ChaseError("A pool is 0 to 30 dice.")
            results[who] = _roll(
                pool, difficulty[who], dice.get(who), rng, named[who], "chase pool"
            )
            rolled = len(results[who].dice)  # the pool: typed dice are the whole of it (D1)
            rolls.append((side, ChaseRoll.Purpose.ROUND, rolled, results[who], bool(dice.get(who))))
        try:
            new = state.play_round(
                results[rules.PREY].successes,
                {who: r.successes for who, r in results.items() if who != rules.PREY},
            )
        except RuleError as error:
            raise _rule(error) from None
        scene.game_time += rules.ROUND_SECONDS  # K12
        chase.pending = {
            "maneuvers": [
                {"pursuit": p.predator, "role": p.winner.value}
                for p in new.pursuits
                if p.running and p.winner is not None
            ]
        }
        _after_maneuvers(chase, new)
        shown = selectors.names(chase, public=True)
        rolled = ", ".join(f"{shown[w]} {r.successes}" for w, r in results.items())
        text = f"Chase round {new.rounds}: {rolled}; {_leads(new, shown)}"
        _record(
            scene,
            chase,
            new,
            by=by,
            kind=StepKind.ROUND,
            text=text,
            sides=sides,
            rolls=rolls,
            data={"successes": {w: r.successes for w, r in results.items()}},
            claim=claim,
        )
    return chase


# Maneuvers (K7, K8) -------------------------------------------------------------------------


def chase_maneuver(
    *,
    chase: Chase,
    by: AbstractBaseUser,
    pursuit: str,
    role: str,
    maneuver: str | None,
    pick: str | None = None,
    expected_step: int | None = None,
    key: str | None = None,
) -> Chase:
    """K7, K8: the winner of ``pursuit`` (a Predator's key) in the round just rolled takes one
    maneuver (``maneuver=None``: none this round). The Prey's player chooses for the Prey, a
    Predator's for that Predator, the storyteller for NPCs; the storyteller may also move on
    without a choice (the maneuver is optional)."""
    payload = {
        "chase": chase.pk,
        "step": expected_step,
        "pursuit": pursuit,
        "role": role,
        "maneuver": maneuver,
        "pick": pick,
    }
    with transaction.atomic():
        opened = _open_step(
            chase, by, "maneuver", key, payload, expected_step, storyteller_only=False
        )
        if opened is None:  # a replay
            return Chase.objects.get(pk=chase.pk)
        scene, chase, claim = opened
        if chase.phase != Phase.MANEUVER:
            raise ChaseError(
                "No maneuver is open now: only the winner of the round just "
                "rolled may maneuver (K6).",
                rule="K6",
            )
        pending = chase.pending.get("maneuvers", [])
        entry = {"pursuit": pursuit, "role": role}
        if entry not in pending:
            raise ChaseError("Only the winner of the round just rolled may maneuver (K6).", "K6")
        sides = _sides(chase)
        actor = _members(sides, rules.PREY if role == Role.PREY else pursuit)
        storyteller = is_storyteller_of_scene(by, scene)
        if not (maneuver is None and storyteller):
            _require_actor(by, scene, actor)
        state = selectors.engine(chase)
        shown = selectors.names(chase, public=True)
        who = rules.PREY if role == Role.PREY else pursuit
        if pick is not None and maneuver is None:
            raise ChaseError(
                "Only In there! and Herd pick a part of the chase pool (K7, K8).",
                rule="K7" if role == Role.PREY else "K8",
            )
        if maneuver is not None and pick is None and rules.changes_course(who, maneuver):
            # K7, K8: the engine takes In there! and Herd without a pick; the tablet asks.
            raise ChaseError(
                "Pick the part of the chase pool the new course uses (K7, K8).",
                rule="K7" if role == Role.PREY else "K8",
            )
        if pick is not None and pick not in selectors.COURSE_PARTS:
            raise ChaseError(
                f"A new course uses one part of a chase pool; {pick!r} is not one (K7, K8).",
                rule="K7" if role == Role.PREY else "K8",
            )
        if maneuver is None:
            new, kind = state, StepKind.PASS
            text = f"{shown[who]} makes no maneuver"
        else:
            try:
                new = state.maneuver(
                    who, maneuver, against=pursuit if role == Role.PREY else None, pick=pick
                )
            except (RuleError, ValueError) as error:
                if isinstance(error, RuleError):
                    raise _rule(error) from None
                raise ChaseError(f"Unknown maneuver {maneuver!r}.") from None
            kind = StepKind.MANEUVER
            move = rules._maneuver(who, maneuver)
            text = f"{shown[who]}: {selectors.MANEUVER_LABELS[move]}"
            if role == Role.PREY and len(state.pursuits) > 1:
                text += f" against {shown[pursuit]}"
            if pick:
                text += f" (new course: {pick.title()})"
            text += f"; {_leads(new, shown)}"
        chase.pending = {**chase.pending, "maneuvers": [m for m in pending if m != entry]}
        _after_maneuvers(chase, new)
        _record(
            scene,
            chase,
            new,
            by=by,
            kind=kind,
            text=text,
            sides=sides,
            data={"maneuver": maneuver, "pursuit": pursuit, "role": role, "pick": pick},
            claim=claim,
        )
    return chase


# Obstacles (K9) ------------------------------------------------------------------------------


def chase_obstacle_set(
    *,
    chase: Chase,
    by: AbstractBaseUser,
    label: str,
    difficulty: int,
    pool: tuple[str, str],
    facing: Sequence[str] = (),
    expected_step: int | None = None,
    key: str | None = None,
) -> Chase:
    """K9: the storyteller sets an obstacle, its pool and difficulty: between rounds for
    whom they choose (``facing``: engine keys), or for whoever a maneuver put in front of one
    (Quick Reverse, Never Tell Me The Odds)."""
    label = (label or "").strip()[:120] or "An obstacle"
    payload = {
        "chase": chase.pk,
        "step": expected_step,
        "label": label,
        "difficulty": difficulty,
        "pool": list(pool),
        "facing": list(facing),
    }
    with transaction.atomic():
        opened = _open_step(chase, by, "obstacle_set", key, payload, expected_step)
        if opened is None:  # a replay
            return Chase.objects.get(pk=chase.pk)
        scene, chase, claim = opened
        if not 2 <= int(difficulty) <= 10:
            raise ChaseError("An obstacle's difficulty is 2 to 10 (K9, D1).", rule="K9")
        state = selectors.engine(chase)
        pending = chase.pending.get("obstacle")
        if chase.phase == Phase.OBSTACLE and pending and not pending.get("set"):
            facing = pending["facing"]
        elif chase.phase == Phase.ROLL:
            running = {rules.PREY, *(p.predator for p in state.pursuits if p.running)}
            facing = list(dict.fromkeys(facing))
            if not facing or not set(facing) <= running:
                raise ChaseError(
                    "Say who faces the obstacle: the Prey or Predators still running (K9).",
                    rule="K9",
                )
        else:
            raise ChaseError(WRONG_PHASE[Phase(chase.phase)], rule="K9")
        chase.phase = Phase.OBSTACLE
        chase.pending = {
            "obstacle": {
                "facing": list(facing),
                "set": True,
                "label": label,
                "difficulty": int(difficulty),
                "pool": {"attribute": pool[0], "ability": pool[1]},
                "choices": {},
            }
        }
        sides = _sides(chase)
        shown = selectors.names(chase, public=True)
        text = (
            f"Obstacle: {label} ({pool[0].title()} + {pool[1].title()}, difficulty "
            f"{int(difficulty)}) for {', '.join(shown[k] for k in facing)}"
        )
        _record(
            scene,
            chase,
            state,
            by=by,
            kind=StepKind.OBSTACLE_SET,
            text=text,
            sides=sides,
            data={"obstacle": chase.pending["obstacle"]},
            claim=claim,
        )
    return chase


def chase_obstacle_choice(
    *,
    chase: Chase,
    by: AbstractBaseUser,
    who: str,
    expected_step: int | None = None,
    key: str | None = None,
) -> Chase:
    """K7 Nope! (the Prey) or K8 Damnit! (a Predator): pass the set obstacle without a roll.
    Nope! costs 3 on every Lead and is refused if any would drop to 0 or below."""
    payload = {"chase": chase.pk, "step": expected_step, "who": who}
    with transaction.atomic():
        opened = _open_step(
            chase, by, "obstacle_choice", key, payload, expected_step, storyteller_only=False
        )
        if opened is None:  # a replay
            return Chase.objects.get(pk=chase.pk)
        scene, chase, claim = opened
        pending = chase.pending.get("obstacle")
        if chase.phase != Phase.OBSTACLE or not pending or not pending.get("set"):
            raise ChaseError(
                "Nope! and Damnit! are used only when an obstacle is confronted (K8).", rule="K8"
            )
        if who not in pending["facing"]:
            raise ChaseError("Only who faces the obstacle may pass it (K9).", rule="K9")
        if who in pending.get("choices", {}):
            raise ChaseError("Already passing this obstacle without a roll (K8).", rule="K8")
        sides = _sides(chase)
        _require_actor(by, scene, _members(sides, who))
        state = selectors.engine(chase)
        if selectors.offer_on_obstacle(chase, state, who) is None:
            raise ChaseError("Nope! would cost the Prey its whole Lead (K8).", rule="K8")
        choice = rules.Obstacle.NOPE.value if who == rules.PREY else rules.Obstacle.DAMNIT.value
        pending = {**pending, "choices": {**pending.get("choices", {}), who: choice}}
        chase.pending = {"obstacle": pending}
        shown = selectors.names(chase, public=True)
        label = "Nope!" if who == rules.PREY else "Damnit!"
        text = f"{shown[who]}: {label} (passes {pending['label']} without a roll)"
        _record(
            scene,
            chase,
            state,
            by=by,
            kind=StepKind.MANEUVER,
            text=text,
            sides=sides,
            data={"maneuver": choice, "who": who},
            claim=claim,
        )
    return chase


def chase_obstacle_roll(
    *,
    chase: Chase,
    by: AbstractBaseUser,
    expected_step: int | None = None,
    dice: Mapping[str, Sequence[int] | None] | None = None,
    pools: Mapping[str, int] | None = None,
    key: str | None = None,
    rng: Any = None,
) -> Chase:
    """K9: everyone facing the set obstacle who did not pass it by Nope!/Damnit! rolls the
    storyteller's pool at its difficulty; no success puts that participant out (the engine
    ends the chase for the Prey, the last Predator, or both)."""
    dice, pools = dict(dice or {}), dict(pools or {})
    payload = {"chase": chase.pk, "step": expected_step, "dice": dice, "pools": pools}
    with transaction.atomic():
        opened = _open_step(chase, by, "obstacle_roll", key, payload, expected_step)
        if opened is None:  # a replay
            return Chase.objects.get(pk=chase.pk)
        scene, chase, claim = opened
        pending = chase.pending.get("obstacle")
        if chase.phase != Phase.OBSTACLE or not pending or not pending.get("set"):
            raise ChaseError("Set the obstacle's pool and difficulty first (K9).", rule="K9")
        sides = _sides(chase)
        values = selectors.sheet_values(s.participant for s in sides.values())
        outcome: dict[str, Any] = dict(pending.get("choices", {}))
        named = selectors.names(chase, public=False)
        rolls = []
        for who in pending["facing"]:
            if who in outcome:
                continue
            side, counted = _runner(
                sides, who, values, pending["pool"]["attribute"], pending["pool"]["ability"]
            )
            pool = pools.get(who, counted.dice)
            result = _roll(pool, pending["difficulty"], dice.get(who), rng, named[who])
            rolled = len(result.dice)
            rolls.append((side, ChaseRoll.Purpose.OBSTACLE, rolled, result, bool(dice.get(who))))
            outcome[who] = result.successes > 0
        state = selectors.engine(chase)
        try:
            new = state.face_obstacle(outcome)
        except RuleError as error:
            raise _rule(error) from None
        chase.phase, chase.pending = Phase.ROLL, {}
        shown = selectors.names(chase, public=True)
        said = {True: "passed", False: "failed: out", "nope": "Nope!", "damnit": "Damnit!"}
        text = (
            f"{pending['label']}: "
            + ", ".join(f"{shown[w]} {said[r]}" for w, r in outcome.items())
            + f"; {_leads(new, shown)}"
        )
        _record(
            scene,
            chase,
            new,
            by=by,
            kind=StepKind.OBSTACLE,
            text=text,
            sides=sides,
            rolls=rolls,
            data={"outcome": {w: str(r) for w, r in outcome.items()}},
            claim=claim,
        )
    return chase


# Course and attacks (K6, K11) ----------------------------------------------------------------


def chase_set_course(
    *,
    chase: Chase,
    by: AbstractBaseUser,
    difficulty: int,
    expected_step: int | None = None,
    key: str | None = None,
) -> Chase:
    """K6: the storyteller changes the course difficulty between rounds (an empty highway 4,
    rush hour 9)."""
    payload = {"chase": chase.pk, "step": expected_step, "difficulty": difficulty}
    with transaction.atomic():
        opened = _open_step(chase, by, "course", key, payload, expected_step)
        if opened is None:  # a replay
            return Chase.objects.get(pk=chase.pk)
        scene, chase, claim = opened
        if chase.phase != Phase.ROLL:
            raise ChaseError("The course changes between rounds (K6).", rule="K6")
        if not 2 <= int(difficulty) <= 10:
            raise ChaseError("The course difficulty is 2 to 10 (K6, D1).", rule="K6")
        state = selectors.engine(chase)
        before = state.course.difficulty
        new = replace(state, course=replace(state.course, difficulty=int(difficulty)))
        text = f"Chase course difficulty {before} → {int(difficulty)}"
        _record(
            scene,
            chase,
            new,
            by=by,
            kind=StepKind.COURSE,
            text=text,
            sides=_sides(chase),
            data={"difficulty": int(difficulty)},
            claim=claim,
        )
    return chase


#: K11: an attack during the chase is a ranged one; defenses are automatic: the target
#: dodges (D6) at the difficulty its cover gives, with no action spent (**decision**).
COVERS = {"half": "half cover (3)", "near": "cover in reach (6)", "open": "in the open (9)"}
DAMAGE_TYPES = ("bashing", "lethal", "aggravated")


def chase_attack(
    *,
    chase: Chase,
    by: AbstractBaseUser,
    attacker: str,
    target: str,
    means: str,
    weapon: str | None = None,
    pool: int | None = None,
    difficulty: int | None = None,
    damage: int | None = None,
    damage_type: str | None = None,
    cover: str = "near",
    dice: Mapping[str, Sequence[int] | None] | None = None,
    expected_step: int | None = None,
    key: str | None = None,
    rng: Any = None,
) -> Chase:
    """K11: an attack made as part of the next chase round, rolled and landed.

    ``attacker`` and ``target`` are side keys (a member of a group Prey is attacked, or
    attacks, by its own key; the engine knows the group as the Prey). Allowed with a weapon
    while the Lead is below 5 and a supernatural power below 7 (Attack Run counts the Lead 4
    lower for its Predator); one attack per attacker per round. The attacker splits its pool
    (D14: the attack and its chase roll this round each lose 3 dice; at most Wits actions).

    A weapon attack uses the attacker's ranged weapon from its sheet (``weapon`` names one,
    else the first with a range; a quick NPC has none, so ``pool`` and ``damage`` are given);
    a power its ``pool``, ``damage`` dice and ``damage_type`` as the storyteller reads the
    power. ``difficulty`` overrides the attack's (D15: 6). The defense is automatic: the
    target dodges (D6: Dexterity + Athletics) at 3, 6 or 9 by ``cover``, without an action.
    A landed attack (D8) rolls damage (D11), the target soaks (D12), and what is left goes
    on the health track through the ledger (a quick NPC's on the chase). ``dice``: the
    table's dice by ``attack``, ``dodge``, ``damage``, ``soak``; the rest the server rolls.
    """
    dice = {k: list(v) for k, v in (dice or {}).items() if v}
    payload = {
        "chase": chase.pk,
        "step": expected_step,
        "attacker": attacker,
        "target": target,
        "means": means,
        "weapon": weapon,
        "pool": pool,
        "difficulty": difficulty,
        "damage": damage,
        "damage_type": damage_type,
        "cover": cover,
        "dice": dice,
    }
    with transaction.atomic():
        opened = _open_step(chase, by, "attack", key, payload, expected_step)
        if opened is None:  # a replay
            return Chase.objects.get(pk=chase.pk)
        scene, chase, claim = opened
        if chase.phase != Phase.ROLL:
            raise ChaseError(
                "An attack is made as part of a round, before it is rolled (K11).", rule="K11"
            )
        try:
            how = rules.AttackMeans(means)
        except ValueError:
            raise ChaseError("An attack uses a weapon or a power (K11).", rule="K11") from None
        if cover not in COVERS:
            raise ChaseError("Cover is half, in reach or none (D6).", rule="D6")
        sides = _sides(chase)
        if attacker not in sides or target not in sides:
            raise ChaseError("The attacker and the target are sides of this chase (K11).", "K11")
        hitter, hit = sides[attacker], sides[target]
        state = selectors.engine(chase)
        try:
            new = state.attack(_engine_key(hitter), how, _engine_key(hit))
        except RuleError as error:
            raise _rule(error) from None
        stats = stats_for([hitter.participant, hit.participant])
        st, target_stats = stats[hitter.participant_id], stats[hit.participant_id]
        # D14: at most Wits actions; a quick NPC typed without Wits is not held to it.
        wits = st.dot("Wits") if st.character is not None else st.dots.get("wits", 2)
        try:
            split = -penalties.split(2, wits)
            attack = _attack_pool(st, how, weapon, pool, damage, damage_type, split)
        except RuleError as error:
            raise _rule(error) from None
        a_diff = int(difficulty) if difficulty is not None else attack["difficulty"]
        if not 2 <= a_diff <= 10:
            raise ChaseError("A difficulty is 2 to 10 (D1).", rule="D1")
        dodge = wod.action_pool(target_stats, "dodge")
        d_diff = diff.dodge(diff.Against.GUNFIRE, diff.Cover(cover))
        a_name, d_name = hitter.participant.name, hit.participant.name
        a_roll = _roll(attack["dice"], a_diff, dice.get("attack"), rng, a_name, "attack pool")
        d_roll = _roll(dodge.dice, d_diff, dice.get("dodge"), rng, d_name, "dodge pool")
        rolls = [
            (hitter, ChaseRoll.Purpose.ATTACK, len(a_roll.dice), a_roll, "attack" in dice),
            (hit, ChaseRoll.Purpose.DODGE, len(d_roll.dice), d_roll, "dodge" in dice),
        ]
        outcome = exchange.resolve(
            exchange.Move(exchange.Action.ATTACK, a_roll.successes, damage=attack["damage"]),
            exchange.Move(exchange.Action.DODGE, d_roll.successes),
        )
        shown = selectors.names(chase, public=True)
        text = (
            f"{shown[attacker]} attacks {shown[target]} with {attack['label']}: "
            f"{a_roll.successes} against an automatic dodge's {d_roll.successes} "
            f"({COVERS[cover]})"
        )
        taken = 0
        if outcome.lands == "attacker":
            dtype = attack["type"]
            dmg = _roll_kind(outcome.damage_pool, dice.get("damage"), rng, RollKind.DAMAGE, a_name)
            soak = wod.soak_dice(target_stats, dtype)
            soaked = _roll_kind(soak, dice.get("soak"), rng, RollKind.SOAK, d_name)
            rolls += [
                (hitter, ChaseRoll.Purpose.DAMAGE, len(dmg.dice), dmg, "damage" in dice),
                (hit, ChaseRoll.Purpose.SOAK, len(soaked.dice), soaked, "soak" in dice),
            ]
            taken = max(dmg.successes - soaked.successes, 0)
            _wound(chase, hit.participant, target_stats, taken, dtype, by, new.rounds + 1)
            text += f"; hits, {taken} {dtype} after soak (D11, D12)"
        else:
            text += "; it does not land (D8)"
        _record(
            scene,
            chase,
            new,
            by=by,
            kind=StepKind.ATTACK,
            text=text,
            sides=sides,
            rolls=rolls,
            data={
                "attacker": attacker,
                "target": target,
                "means": how.value,
                "lands": outcome.lands == "attacker",
                "taken": taken,
            },
            claim=claim,
        )
    return chase


def _attack_pool(
    st: Stats,
    how: rules.AttackMeans,
    weapon: str | None,
    pool: int | None,
    damage: int | None,
    damage_type: str | None,
    split: int,
) -> dict[str, Any]:
    """K11, D15: the attack's dice after the split and wounds, its difficulty, its damage
    dice and type, and how it is named in the log."""
    if damage_type is not None and damage_type not in DAMAGE_TYPES:
        raise RuleError("D11", f"Damage is bashing, lethal or aggravated, not {damage_type!r}")
    if how is rules.AttackMeans.WEAPON and pool is None:
        ranged = [w for w in st.weapons if w.pool == "firearms"]
        chosen = st.weapon(weapon) if weapon else (ranged[0] if ranged else None)
        if chosen is None or chosen.pool != "firearms":
            raise RuleError(
                "K11",
                f"{st.name} has no ranged weapon on its sheet: an attack during a chase needs "
                "one (or give its pool and damage)",
            )
        counted = wod.action_pool(st, "attack", weapon=chosen.name, penalty=split)
        base, dtype = wod.damage_dice(st, chosen)
        return {
            "dice": counted.dice,
            "difficulty": counted.difficulty,
            "damage": base,
            "type": damage_type or dtype,
            "label": f"{chosen.name} ({counted.parts.replace(f' ({chosen.name})', '')} split)",
        }
    if pool is None or damage is None:
        raise RuleError("K11", "Give the attack's pool and its damage dice")
    if not 0 <= pool <= 30 or not 0 <= damage <= 30:
        raise RuleError("K11", "A pool is 0 to 30 dice")
    name = "a power" if how is rules.AttackMeans.POWER else (weapon or "a weapon")
    return {
        "dice": apply_penalty(pool, st.wound_penalty + split),
        "difficulty": 6,
        "damage": damage,
        "type": damage_type or "lethal",
        "label": f"{name} ({pool} dice − {split} split"
        + (f" − {st.wound_penalty} wounds)" if st.wound_penalty else ")"),
    }


def _roll_kind(
    pool: int, typed: Sequence[int] | None, rng: Any, kind: RollKind, who: str = ""
) -> RollResult:
    """D11, D12: damage and soak at difficulty 6, successes only (typed: the whole pool)."""
    what = "damage pool" if kind is RollKind.DAMAGE else "soak pool"
    dice = _typed(typed, pool, who, what) if typed else roll_d10s(pool, rng or _rng)
    try:
        return count(dice, 6, kind)
    except RuleError as error:
        raise _rule(error) from None


def _wound(
    chase: Chase,
    hit: Participant,
    st: Stats,
    taken: int,
    dtype: str,
    by: AbstractBaseUser,
    round_number: int,
) -> None:
    """D2: damage on the health track, as a round puts it: through the ledger for a sheet
    (a full track takes what fits); for a quick NPC on the chase, and on the fight the chase
    came from while that fight runs."""
    if taken <= 0:
        return
    if st.character is None:
        pid = str(hit.pk)
        chase.npc_damage = {**chase.npc_damage, pid: chase.npc_damage.get(pid, 0) + taken}
        round_id = (chase.origin or {}).get("round_id")
        fight = Combat.objects.select_for_update().filter(pk=round_id, ended_at__isnull=True)
        combat = fight.first() if round_id else None
        if combat is not None:
            combat.npc_damage = {**combat.npc_damage, pid: combat.npc_damage.get(pid, 0) + taken}
            combat.save(update_fields=["npc_damage"])
        return
    ledger_damage(
        character=st.character,
        by=by,
        damage_type=dtype,
        amount=taken,
        empty_boxes=st.health_boxes - st.damage,
        reason=f"chase round {round_number} (K11)",
        source=f"chase {chase.pk}",
    )


def chase_call_off(
    *, chase: Chase, by: AbstractBaseUser, expected_step: int | None = None, key: str | None = None
) -> Chase:
    """The storyteller ends a chase the rules did not end (the scene moved on, someone left):
    announced like any ending, with the outcome ``called_off``."""
    payload = {"chase": chase.pk, "step": expected_step}
    with transaction.atomic():
        opened = _open_step(chase, by, "call_off", key, payload, expected_step)
        if opened is None:  # a replay
            return Chase.objects.get(pk=chase.pk)
        scene, chase, claim = opened
        state = selectors.engine(chase)
        chase.phase, chase.pending, chase.outcome = Phase.OVER, {}, CALLED_OFF
        chase.ended_at = timezone.now()
        _record(
            scene,
            chase,
            state,
            by=by,
            kind=StepKind.END,
            text="Chase over: the storyteller called it off",
            sides=_sides(chase),
            claim=claim,
        )
        _announce_end(chase)
    return chase
