"""The MET challenge beyond the cases: surprise, mobs, werewolf inheritance, hidden throws,
refusals that change nothing, and persistence."""

from __future__ import annotations

import pytest

from combat.rules.challenge import Challenge, Contender, Phase
from combat.rules.errors import RuleError
from combat.rules.ranged import may_counterattack, ranged_retest_allowed, shooting_category
from combat.rules.terms import Category, RetestKind, Side


def _duel(ruleset: str = "met_classic", **defender: object) -> Challenge:
    return Challenge.start(
        ruleset=ruleset,
        category="physical",
        attacker=Contender.make(
            traits={"Quick": 2, "Strong": 3}, bid="Quick", abilities={"brawl": 3}
        ),
        defender=Contender.make(traits={"Tough": 2, "Wiry": 2}, bid="Tough", **defender),
    )


@pytest.mark.rules("C12")
def test_it_bars_a_surprised_defender_from_dodge_retests_and_from_harming() -> None:
    duel = _duel(surprised=True, stamina_based={"Tough": True}, abilities={"dodge": 4}).throw_both(
        "paper", "scissors"
    )
    assert duel.leader is Side.DEFENDER
    losing = _duel(
        surprised=True, stamina_based={"Tough": True}, abilities={"dodge": 4, "occult": 1}
    ).throw_both("rock", "scissors")
    with pytest.raises(RuleError) as refused:
        losing.retest("defender", "ability", ability="dodge", opposing="brawl")
    assert refused.value.rule == "C12"
    assert not losing.may_retest_with("defender", "dodge")  # what the phone offers, C12
    assert losing.may_retest_with("defender", "occult")  # C8: 1 beats the attacker's 0
    assert not losing.may_retest_with("attacker", "brawl")  # winning: nothing to retest (C8)
    won = duel.finish()
    assert won.winner is Side.DEFENDER and not won.harms(Side.DEFENDER)


@pytest.mark.rules("C14")
def test_it_announces_shooting_in_mental_or_physical_only() -> None:
    assert shooting_category("mental") is Category.MENTAL
    with pytest.raises(RuleError) as refused:
        shooting_category("social")
    assert refused.value.rule == "C14"
    assert not may_counterattack(ranged_attack=True, defender_has_ranged_weapon=False)
    assert ranged_retest_allowed("Dodge", ranged_attack=True)
    assert not ranged_retest_allowed("Brawl", ranged_attack=True)


@pytest.mark.rules("C16", "C5")
def test_it_takes_one_trait_off_a_mobbed_defender_per_extra_attacker() -> None:
    mobbed = Challenge.start(
        ruleset="met_classic",
        category="physical",
        attacker=Contender.make(traits=8, bid="Quick"),
        defender=Contender.make(traits=9, bid="Tough"),
        mob_attackers=3,
    )
    assert mobbed.total(Side.DEFENDER) == 7
    assert mobbed.throw_both("rock", "rock").declare(8, 7).winner is None
    assert mobbed.throw_both("rock", "rock").declare(8, 7).leader is Side.ATTACKER


@pytest.mark.rules("W0", "C6")
def test_it_plays_werewolf_health_as_classic() -> None:
    duel = _duel("met_werewolf", health="wounded").throw_both("rock", "rock")
    assert duel.leader is Side.ATTACKER  # C6 applies in met_werewolf (W0)


@pytest.mark.rules("W5", "C2")
def test_it_allows_relenting_only_before_the_first_throw() -> None:
    relented = _duel("met_werewolf").relent("defender")
    assert relented.winner is Side.ATTACKER and relented.lost() == {
        "attacker": [],
        "defender": [],
    }
    thrown = _duel("met_werewolf").throw_both("rock", "scissors")
    with pytest.raises(RuleError) as refused:
        thrown.relent("defender")
    assert refused.value.rule == "W5"


