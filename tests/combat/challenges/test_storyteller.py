"""The storyteller's calls on a challenge, through the services and the tablet: a challenge
stuck on an answer that never comes, add time, pause and resume, force, allow, rule."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from combat.challenges.reads import engine_of, step_token
from combat.challenges.refusals import ChallengeError
from combat.challenges.storyteller import challenge_st
from tests.combat.challenges.test_mob import _brute
from tests.conftest import client_for
from tests.factories import PowerFactory

pytestmark = pytest.mark.django_db


def _st(t, ch, action, **kw):
    """A storyteller's call, as the tablet makes it (with the step it saw)."""
    t.refresh()
    kw.setdefault("token", step_token(t.ch(ch)))
    challenge_st(scene=t.scene, challenge=t.ch(ch), by=t.st, action=action, **kw)
    t.render()
    return t.ch(ch)


def _post_st(t, ch, **data):
    url = reverse("challenge_st", args=[t.scene.pk, ch.pk])
    data.setdefault("token", step_token(t.ch(ch)))
    return client_for(t.st).post(url, data, HTTP_HX_REQUEST="true")


# -- a challenge waiting for an answer that never comes ---------------------------------


def _sophia_may_cancel_potence(t) -> None:
    """Sophia has Prowess too: a power retest with it is one she may cancel (C8), so its
    cancel window is timed (a side without the means to cancel is never waited on)."""
    PowerFactory(character=t.d.character, name="Potence: Prowess")


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
    board = t.board()
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
    board = t.board()
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
    assert "keep whoever has not bid out of the mob (C16)" in t.board()
    assert "Force: keep who has not bid out (C16)" in t.board()
    ch = t.do("mob_bid", ch, brute_user, member=brute, bid="Burly")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    _sophia_may_cancel_potence(t)
    ch = t.throw(ch, "rock", "paper")
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="power", power="Potence: Prowess")
    ch = t.ch(ch)
    assert ch.timer_label == "Sophia may cancel"
    assert "force the step, add time or set a winner" in t.board()
    phone = t.phone(t.d_user)
    assert "Time is up: the storyteller decides." in phone
    assert "your call" not in phone


# -- the calls: time, pause, force, allow, rule ------------------------------------------


def _live(t, ch=None):
    ch = ch or t.start(category="physical", bid="Strong")
    return t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")


def _seconds_left(ch) -> float:
    return (ch.deadline - timezone.now()).total_seconds()


