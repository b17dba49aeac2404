"""Health in a challenge, through the services and each phone: C6 Wounded (loses every draw
without totals; the opponent with more current traits gets one free retest), C7
Incapacitated (cannot start a challenge; its opponents have surprise, C12).

The MET track of the demo sheets is Healthy, Bruised, Wounded, Incapacitated, one box each;
a character is at the first level with an empty box (``combat.challenges.sheets``): two
boxes of damage in the ledger make it Wounded, three Incapacitated (four: the track is full).
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from characters.models import LedgerEntry
from characters.services import ledger_spend
from characters.sheet_versions import bump_sheets
from combat.challenges.reads import engine_of, step_token
from combat.challenges.refusals import ChallengeError
from combat.challenges.storyteller import challenge_st
from combat.models import Challenge, SceneLogEntry
from combat.rules.terms import Health, Side
from tests.combat.challenges.conftest import ledger_of
from tests.conftest import client_for

pytestmark = pytest.mark.django_db

WOUNDED, INCAPACITATED = 2, 3  # boxes of damage on the MET track


def _hurt(t, who, boxes: int) -> None:
    ledger_spend(character=who.character, kind="health_damage", by=t.st, amount=boxes)


def _form(html: str, css: str) -> str:
    """The one form of the page with that class (a retest's, say), or ""."""
    found = re.search(rf'<form [^>]*class="[^"]*\b{css}\b[^"]*".*?</form>', html, re.S)
    return found.group(0) if found else ""


def _live(t, **start):
    """Marcus (10 physical traits) bids Strong against Sophia (8), who bids Tough."""
    ch = t.start(category="physical", bid="Strong", **start)
    return t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")


# -- how the app reads the track --------------------------------------------------------------


@pytest.mark.rules("C6", "C7")
@pytest.mark.parametrize(
    ("boxes", "health"),
    [
        (0, Health.HEALTHY),
        (1, Health.BRUISED),
        (WOUNDED, Health.WOUNDED),
        (INCAPACITATED, Health.INCAPACITATED),
        (4, Health.INCAPACITATED),
    ],
)
def test_the_damage_in_the_ledger_is_the_health_the_engine_reads(classic, boxes, health):
    t = classic
    if boxes:
        _hurt(t, t.d, boxes)
    ch = t.start(category="mental", bid="Alert")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Clever")
    engine = engine_of(t.ch(ch))
    assert (engine.attacker.health, engine.defender.health) == (Health.HEALTHY, health)


# -- C6: a Wounded character loses every draw ---------------------------------------------------


@pytest.mark.rules("C6")
@pytest.mark.parametrize(
    ("wounded", "winner", "loser_trait"),
    [("defender", "attacker", ("Sophia", "Tough")), ("attacker", "defender", ("Marcus", "Strong"))],
)
def test_c6_a_wounded_side_loses_a_draw_without_totals(classic, wounded, winner, loser_trait):
    t = classic
    _hurt(t, t.d if wounded == "defender" else t.a, WOUNDED)
    ch = t.throw(_live(t, effect="I pin her"), "rock", "rock")
    engine = engine_of(t.ch(ch))
    assert engine.phase.value == "retests" and engine.leader.value == winner  # no C4 totals
    hurt, leading = (("Sophia", "Marcus"), ("Marcus", "Sophia"))[wounded == "attacker"]
    assert ch.history[-1]["text"] == (
        f"Throws: Marcus rock, Sophia rock — {leading} is winning"
        f" ({hurt} is Wounded and loses the draw, C6)"
    )
    assert not engine.declared and not t.ch(ch).sealed
    for user in (t.a_user, t.d_user):
        assert "Declare (sealed)" not in t.phone(user)  # no phone is asked for a total
    loser_user = t.d_user if wounded == "defender" else t.a_user
    loser_phone = t.phone(loser_user)
    assert "Take the result" in loser_phone
    assert "retest-free" not in loser_phone  # the winner is not Wounded: no free retest
    with pytest.raises(ChallengeError, match="C4"):
        t.do("declare", ch, t.a_user, side="attacker", total=5)
    ch = t.do("accept", ch, loser_user, side=wounded)
    assert (ch.status, ch.winner) == ("over", winner)
    name, trait = loser_trait
    assert ledger_of(ch) == [(name, "trait_lost", trait, 1)]  # C3: only the loser's bid
    assert f"{name} loses {trait}" in ch.outcome


@pytest.mark.rules("C6", "C11")
def test_c6_a_wounded_character_loses_a_draw_against_a_difficulty_too(classic):
    t = classic
    _hurt(t, t.a, WOUNDED)
    ch = t.start(defender=None, mode="static", category="mental", bid="Alert", difficulty=1)
    ch = t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    ch = t.do("throw", ch, t.st, side="defender", throw="rock", as_st=True)
    assert engine_of(t.ch(ch)).leader.value == "defender"  # 4 traits against 1: not compared
    assert "(Marcus is Wounded and loses the draw, C6)" in ch.history[-1]["text"]
    assert "Declare (sealed)" not in t.phone(t.a_user)
    ch = t.do("accept", ch, t.a_user, side="attacker")
    assert ch.winner == "defender" and ledger_of(ch) == [("Marcus", "trait_lost", "Alert", 1)]


@pytest.mark.rules("C6")
def test_c6_both_wounded_compare_totals_as_usual(classic):
    t = classic
    _hurt(t, t.a, WOUNDED)
    _hurt(t, t.d, WOUNDED)
    ch = t.throw(_live(t), "paper", "paper")
    assert engine_of(t.ch(ch)).phase.value == "declarations"  # C4 as usual
    assert (
        ch.history[-1]["text"] == "Throws: Marcus paper, Sophia paper — a draw: declare totals (C4)"
    )
    assert "Declare (sealed)" in t.phone(t.a_user)
    assert "Declare (sealed)" in t.phone(t.d_user)
    ch = t.do("declare", ch, t.a_user, side="attacker", total=10)
    ch = t.do("declare", ch, t.d_user, side="defender", total=8)
    assert "Totals: Marcus 10, Sophia 8 — Marcus is winning" in ch.history[-1]["text"]
    # Sophia, losing, is the opponent of a Wounded character but has fewer traits: no free one
    assert "retest-free" not in t.phone(t.d_user)
    with pytest.raises(ChallengeError, match="C6"):
        t.do("retest", ch, t.d_user, side="defender", kind="free")


@pytest.mark.rules("C6")
def test_c6_both_wounded_the_side_with_more_traits_losing_on_totals_gets_the_free_retest(classic):
    t = classic
    _hurt(t, t.a, WOUNDED)
    _hurt(t, t.d, WOUNDED)
    ch = t.throw(_live(t), "paper", "paper")
    ch = t.do("declare", ch, t.a_user, side="attacker", total=6)  # under-declared (C4)
    ch = t.do("declare", ch, t.d_user, side="defender", total=8)
    assert engine_of(t.ch(ch)).leader.value == "defender"
    assert "free: your opponent is Wounded (C6)" in t.phone(t.a_user)  # 10 traits against 8


@pytest.mark.rules("C6")
def test_c6_the_losing_opponent_with_more_traits_gets_one_free_retest(classic):
    t = classic
    _hurt(t, t.d, WOUNDED)
    ch = t.throw(_live(t, effect="I pin her"), "rock", "paper")  # Sophia wins the throw
    marcus, sophia = t.phone(t.a_user), t.phone(t.d_user)
    assert "retest-free" in marcus and "free: your opponent is Wounded (C6)" in marcus
    assert "retest-free" not in sophia and "Take the result" not in sophia  # she is winning
    with pytest.raises(ChallengeError, match="C8"):  # only the losing side retests
        t.do("retest", ch, t.d_user, side="defender", kind="free")
    willpower, blood = t.now(t.a)["willpower"], t.now(t.a)["blood"]
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="free")
    assert ch.history[-1]["text"] == "Marcus retests with free (C6)"
    assert ledger_of(ch) == []  # free: nothing spent
    assert (t.now(t.a)["willpower"], t.now(t.a)["blood"]) == (willpower, blood)
    assert not ch.timer_label  # nothing to cancel a free retest with
    assert "Cancel the retest" not in t.phone(t.d_user)
    ch = t.throw(ch, "rock", "paper")  # Sophia wins the retest's throw too
    marcus = t.phone(t.a_user)
    assert "retest-free" not in marcus and "Take the result" in marcus  # used once
    step = t.ch(ch).step
    with pytest.raises(ChallengeError, match=r"already used.*\(C6\)"):
        t.do("retest", ch, t.a_user, side="attacker", kind="free")
    assert t.ch(ch).step == step  # refused: nothing changed
    ch = t.do("accept", ch, t.a_user, side="attacker")
    assert (ch.status, ch.winner) == ("over", "defender")
    assert ledger_of(ch) == [("Marcus", "trait_lost", "Strong", 1)]
    assert "Sophia wins" in ch.outcome and "Marcus loses Strong" in ch.outcome