@pytest.mark.rules("C3")
def test_it_keeps_a_throw_hidden_until_both_have_thrown() -> None:
    duel = _duel().throw("attacker", "rock")
    assert duel.phase is Phase.THROWS and duel.throws == 0
    seen_by_defender = duel.view_for(Side.DEFENDER)
    assert seen_by_defender["pending"] == {}
    assert seen_by_defender["waiting_for"] == ["defender"]
    assert duel.view_for(Side.ATTACKER)["pending"] == {"attacker": "rock"}
    with pytest.raises(RuleError, match="already thrown"):
        duel.throw("attacker", "paper")
    assert duel.throw("defender", "scissors").leader is Side.ATTACKER


@pytest.mark.rules("C8")
def test_it_offers_only_the_retests_the_loser_may_take() -> None:
    losing = _duel(powers=["Fortitude"], temper={"willpower": 2}).throw_both("rock", "scissors")
    offered = {kind for kind, _rule in losing.allowed_retests("defender")}
    assert RetestKind.POWER in offered and RetestKind.OVERBID in offered
    assert RetestKind.WILLPOWER not in offered  # C10: physical challenge
    assert losing.allowed_retests("attacker") == []  # the winner takes no retest


def test_it_round_trips_every_phase_through_json() -> None:
    duel = _duel(temper={"willpower": 1})
    for state in (
        duel,
        duel.throw("attacker", "rock"),
        duel.throw_both("rock", "rock"),
        duel.throw_both("rock", "scissors").retest("defender", "overbid"),
        duel.throw_both("rock", "paper").finish(),
    ):
        assert Challenge.from_dict(state.to_dict()) == state


@pytest.mark.rules("C5")
@pytest.mark.parametrize(
    ("blood", "per_turn", "category", "message"),
    [
        (4, 4, "physical", "At most 3"),
        (2, 1, "physical", "spend 1 blood a turn"),
        (1, 3, "social", "physical traits only"),
    ],
)
def test_it_holds_blood_traits_to_their_limits(
    blood: int, per_turn: int, category: str, message: str
) -> None:
    with pytest.raises(RuleError, match=message) as refused:
        Challenge.start(
            ruleset="met_classic",
            category=category,
            attacker=Contender.make(traits=5, bid="Quick", blood=blood, blood_per_turn=per_turn),
            defender=Contender.make(traits=5, bid="Tough"),
        )
    assert refused.value.rule == "C5"


@pytest.mark.rules("C5")
def test_it_counts_blood_traits_in_the_total() -> None:
    duel = Challenge.start(
        ruleset="met_classic",
        category="physical",
        attacker=Contender.make(traits=5, bid="Quick", blood=2, blood_per_turn=2),
        defender=Contender.make(traits=6, bid="Tough"),
    )
    assert duel.total(Side.ATTACKER) == 7
    assert duel.throw_both("rock", "rock").declare(7, 6).leader is Side.ATTACKER


@pytest.mark.rules("C5")
def test_it_takes_blood_traits_before_the_test_within_the_limits() -> None:
    duel = Challenge.start(
        ruleset="met_classic",
        category="physical",
        attacker=Contender.make(traits=5, bid="Quick", blood_per_turn=2),
        defender=Contender.make(traits=6, bid="Tough"),
    )
    more = duel.spend_blood("attacker", 1).spend_blood("attacker", 1)
    assert more.total(Side.ATTACKER) == 7
    with pytest.raises(RuleError, match="spend 2 blood a turn") as refused:
        more.spend_blood("attacker", 1)
    assert refused.value.rule == "C5"
    with pytest.raises(RuleError, match="before the test"):
        duel.throw_both("rock", "rock").spend_blood("defender", 1)
    assert Challenge.from_dict(more.to_dict()) == more


