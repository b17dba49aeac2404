"""The storyteller's calls on a challenge, through the services and the tablet: a challenge
stuck on an answer that never comes, add time, pause and resume, force, allow, rule."""

from __future__ import annotations

import pytest
from django.urls import reverse

from combat.challenges import services
from combat.challenges.services import ChallengeError, engine_of
from tests.combat.challenges.test_mob import _brute
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def _st(t, ch, action, **kw):
    """A storyteller's call, as the tablet makes it (with the step it saw)."""
    t.refresh()
    kw.setdefault("expected_step", t.ch(ch).step)
    services.challenge_st(scene=t.scene, challenge=t.ch(ch), by=t.st, action=action, **kw)
    t.render()
    return t.ch(ch)


def _board(t) -> str:
    return client_for(t.st).get(reverse("scene_tablet", args=[t.scene.pk])).content.decode()


def _post_st(t, ch, **data):
    url = reverse("challenge_st", args=[t.scene.pk, ch.pk])
    data.setdefault("step", t.ch(ch).step)
    return client_for(t.st).post(url, data, HTTP_HX_REQUEST="true")


# -- a challenge waiting for an answer that never comes ---------------------------------


def test_the_storyteller_sets_a_winner_while_the_defender_never_answers(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong", effect="I shove her")
    assert ch.status == "answer"
    ch = _st(t, ch, "winner", side="attacker")
    assert (ch.status, ch.winner) == ("over", "attacker")
    assert any("The storyteller sets the winner: Marcus" in h["text"] for h in ch.history)
    assert "Marcus wins by storyteller — I shove her" in ch.outcome
    # Sophia never bid: nothing of hers is at risk; Marcus won: nothing of his is lost
    assert t.now(t.d)["traits"]["physical"]["Tough"] == 2
    assert t.now(t.a)["traits"]["physical"]["Strong"] == 2


def test_set_a_winner_against_the_attacker_while_waiting_costs_the_attackers_bid(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = _st(t, ch, "winner", side="defender", text="he backed off")
    assert (ch.status, ch.winner) == ("over", "defender")
    assert t.now(t.a)["traits"]["physical"]["Strong"] == 1  # C3: the loser's bid


@pytest.mark.rules("C1")
def test_force_while_the_defender_never_answers_is_no_bid(classic):
    """C1: a defender who does not bid: the attacker's effect happens, no test, nobody loses."""
    t = classic
    ch = t.start(category="social", bid="Intimidating", effect="she leaves")
    ch = _st(t, ch, "force")
    assert (ch.status, ch.winner) == ("over", "attacker")
    assert "Sophia did not answer: no bid" in ch.history[-2]["text"]
    assert engine_of(ch).decided_by == "no bid"
    assert t.now(t.a)["traits"]["social"]["Intimidating"] == 2
    assert not ch.deadline


def test_force_is_refused_while_a_player_is_to_bid_for_a_test_the_storyteller_called(classic):
    t = classic
    ch = t.start(by=t.st, defender=None, mode="static", category="mental", difficulty=3)
    assert ch.options["awaiting"] == "attacker"
    step = t.ch(ch).step
    with pytest.raises(ChallengeError, match=r"Only Marcus bids for their test.*\(C1\)"):
        _st(t, ch, "force")
    assert t.ch(ch).step == step  # nothing changed
    ch = _st(t, ch, "winner", side="attacker")  # the storyteller may still call it
    assert (ch.status, ch.winner) == ("over", "attacker")


@pytest.mark.rules("C16")
def test_the_storyteller_keeps_an_absent_players_mob_member_out(classic):
    """C16: a member whose player never answers blocks the mob: the storyteller keeps it out
    (never bids for it), and the defender is asked."""
    t = classic
    _user, brute = _brute(t)
    ch = t.start(category="physical", bid="Strong", mob=[brute])
    # bidding for the absent player is not the storyteller's
    with pytest.raises(ChallengeError, match="You do not play"):
        t.do("mob_bid", ch, t.st, member=brute, bid="Burly")
    board = _board(t)
    assert "Keep Brute out of the mob: no answer (C16)" in board
    ch = t.do("mob_bid", ch, t.st, member=brute, drop=True)
    assert ch.options["awaiting"] == "defender" and ch.options["mob"] == {}
    assert (
        "Brute stays out of the mob (kept out by the storyteller: no answer)"
        in (ch.history[-1]["text"])
    )
    assert ch.timer_label == "Sophia to answer"


@pytest.mark.rules("C16")
def test_force_keeps_whoever_has_not_bid_out_of_the_mob(classic):
    t = classic
    _user, brute = _brute(t)
    ch = t.start(category="physical", bid="Strong", mob=[brute])
    ch = _st(t, ch, "force")
    assert ch.status == "answer" and ch.options["awaiting"] == "defender"
    assert "The storyteller keeps Brute out of the mob: no answer (C16)" in ch.history[-1]["text"]
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    assert dict(engine_of(t.ch(ch)).penalties) == {}  # one attacker: no C16 penalty


@pytest.mark.rules("C16")
def test_a_winner_while_the_mob_forms_keeps_the_silent_members_out(classic):
    t = classic
    _user, brute = _brute(t)
    ch = t.start(category="physical", bid="Strong", mob=[brute])
    ch = _st(t, ch, "winner", side="defender")
    assert (ch.status, ch.winner) == ("over", "defender")
    assert any("keeps Brute out of the mob" in h["text"] for h in ch.history)
    assert t.now(brute)["traits"]["physical"]["Burly"] == 1  # never bid: nothing at risk
    assert t.now(t.a)["traits"]["physical"]["Strong"] == 1


def test_the_board_offers_force_and_a_winner_while_waiting_and_says_so_when_time_is_up(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    board = _board(t)
    assert "Force: Sophia does not bid (C1)" in board
    assert "Set the winner" in board
    assert "force the answer (Sophia does not bid: the effect happens, no test, C1)" in board
    assert "force the step, add time or set a winner" not in board
    r = _post_st(t, ch, action="winner", side="attacker", key="st-win-00001")
    assert r.status_code == 200, r.content.decode()
    assert "Marcus wins by storyteller" in r.content.decode()
    assert t.ch(ch).status == "over"


def test_the_board_words_the_expired_timer_by_status(classic):
    t = classic
    brute_user, brute = _brute(t)
    ch = t.start(category="physical", bid="Strong", mob=[brute])
    assert "keep whoever has not bid out of the mob (C16)" in _board(t)
    assert "Force: keep who has not bid out (C16)" in _board(t)
    ch = t.do("mob_bid", ch, brute_user, member=brute, bid="Burly")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.do("retest", t.throw(ch, "rock", "paper"), t.a_user, side="attacker", kind="power")
    ch = t.ch(ch)
    assert ch.timer_label == "Sophia may cancel"
    assert "force the step, add time or set a winner" in _board(t)
    phone = client_for(t.d_user).get(reverse("scene_phone", args=[t.scene.pk])).content.decode()
    assert "Time is up: the storyteller decides." in phone
    assert "your call" not in phone
