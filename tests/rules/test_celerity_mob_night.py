"""C15 Celerity order, C16 mob scenes, W7 regaining, C10 and W9 locks."""

from __future__ import annotations

import pytest

from combat.rules.celerity import (
    CelerityRound,
    Slot,
    alacrity_dodge_succeeds,
    alacrity_first,
    matched,
    round_order,
)
from combat.rules.errors import RuleError
from combat.rules.mob import Mob, primary_victim
from combat.rules.night import (
    check_locks,
    five_minute_lock,
    regain,
    willpower_lock,
)


def _order(celerity: dict[str, int]) -> list[tuple[str, str]]:
    return [(slot.who, slot.action) for slot in round_order(celerity)]


@pytest.mark.rules("C15")
def test_it_puts_alacrity_first_against_a_target_without_celerity() -> None:
    assert _order({"Paulo": 2, "Jane": 0}) == [
        ("Paulo", "Alacrity"),
        ("Paulo", "normal"),
        ("Jane", "normal"),
        ("Paulo", "Swiftness"),
    ]


@pytest.mark.rules("C15")
def test_it_lets_only_the_higher_celerity_act_first() -> None:
    order = _order({"Paulo": 3, "Marcus": 1})
    assert order[0] == ("Paulo", "Alacrity")
    assert ("Marcus", "Alacrity") not in order  # Marcus answers as if without Celerity
    assert order[1:3] == [("Paulo", "normal"), ("Marcus", "normal")]
    assert ("Paulo", "Rapidity") in order and ("Marcus", "Swiftness") not in order


@pytest.mark.rules("C15")
def test_it_gives_no_one_alacrity_first_when_celerity_is_matched() -> None:
    order = _order({"Paulo": 2, "Marcus": 2})
    assert order[:2] == [("Paulo", "normal"), ("Marcus", "normal")]
    assert all(action != "Alacrity" for _who, action in order)
    assert order[2:] == [("Paulo", "Swiftness"), ("Marcus", "Swiftness")]
    assert matched(2, 2) and not matched(3, 1)


@pytest.mark.rules("C15")
def test_it_weighs_alacrity_against_each_characters_own_target() -> None:
    # Paulo (2) strikes Jane (no Celerity); Marcus (1) strikes Paulo, who outpaces him
    order = round_order(
        {"Paulo": 2, "Jane": 0, "Marcus": 1}, targets={"Paulo": "Jane", "Marcus": "Paulo"}
    )
    alacrity = [slot.who for slot in order if slot.action == "Alacrity"]
    assert alacrity == ["Paulo"]
    assert alacrity_first("Marcus", {"Marcus": 1, "Jane": 0}, {"Marcus": "Jane"})


@pytest.mark.rules("C15")
def test_it_spends_the_blood_of_announced_celerity_even_when_unused() -> None:
    rnd = (
        CelerityRound()
        .announce("Paulo", level=3, follow_ups=3, target="Marcus")
        .announce("Marcus", level=1, follow_ups=1, target="Paulo")
    )
    assert rnd.blood_spent() == {"Paulo": 3, "Marcus": 1}
    assert Slot("Marcus", "Alacrity") in rnd.unused()  # outpaced: never taken, still paid
    with pytest.raises(RuleError) as refused:
        rnd.take("Marcus", "Alacrity")
    assert refused.value.rule == "C15"
    rnd = rnd.take("Paulo", "Alacrity")
    assert Slot("Paulo", "Alacrity") not in rnd.unused()
    with pytest.raises(RuleError, match="at most 1"):
        CelerityRound().announce("Jane", level=1, follow_ups=2)


@pytest.mark.rules("C15")
def test_it_lets_alacrity_dodge_a_brawler_without_celerity_outright() -> None:
    assert alacrity_dodge_succeeds(dodging_with_alacrity=True, attack="Brawl", attacker_level=0)
    assert not alacrity_dodge_succeeds(dodging_with_alacrity=True, attack="Brawl", attacker_level=1)
    assert not alacrity_dodge_succeeds(dodging_with_alacrity=True, attack="Melee", attacker_level=0)


@pytest.mark.rules("C16")
def test_it_forms_a_mob_of_at_most_five_with_a_primary_attacker() -> None:
    mob = Mob.form("Cody", ["A", "B", "C"], "A", agreed=True)
    assert mob.defender_penalty == 2
    assert mob.losers(defender_won=True) == ("A", "B", "C")
    assert mob.losers(defender_won=False) == ("Cody",)
    with pytest.raises(RuleError, match="At most 5"):
        Mob.form("Cody", list("ABCDEF"), "A", agreed=True)
    with pytest.raises(RuleError, match="agreement"):
        Mob.form("Cody", ["A", "B"], "A", agreed=False)


@pytest.mark.rules("C16")
def test_it_makes_the_character_with_most_attackers_the_primary_victim() -> None:
    assert primary_victim({"A": "Cody", "B": "Cody", "C": "Jane"}) == "Cody"
    with pytest.raises(RuleError, match="storyteller") as refused:
        primary_victim({"A": "Cody", "B": "Jane"})
    assert refused.value.rule == "C16"


@pytest.mark.rules("C16")
def test_it_lets_another_attacker_step_in_for_one_who_drops_out() -> None:
    mob = Mob.form("Cody", ["A", "B"], "A", agreed=True).drop_out("A", replacement="C")
    assert mob.attackers == ("B", "C") and mob.primary == "B"


@pytest.mark.rules("W7")
def test_it_regains_a_category_once_a_night_for_one_willpower() -> None:
    assert regain("social", already_regained=set(), willpower=3) == 2
    with pytest.raises(RuleError, match="already regained") as refused:
        regain("social", already_regained={"social"}, willpower=3)
    assert refused.value.rule == "W7"
    with pytest.raises(RuleError, match="none is left"):
        regain("mental", already_regained=set(), willpower=0)


@pytest.mark.rules("W7", "W0")
@pytest.mark.parametrize(
    ("ruleset", "allowed"),
    [("met_werewolf", True), ("met_classic", False), ("met_bns", False), ("wod_dice", False)],
)
def test_it_regains_traits_for_willpower_in_met_werewolf_only(ruleset, allowed) -> None:
    """W0 (clarified 2026-11-26): W7 is a met_werewolf rule."""
    if allowed:
        assert regain("physical", already_regained=set(), willpower=2, ruleset=ruleset) == 1
        return
    with pytest.raises(RuleError, match="met_werewolf") as refused:
        regain("physical", already_regained=set(), willpower=2, ruleset=ruleset)
    assert refused.value.rule == "W7"


@pytest.mark.rules("W9")
def test_it_refuses_the_same_lost_challenge_for_five_game_minutes() -> None:
    locks = (five_minute_lock("Janet", "Cody", "Leadership", now=100),)
    with pytest.raises(RuleError, match="5 more minute") as refused:
        check_locks(locks, "Janet", "Cody", "Leadership", now=100)
    assert refused.value.rule == "W9"
    check_locks(locks, "Janet", "Cody", "Leadership", now=400)  # five minutes on
    check_locks(locks, "Janet", "Sophia", "Leadership", now=100)  # another target


@pytest.mark.rules("C10")
def test_it_locks_a_fended_off_power_for_ten_game_minutes() -> None:
    locks = (willpower_lock("Marcus", "Sophia", "Dominate", now=0),)
    with pytest.raises(RuleError) as refused:
        check_locks(locks, "Marcus", "Sophia", "Dominate", now=599)
    assert refused.value.rule == "C10"
    check_locks(locks, "Marcus", "Sophia", "Dominate", now=600)
