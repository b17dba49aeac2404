"""The card offers only what can work (issue 20): a retest named for what it uses, the bid's
ability preselected, no ability retest the engine would refuse (C8), an overbid's risk said
before the tap (W11), the attacker's Relent while it waits for the answer (C2), and a test's
effect the storyteller set kept between that player and the storyteller."""

from __future__ import annotations

import re

import pytest

from combat.challenges.reads import step_token
from combat.challenges.refusals import ChallengeError
from combat.models import SceneLogEntry

pytestmark = pytest.mark.django_db


def _form(html: str, css: str) -> str:
    """The first form of the page with that class (a retest's, say), or ""."""
    found = re.search(rf'<form [^>]*class="[^"]*\b{css}\b[^"]*".*?</form>', html, re.S)
    return found.group(0) if found else ""


def _options(form: str) -> list[str]:
    return re.findall(r'<option value="([^"]*)"', form)


@pytest.mark.rules("C8")
def test_a_power_retest_is_announced_under_the_powers_name(classic):
    """Sophia answers with Dodge, loses the throw and retests with Presence: Awe."""
    t = classic
    ch = t.start(category="physical", bid="Strong", ability="Brawl")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough", ability="Dodge")
    ch = t.throw(ch, "rock", "scissors")
    ch = t.do("retest", ch, t.d_user, side="defender", kind="power", power="Presence: Awe")
    for page in (t.phone(t.a_user), t.phone(t.d_user), t.board()):
        assert "Sophia is retesting (power: Presence: Awe)" in page
        assert "(power: Dodge)" not in page


@pytest.mark.rules("W10")
def test_an_ability_retest_preselects_the_ability_the_bid_named(werewolf):
    """Janet attacks with Melee (Expression comes first alphabetically) and loses the throw."""
    t = werewolf
    ch = t.start(category="physical", bid="Quick", ability="Melee")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough", ability="Dodge")
    t.throw(ch, "rock", "paper")
    form = _form(t.phone(t.a_user), "retest-ability")
    assert "Expression" in form and '<option value="Melee" selected>' in form
    assert '<option value="Expression" selected>' not in form


@pytest.mark.rules("C8")
def test_an_ability_retest_offers_only_ratings_higher_than_the_opposing_one(classic):
    """Marcus (Brawl 3, Intimidation 2, Melee 1) against Sophia's Dodge 2: only Brawl can
    retest; the refused ones are not offered, and a forged post is refused by C8."""
    t = classic
    ch = t.start(category="physical", bid="Strong", ability="Brawl")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough", ability="Dodge")
    ch = t.throw(ch, "rock", "paper")
    form = _form(t.phone(t.a_user), "retest-ability")
    assert _options(form) == ["Brawl"] and '<option value="Brawl" selected>' in form
    step = t.ch(ch).step
    with pytest.raises(ChallengeError) as refused:
        t.do("retest", ch, t.a_user, side="attacker", kind="ability", ability="Intimidation")
    assert refused.value.rule == "C8" and t.ch(ch).step == step


@pytest.mark.rules("C8")
def test_no_ability_retest_is_offered_when_no_rating_can_be_higher(classic):
    """Sophia (Expression 3 at most) against Marcus's Brawl 3: no ability retest at all."""
    t = classic
    ch = t.start(attacker=t.d, defender=t.a, by=t.d_user, category="physical", bid="Tough")
    ch = t.do("answer", ch, t.a_user, side="defender", answer="bid", bid="Strong", ability="Brawl")
    ch = t.do("throw", ch, t.d_user, side="attacker", throw="rock")
    ch = t.do("throw", ch, t.a_user, side="defender", throw="paper")
    phone = t.phone(t.d_user)
    assert "retest-ability" not in phone and "retest-power" in phone


@pytest.mark.rules("W11")
def test_an_overbid_that_risks_a_trait_says_so_before_the_tap(werewolf):
    t = werewolf
    ch = t.start(category="physical", bid="Quick", ability="Melee")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough", ability="Dodge")
    t.throw(ch, "rock", "paper")
    form = _form(t.phone(t.a_user), "retest-overbid")
    assert "Overbid (risks a trait)" in form and "Trait to risk (W11)" in form
    assert "lost at once unless your total is at least double theirs" in form


@pytest.mark.rules("C2")
def test_the_attacker_may_relent_while_it_waits_for_the_answer(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    assert ch.options["awaiting"] == "defender"
    relent = re.search(
        r'<form [^>]*>(?:(?!</form>).)*name="action" value="relent".*?</form>',
        t.phone(t.a_user),
        re.S,
    )
    assert relent is not None
    traits = (t.now(t.a)["traits"], t.now(t.d)["traits"])
    ch = t.do("relent", ch, t.a_user, side="attacker", token=step_token(t.ch(ch)))
    ch = t.ch(ch)
    assert (ch.status, ch.winner) == ("over", "defender")
    assert (t.now(t.a)["traits"], t.now(t.d)["traits"]) == traits  # C2: nobody loses a trait
    assert "Marcus relents: nobody loses a trait" in ch.history[-2]["text"]
    assert not ch.deadline


def _static_test(t, **extra):
    """The storyteller tests Sophia: mental, difficulty 3; she wins the throw."""
    ch = t.start(
        by=t.st,
        attacker=t.d,
        defender=None,
        mode="static",
        category="mental",
        bid="Clever",
        difficulty=3,
        effect="spots the hidden door",
        **extra,
    )
    ch = t.do("throw", ch, t.d_user, side="attacker", throw="rock")
    ch = t.do("throw", ch, t.st, side="defender", throw="scissors", as_st=True)
    ch = t.do("accept", ch, t.st, side="defender", as_st=True)
    assert (t.ch(ch).status, t.ch(ch).winner) == ("over", "attacker")
    return t.ch(ch)


@pytest.mark.rules("C11")
def test_a_static_tests_effect_the_storyteller_set_reaches_only_that_player(classic):
    t = classic
    _static_test(t)
    assert "spots the hidden door" in t.phone(t.d_user)
    assert "spots the hidden door" in t.board()
    marcus = t.phone(t.a_user)
    assert "spots the hidden door" not in marcus and "Sophia wins" in marcus
    public = SceneLogEntry.objects.filter(scene=t.scene, public=True)
    assert not [e.text for e in public if "hidden door" in e.text]


@pytest.mark.rules("C11")
def test_the_storyteller_may_make_a_tests_effect_public(classic):
    t = classic
    _static_test(t, effect_public=True)
    assert "spots the hidden door" in t.phone(t.a_user)