@pytest.mark.rules("C6")
def test_c6_a_free_retest_that_wins_costs_the_wounded_side_its_bid(classic):
    t = classic
    _hurt(t, t.d, WOUNDED)
    ch = t.throw(_live(t, effect="I pin her"), "rock", "paper")
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="free")
    ch = t.throw(ch, "scissors", "paper")  # Marcus wins the retest
    ch = t.do("accept", ch, t.d_user, side="defender")
    assert (ch.winner, ch.outcome) == ("attacker", "Marcus wins — I pin her; Sophia loses Tough")
    assert ledger_of(ch) == [("Sophia", "trait_lost", "Tough", 1)]


@pytest.mark.rules("C6")
@pytest.mark.parametrize("lost", [2, 3])  # Marcus at 8 (equal) or 7 (fewer)
def test_c6_no_free_retest_without_more_current_traits(classic, lost):
    t = classic
    _hurt(t, t.d, WOUNDED)
    ledger_spend(
        character=t.a.character,
        kind="trait_lost",
        by=t.st,
        subject="Nimble",
        category="physical",
        amount=lost,
    )
    ch = t.throw(_live(t), "rock", "paper")
    engine = engine_of(t.ch(ch))
    assert engine.side(Side.ATTACKER).trait_count == 10 - lost
    assert engine.side(Side.DEFENDER).trait_count == 8
    assert "retest-free" not in t.phone(t.a_user)
    step = t.ch(ch).step
    with pytest.raises(ChallengeError, match=r"more current traits.*\(C6\)"):
        t.do("retest", ch, t.a_user, side="attacker", kind="free")
    assert t.ch(ch).step == step and engine_of(t.ch(ch)).used == ()


