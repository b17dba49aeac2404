"""The partial rules as steps a service calls: locks (C10, W9), a dropped action (C10),
Stamina-based bids (C12, C15), ranged attacks (C14), mobs (C16) and required bids (W14)."""

from __future__ import annotations

import pytest

from combat.rules.challenge import Challenge, Contender
from combat.rules.errors import RuleError
from combat.rules.night import Locks
from combat.rules.terms import Side


def _social(ruleset: str = "met_classic", **extra: object) -> Challenge:
    return Challenge.start(
        ruleset=ruleset,
        category="social",
        attacker=Contender.make(traits=9, bid="Commanding"),
        defender=Contender.make(traits=7, bid="Stubborn", temper={"willpower": 2}),
        path="Dominate: Command",
        **extra,
    )


def _refused(rule: str, step: object, *args: object, **kwargs: object) -> RuleError:
    with pytest.raises(RuleError) as refused:
        step(*args, **kwargs)  # type: ignore[operator]
    assert refused.value.rule == rule, refused.value
    return refused.value


@pytest.mark.rules("C10")
def test_it_locks_the_fended_off_path_against_that_defender_for_ten_game_minutes() -> None:
    fended = (
        _social()
        .throw_both("rock", "scissors")
        .retest("defender", "willpower")
        .throw_both("rock", "paper")
        .finish()
    )
    assert fended.fended_off()
    locks = Locks().after(fended, attacker="Marcus", target="Sophia", now=100)
    _refused(
        "C10", locks.check, attacker="Marcus", target="Sophia", what="Dominate: Command", now=699
    )
    locks.check(attacker="Marcus", target="Sophia", what="Dominate: Command", now=700)
    locks.check(attacker="Marcus", target="Jane", what="Dominate: Command", now=100)
    locks.check(attacker="Marcus", target="Sophia", what="Presence", now=100)
    assert Locks.from_list(locks.to_list()) == locks
    assert locks.expire(700) == Locks()


@pytest.mark.rules("C10")
def test_it_leaves_no_lock_when_willpower_did_not_fend_the_attack_off() -> None:
    won = _social().throw_both("rock", "scissors").retest("defender", "willpower")
    won = won.throw_both("rock", "scissors").finish()
    assert won.winner is Side.ATTACKER and not won.fended_off()
    assert Locks().after(won, attacker="Marcus", target="Sophia", now=0) == Locks()


@pytest.mark.rules("C10")
def test_it_makes_a_defender_who_spends_willpower_drop_its_own_attack() -> None:
    mutual = _social(both_attacking=True).throw_both("rock", "scissors")
    spent = mutual.retest("defender", "willpower").throw_both("rock", "paper").finish()
    assert spent.winner is Side.DEFENDER
    assert spent.dropped_action(Side.DEFENDER) and not spent.harms(Side.DEFENDER)
    without = _social(both_attacking=True).throw_both("rock", "paper").finish()
    assert without.harms(Side.DEFENDER)


@pytest.mark.rules("W9")
def test_it_locks_a_lost_werewolf_social_challenge_for_five_game_minutes() -> None:
    lost = _social("met_werewolf").throw_both("rock", "paper").finish()
    assert lost.initiator_lost()
    locks = Locks().after(lost, attacker="Janet", target="Cody", now=0)
    _refused("W9", locks.check, attacker="Janet", target="Cody", what="Dominate: Command", now=299)
    locks.check(attacker="Janet", target="Cody", what="Dominate: Command", now=300)
    won = _social("met_werewolf").throw_both("rock", "scissors").finish()
    assert Locks().after(won, attacker="Janet", target="Cody", now=0) == Locks()
    classic = _social().throw_both("rock", "paper").finish()
    assert Locks().after(classic, attacker="Janet", target="Cody", now=0) == Locks()


def _ambush(ruleset: str = "met_classic", **defender: object) -> Challenge:
    return Challenge.start(
        ruleset=ruleset,
        category="physical",
        attacker=Contender.make(traits=8, bid="Quick"),
        defender=Contender.make(traits={"Tough": 2, "Quick": 3}, **defender),
    )


