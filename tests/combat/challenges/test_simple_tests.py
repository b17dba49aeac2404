"""W14 in met_werewolf: a simple test of a player's character, called by the storyteller from
the board's "Test a player's character" form, thrown from the phone against the tablet: a win
or a draw succeeds unless the storyteller said beforehand that a win outright is needed;
usually nothing is bid, and a bid the storyteller requires is at risk."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from combat.challenges.reads import engine_of
from combat.challenges.refusals import ChallengeError
from combat.challenges.storyteller import challenge_st
from combat.models import Challenge, SceneLogEntry
from tests.combat.challenges.conftest import ledger_of
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def _card(html: str, ch) -> str:
    """One challenge card of a page (the player's own, or the board's first)."""
    found = re.search(rf'<article [^>]*id="challenge-{ch.pk}[^"]*".*?</article>', html, re.S)
    return found.group(0) if found else ""


def _test(t, **kw):
    """The storyteller tests Janet from the tablet (a simple test unless said otherwise)."""
    kw.setdefault("mode", "simple")
    return t.start(by=t.st, defender=None, **kw)


def _throw(t, ch, janet: str, storyteller: str):
    ch = t.do("throw", ch, t.a_user, side="attacker", throw=janet)
    return t.do("throw", ch, t.st, side="defender", throw=storyteller, as_st=True)


@pytest.mark.rules("W14")
def test_w14_the_board_starts_a_simple_test_and_each_side_throws_from_its_screen(werewolf):
    t = werewolf
    board = t.board()
    form = re.search(r'<details class="cc-start" id="cc-test-box.*?</details>', board, re.S)
    assert form is not None
    form = form.group(0)
    assert "Test a player's character (C11, C13, W13, W14)" in form
    assert '<option value="simple">simple (C13, W14)</option>' in form
    assert "A bid is required (W14)" in form and "Must win outright (W14)" in form
    key = re.search(r'name="key" value="([^"]+)"', form).group(1)
    r = client_for(t.st).post(
        reverse("challenge_start", args=[t.scene.pk]),
        # what the form sends untouched: its default difficulty, no category, no box ticked
        {"attacker": t.a.pk, "mode": "simple", "category": "", "difficulty": 5, "key": key},
        HTTP_HX_REQUEST="true",
    )
    assert r.status_code == 200, r.content.decode()
    ch = Challenge.objects.get()
    assert (ch.status, ch.mode, ch.defender) == ("live", "simple", None)  # nothing to bid
    assert ch.history[0]["text"] == "Janet: simple test against the storyteller · simple"
    phone = _card(t.phone(t.a_user), ch)
    assert "throw-rock" in phone and "cc-answer" not in phone
    assert "difficulty" not in phone  # a simple test has none (W14)
    assert "win outright" not in phone
    board = t.board()
    assert "You play the storyteller (defender)" in board
    assert 'name="side" value="defender"' in board and "throw-scissors" in board
    ch = _throw(t, ch, "rock", "rock")
    assert (ch.status, ch.winner, ch.outcome) == ("over", "attacker", "Janet wins")


@pytest.mark.rules("W14")
@pytest.mark.parametrize(
    ("janet", "storyteller", "outright", "winner"),
    [
        ("rock", "scissors", False, "attacker"),
        ("rock", "rock", False, "attacker"),  # a draw succeeds
        ("rock", "paper", False, "defender"),
        ("rock", "scissors", True, "attacker"),
        ("rock", "rock", True, "defender"),  # said beforehand: a draw fails
        ("rock", "paper", True, "defender"),
    ],
)
def test_w14_a_win_or_a_draw_succeeds_unless_a_win_outright_is_needed(
    werewolf, janet, storyteller, outright, winner
):
    t = werewolf
    before = t.now(t.a)
    ch = _test(t, effect="she climbs the wall", win_outright=outright)
    assert ch.status == "live"
    ch = _throw(t, ch, janet, storyteller)
    assert (ch.status, ch.winner) == ("over", winner)  # no retest, nothing to take
    assert engine_of(t.ch(ch)).success is (winner == "attacker")
    said = {"attacker": "Janet wins — she climbs the wall", "defender": "the storyteller wins"}
    expected = said[winner]
    assert ch.outcome == expected
    # the effect the storyteller set is Janet's to hear, not every phone's (unless made public)
    public = {"attacker": "Janet wins", "defender": "the storyteller wins"}[winner]
    assert ledger_of(ch) == []  # usually nothing is bid: nothing is lost
    after = t.now(t.a)
    assert (after["traits"], after["abilities"]) == (before["traits"], before["abilities"])
    assert SceneLogEntry.objects.filter(
        scene=t.scene, public=True, text=f"Outcome of Janet vs the storyteller: {public}"
    ).exists()
    assert not SceneLogEntry.objects.filter(public=True, text__contains="climbs").exists()


@pytest.mark.rules("W14")
@pytest.mark.parametrize("outright", [False, True])
def test_w14_the_phone_says_beforehand_whether_a_win_outright_is_needed(werewolf, outright):
    t = werewolf
    ch = _test(t, win_outright=outright)
    phone, board = _card(t.phone(t.a_user), ch), t.board()
    said = "a win outright is needed (W14)"
    assert (said in phone, said in board) == (outright, outright)
    assert "throw-rock" in phone  # before the throw


@pytest.mark.rules("W14")
@pytest.mark.parametrize(
    ("janet", "storyteller", "lost"),
    [
        ("rock", "paper", [("Janet", "trait_lost", "Quick", 1)]),
        ("rock", "rock", []),
        ("rock", "scissors", []),
    ],
)
def test_w14_a_bid_the_storyteller_requires_is_asked_on_the_phone_and_at_risk(
    werewolf, janet, storyteller, lost
):
    t = werewolf
    ch = _test(t, category="physical", bid_required=True, effect="she holds the door")
    assert (ch.status, ch.options["awaiting"]) == ("answer", "attacker")
    phone = _card(t.phone(t.a_user), ch)
    assert "cc-answer" in phone and "Quick (2)" in phone and "Dexterous (2)" in phone
    assert "throw-rock" not in phone  # the bid first
    ch = t.do("answer", ch, t.a_user, side="attacker", answer="bid", bid="Quick")
    assert ch.status == "live" and "Janet bids Quick" in ch.history[-1]["text"]
    ch = _throw(t, ch, janet, storyteller)
    assert ledger_of(ch) == lost
    assert t.now(t.a)["traits"]["physical"]["Quick"] == 2 - len(lost)
    if lost:
        assert ch.outcome == "the storyteller wins; Janet loses Quick"


@pytest.mark.rules("W14")
def test_w14_a_required_bid_must_be_a_current_trait_of_the_category(werewolf):
    t = werewolf
    ch = _test(t, category="physical", bid_required=True)
    step = t.ch(ch).step
    with pytest.raises(ChallengeError, match=r"bid a trait you hold.*\(W14\)"):
        t.do("answer", ch, t.a_user, side="attacker", answer="bid", bid="Wise")
    assert (t.ch(ch).status, t.ch(ch).step) == ("answer", step)  # nothing changed
    with pytest.raises(ChallengeError, match="W14"):
        t.do("answer", ch, t.a_user, side="attacker", answer="bid", bid="")


@pytest.mark.rules("W14")
def test_w14_a_required_bid_without_a_category_is_refused_at_the_start(werewolf):
    """The phone could not offer a bid of no category: the test would wait for ever."""
    t = werewolf
    seq = t.refresh().scene.seq
    with pytest.raises(ChallengeError, match=r"category.*\(W14\)"):
        _test(t, bid_required=True)
    assert not Challenge.objects.exists() and t.refresh().scene.seq == seq


@pytest.mark.rules("W14")
def test_w14_the_storyteller_sets_the_winner_of_a_test_still_waiting_for_its_bid(werewolf):
    t = werewolf
    ch = _test(t, category="physical", bid_required=True)
    t.refresh()
    challenge_st(scene=t.scene, challenge=t.ch(ch), by=t.st, action="winner", side="defender")
    ch = t.ch(ch)
    assert (ch.status, ch.winner) == ("over", "defender")
    assert ledger_of(ch) == []  # she never bid: nothing of hers was at risk
