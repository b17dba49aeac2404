"""met_bns pools and damage, tests against the storyteller, locks and limits of the scene."""

from __future__ import annotations

import re

import pytest

from characters.models import LedgerEntry
from combat import services as scenes
from combat.challenges.reads import engine_of, step_token
from combat.challenges.refusals import ChallengeError
from combat.challenges.storyteller import challenge_st
from combat.models import Challenge

pytestmark = pytest.mark.django_db


def _weapon(t, who, name):
    return (
        t.a.character.equipment.get(name=name).pk
        if who == "a"
        else (t.d.character.equipment.get(name=name).pk)
    )


def test_bns_attack_pool_willpower_retest_and_damage_on_the_track(bns):
    t = bns
    bat = _weapon(t, "a", "Baseball bat")
    ch = t.start(attribute="Physical", skill="Melee", weapon=bat, attack=True, effect="bat")
    ch = t.do(
        "answer", ch, t.d_user, side="defender", answer="bid", attribute="Physical", skill="Dodge"
    )
    eng = engine_of(t.ch(ch))
    assert (eng.attacker.pool, eng.defender.pool) == (15, 7)  # B1: 9+4+2, 3+4
    ch = t.throw(ch, "rock", "paper")  # Melvin wins the throw
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="willpower")
    assert t.now(t.a)["willpower"] == 3
    with pytest.raises(ChallengeError, match="B2"):
        ch2 = t.ch(ch)
        t.do("retest", ch2, t.a_user, side="attacker", kind="willpower")
    ch = t.throw(ch, "paper", "rock")  # Delilah wins the retest
    ch = t.do("accept", ch, t.d_user, side="defender")
    assert ch.winner == "attacker"
    assert t.now(t.d)["damage"] == 1  # B3: 1 base, no Potence, no Fortitude on Melvin
    assert "takes 1 damage (B3)" in ch.outcome
    assert t.now(t.a)["traits"] == {} and not LedgerEntry.objects.filter(kind="trait_lost")


@pytest.mark.parametrize(
    "attacker, answer, refused",
    [
        ({"attribute": "Dexterity"}, {}, "has no attribute Dexterity on the sheet (B1)"),
        ({"skill": "Basket weaving"}, {}, "has no skill Basket weaving on the sheet (B1)"),
        ({}, {"attribute": "Charm"}, "has no attribute Charm on the sheet (B1)"),
        ({}, {"skill": "Juggling"}, "has no skill Juggling on the sheet (B1)"),
    ],
)
def test_bns_a_pool_named_from_outside_the_sheet_is_refused_and_changes_nothing(
    bns, attacker, answer, refused
):
    """B1: an attribute or skill the sheet lacks would count 0 without a word: it is refused."""
    t = bns
    if attacker:
        with pytest.raises(ChallengeError, match=re.escape(refused)):
            t.start(**{"attribute": "Physical", **attacker}, attack=True)
        assert not Challenge.objects.exists()
        return
    ch = t.start(attribute="Physical", skill="Melee", attack=True)
    step = t.ch(ch).step
    with pytest.raises(ChallengeError, match=re.escape(refused)):
        t.do("answer", ch, t.d_user, side="defender", answer="bid", **answer)
    assert (t.ch(ch).status, t.ch(ch).step) == ("answer", step)
    t.do("answer", ch, t.d_user, side="defender", answer="bid", attribute="physical", skill="dodge")
    assert t.ch(ch).status == "live"  # any case, as the sheet spells it or not


def test_bns_prone_defender_within_three_steps_is_minus_two(bns):
    t = bns
    ch = t.start(attribute="Physical", skill="Melee", attack=True)
    ch = t.do(
        "answer",
        ch,
        t.d_user,
        side="defender",
        answer="bid",
        attribute="Physical",
        skill="Dodge",
        prone=True,
    )
    assert engine_of(t.ch(ch)).defender.pool == 5  # B10: 3+4-2


def test_static_test_called_from_the_tablet_the_player_bids_the_storyteller_throws(classic):
    t = classic
    ch = t.start(by=t.st, defender=None, mode="static", category="mental", difficulty=5)
    assert ch.status == "answer" and ch.options["awaiting"] == "attacker"
    ch = t.do("answer", ch, t.a_user, side="attacker", answer="bid", bid="Alert")
    ch = t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    ch = t.do("throw", ch, t.st, side="defender", throw="paper", as_st=True)  # the ST wins
    ch = t.do("accept", ch, t.a_user, side="attacker")
    assert ch.winner == "defender"
    assert t.now(t.a)["traits"]["mental"]["Alert"] == 1  # C11: only the character loses


