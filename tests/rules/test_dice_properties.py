"""Properties of dice, grapples and chases over random inputs (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chases.rules import Chase
from combat.rules.dice import RollKind, count
from combat.rules.errors import RuleError
from combat.rules.exchange import Action, Move, resolve
from combat.rules.grapple import Effect, Grapple, Intent

dice = st.lists(st.integers(1, 10), max_size=15)


@pytest.mark.rules("D1")
@given(dice, st.integers(-3, 14), st.sampled_from(list(RollKind)))
def test_a_roll_never_goes_below_zero_and_botches_only_as_d1_says(
    rolled: list[int], difficulty: int, kind: RollKind
) -> None:
    result = count(rolled, difficulty, kind)
    assert 0 <= result.successes <= len(rolled)
    if result.botch:
        assert kind is RollKind.ACTION
        assert 1 in rolled and all(d < result.difficulty for d in rolled)
    assert 2 <= result.difficulty <= 10


steps = st.lists(
    st.one_of(
        st.tuples(st.just("roll"), st.integers(0, 8), st.integers(0, 8)),
        st.tuples(st.just("effect"), st.sampled_from(list(Effect)), st.integers(0, 8)),
        st.tuples(st.just("assist"), st.sampled_from(["grappler", "victim"]), st.integers(0, 8)),
        st.tuples(st.just("end_round"), st.just(0), st.just(0)),
    ),
    max_size=20,
)


@pytest.mark.rules("G3", "G4", "G5", "G6")
@settings(deadline=None)
@given(st.integers(1, 8), steps, st.sampled_from(list(Intent)))
def test_a_grapple_never_runs_on_with_no_control(control: int, plan: list, intent: Intent) -> None:
    grapple = Grapple(grappler="Ted", victim="Peter", control=control, strength=(("Ted", 3),))
    won = True  # a given state starts right after the Grappler won its roll
    for kind, a, b in plan:
        before = grapple
        try:
            if kind == "roll":
                grapple = grapple.roll(grappler=a, victim=b, intent=intent)
            elif kind == "effect":
                grapple = grapple.effect(a, cost=b)
            elif kind == "assist":
                grapple = grapple.assist(side=a, successes=b)
            else:
                grapple = grapple.end_round()
        except RuleError as refused:
            assert refused.rule and grapple == before
            continue
        if kind == "effect" and not a.forced:
            assert won, "G3: an effect follows only the roll the Grappler has just won"
            assert a is not Effect.THROW or not before.victim_prone, "G6: Throw a standing Victim"
            won = False
        elif kind == "roll":
            won = a > b
        elif kind == "end_round":
            won = False
        assert grapple.control >= 0
        assert grapple.over is not None or grapple.control > 0
        assert Grapple.from_dict(grapple.to_dict()) == grapple


maneuvers = st.sampled_from(
    ["bait", "gun_it", "quick_reverse", "never_tell_me_the_odds", "tail", "gun_it", "head_off"]
)


@pytest.mark.rules("K6", "K7", "K8", "K10")
@settings(deadline=None)
@given(
    st.integers(1, 12),
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), maneuvers, maneuvers), max_size=15),
)
def test_a_chase_never_runs_on_with_the_lead_at_zero(lead: int, rounds: list) -> None:
    chase = Chase.with_lead(lead)
    for prey, predator, prey_move, predator_move in rounds:
        if not chase.running:
            break
        before = chase
        try:
            chase = chase.play_round(prey, predator)
            if chase.running and prey > predator:
                chase = chase.maneuver("prey", prey_move)
            elif chase.running and predator > prey:
                chase = chase.maneuver("predator", predator_move)
        except RuleError as refused:
            assert refused.rule
            if chase is before:
                continue
        if chase.running:
            assert chase.lead > 0
        assert Chase.from_dict(chase.to_dict()) == chase


@pytest.mark.rules("D6", "D7")
@given(st.integers(0, 10), st.integers(0, 10), st.integers(0, 5), st.integers(0, 5))
def test_a_guard_meets_the_first_attacker_as_an_attack_would(
    attack: int, guard: int, attack_damage: int, guard_damage: int
) -> None:
    striker = Move(Action.ATTACK, attack, attack_damage)
    as_guard = resolve(striker, Move(Action.GUARD, guard, guard_damage))
    as_attack = resolve(striker, Move(Action.ATTACK, guard, guard_damage))
    assert as_guard == as_attack