@pytest.mark.rules("C6", "W0")
def test_c6_in_met_werewolf_the_wounded_side_loses_the_draw_before_w3(werewolf):
    """W0: C6 applies as written in met_werewolf: no W3 totals for a Wounded side."""
    t = werewolf
    _hurt(t, t.d, WOUNDED)  # Cody (3 physical traits) against Janet (4)
    ch = t.start(category="physical", bid="Quick")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "rock")
    engine = engine_of(t.ch(ch))
    assert engine.phase.value == "retests" and engine.leader.value == "attacker"
    assert "(Cody is Wounded and loses the draw, C6)" in ch.history[-1]["text"]
    assert "Declare (sealed)" not in t.phone(t.a_user)
    ch = t.do("accept", ch, t.d_user, side="defender")
    assert ch.winner == "attacker" and ledger_of(ch) == [("Cody", "trait_lost", "Tough", 1)]


@pytest.mark.rules("C6", "W0")
def test_c6_in_met_werewolf_the_free_retest_is_offered_once(werewolf):
    t = werewolf
    _hurt(t, t.d, WOUNDED)
    ch = t.start(category="physical", bid="Quick")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "paper")
    assert "free: your opponent is Wounded (C6)" in t.phone(t.a_user)
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="free")
    ch = t.throw(ch, "rock", "paper")
    assert "retest-free" not in t.phone(t.a_user)
    with pytest.raises(ChallengeError, match="C6"):
        t.do("retest", ch, t.a_user, side="attacker", kind="free")
    assert ledger_of(ch) == []


@pytest.mark.rules("C6", "C12")
def test_c6_an_incapacitated_defender_loses_a_draw_and_its_opponent_has_the_free_retest(classic):
    """C6 (clarified 2026-11-26) holds at Wounded or worse: Sophia, Incapacitated (so
    surprised, C12: she bids Tough, Stamina-based), loses a draw without totals, and Marcus
    (10 traits to her 8) is offered the free retest when he loses a throw."""
    t = classic
    _hurt(t, t.d, INCAPACITATED)
    _flag(t, t.d, Tough=True)
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "rock")
    assert engine_of(t.ch(ch)).leader.value == "attacker"
    assert "(Sophia is Incapacitated and loses the draw, C6)" in ch.history[-1]["text"]
    ch = t.do("retest", ch, t.d_user, side="defender", kind="power", power="Presence: Awe")
    ch = t.throw(ch, "rock", "paper")
    assert "free: your opponent is Incapacitated (C6)" in t.phone(t.a_user)
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="free")
    assert engine_of(t.ch(ch)).announced.kind.value == "free"