@pytest.mark.rules("C12")
@pytest.mark.parametrize(
    ("flags", "ruling", "allowed"),
    [
        ({"Tough": True}, None, True),
        ({"Tough": False}, None, False),
        ({}, None, None),  # the sheet does not say: the storyteller must
        ({}, True, True),
        ({"Tough": True}, False, False),  # the storyteller's word stands over the sheet
    ],
)
def test_it_lets_a_surprised_defender_bid_only_stamina_based_traits(
    flags: dict[str, bool], ruling: bool | None, allowed: bool | None
) -> None:
    def start() -> Challenge:
        return _ambush(bid="Tough", surprised=True, stamina_based=flags, stamina_ruling=ruling)

    if allowed:
        assert start().defender is not None
        return
    error = _refused("C12", start)
    assert ("storyteller" in error.reason) is (allowed is None)


@pytest.mark.rules("C12")
def test_it_reads_a_list_of_stamina_based_traits_as_flags() -> None:
    assert _ambush(bid="Tough", surprised=True, stamina_based=["Tough"]).throws == 0
    _refused("C12", _ambush, bid="Quick", surprised=True, stamina_based=["Tough"])


@pytest.mark.rules("C15")
def test_it_lets_an_outpaced_target_bid_only_stamina_based_traits() -> None:
    _refused("C15", _ambush, bid="Quick", outpaced=True, stamina_based={"Quick": False})
    assert _ambush(bid="Tough", outpaced=True, stamina_based={"Tough": True}).throws == 0


def _shot(**extra: object) -> Challenge:
    defender = {
        "traits": 6,
        "bid": "Quick",
        "abilities": {"dodge": 2, "brawl": 4, "athletics": 3},
    }
    defender.update(extra.pop("defender", {}))  # type: ignore[arg-type]
    return Challenge.start(
        ruleset="met_classic",
        category="physical",
        attacker=Contender.make(traits=8, bid="Steady", abilities={"firearms": 1}),
        defender=Contender.make(**defender),
        ranged=True,
        **extra,
    )


@pytest.mark.rules("C14")
def test_it_lets_only_dodge_retest_a_ranged_attack() -> None:
    losing = _shot().throw_both("rock", "scissors")
    _refused("C14", losing.retest, "defender", "ability", ability="brawl", opposing="firearms")
    assert losing.retest("defender", "ability", ability="dodge", opposing="firearms").throws == 1
    ruled = _shot(ranged_abilities=("dodge", "athletics")).throw_both("rock", "scissors")
    ruled.retest("defender", "ability", ability="athletics", opposing="firearms")


@pytest.mark.rules("C14")
def test_it_refuses_an_unarmed_counterattack_on_a_shooter() -> None:
    _refused("C14", _shot, counterattack=True)
    armed = _shot(counterattack=True, defender={"armed": True})
    assert armed.throw_both("rock", "scissors").finish().winner is Side.ATTACKER
    dodging = _shot().throw_both("scissors", "rock").finish()
    assert dodging.winner is Side.DEFENDER and not dodging.harms(Side.DEFENDER)


def _mob(members: int = 2, mob_side: str = "attacker", **one: object) -> Challenge:
    many = [
        (f"M{i}", Contender.make(name=f"M{i}", traits=4, bid="Brawny", negatives=["Clumsy"]))
        for i in range(members)
    ]
    single = Contender.make(name="Cody", traits=6, bid="Tough", **one)
    primary = Contender.make(name="Ana", traits=5, bid="Quick")
    attacker, defender = (primary, single) if mob_side == "attacker" else (single, primary)
    return Challenge.start(
        ruleset="met_classic",
        category="physical",
        attacker=attacker,
        defender=defender,
        mob=many,
        mob_side=mob_side,
    )


@pytest.mark.rules("C16")
def test_it_takes_every_mob_members_bid_when_the_defender_wins() -> None:
    won = _mob().throw_both("rock", "paper").finish()
    assert won.winner is Side.DEFENDER
    assert won.mob_lost() == {"Ana": ["Quick"], "M0": ["Brawny"], "M1": ["Brawny"]}
    lost = _mob().throw_both("paper", "rock").finish()
    assert lost.mob_lost() == {} and lost.lost()["defender"] == ["Tough"]


@pytest.mark.rules("C16")
def test_it_runs_five_defenders_against_one_the_same_way() -> None:
    held = _mob(members=4, mob_side="defender")
    assert held.total(Side.ATTACKER) == 6 - 4  # the one is down a trait per extra member
    won = held.throw_both("rock", "scissors").finish()
    assert set(won.mob_lost()) == {"Ana", "M0", "M1", "M2", "M3"}
    _refused("C16", _mob, members=5)


