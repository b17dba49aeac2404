"""met_bns turns: actions, the surprise action, prone, the steps of a complex scenario."""

from __future__ import annotations

import pytest

from combat.rules.bns_initiative import Combatant, plan_turn
from combat.rules.bns_round import Action, Combat, Phase, prone_defense_modifier
from combat.rules.errors import RuleError

DELILAH = Combatant("Delilah", physical=9, mental=4, social=5, celerity=1)
MELVIN = Combatant("Melvin", physical=3, mental=12, social=4)


def _fight(started_by: str | None = None) -> Combat:
    combat = Combat.begin([DELILAH, MELVIN], tiebreak=["Delilah", "Melvin"])
    return combat.mediate(agreed=False).assess(["Delilah", "Melvin"], started_by=started_by)


@pytest.mark.rules("B11")
def test_it_ends_a_mediated_scene_without_a_fight() -> None:
    combat = Combat.begin([DELILAH, MELVIN], tiebreak=["Delilah", "Melvin"])
    assert combat.phase is Phase.MEDIATION
    assert combat.mediate(agreed=True).phase is Phase.OVER
    assessed = combat.mediate(agreed=True, approved=False)
    assert assessed.phase is Phase.ASSESSMENT


@pytest.mark.rules("B11")
def test_it_refuses_to_skip_mediation() -> None:
    combat = Combat.begin([DELILAH, MELVIN], tiebreak=["Delilah", "Melvin"])
    with pytest.raises(RuleError) as refused:
        combat.assess(["Delilah"])
    assert refused.value.rule == "B11"


@pytest.mark.rules("B7", "B4")
def test_it_resolves_the_starting_action_before_initiative() -> None:
    combat = _fight(started_by="Delilah")
    assert combat.current == "Delilah"  # the surprise action, though Melvin's initiative is 12
    with pytest.raises(RuleError) as refused:
        combat.surprise("Melvin", Action.ATTACK, target="Delilah")
    assert refused.value.rule == "B7"
    after = combat.surprise("Delilah", Action.ATTACK, target="Melvin")
    assert after.current == "Melvin"
    assert after.fighter("Delilah").standard is not None  # her standard action is spent


@pytest.mark.rules("B6")
def test_it_never_trades_a_simple_action_for_a_standard_one() -> None:
    combat = _fight()
    assert combat.current == "Melvin"
    with pytest.raises(RuleError) as refused:
        combat.act("Melvin", simple=Action.ATTACK)
    assert refused.value.rule == "B6"
    both = combat.act("Melvin", standard=Action.MOVE, simple=Action.MOVE)
    assert both.fighter("Melvin").steps == 6


@pytest.mark.rules("B6")
def test_it_refuses_to_act_out_of_turn() -> None:
    combat = _fight()
    before = combat
    with pytest.raises(RuleError):
        combat.act("Delilah", standard=Action.ATTACK, target="Melvin")
    assert combat == before


@pytest.mark.rules("B10")
@pytest.mark.parametrize(
    ("physical", "ranged", "steps", "modifier"),
    [(True, True, 5, 2), (True, False, 2, -2), (True, True, 3, -2), (False, True, 9, 0)],
)
def test_it_adjusts_a_prone_defense(
    physical: bool, ranged: bool, steps: int, modifier: int
) -> None:
    assert prone_defense_modifier(physical, ranged, steps) == modifier


@pytest.mark.rules("B5", "B10")
def test_it_keeps_mental_actions_out_of_celerity_rounds() -> None:
    combat = _fight()
    combat = combat.act("Melvin", standard=Action.MOVE, simple=Action.DRAW)
    combat = combat.act("Delilah", standard=Action.MOVE, simple=Action.DROP_PRONE).end_round()
    assert combat.round == 1 and combat.current == "Delilah"
    assert combat.fighter("Delilah").prone
    with pytest.raises(RuleError) as refused:
        combat.act("Delilah", standard=Action.MENTAL_CHALLENGE, target="Melvin")
    assert refused.value.rule == "B5"


def test_it_round_trips_through_json() -> None:
    combat = _fight(started_by="Delilah").surprise("Delilah", Action.ATTACK, target="Melvin")
    assert Combat.from_dict(combat.to_dict()) == combat


@pytest.mark.rules("B8", "B5", "B4")
def test_it_orders_every_round_of_a_turn_as_the_turn_plan_does() -> None:
    rested = Combatant(
        "Rested", physical=9, mental=4, social=5, celerity=2, forwent_last_round=True
    )
    quick = Combatant("Quick", physical=10, mental=3, social=3, celerity=2)
    slow = Combatant("Slow", physical=3, mental=12, social=4)
    cast = [rested, quick, slow]
    plan = plan_turn(cast, tiebreak=["Quick", "Rested", "Slow"])
    combat = Combat.begin(cast, tiebreak=["Quick", "Rested", "Slow"]).mediate(agreed=False)
    combat = combat.assess(["Rested", "Quick", "Slow"])
    seen = []
    for _ in plan.rounds:
        seen.append((combat.round_label, combat.order))
        combat = combat.act(combat.current, standard=Action.MOVE).end_round()
    assert seen == [(r.label, r.order) for r in plan.rounds]
    assert seen[0][1][0] == "Rested" and seen[1][1][0] == "Quick"
