"""odds(): exact, by enumeration; checked by hand and against a seeded simulation."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from combat.rules.challenge import Challenge, Contender
from combat.rules.odds import RetestPolicy, blind_odds, blind_retests, odds, simulate
from combat.rules.terms import RetestKind

NO_RETESTS = RetestPolicy(attacker=(), defender=())


def _classic(attacker: int, defender: int, **extra: object) -> Challenge:
    return Challenge.start(
        ruleset="met_classic",
        category="physical",
        attacker=Contender.make(traits=attacker, bid="Quick", **extra),
        defender=Contender.make(traits=defender, bid="Tough"),
    )


@pytest.mark.rules("C3", "C4")
def test_it_gives_the_larger_total_two_thirds_without_retests() -> None:
    # a won throw (1/3) or a draw won on totals (1/3)
    assert odds(_classic(10, 8), "attacker", NO_RETESTS) == Fraction(2, 3)
    assert odds(_classic(8, 10), "attacker", NO_RETESTS) == Fraction(1, 3)


@pytest.mark.rules("C4")
def test_it_sums_equal_total_rethrows_as_a_series() -> None:
    # equal totals: a draw is thrown again until someone wins a throw, so it is a coin flip
    assert odds(_classic(9, 9), "attacker", NO_RETESTS) == Fraction(1, 2)


@pytest.mark.rules("C9")
def test_it_counts_a_successful_overbid() -> None:
    # the attacker (10) overbids against 4 after a lost throw: 4 is not more than half of 10
    with_overbid = RetestPolicy(attacker=(RetestKind.OVERBID,), defender=())
    assert odds(_classic(10, 4), "attacker", with_overbid) == Fraction(2, 3) + Fraction(
        1, 3
    ) * Fraction(2, 3)


@pytest.mark.rules("B1", "B2")
def test_it_gives_the_defender_equal_pools() -> None:
    duel = Challenge.start(
        ruleset="met_bns",
        category="physical",
        attacker=Contender.make(pool=10),
        defender=Contender.make(pool=10),
    )
    assert odds(duel, "defender", NO_RETESTS) == Fraction(2, 3)


def test_the_odds_of_both_sides_add_up_to_one() -> None:
    duel = _classic(7, 9, abilities={"brawl": 3}, ability="brawl")
    assert odds(duel, "attacker") + odds(duel, "defender") == 1


@pytest.mark.parametrize(
    "duel",
    [
        _classic(10, 8),
        _classic(6, 9, abilities={"brawl": 3}, ability="brawl", powers=["Potence"]),
        Challenge.start(
            ruleset="met_werewolf",
            category="social",
            mind_control=True,
            attacker=Contender.make(
                traits={"Eloquent": 3, "Witty": 2},
                bid="Eloquent",
                abilities={"expression": 2},
                ability="expression",
            ),
            defender=Contender.make(
                traits={"Stubborn": 4},
                bid="Stubborn",
                temper={"willpower": 2},
                abilities={"leadership": 1},
                ability="leadership",
            ),
        ),
        Challenge.start(
            ruleset="met_bns",
            category="physical",
            attacker=Contender.make(pool=15, temper={"willpower": 1}),
            defender=Contender.make(pool=7, temper={"willpower": 2}),
        ),
    ],
    ids=["classic", "classic-retests", "werewolf", "bns"],
)
def test_it_agrees_with_a_large_seeded_simulation(duel: Challenge) -> None:
    exact = float(odds(duel, "attacker"))
    played = simulate(duel, "attacker", random.Random(20261123), 20_000)
    # 20 000 runs: a standard error under 0.0036; four of them is a generous margin
    assert abs(exact - played) < 0.015, (exact, played)


# -- what one side may know --------------------------------------------------------------


def _duel(ruleset: str, defender: dict, category: str = "physical") -> Challenge:
    return Challenge.start(
        ruleset=ruleset,
        category=category,
        attacker=Contender.make(
            traits={"Quick": 4, "Strong": 5},
            bid="Quick",
            abilities={"brawl": 3},
            ability="brawl",
            powers=["Potence"],
            temper={"willpower": 2},
            pool=12,
        ),
        defender=Contender.make(bid="Tough", **defender),
    )


HIDDEN_DEFENDERS = [
    {"traits": {"Tough": 2}, "pool": 4},
    {"traits": {"Tough": 6, "Wiry": 9}, "pool": 30},
    {
        "traits": {"Tough": 3, "Wiry": 5},
        "abilities": {"dodge": 5},
        "ability": "dodge",
        "powers": ["Fortitude", "Potence"],
        "temper": {"willpower": 9},
        "negatives": ["Clumsy"],
        "health": "bruised",
        "pool": 11,
    },
]


@pytest.mark.rules("C4", "C8", "C9", "W2", "W11", "B1", "B2")
@pytest.mark.parametrize("ruleset", ["met_classic", "met_werewolf", "met_bns"])
def test_blind_odds_never_move_with_the_other_sides_hidden_values(ruleset: str) -> None:
    """Totals, pools, ratings, powers, willpower and unnamed negatives of the other side are
    not the viewer's to know: the odds it is shown are the same whatever they are (the true
    odds are not), before a throw and after a lost one, retest by retest."""
    shown, true = set(), set()
    for defender in HIDDEN_DEFENDERS:
        duel = _duel(ruleset, defender)
        lost = duel.throw_both("rock", "paper")
        kinds = tuple(blind_retests(lost, "attacker"))
        assert kinds, ruleset
        now = blind_odds(duel, "attacker")
        after = blind_odds(lost, "attacker", first=kinds)
        shown.add((now[None], *sorted(after.items(), key=lambda kv: str(kv[0]))))
        true.add(odds(duel, "attacker"))
    assert len(shown) == 1
    assert len(true) > 1


def test_blind_odds_are_the_odds_against_a_difficulty_the_side_was_told() -> None:
    static = Challenge.start(
        ruleset="met_classic",
        mode="static",
        category="mental",
        attacker=Contender.make(traits={"Alert": 4}, bid="Alert"),
        difficulty=6,
    )
    assert blind_odds(static, "attacker")[None] == odds(static, "attacker")


@pytest.mark.rules("C5")
def test_a_negative_named_rightly_counts_in_blind_odds() -> None:
    """What the rules revealed (a right guess: -1 to their total) moves the odds shown."""
    duel = _duel("met_classic", {"traits": {"Tough": 3, "Wiry": 5}, "negatives": ["Clumsy"]})
    named = duel.name_negative("attacker", "Clumsy")
    wrong = duel.name_negative("attacker", "Cowardly")
    assert blind_odds(named, "attacker")[None] > blind_odds(duel, "attacker")[None]
    assert blind_odds(wrong, "attacker")[None] < blind_odds(duel, "attacker")[None]