# -- C7: an Incapacitated character cannot start a challenge ------------------------------------


@pytest.mark.rules("C7")
@pytest.mark.parametrize("boxes", [INCAPACITATED, 4])
@pytest.mark.parametrize(
    "start",
    [
        {"category": "physical", "bid": "Strong"},
        {"category": "physical", "bid": "Strong", "celerity": 1},  # C15 blood is not spent
        {"category": "mental", "bid": "Alert", "defender": None, "mode": "static"},
        {"category": "physical", "bid": "Strong", "defender": None, "mode": "static"},
    ],
)
def test_c7_an_incapacitated_character_cannot_start_and_nothing_changes(classic, boxes, start):
    t = classic
    _hurt(t, t.a, boxes)
    seq, before = t.refresh().scene.seq, t.now(t.a)
    entries, log = LedgerEntry.objects.count(), SceneLogEntry.objects.count()
    with pytest.raises(ChallengeError, match=r"Incapacitated.*\(C7\)"):
        t.start(**start)
    assert not Challenge.objects.exists()
    assert t.refresh().scene.seq == seq
    assert (LedgerEntry.objects.count(), SceneLogEntry.objects.count()) == (entries, log)
    after = t.now(t.a)
    assert (after["traits"], after["blood"]) == (before["traits"], before["blood"])


@pytest.mark.rules("C7")
def test_c7_the_phone_of_an_incapacitated_character_says_why_it_cannot_start(classic):
    t = classic
    assert "Challenge someone" in t.phone(t.a_user)
    _hurt(t, t.a, INCAPACITATED)
    phone = t.phone(t.a_user)
    assert "Challenge someone" not in phone and 'name="attacker"' not in phone
    assert "Marcus is Incapacitated: cannot start a challenge (C7)" in phone
    assert "Challenge someone" in t.phone(t.d_user)  # Sophia still may
    # a start posted anyway (an old form) is refused with the rule, and nothing starts
    url = reverse("challenge_start", args=[t.scene.pk])
    data = {"attacker": t.a.pk, "defender": t.d.pk, "bid": "physical:Strong", "key": "c7-start-01"}
    r = client_for(t.a_user).post(url, data, HTTP_HX_REQUEST="true")
    assert r.status_code == 409 and "(C7)" in r.content.decode()
    assert not Challenge.objects.exists()


@pytest.mark.rules("C7", "C11")
def test_c7_a_static_test_the_storyteller_calls_is_not_the_incapacitated_characters_to_start(
    classic,
):
    """The character did not initiate it: its player bids, and the test runs to its end."""
    t = classic
    _hurt(t, t.a, INCAPACITATED)
    ch = t.start(by=t.st, defender=None, mode="static", category="mental", difficulty=3)
    assert ch.status == "answer" and ch.options["called"]
    ch = t.do("answer", ch, t.a_user, side="attacker", answer="bid", bid="Alert")
    assert ch.status == "live"
    ch = t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    ch = t.do("throw", ch, t.st, side="defender", throw="scissors", as_st=True)
    assert engine_of(t.ch(ch)).leader is Side.ATTACKER


@pytest.mark.rules("C7")
def test_c7_an_incapacitated_character_still_defends(classic):
    t = classic
    _hurt(t, t.d, INCAPACITATED)
    ch = t.start(category="mental", bid="Alert")
    assert ch.status == "answer"
    assert "Bid" in t.phone(t.d_user) and "Clever (2)" in t.phone(t.d_user)
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Clever")
    assert ch.status == "live"


# -- C7 with C12: the opponents of an Incapacitated defender have surprise ------------------------


def _flag(t, who, **flags: bool) -> None:
    for name, flag in flags.items():
        who.character.traits.filter(category="physical", name=name).update(stamina_based=flag)
    bump_sheets([who.character_id])  # a bulk write sends no signal


