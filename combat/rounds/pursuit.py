"""D9, K4: a surviving escape waits on its attacker's choice to pursue; a pursuit hands the Prey
and Predator to a chase, and while it runs they have no turn in the fight.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from chases.refusals import ChaseError
from chases.starting import join_escape_chase, start_chase
from combat.models import Combat, CombatStage, Participant, Scene
from combat.rounds.errors import RoundError
from combat.rounds.fight import (
    record_round,
    reset_phase_work,
    round_step,
    take,
)
from combat.rounds.reads import (
    chasing,
    fight_members,
    is_visible,
    out_of,
    pursuits_waiting,
    who_of,
    wod_state,
)
from combat.rules.errors import RuleError
from combat.rules.wod_round import Declaration, Step


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


def require_no_pursuit(combat: Combat) -> None:
    """K4: the fight waits while an escape waits on its attacker's choice (so the Prey's
    place, in the fight or in the chase, is known before anyone acts again)."""
    waiting = pursuits_waiting(combat)
    if waiting:
        participants = fight_members(combat)
        offer = waiting[0]
        predator = participants[int(offer["predator"])].name
        prey = participants[int(offer["prey"])].name
        raise RoundError(f"First: does {predator} pursue {prey}? Pursue or let go (K4).")


PURSUE_STEP = round_step("round.pursue", storyteller=True)


def combat_pursue(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    predator: Participant,
    pursue: bool,
    at: str | None = None,
    key: str | None = None,
) -> Combat:
    """K4, D9, D13: the attacker a surviving escape beat elects to pursue or not; the
    storyteller taps the choice on the tablet (for a player's attacker, on their word).

    Pursue: a chase starts with the escape's remaining successes as head start, or the
    attacker joins the chase the same escape started as another Predator (K1); Prey and
    Predator are then away in the chase (no turn in the fight while it runs). Let go: the
    escaper leaves the fight (taken out; the storyteller may bring it back).
    """

    def rules(scene: Scene, combat: Combat) -> None:
        who = who_of(predator)
        waiting = pursuits_waiting(combat)
        offer = next((o for o in waiting if o["predator"] == who), None)
        if offer is None:
            raise RoundError(f"No escape waits on {predator.name}'s choice to pursue (K4).")
        participants = fight_members(combat)
        prey = participants[int(offer["prey"])]
        work = {**combat.work, "pursuits": [o for o in waiting if o is not offer]}
        if pursue:
            combat.work = work
            words, started = _hand_to_chase(
                scene, combat, by, predator, prey, int(offer["head_start"]), int(offer["round"])
            )
            text = f"{predator.name} pursues {prey.name}{words}"
            if started:
                away = [w for w in chasing(combat) if w not in (who, offer["prey"])]
                work["chase"] = [*away, offer["prey"], who]
        else:
            kept = [w for w in out_of(combat) if w != offer["prey"]]
            work["out"] = [*kept, offer["prey"]]
            text = f"{predator.name} lets {prey.name} go: {prey.name} leaves the fight (K4)"
        combat.work = work
        record_round(
            scene,
            combat,
            by,
            text,
            public=is_visible(predator) and is_visible(prey),
            concerns=[predator, prey],
            participants=participants,
        )
        skip_away(scene, combat, by, participants)

    payload = {"p": predator.pk, "pursue": pursue}
    return take(
        PURSUE_STEP, combat, predator, by=by, key=key, payload=payload, seen=at, rules=rules
    )


def skip_away(
    scene: Scene, combat: Combat, by: AbstractBaseUser, participants: dict[int, Participant]
) -> None:
    """D9, K4: while the chase runs, its Prey and Predators have no turn in the fight it came
    from: each of their turns still to come this round is passed over (no action), with a
    line (the storyteller's alone for a hidden NPC)."""
    away = set(chasing(combat))
    if not away or combat.stage != CombatStage.ROUND or not combat.state:
        return
    state = wod_state(combat)
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
    reset_phase_work(combat, state)
    for who in dict.fromkeys(passed):
        p = participants.get(int(who))
        if p is None:
            continue
        record_round(
            scene,
            combat,
            by,
            f"{p.name} is away in the chase: no turn in the fight (K4)",
            public=is_visible(p),
            concerns=[p],
            participants=participants,
        )