def test_static_draw_compares_the_declared_total_with_the_difficulty(classic):
    t = classic
    ch = t.start(defender=None, mode="static", category="mental", bid="Alert", difficulty=3)
    assert ch.status == "live"
    ch = t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    ch = t.do("throw", ch, t.st, side="defender", throw="rock", as_st=True)
    ch = t.do("declare", ch, t.a_user, side="attacker", total=4)
    assert engine_of(t.ch(ch)).leader.value == "attacker"


@pytest.mark.parametrize(
    ("mode", "outright", "winner"),
    [("simple", False, "attacker"), ("difficult", False, "defender")],
)
def test_simple_and_difficult_tests_on_a_draw(classic, mode, outright, winner):
    t = classic
    ch = t.start(defender=None, mode=mode)
    ch = t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    ch = t.do("throw", ch, t.st, side="defender", throw="rock", as_st=True)
    assert ch.winner == winner  # C13, W14: the initiator wins draws unless outright


def test_extended_race_against_the_storyteller(werewolf):
    t = werewolf
    ch = t.start(
        by=t.st,
        defender=None,
        mode="extended",
        category="physical",
        difficulty=3,
        target_wins=2,
        race=True,
        bid="Quick",
    )
    ch = Challenge.objects.get()
    for _ in range(2):
        ch = t.do("throw", ch, t.a_user, side="attacker", throw="paper")
        ch = t.do("throw", ch, t.st, side="defender", throw="rock", as_st=True)
        if ch.status == "live" and engine_of(t.ch(ch)).phase.value == "retests":
            ch = t.do("accept", ch, t.st, side="defender", as_st=True)
    ch = t.ch(ch)
    assert ch.status == "over" and ch.winner == "attacker"  # W13: first to 2 wins


def test_w9_five_minute_rule_on_the_game_clock(werewolf):
    t = werewolf
    ch = t.start(category="social", bid="Charismatic", what="Persuasion")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Impressive")
    ch = t.throw(ch, "rock", "paper")
    ch = t.do("accept", ch, t.a_user, side="attacker")
    with pytest.raises(ChallengeError, match="W9"):
        t.start(category="social", bid="Eloquent", what="Persuasion")
    scenes.scene_advance_clock(scene=t.refresh().scene, by=t.st, seconds=5 * 60)
    assert t.start(category="social", bid="Eloquent", what="Persuasion").status == "answer"


def test_c10_willpower_fends_off_and_locks_for_ten_game_minutes(classic):
    t = classic
    ch = t.start(category="social", bid="Intimidating", what="Dominate")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Charismatic")
    ch = t.throw(ch, "rock", "scissors")
    ch = t.do("retest", ch, t.d_user, side="defender", kind="willpower")
    ch = t.throw(ch, "scissors", "rock")
    with pytest.raises(ChallengeError, match="C10"):
        t.do("retest", ch, t.a_user, side="attacker", kind="overbid", declared=4)
    ch = t.do("accept", ch, t.a_user, side="attacker")
    assert ch.winner == "defender"
    with pytest.raises(ChallengeError, match="C10"):
        t.start(category="social", bid="Commanding", what="Dominate")


def test_w6_running_out(werewolf):
    t = werewolf
    from characters.services import ledger_spend

    for trait, count in (("Brawny", 1), ("Tough", 2)):
        ledger_spend(
            character=t.d.character,
            kind="trait_lost",
            by=t.st,
            subject=trait,
            category="physical",
            amount=count,
        )
    ch = t.start(category="physical", bid="Quick")
    assert ch.status == "over" and ch.winner == "attacker"  # W6: loses at once, nothing lost


def test_c7_incapacitated_cannot_start(classic):
    t = classic
    from characters.services import ledger_spend

    ledger_spend(character=t.a.character, kind="health_damage", by=t.st, amount=4)
    with pytest.raises(ChallengeError, match="C7"):
        t.start(category="physical", bid="Strong")


