"""Starting a chase (K1, K3, K4, K5): cold, by stalk and pounce, or from an escape, and a
second attacker the same escape beat joining it (D13)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from characters.idempotency import Claim, idempotency_claim
from chases import rules, selectors
from chases.dice import START_DIFFICULTY, roll_pool
from chases.models import Chase, ChaseRoll, Phase, Role, Side, Start, StepKind
from chases.pools import pool_for, sheet_values
from chases.recording import leads, members, record, side_key, sides_of
from chases.refusals import (
    ALREADY,
    NOT_IN_SCENE,
    NOT_STORYTELLER,
    WRONG_PHASE,
    ChaseError,
    rule_error,
)
from combat import steps
from combat.models import Participant, Scene
from combat.rules.dice import RollResult
from combat.rules.errors import RuleError
from combat.services import is_storyteller_of_scene, lock_open_scene


def _lock_scene(scene: Scene) -> tuple[Scene, Scene]:
    locked = lock_open_scene(scene)
    return locked, locked


def _may_start(by: AbstractBaseUser, scene: Scene, _: Scene, payload: Mapping[str, Any]) -> None:
    """The storyteller starts any chase; from an escape, the player of a pursuing Predator
    may too (the attacker elects to pursue, K4)."""
    if is_storyteller_of_scene(by, scene):
        return
    pursuer = Participant.objects.filter(
        scene=scene,
        removed_at__isnull=True,
        pk__in=payload["predators"],
        character__player=by,
        npc=False,
    )
    if not (payload["start"] == Start.ESCAPE and pursuer.exists()):
        raise ChaseError(NOT_STORYTELLER)


def _claim(by: AbstractBaseUser, key: str, payload: Mapping[str, Any]) -> Claim:
    """This request's claim of ``key`` (made when the step began): what a replay answers."""
    return idempotency_claim(user=by, action=START.action, key=key, payload=payload)


def _lock_escape_chase(scene: Scene) -> tuple[Scene, Chase | None]:
    """The scene, then its running chase from an escape (if any), locked."""
    locked = lock_open_scene(scene)
    running = Chase.objects.select_for_update().filter(
        scene=locked, ended_at__isnull=True, start=Start.ESCAPE
    )
    return locked, running.first()


#: Start a chase (K3, K4, K5): the storyteller's, or a pursuing Predator's from an escape.
START = steps.declare(
    steps.Step(action="chase.start", lock=_lock_scene, may_act=_may_start, refusal=ChaseError)
)
#: Join the chase an escape started (D13, K1): who may is checked once the chase is found.
JOIN = steps.declare(steps.Step(action="chase.join", lock=_lock_escape_chase, refusal=ChaseError))


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
    given as a list, rolling at its slowest member's pace, see
    :func:`chases.recording.runner`), one or more
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

    def apply(locked: Scene, _: Scene) -> Chase:
        nonlocal group, predators
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
        if Chase.objects.filter(scene=locked, ended_at__isnull=True).exists():
            raise ChaseError(ALREADY)
        setup = {
            "course": rules.Course(terrain=terrain_value, difficulty=int(course_difficulty)),
            "prey_run": prey_run,
            "predator_run": predator_run,
            "options": rules.ChaseOptions(sprint_rounds=sprint_rounds),
        }
        keys = {p.pk: side_key(p) for p in [*group, *predators]}  # drawn once (hidden NPCs)
        names = [keys[p.pk] for p in predators]
        values = sheet_values(everyone)
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
            counted = pool_for(values[who.pk], *parts, bonus=bonus)
            typed = dice.get(dice_key)
            what = "stalk pool" if purpose == ChaseRoll.Purpose.STALK else "chase pool"
            result = roll_pool(counted.dice, difficulty, typed, rng, who.name, what)
            rolls.append((who, purpose, len(result.dice), result, bool(typed)))
            return result

        def prey_roller(parts: tuple[str, str], best: bool = False) -> Participant:
            """K1: the group's slowest member runs for it (``best``: its most alert)."""
            ranked = [(pool_for(values[p.pk], *parts).dice, p) for p in group]
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
                    keys[p.pk]: roll(
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
                    keys[p.pk]: roll(
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
            raise rule_error(error) from None
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
            member_key = rules.PREY if n == 0 else f"{rules.PREY}-{keys[p.pk]}"
            sides[member_key] = Side.objects.create(
                chase=chase, participant=p, role=Role.PREY, key=member_key
            )
        for p in predators:
            sides[keys[p.pk]] = Side.objects.create(
                chase=chase, participant=p, role=Role.PREDATOR, key=keys[p.pk]
            )
        by_participant = {s.participant_id: s for s in sides.values()}
        shown = selectors.names(chase, public=True)
        hunters = ", ".join(shown[n] for n in names)
        text = f"Chase: {hunters} after {shown[rules.PREY]}, {how}; {leads(state, shown)}"
        record(
            locked,
            chase,
            state,
            by=by,
            kind=StepKind.START,
            text=text,
            sides=sides,
            rolls=[(by_participant[p.pk], *rest) for p, *rest in rolls],
            data={"start": start, "origin": chase.origin},
        )
        if key:  # a replay of this request answers this chase
            _claim(by, key, payload).complete(chase=chase.pk)
        scene.seq, scene.game_time = locked.seq, locked.game_time
        return chase

    return steps.run(
        START,
        scene,
        by=by,
        key=key,
        payload=payload,
        rules=apply,
        replayed=lambda *_: Chase.objects.get(pk=_claim(by, key, payload).result["chase"]),
    )


def join_escape_chase(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    predator: Participant,
    prey: Participant,
    head_start: int,
    origin: dict[str, Any],
    key: str | None = None,
) -> Chase | None:
    """D13, K1, K4: an escape is one roll every attacker compares against, so a second
    attacker it beat joins the chase the first comparison started, as another Predator with
    its own Lead (``head_start``: the escape's successes left over its own attack).

    The running chase must have started from an escape with the same ``origin`` (the same
    round of the same fight) and the same lone Prey, and not have rolled its first round;
    when no such chase runs, ``None`` (nothing changed: the caller starts one). A chase from
    that escape that already rolled, or that already counts ``predator``, is refused.
    ``key``: a tap sent again counts once.
    """

    def apply(locked: Scene, chase: Chase | None) -> Chase | None:
        if chase is None or chase.origin != origin:
            return None
        sides = sides_of(chase)
        if [s.participant_id for s in members(sides, rules.PREY)] != [prey.pk]:
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
            joining = side_key(predator)
            new = state.join(joining, int(head_start))
        except RuleError as error:
            raise rule_error(error) from None
        side = Side.objects.create(
            chase=chase, participant=predator, role=Role.PREDATOR, key=joining
        )
        sides[side.key] = side
        shown = selectors.names(chase, public=True)
        text = (
            f"Chase: {shown[side.key]} after {shown[rules.PREY]} too, from the same escape, "
            f"head start {int(head_start)} (K1, K4, D13); {leads(new, shown)}"
        )
        record(
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

    payload = {
        "scene": scene.pk,
        "predator": predator.pk,
        "prey": prey.pk,
        "head_start": head_start,
        "origin": origin,
    }
    return steps.run(JOIN, scene, by=by, key=key, payload=payload, rules=apply)
