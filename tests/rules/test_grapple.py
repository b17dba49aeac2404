"""Grapples beyond the cases: declarations, single-effect grapples, targets, persistence."""

from __future__ import annotations

import pytest

from combat.rules.errors import RuleError
from combat.rules.grapple import (
    Effect,
    Grapple,
    HostageBlockOutcome,
    Over,
    check_declarations,
    grapple_difficulty,
    hostage_block_lands,
    single_effect,
)


@pytest.mark.rules("G2")
def test_it_lets_the_victim_only_resist_reverse_or_relent() -> None:
    check_declarations("sustain", "reverse")
    with pytest.raises(RuleError) as refused:
        check_declarations("sustain", "attack")
    assert refused.value.rule == "G2"
    with pytest.raises(RuleError):
        check_declarations("clinch", "resist")


@pytest.mark.rules("G8", "G1")
def test_it_spends_the_opening_control_on_one_effect_and_lets_go() -> None:
    opening = Grapple.start(
        attacker="Ted",
        defender="Peter",
        attacker_successes=6,
        defender_successes=1,
        grappling="attacker",
        strength={"Ted": 3},
    )
    done = single_effect(opening, Effect.CLINCH)
    assert done.over is Over.RELEASED
    assert done.last_damage is not None and done.last_damage.pool == 3 + 4 // 2
    with pytest.raises(RuleError) as refused:
        single_effect(opening.roll(grappler=2, victim=1), Effect.CLINCH)
    assert refused.value.rule == "G8"


@pytest.mark.rules("G9", "G3")
def test_it_needs_a_living_skeleton_for_a_dexterity_grapple() -> None:
    assert grapple_difficulty(attribute="strength") == 6
    assert grapple_difficulty(attribute="strength", non_humanoid=2) == 8
    with pytest.raises(RuleError) as refused:
        grapple_difficulty(attribute="dexterity", biological=False)
    assert refused.value.rule == "G9"


@pytest.mark.rules("G5", "G4")
def test_it_ends_on_release_and_refuses_steps_after() -> None:
    grapple = Grapple(grappler="Jo", victim="Kelly", control=3).release()
    assert grapple.over is Over.RELEASED
    with pytest.raises(RuleError):
        grapple.end_round()
    assert (
        Grapple(grappler="Jo", victim="Kelly", control=1, control_decay=False).end_round().control
        == 1
    )


def test_it_round_trips_through_json() -> None:
    grapple = Grapple(grappler="Ron", victim="Po", control=6, strength=(("Ron", 3),))
    slammed = grapple.effect(Effect.SLAM)
    assert Grapple.from_dict(slammed.to_dict()) == slammed


@pytest.mark.rules("G6", "B10")
def test_it_throws_a_dropped_victim_only_once_it_stands() -> None:
    dropped = Grapple(grappler="Ted", victim="Peter", control=8, strength=(("Ted", 3),))
    dropped = dropped.effect(Effect.DROP).roll(grappler=3, victim=1)
    with pytest.raises(RuleError) as refused:
        dropped.effect(Effect.THROW)
    assert refused.value.rule == "G6"
    thrown = dropped.stand_up().effect(Effect.THROW)
    assert thrown.thrown_yards == 3 + 8 and thrown.over is Over.FREE
    with pytest.raises(RuleError):
        dropped.stand_up().stand_up()


@pytest.mark.rules("G5", "D16")
def test_it_spends_the_action_of_a_victim_who_breaks_free() -> None:
    held = Grapple(grappler="Jo", victim="Kelly", control=2)
    free = held.roll(grappler=1, victim=4)
    assert free.over is Over.FREE
    assert not free.may_abort("Kelly") and not free.may_abort("Jo")
    released = held.release()
    assert released.may_abort("Jo")
    assert not held.may_abort("Jo")  # nothing to abort while the grapple holds
    with pytest.raises(RuleError):
        held.may_abort("Jane")


@pytest.mark.rules("G5")
def test_it_takes_the_next_main_action_of_a_victim_released_from_a_pin() -> None:
    pinned = Grapple(grappler="Jo", victim="Kelly", control=12).effect(Effect.PIN)
    assert pinned.over is Over.PINNED and pinned.loses_next_main_action is None
    released = pinned.release()
    assert released.over is Over.RELEASED and released.loses_next_main_action == "Kelly"
    assert not released.may_abort("Kelly")
    assert Grapple.from_dict(released.to_dict()) == released


@pytest.mark.rules("G5")
def test_it_lets_a_third_party_break_a_grapple_up_before_either_side_acts() -> None:
    held = Grapple(grappler="Jo", victim="Kelly", control=3)
    broken = held.break_up()
    assert broken.over is Over.BROKEN_UP and broken.negated == ("Jo", "Kelly")
    with pytest.raises(RuleError) as late:
        held.roll(grappler=2, victim=1).break_up()
    assert late.value.rule == "G5"
    assert held.negated == ()
    assert Grapple.from_dict(broken.to_dict()) == broken


@pytest.mark.rules("G7", "D14")
def test_it_lets_a_grappled_victim_block_by_splitting_its_pool() -> None:
    held = Grapple(grappler="Jo", victim="Kelly", control=3)
    blocking = held.victim_block(wits=3)
    assert blocking.victim_block_penalty == -3
    with pytest.raises(RuleError):
        blocking.victim_block(wits=3)
    with pytest.raises(RuleError) as slow:
        held.victim_block(wits=1)
    assert slow.value.rule == "D14"
    assert blocking.end_round().victim_block_penalty == 0


@pytest.mark.rules("G6", "G7")
def test_it_performs_a_forced_effect_that_takes_control_to_zero_and_ends_the_grapple() -> None:
    held = Grapple(grappler="Jo", victim="Kelly", control=2).end_round()  # Control 1, no roll
    blocked = held.effect(Effect.HOSTAGE_BLOCK)
    assert blocked.control == 0 and blocked.over is Over.FREE
    with pytest.raises(RuleError):
        held.effect(Effect.DROP)  # an ordinary effect needs the won roll and the Control
    assert hostage_block_lands(held, attack=3, block=3) == HostageBlockOutcome("Kelly", 1)
    assert hostage_block_lands(held, attack=4, block=1) == HostageBlockOutcome("Jo", 3)