@pytest.mark.rules("C5")
def test_it_counts_blood_traits_kept_from_earlier_in_the_conflict() -> None:
    kept = Challenge.start(
        ruleset="met_classic",
        category="physical",
        attacker=Contender.make(traits=5, bid="Quick", blood_per_turn=1, blood_kept=2),
        defender=Contender.make(traits=6, bid="Tough"),
    )
    assert kept.total(Side.ATTACKER) == 7
    more = kept.spend_blood("attacker", 1)  # a new spend: the generation's limit is 1
    assert more.total(Side.ATTACKER) == 8
    with pytest.raises(RuleError, match="At most 3 blood traits"):
        Challenge.start(
            ruleset="met_classic",
            category="physical",
            attacker=Contender.make(traits=5, bid="Quick", blood=1, blood_kept=3),
            defender=Contender.make(traits=6, bid="Tough"),
        )


@pytest.mark.rules("C16", "C5")
def test_it_does_not_count_the_mob_penalty_as_the_defenders_wrong_guesses() -> None:
    mobbed = Challenge.start(
        ruleset="met_classic",
        category="physical",
        attacker=Contender.make(traits=8, bid="Quick", negatives=["Clumsy"]),
        defender=Contender.make(traits=2, bid="Tough"),
        mob_attackers=3,
    )
    guessed = mobbed.name_negative("defender", "Lame")  # one trait beyond the bid: one guess
    assert guessed.total(Side.DEFENDER) == 2 - 2 - 1
    with pytest.raises(RuleError) as refused:
        guessed.name_negative("defender", "Clumsy")
    assert refused.value.rule == "C5"


@pytest.mark.rules("C16", "C5")
def test_it_counts_a_negative_trait_named_twice_once() -> None:
    duel = _duel(negatives=["Clumsy"])
    twice = duel.name_negative("attacker", "Clumsy").name_negative("attacker", "Clumsy")
    assert twice.total(Side.DEFENDER) == duel.total(Side.DEFENDER) - 1


@pytest.mark.rules("C7")
def test_an_incapacitated_character_takes_a_test_the_storyteller_calls_but_starts_none() -> None:
    from combat.rules.terms import Health

    hurt = Contender.make(traits={"Alert": 3}, bid="Alert", health=Health.INCAPACITATED)
    start = {"ruleset": "met_classic", "mode": "static", "category": "mental", "difficulty": 3}
    with pytest.raises(RuleError) as refused:
        Challenge.start(**start, attacker=hurt)
    assert refused.value.rule == "C7"
    called = Challenge.start(**start, attacker=hurt, called=True)
    assert called.throw_both("rock", "scissors").leader is Side.ATTACKER


@pytest.mark.rules("C8")
def test_a_power_retest_is_announced_under_the_power_and_an_ability_retest_under_the_ability():
    base = _duel(abilities={"dodge": 1}, powers=["Presence: Awe"])
    lost = replace_ability(base, "dodge").throw_both("rock", "scissors")  # the defender loses
    power = lost.retest(Side.DEFENDER, RetestKind.POWER, power="Presence: Awe").announced
    assert power is not None and (power.power, power.ability) == ("Presence: Awe", None)
    won = _duel().throw_both("scissors", "rock")  # the attacker loses
    ability = won.retest(Side.ATTACKER, RetestKind.ABILITY, ability="brawl").announced
    assert ability is not None and (ability.ability, ability.power) == ("brawl", None)


@pytest.mark.rules("C8")
@pytest.mark.parametrize(
    ("theirs", "allowed"), [(None, True), ("dodge", True), ("brawl", False), ("melee", True)]
)
def test_an_ability_retest_is_allowed_only_with_a_higher_rating_than_the_opposing_one(
    theirs, allowed
):
    """The defender's Dodge 3 against the attacker's brawl 3, melee 0: only a higher rating
    retests (C8); with no opposing ability known, any rating above 0 may be tried."""
    lost = _duel(abilities={"dodge": 3}).throw_both("rock", "scissors")
    assert lost.may_retest_with(Side.DEFENDER, "dodge", opposing=theirs) is allowed
    assert lost.may_retest_with(Side.DEFENDER, "brawl") is False  # no rating at all


def replace_ability(challenge: Challenge, ability: str) -> Challenge:
    from dataclasses import replace

    return replace(challenge, defender=replace(challenge.defender, ability=ability))