@pytest.mark.rules("C16")
def test_it_drops_a_member_who_cannot_match_the_negatives_named() -> None:
    mob = _mob(members=2)  # M0, M1: four traits, Clumsy
    named = mob.name_negative("defender", "Clumsy")
    assert named.must_drop_out() == []  # one negative, three traits beyond the bid
    weak = Challenge.start(
        ruleset="met_classic",
        category="physical",
        attacker=Contender.make(name="Ana", traits=5, bid="Quick"),
        defender=Contender.make(name="Cody", traits=6, bid="Tough"),
        mob=[("Weak", Contender.make(traits=1, bid="Brawny", negatives=["Clumsy"]))],
    ).name_negative("defender", "Clumsy")
    assert weak.must_drop_out() == ["Weak"]
    _refused("C16", weak.throw, "attacker", "rock")
    _refused("C16", weak.drop_out, "Ana")  # Ana can match and stays in
    stepped_in = weak.drop_out("Weak", ("Rex", Contender.make(traits=3, bid="Wiry")))
    assert [name for name, _m in stepped_in.mob] == ["Rex"]
    assert stepped_in.throw_both("rock", "scissors").winner is None  # the throw goes on
    alone = weak.drop_out("Weak")
    assert alone.mob == () and alone.total(Side.DEFENDER) == 6
    assert Challenge.from_dict(stepped_in.to_dict()) == stepped_in
    assert not stepped_in.can_step_in()  # Rex took the place Weak left


@pytest.mark.rules("C16")
def test_it_lets_someone_step_in_later_for_a_member_who_dropped_out() -> None:
    weak = Challenge.start(
        ruleset="met_classic",
        category="physical",
        attacker=Contender.make(name="Ana", traits=5, bid="Quick"),
        defender=Contender.make(name="Cody", traits=6, bid="Tough"),
        mob=[("Weak", Contender.make(traits=1, bid="Brawny", negatives=["Clumsy"]))],
    ).name_negative("defender", "Clumsy")
    _refused("C16", weak.step_in, "Rex", Contender.make(traits=3, bid="Wiry"))  # no place
    alone = weak.drop_out("Weak")
    assert alone.can_step_in()
    _refused("C16", alone.step_in, "Rex", Contender.make(traits={"Wiry": 3}, bid="Nimble"))
    _refused("C16", alone.step_in, "Ana", Contender.make(traits=3, bid="Quick"))  # in already
    rex = alone.step_in("Rex", Contender.make(traits={"Wiry": 1}, bid="Wiry", negatives=["Clumsy"]))
    assert [name for name, _m in rex.mob] == ["Rex"] and rex.total(Side.DEFENDER) == 6 - 1
    assert rex.must_drop_out() == ["Rex"]  # the negatives named count against it too
    assert not rex.can_step_in()
    _refused("C16", alone.throw_both("rock", "rock").step_in, "Rex", Contender.make(traits=3))
    assert Challenge.from_dict(rex.to_dict()) == rex


@pytest.mark.rules("C16", "C5")
def test_it_counts_the_defenders_negatives_once_however_many_attackers_name_them() -> None:
    mob = _mob()
    cody_has = Challenge.start(
        ruleset="met_classic",
        category="physical",
        attacker=Contender.make(name="Ana", traits=5, bid="Quick"),
        defender=Contender.make(name="Cody", traits=6, bid="Tough", negatives=["Lame"]),
        mob=list(mob.mob),
    )
    twice = cody_has.name_negative("attacker", "Lame").name_negative("attacker", "Lame")
    assert twice.total(Side.DEFENDER) == 6 - 2 - 1


@pytest.mark.rules("W14")
def test_it_lets_the_storyteller_require_a_bid_in_a_simple_test() -> None:
    def simple(**attacker: object) -> Challenge:
        return Challenge.start(
            ruleset="met_werewolf",
            mode="simple",
            category="mental",
            attacker=Contender.make(traits={"Clever": 1}, **attacker),
            bid_required=True,
        )

    _refused("W14", simple)
    _refused("W14", simple, bid="Wise")
    failed = simple(bid="Clever").throw_both("rock", "paper")
    assert failed.success is False and failed.lost()["attacker"] == ["Clever"]
    unbid = Challenge.start(ruleset="met_werewolf", mode="simple", attacker=Contender())
    assert unbid.throw_both("rock", "paper").lost()["attacker"] == []