@pytest.mark.rules("C7", "C12")
def test_c7_an_incapacitated_defender_is_surprised_without_the_attacker_saying_so(classic):
    t = classic
    _hurt(t, t.d, INCAPACITATED)
    ch = t.start(category="physical", bid="Strong")
    assert not ch.options["surprise"]  # nobody ticked Surprise: the health says it
    _flag(t, t.d, Tough=True, Wiry=False)
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    engine = engine_of(t.ch(ch))
    assert engine.side(Side.DEFENDER).surprised and not engine.side(Side.ATTACKER).surprised


@pytest.mark.rules("C7", "C12")
def test_c12_against_an_incapacitated_defender_only_stamina_based_bids(classic):
    t = classic
    _hurt(t, t.d, INCAPACITATED)
    ch = t.start(category="physical", bid="Strong")
    step = t.ch(ch).step
    # no flag on the sheet: the storyteller has to say
    with pytest.raises(ChallengeError, match=r"must say whether Wiry is Stamina-based.*\(C12\)"):
        t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Wiry")
    _flag(t, t.d, Tough=True, Wiry=False)
    with pytest.raises(ChallengeError, match=r"Wiry is not Stamina-based.*\(C12\)"):
        t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Wiry")
    assert (t.ch(ch).status, t.ch(ch).step) == ("answer", step)  # refused: nothing changed
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    assert ch.status == "live"


def _bids(html: str) -> list[str]:
    """The traits the answer form offers to bid."""
    form = _form(html, "cc-answer")
    found = re.search(r'<select name="bid">(.*?)</select>', form, re.S)
    return re.findall(r'<option value="([^"]+)"', found.group(1)) if found else []


@pytest.mark.rules("C7", "C12")
def test_c12_the_phone_of_an_incapacitated_defender_says_it_is_surprised_and_offers_its_bids(
    classic,
):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    phone = t.phone(t.d_user)
    assert "You are surprised (C12)" not in phone  # healthy: every bid
    assert _bids(phone) == ["Stalwart", "Tough", "Wiry"]
    _hurt(t, t.d, INCAPACITATED)
    phone = t.phone(t.d_user)
    assert (
        "You are surprised (C12): bid only a Stamina-based physical trait, no blood for traits,"
        " no Brawl, Melee or Dodge retest; winning does not harm the attacker." in phone
    )
    assert _bids(phone) == ["Stalwart", "Tough", "Wiry"]  # no flag yet: the storyteller says
    _flag(t, t.d, Tough=True, Wiry=False)
    assert _bids(t.phone(t.d_user)) == ["Stalwart", "Tough"]  # Wiry would be refused
    t.refresh()
    challenge_st(scene=t.scene, challenge=t.ch(ch), by=t.st, action="stamina", side="no")
    phone = t.phone(t.d_user)
    assert _bids(phone) == [] and ">Bid</button>" not in phone  # nothing it may bid
    assert "Nothing to bid" in phone and "Relent" in phone


@pytest.mark.rules("C7", "C12")
def test_c12_an_incapacitated_defender_in_a_mental_challenge_bids_any_mental_trait(classic):
    t = classic
    _hurt(t, t.d, INCAPACITATED)
    t.start(category="mental", bid="Alert")
    phone = t.phone(t.d_user)
    assert "You are surprised (C12): no Brawl, Melee or Dodge retest; winning does not" in phone
    assert _bids(phone) == ["Clever", "Perceptive"]


@pytest.mark.rules("C7", "C12")
def test_c12_an_incapacitated_defender_is_not_offered_blood_and_cannot_spend_it(classic):
    t = classic
    _hurt(t, t.d, INCAPACITATED)
    _flag(t, t.d, Tough=True)
    ch = _live(t)
    assert "Spend blood" in t.phone(t.a_user)  # Marcus, not surprised, may
    assert "Spend blood" not in t.phone(t.d_user)
    blood = t.now(t.d)["blood"]
    with pytest.raises(ChallengeError, match="C12"):
        t.do("blood", ch, t.d_user, side="defender", amount=1)
    assert t.now(t.d)["blood"] == blood