def test_c12_surprised_defender_bids_only_stamina_based(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong", surprise=True)
    with pytest.raises(ChallengeError, match="C12"):
        t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Wiry")
    challenge_st(scene=t.refresh().scene, challenge=t.ch(ch), by=t.st, action="stamina", side="yes")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    assert ch.status == "live"


def test_c14_unarmed_defender_cannot_counterattack_a_ranged_attack(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong", ranged=True)
    with pytest.raises(ChallengeError, match="C14"):
        t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough", counterattack=True)


def test_the_storyteller_denies_a_retest_and_its_cost_is_reversed(werewolf):
    t = werewolf
    ch = t.start(category="social", bid="Charismatic", ability="Expression")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Impressive")
    ch = t.throw(ch, "rock", "paper")
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="ability", ability="Expression")
    assert t.now(t.a)["abilities"]["Expression"] == 1
    ch = challenge_st(
        scene=t.refresh().scene,
        challenge=t.ch(ch),
        by=t.st,
        action="deny",
        text="not relevant here",
    )
    assert t.now(t.a)["abilities"]["Expression"] == 2
    assert engine_of(t.ch(ch)).phase.value == "retests"


def test_quick_npc_played_from_the_tablet(classic):
    t = classic
    npc = scenes.scene_add_npc(
        scene=t.refresh().scene, by=t.st, name="Ghoul", pools={"Physical": 4}
    )
    ch = t.start(by=t.st, attacker=npc, defender=t.d, category="physical", bid="Physical")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.do("throw", ch, t.st, side="attacker", throw="rock", as_st=True)
    ch = t.do("throw", ch, t.d_user, side="defender", throw="scissors")
    ch = t.do("accept", ch, t.d_user, side="defender")
    assert ch.winner == "attacker" and t.now(t.d)["traits"]["physical"]["Tough"] == 1


def test_w7_regain_from_the_phone_once_per_night(werewolf):
    from django.urls import reverse

    from tests.conftest import client_for

    t = werewolf
    ch = t.start(category="social", bid="Charismatic")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Impressive")
    ch = t.throw(ch, "rock", "paper")
    ch = t.do("accept", ch, t.a_user, side="attacker")
    a = client_for(t.a_user)
    page = a.get(reverse("scene_phone", args=[t.scene.pk])).content.decode()
    assert "Regain social traits (1 willpower, W7)" in page
    url = reverse("challenge_regain", args=[t.scene.pk])
    data = {"participant": t.a.pk, "category": "social", "key": "regain-key-01"}
    assert a.post(url, data).status_code == 200
    assert t.now(t.a)["traits"]["social"]["Charismatic"] == 3
    assert t.now(t.a)["willpower"] == 4
    data["key"] = "regain-key-02"
    r = a.post(url, data)
    assert r.status_code == 409 and "W7" in r.content.decode()


@pytest.mark.rules("W7", "W0")
def test_w7_a_met_classic_phone_offers_no_regain_and_a_forged_post_changes_nothing(classic):
    """W0 (clarified 2026-11-26): regaining traits for willpower is met_werewolf's."""
    from django.urls import reverse

    from tests.conftest import client_for

    t = classic
    ch = t.start(category="physical", bid="Brawny")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "paper", "scissors")
    ch = t.do("accept", ch, t.a_user, side="attacker")
    assert t.now(t.a)["traits"]["physical"]["Brawny"] == 2
    a = client_for(t.a_user)
    page = a.get(reverse("scene_phone", args=[t.scene.pk])).content.decode()
    assert "Regain" not in page and "cc-regain" not in page
    before = (t.now(t.a)["willpower"], LedgerEntry.objects.count(), t.refresh().scene.seq)
    url = reverse("challenge_regain", args=[t.scene.pk])
    r = a.post(url, {"participant": t.a.pk, "category": "physical", "key": "regain-key-c1"})
    assert r.status_code == 409 and "(W7)" in r.content.decode()
    assert "met_werewolf" in r.content.decode()
    after = (t.now(t.a)["willpower"], LedgerEntry.objects.count(), t.refresh().scene.seq)
    assert after == before and t.now(t.a)["traits"]["physical"]["Brawny"] == 2


@pytest.mark.rules("W13", "W14", "W0")
@pytest.mark.parametrize(
    ("options", "rule"),
    [({"mode": "extended"}, "W13"), ({"mode": "simple", "bid_required": True}, "W14")],
)
def test_w13_w14_a_met_classic_scene_refuses_them_naming_the_rule(classic, options, rule):
    t = classic
    seq = t.refresh().scene.seq
    with pytest.raises(ChallengeError) as refused:
        t.start(by=t.st, defender=None, category="mental", bid="Alert", difficulty=3, **options)
    assert refused.value.rule == rule
    assert not Challenge.objects.exists() and t.refresh().scene.seq == seq