def test_add_time_extends_the_running_timer(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    before = t.ch(ch).deadline
    ch = _st(t, ch, "time", seconds=30)
    assert ch.deadline == before + timedelta(seconds=30)
    assert ch.timer_label == "Sophia to answer" and not ch.paused
    assert ch.history[-1]["text"] == "The storyteller adds 30s to the timer (Sophia to answer)"
    # a timer that ran out runs again from now
    type(ch).objects.filter(pk=ch.pk).update(deadline=timezone.now() - timedelta(seconds=50))
    ch = _st(t, ch, "time", seconds=30)
    assert 25 < _seconds_left(ch) <= 30


def test_add_time_with_no_timer_running_is_refused_and_changes_nothing(classic):
    t = classic
    ch = _live(t)  # both to throw: no timer
    assert not ch.deadline and not ch.timer_label
    step = t.ch(ch).step
    with pytest.raises(ChallengeError, match="No timer is running"):
        _st(t, ch, "time", seconds=30)
    ch = t.ch(ch)
    assert (ch.step, ch.deadline, ch.timer_label, ch.paused) == (step, None, "", False)
    assert "+30s" not in t.board()  # nothing to add time to: no button


def test_add_time_while_paused_is_refused_it_does_not_resume_silently(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = _st(t, ch, "pause")
    assert ch.paused and ch.deadline is None and ch.timer_label == "Sophia to answer"
    assert ch.history[-1]["text"] == "Paused by the storyteller (Sophia to answer)"
    with pytest.raises(ChallengeError, match=r"paused: resume it and its timer starts afresh"):
        _st(t, ch, "time", seconds=30)
    ch = t.ch(ch)
    assert ch.paused and ch.deadline is None and ch.timer_label == "Sophia to answer"
    board = t.board()
    assert "Resume" in board and "+30s" not in board
    assert "Paused by the storyteller" in board


@pytest.mark.rules("C8")
def test_resume_starts_a_cancel_window_afresh_at_its_own_30_seconds(classic):
    t = classic
    _sophia_may_cancel_potence(t)
    ch = t.throw(_live(t), "rock", "paper")  # Marcus loses
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="power", power="Potence: Prowess")
    ch = t.ch(ch)
    assert ch.timer_label == "Sophia may cancel" and 25 < _seconds_left(ch) <= 30
    ch = _st(t, ch, "pause")
    ch = _st(t, ch, "pause")  # resume
    assert not ch.paused and ch.timer_label == "Sophia may cancel"
    assert 25 < _seconds_left(ch) <= 30  # not 90
    assert ch.history[-1]["text"] == "Resumed by the storyteller: Sophia may cancel, 30s afresh"


def test_resume_starts_an_answer_afresh_and_a_pause_with_no_timer_sets_none(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = _st(t, _st(t, ch, "pause"), "pause")
    assert ch.timer_label == "Sophia to answer" and 85 < _seconds_left(ch) <= 90
    ch = _live(t, ch)
    ch = _st(t, _st(t, ch, "pause"), "pause")
    assert (ch.paused, ch.deadline, ch.timer_label) == (False, None, "")
    assert ch.history[-1]["text"] == "Resumed by the storyteller"


def test_a_timer_set_while_paused_waits_for_the_resume(classic):
    t = classic
    _sophia_may_cancel_potence(t)
    ch = _st(t, _live(t), "pause")
    ch = t.throw(ch, "rock", "paper")
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="power", power="Potence: Prowess")
    ch = t.ch(ch)
    assert ch.paused and ch.deadline is None and ch.timer_label == "Sophia may cancel"
    ch = _st(t, ch, "pause")
    assert 25 < _seconds_left(ch) <= 30


def test_force_throws_at_random_for_whoever_has_not_thrown(classic):
    t = classic
    ch = _live(t)
    ch = t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    t.refresh()

    class Paper:
        def choice(self, options):
            return "paper"

    challenge_st(scene=t.scene, challenge=t.ch(ch), by=t.st, action="force", rng=Paper())
    ch = t.ch(ch)
    texts = [h["text"] for h in ch.history]
    assert "The storyteller forced the throws (random for whoever had not thrown)" in texts
    assert "Throws: Marcus rock, Sophia paper — Sophia is winning" in texts
    assert ch.sealed == {}


@pytest.mark.rules("C4")
def test_force_declares_full_totals_for_whoever_has_not_declared(classic):
    t = classic
    ch = t.throw(_live(t), "rock", "rock")
    ch = t.do("declare", ch, t.a_user, side="attacker", total=7)
    ch = _st(t, ch, "force")
    assert "The storyteller forced the totals: 7 against 8 — Sophia is winning" in [
        h["text"] for h in ch.history
    ]


def test_force_closes_the_retests_the_loser_takes_the_result(classic):
    t = classic
    ch = t.throw(_live(t), "rock", "scissors")
    ch = _st(t, ch, "force")
    assert (ch.status, ch.winner) == ("over", "attacker")
    texts = [h["text"] for h in ch.history]
    assert "The storyteller closes the retests — Marcus wins" in texts
    assert t.now(t.d)["traits"]["physical"]["Tough"] == 1


@pytest.mark.rules("C8")
def test_allow_lets_the_retest_stand_and_it_can_no_longer_be_denied(classic):
    t = classic
    ch = t.throw(_live(t), "rock", "paper")
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="power", power="Potence: Prowess")
    board = t.board()
    assert "Deny the retest" in board and "Allow it" in board
    ch = _st(t, ch, "allow")
    assert ch.history[-1]["text"] == "The storyteller allows the retest"
    assert "before_retest" not in ch.options
    assert engine_of(ch).announced is not None  # still waiting for its throw
    with pytest.raises(ChallengeError, match="no retest waiting"):
        _st(t, ch, "deny")
    ch = t.throw(ch, "rock", "scissors")  # the retest's throw
    assert engine_of(t.ch(ch)).leader.value == "attacker"


def test_rule_writes_the_ruling_in_the_history_and_the_public_log(classic):
    t = classic
    from combat.models import SceneLogEntry

    ch = _live(t)
    ch = t.do("dispute", ch, t.d_user, side="defender", text="he had no line of sight")
    assert "Storyteller called: Sophia: he had no line of sight" in t.board()
    with pytest.raises(ChallengeError, match="Write the ruling"):
        _st(t, ch, "rule", text="  ")
    ch = _st(t, ch, "rule", text="He did: the lamp was lit")
    assert ch.history[-1]["text"] == "Storyteller's ruling: He did: the lamp was lit"
    assert "dispute" not in ch.options
    entry = SceneLogEntry.objects.filter(scene=t.scene).order_by("-pk").first()
    assert entry.text == "Ruling: He did: the lamp was lit" and entry.public


def test_each_call_from_the_tablet(classic):
    """The tablet's buttons post each call and get the board back (a refusal: 409, why)."""
    t = classic
    ch = t.start(category="physical", bid="Strong")
    r = _post_st(t, ch, action="time", seconds=30, key="st-time-0001")
    assert r.status_code == 200 and "adds 30s to the timer" in r.content.decode()
    r = _post_st(t, ch, action="pause", key="st-pause-001")
    assert r.status_code == 200 and "Resume" in r.content.decode()
    r = _post_st(t, ch, action="time", seconds=30, key="st-time-0002")
    assert r.status_code == 409 and "paused" in r.content.decode()
    r = _post_st(t, ch, action="pause", key="st-pause-002")
    assert r.status_code == 200 and "Sophia to answer, 90s afresh" in r.content.decode()
    r = _post_st(t, ch, action="rule", text="Play on", key="st-rule-0001")
    assert r.status_code == 200 and "Storyteller&#x27;s ruling: Play on" in r.content.decode()
    ch = _live(t, ch)
    ch = t.throw(ch, "rock", "paper")
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="power", power="Potence: Prowess")
    r = _post_st(t, ch, action="allow", key="st-allow-001")
    assert r.status_code == 200 and "The storyteller allows the retest" in r.content.decode()
    r = _post_st(t, ch, action="force", key="st-force-001")
    assert r.status_code == 200 and "The storyteller forced the throws" in r.content.decode()