@pytest.mark.rules("C7", "C12")
def test_c12_an_incapacitated_defender_has_no_brawl_melee_or_dodge_retest(classic):
    t = classic
    _hurt(t, t.d, INCAPACITATED)
    _flag(t, t.d, Tough=True)
    ch = t.throw(_live(t), "rock", "scissors")  # Marcus wins the throw
    offered = _form(t.phone(t.d_user), "retest-ability")
    assert "Expression (3)" in offered and "Empathy (1)" in offered
    assert "Dodge" not in offered  # not offered
    step = t.ch(ch).step
    with pytest.raises(ChallengeError, match=r"no Brawl, Melee or Dodge retest.*\(C12\)"):
        t.do("retest", ch, t.d_user, side="defender", kind="ability", ability="Dodge")
    assert t.ch(ch).step == step and engine_of(t.ch(ch)).used == ()


@pytest.mark.rules("C7", "C12")
def test_c12_an_incapacitated_defender_who_wins_does_not_harm_the_attacker(classic):
    t = classic
    _hurt(t, t.d, INCAPACITATED)
    _flag(t, t.d, Tough=True)
    ch = t.start(category="physical", bid="Strong", effect="I drag her off", attack=True)
    ch = t.do(
        "answer", ch, t.d_user, side="defender", answer="bid", bid="Tough", effect="I bite him"
    )
    ch = t.throw(ch, "rock", "paper")  # Sophia wins
    ch = t.do("accept", ch, t.a_user, side="attacker")
    assert ch.winner == "defender"
    assert ch.outcome == "Sophia wins — fends it off (no harm to the attacker); Marcus loses Strong"
    assert "I bite him" not in ch.outcome
    assert ledger_of(ch) == [("Marcus", "trait_lost", "Strong", 1)]  # C3: the attacker's bid
    assert t.now(t.a)["damage"] == 0


@pytest.mark.rules("C7", "C12")
def test_c12_the_storyteller_may_rule_an_incapacitated_defender_not_surprised(classic):
    """Heightened Senses or Telepathy may prevent surprise: the storyteller's call, before
    the defender's bid; the phone then offers every bid and the engine is told."""
    t = classic
    _hurt(t, t.d, INCAPACITATED)
    _flag(t, t.d, Tough=True, Wiry=False)
    ch = t.start(category="physical", bid="Strong")
    board = client_for(t.st).get(reverse("scene_tablet", args=[t.scene.pk])).content.decode()
    assert "Sophia is surprised" in board and "Rule on surprise (C12)" in board
    t.refresh()
    challenge_st(scene=t.scene, challenge=t.ch(ch), by=t.st, action="surprise", side="no")
    phone = t.phone(t.d_user)
    assert "You are surprised" not in phone
    assert _bids(phone) == ["Stalwart", "Tough", "Wiry"]
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Wiry")
    assert not engine_of(t.ch(ch)).side(Side.DEFENDER).surprised
    assert "Storyteller: Sophia is not surprised (C12)" in t.ch(ch).history[-2]["text"]
    t.refresh()
    with pytest.raises(ChallengeError, match=r"before the defender's bid.*C12"):
        challenge_st(scene=t.scene, challenge=t.ch(ch), by=t.st, action="surprise", side="yes")


@pytest.mark.rules("C12")
def test_c12_the_storyteller_may_rule_a_defender_surprised_the_attacker_did_not_claim(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    t.refresh()
    challenge_st(scene=t.scene, challenge=t.ch(ch), by=t.st, action="surprise", side="yes")
    assert "You are surprised (C12)" in t.phone(t.d_user)


@pytest.mark.rules("C12")
def test_c12_a_surprise_ruling_without_yes_or_no_is_refused_and_changes_nothing(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    step, options = t.ch(ch).step, dict(t.ch(ch).options)
    t.refresh()
    with pytest.raises(ChallengeError, match=r"Say whether the defender is surprised.*C12"):
        challenge_st(scene=t.scene, challenge=t.ch(ch), by=t.st, action="surprise", side="maybe")
    assert (t.ch(ch).step, t.ch(ch).options) == (step, options)
    url = reverse("challenge_st", args=[t.scene.pk, ch.pk])
    data = {
        "action": "surprise",
        "side": "yes",
        "token": step_token(t.ch(ch)),
        "key": "c12-by-a-player",
    }
    r = client_for(t.d_user).post(url, data, HTTP_HX_REQUEST="true")
    assert r.status_code in (403, 404)  # a player does not rule
    assert t.ch(ch).options == options