@pytest.mark.rules("W13", "W14", "W0", "C11", "C13")
@pytest.mark.parametrize(
    ("ruleset", "offered", "not_offered"),
    [
        ("classic", ["static (C11)", "simple (C13)", "difficult (C13)"], ["W13", "W14"]),
        ("bns", ["static (C11)", "simple (C13)"], ["W13", "W14"]),
        (
            "werewolf",
            ["static (C11)", "simple (C13, W14)", "extended (W13)", "Race against me (W13)"],
            [],
        ),
    ],
)
def test_the_board_and_the_phone_offer_only_the_tests_of_the_scenes_ruleset(
    request, ruleset, offered, not_offered
):
    t = request.getfixturevalue(ruleset)
    board, phone = t.board(), t.phone(t.a_user)
    for label in offered:
        assert label in board
    for rule in not_offered:
        assert rule not in board and rule not in phone
    assert ('value="extended"' in board) == (ruleset == "werewolf")
    assert ('value="extended"' in phone) == (ruleset == "werewolf")


def test_c15_celerity_follow_ups_announced_up_front_spend_blood(classic):
    t = classic
    with pytest.raises(ChallengeError, match="C15"):
        t.start(category="physical", bid="Strong", celerity=2)  # Alacrity grants one
    ch = t.start(category="physical", bid="Strong", celerity=1)
    assert t.now(t.a)["blood"] == 11
    assert "C15: 1 Celerity follow-up(s) announced up front" in ch.history[0]["text"]
    with pytest.raises(ChallengeError, match="C15"):  # Sophia cannot match: Stamina bids
        t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Wiry")


def test_c16_mob_every_attacker_bids_from_its_phone_and_all_lose_their_bids(classic):
    from django.urls import reverse

    from combat.models import Participant
    from tests.conftest import client_for
    from tests.factories import CharacterFactory, TraitFactory, UserFactory

    t = classic
    third_user = UserFactory(username="third_player")
    third = CharacterFactory(chronicle=t.scene.chronicle, name="Brute", player=third_user)
    TraitFactory(character=third, category="physical", name="Burly", count=2)
    member = scenes.scene_join(code=t.scene.join_code, user=third_user, character=third)
    ch = t.start(category="physical", bid="Strong", mob=[member])
    assert ch.options["awaiting"] == "mob"
    phone = client_for(third_user)
    page = phone.get(reverse("scene_phone", args=[t.scene.pk])).content.decode()
    assert "join Marcus's mob against Sophia (C16)" in page
    with pytest.raises(ChallengeError, match="No answer is asked"):  # not before the mob
        t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    url = reverse("challenge_mob", args=[t.scene.pk, ch.pk])
    r = phone.post(
        url,
        {"member": member.pk, "bid": "Burly", "key": "mob-key-0001", "token": step_token(t.ch(ch))},
    )
    assert r.status_code == 200, r.content.decode()
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    assert dict(engine_of(t.ch(ch)).penalties) == {"defender": 1}  # C5, C16
    ch = t.throw(ch, "rock", "paper")
    ch = t.do("accept", ch, t.a_user, side="attacker")
    assert ch.winner == "defender"
    assert t.now(t.a)["traits"]["physical"]["Strong"] == 1
    assert t.now(Participant.objects.get(pk=member.pk))["traits"]["physical"]["Burly"] == 1


def test_c5_a_named_negative_trait_lowers_the_total_on_a_draw(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.do("name_negative", ch, t.a_user, side="attacker", trait="Clumsy")
    assert "names Sophia Clumsy: right (C5)" in ch.history[-1]["text"]
    eng = engine_of(t.ch(ch))
    from combat.rules.terms import Side

    assert eng.total(Side.DEFENDER) == 7  # 8 current, -1 for Clumsy named
    ch = t.do("name_negative", ch, t.a_user, side="attacker", trait="Lazy")
    assert "wrong" in ch.history[-1]["text"]
    ch = t.throw(ch, "rock", "scissors")
    with pytest.raises(ChallengeError, match="C5"):
        t.do("name_negative", ch, t.d_user, side="defender", trait="Tactless")


@pytest.mark.rules("C14")
def test_c14_against_a_ranged_attack_the_phone_offers_only_dodge_to_retest(classic):
    from django.urls import reverse

    from tests.conftest import client_for

    t = classic
    ch = t.start(category="physical", bid="Strong", ranged=True)
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "scissors")  # Sophia is losing
    phone = client_for(t.d_user).get(reverse("scene_phone", args=[t.scene.pk])).content.decode()
    form = re.search(r'<form [^>]*class="[^"]*retest-ability[^"]*".*?</form>', phone, re.S)
    assert form is not None
    assert "Dodge (2)" in form.group(0)
    assert "Expression" not in form.group(0) and "Empathy" not in form.group(0)
    with pytest.raises(ChallengeError, match="C14"):
        t.do("retest", ch, t.d_user, side="defender", kind="ability", ability="Expression")
