"""Chases: starts, pools, several Predators, game time (the cases cover the arithmetic)."""

from __future__ import annotations

import pytest

from chases.rules import Chase, Terrain, chase_pool
from combat.rules.errors import RuleError


@pytest.mark.rules("K1")
def test_it_keeps_a_lead_for_each_predator() -> None:
    chase = Chase.with_lead({"Hound": 3, "Hunter": 6})
    chase = chase.play_round(4, {"Hound": 2, "Hunter": 5})
    assert chase.pursuit("Hound").lead == 5
    assert chase.pursuit("Hunter").lead == 5
    assert chase.running


@pytest.mark.rules("K1", "K10")
def test_it_ends_when_any_predator_catches_the_prey() -> None:
    chase = Chase.with_lead({"Hound": 1, "Hunter": 8}).play_round(1, {"Hound": 3, "Hunter": 0})
    assert chase.over is not None and chase.over.value == "caught"


@pytest.mark.rules("K1")
def test_it_refuses_a_chase_that_is_already_over() -> None:
    with pytest.raises(RuleError) as refused:
        Chase.with_lead(0)
    assert refused.value.rule == "K1"


@pytest.mark.rules("K2")
@pytest.mark.parametrize(
    ("terrain", "attribute", "ability"),
    [
        (Terrain.FOOT, "dexterity", "athletics"),
        (Terrain.CAR, "dexterity", "drive"),
        (Terrain.HEAVY_TRAFFIC, "wits", "drive"),
        (Terrain.WATER, "strength", "athletics"),
    ],
)
def test_it_picks_the_chase_pool_for_the_terrain(
    terrain: Terrain, attribute: str, ability: str
) -> None:
    pool = chase_pool(terrain)
    assert (pool.attribute, pool.ability) == (attribute, ability)


@pytest.mark.rules("K2")
def test_it_switches_a_long_run_on_foot_to_stamina() -> None:
    chase = Chase.with_lead(5)
    for _ in range(6):
        chase = chase.play_round(1, 1)
    assert chase.pool.attribute == "stamina"


@pytest.mark.rules("K4", "D9")
def test_it_starts_from_an_escape_that_beat_the_attack() -> None:
    assert Chase.from_escape(7, 4).lead == 3
    with pytest.raises(RuleError) as refused:
        Chase.from_escape(3, 4)
    assert refused.value.rule == "K4"


@pytest.mark.rules("K12")
def test_it_counts_fifteen_seconds_of_game_time_a_round() -> None:
    chase = Chase.with_lead(5).play_round(2, 1).play_round(1, 1)
    assert chase.game_seconds == 30


def test_it_round_trips_through_json() -> None:
    chase = Chase.with_lead({"Hound": 3, "Hunter": 6}).play_round(2, {"Hound": 1, "Hunter": 1})
    assert Chase.from_dict(chase.to_dict()) == chase


@pytest.mark.rules("K7", "K9")
def test_an_obstacle_set_up_earlier_in_the_round_stays_when_another_is_bought() -> None:
    chase = Chase.with_lead({"Hound": 5, "Hunter": 5}).play_round(4, {"Hound": 1, "Hunter": 1})
    chase = chase.maneuver("prey", "quick_reverse", against="Hound")
    chase = chase.maneuver("prey", "never_tell_me_the_odds", against="Hunter")
    assert set(chase.obstacle) == {"Hound", "prey", "Hunter"}
    assert chase.pursuit("Hound").lead == 5 and chase.pursuit("Hunter").lead == 7
    with pytest.raises(RuleError) as refused:  # all three face it, Hound included
        chase.face_obstacle({"prey": True, "Hunter": True})
    assert refused.value.rule == "K9"
    chase = chase.face_obstacle({"prey": True, "Hunter": True, "Hound": False})
    assert chase.pursuit("Hound").status.value == "out" and chase.running


@pytest.mark.rules("K1", "K9", "K10")
@pytest.mark.parametrize("order", [("Hound", "Hunter"), ("Hunter", "Hound")])
def test_the_ending_does_not_depend_on_the_order_of_the_predators(order) -> None:
    """The Prey escapes the Hound, then the Hunter crashes out: escaped, listed either way."""
    leads = {"Hound": 10, "Hunter": 3}
    chase = Chase.with_lead({name: leads[name] for name in order})
    chase = chase.play_round(3, {"Hound": 1, "Hunter": 1})
    assert chase.pursuit("Hound").status.value == "escaped" and chase.running
    chase = chase.face_obstacle({"prey": True, "Hunter": False})
    assert chase.over is not None and chase.over.value == "escaped"


@pytest.mark.rules("K1", "K9", "K10")
@pytest.mark.parametrize("order", [("Hound", "Hunter"), ("Hunter", "Hound")])
def test_a_prey_that_escaped_one_while_the_other_crashed_first_has_escaped(order) -> None:
    """K1 (clarified 2026-11-26): the Hunter crashes out first, then the Prey escapes the
    Hound, the last one still after it: escaped (not predator_out), listed either way."""
    leads = {"Hound": 10, "Hunter": 3}
    chase = Chase.with_lead({name: leads[name] for name in order})
    chase = chase.face_obstacle({"prey": True, "Hunter": False})
    assert chase.running and chase.pursuit("Hunter").status.value == "out"
    chase = chase.play_round(3, {"Hound": 1})
    assert chase.over is not None and chase.over.value == "escaped"


@pytest.mark.rules("K1", "K9")
@pytest.mark.parametrize("order", [("Hound", "Hunter"), ("Hunter", "Hound")])
def test_the_chase_ends_with_the_predators_out_only_when_every_one_crashed(order) -> None:
    chase = Chase.with_lead(dict.fromkeys(order, 4))
    chase = chase.face_obstacle({"Hound": False})
    assert chase.running
    chase = chase.face_obstacle({"prey": True, "Hunter": False})
    assert chase.over is not None and chase.over.value == "predator_out"


@pytest.mark.rules("K7", "K8")
def test_only_a_new_course_takes_a_pick() -> None:
    won = Chase.with_lead(5).play_round(1, 4)
    with pytest.raises(RuleError) as refused:
        won.maneuver("predator", "tail", pick="wits")
    assert refused.value.rule == "K8"
    herded = won.maneuver("predator", "herd", pick="wits")
    assert herded.pool.attribute == "wits" and herded.lead == 4


@pytest.mark.rules("K1", "K4", "D13")
def test_another_attacker_the_escape_beat_joins_before_the_first_round() -> None:
    chase = Chase.from_escape(3, {"Hound": 1}).join("Hunter", 3)
    assert (chase.pursuit("Hound").lead, chase.pursuit("Hunter").lead) == (2, 3)
    for name, lead, rule in [("Hound", 2, "K1"), ("Other", 0, "K4")]:
        with pytest.raises(RuleError) as refused:
            chase.join(name, lead)
        assert refused.value.rule == rule
    with pytest.raises(RuleError) as refused:
        chase.play_round(1, {"Hound": 1, "Hunter": 1}).join("Other", 2)
    assert refused.value.rule == "K1"
