"""The core flow through the services: bids, sealed throws, totals, retests, the ledger."""

from __future__ import annotations

import pytest

from characters.models import LedgerEntry
from combat.challenges.reads import step_token
from combat.challenges.refusals import ChallengeError
from combat.models import SceneLogEntry

pytestmark = pytest.mark.django_db


def test_a_classic_physical_challenge_lost_crosses_off_the_loser_bid(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong", effect="I shove her aside")
    assert ch.status == "answer"
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    assert ch.status == "live"
    ch = t.throw(ch, "rock", "scissors")  # Marcus wins the throw
    ch = t.do("accept", ch, t.d_user, side="defender")
    assert ch.status == "over" and ch.winner == "attacker"
    assert t.now(t.d)["traits"]["physical"]["Tough"] == 1
    assert "I shove her aside" in ch.outcome
    assert SceneLogEntry.objects.filter(scene=t.scene, text__contains="Marcus wins").exists()


def test_a_throw_is_sealed_changeable_and_revealed_only_when_both_are_in(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    ch = t.do("throw", ch, t.a_user, side="attacker", throw="paper")
    assert ch.sealed == {"throw": {"attacker": "paper"}}
    assert "paper" not in str(ch.history) and "paper" not in str(ch.state)
    ch = t.do("throw", ch, t.d_user, side="defender", throw="rock")
    assert ch.sealed == {}
    assert "Marcus paper, Sophia rock" in ch.history[-1]["text"]


def test_a_draw_asks_for_sealed_totals_compared_by_the_server(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "rock")
    from combat.challenges.reads import engine_of, round_token

    eng = engine_of(ch)
    assert eng.phase.value == "declarations"
    r = round_token(ch)
    ch = t.do("declare", ch, t.a_user, side="attacker", total=10, token=r)
    assert "10" not in ch.history[-1]["text"]
    with pytest.raises(ChallengeError, match="C4"):
        t.do("declare", ch, t.d_user, side="defender", total=99, token=r)
    ch = t.do("declare", ch, t.d_user, side="defender", total=8, token=r)
    assert "Totals: Marcus 10, Sophia 8" in ch.history[-1]["text"]
    assert engine_of(ch).leader.value == "attacker"


def test_overbid_wins_after_totals(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "rock")
    ch = t.do("declare", ch, t.a_user, side="attacker", total=10)
    ch = t.do("declare", ch, t.d_user, side="defender", total=4)  # under-declared
    # Sophia lost on totals; her total 8 against Marcus 10: more than half, the overbid fails
    ch = t.do("retest", ch, t.d_user, side="defender", kind="overbid", declared=8)
    assert "fails" in ch.history[-1]["text"]
    assert "8" not in ch.history[-1]["text"]
    with pytest.raises(ChallengeError, match="C9"):
        t.do("retest", ch, t.d_user, side="defender", kind="overbid", declared=8)


def test_werewolf_ability_retest_then_cancel_spends_both_points(werewolf):
    t = werewolf
    ch = t.start(
        category="social", bid="Charismatic", ability="Expression", effect="Cody backs off"
    )
    ch = t.do(
        "answer",
        ch,
        t.d_user,
        side="defender",
        answer="bid",
        bid="Impressive",
        ability="Leadership",
    )
    ch = t.throw(ch, "rock", "paper")  # Cody wins
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="ability", ability="Expression")
    assert ch.timer_label.endswith("may cancel")
    assert t.now(t.a)["abilities"]["Expression"] == 1
    ch = t.do("cancel", ch, t.d_user, side="defender", ability="Leadership")
    assert t.now(t.d)["abilities"]["Leadership"] == 1
    ch = t.do("accept", ch, t.a_user, side="attacker")
    assert ch.winner == "defender"
    assert t.now(t.a)["traits"]["social"]["Charismatic"] == 2


def test_nobody_acts_for_the_other_side(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    with pytest.raises(ChallengeError, match="do not play"):
        t.do("answer", ch, t.a_user, side="defender", answer="bid", bid="Tough")
    with pytest.raises(ChallengeError, match="do not play"):
        t.do("answer", ch, t.st, side="defender", answer="bid", bid="Tough")


def test_a_late_step_is_refused_and_changes_nothing(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    step = step_token(ch)
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough", token=step)
    with pytest.raises(ChallengeError, match="moved on"):
        t.do("answer", ch, t.d_user, side="defender", answer="relent", token=step)


def test_a_double_tap_counts_once(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "scissors")
    t.do("accept", ch, t.d_user, side="defender", key="tap-12345678")
    t.do("accept", ch, t.d_user, side="defender", key="tap-12345678")
    assert LedgerEntry.objects.filter(source=f"challenge {ch.pk}").count() == 1


def test_void_restores_both_sheets(werewolf):
    t = werewolf
    ch = t.start(category="social", bid="Charismatic", ability="Expression")
    ch = t.do(
        "answer",
        ch,
        t.d_user,
        side="defender",
        answer="bid",
        bid="Impressive",
        ability="Leadership",
    )
    ch = t.throw(ch, "rock", "paper")
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="ability", ability="Expression")
    ch = t.do("cancel", ch, t.d_user, side="defender", ability="Leadership")
    ch = t.do("accept", ch, t.a_user, side="attacker")
    before = (t.now(t.a), t.now(t.d))
    assert before[0]["traits"]["social"]["Charismatic"] == 2
    t.refresh()
    from combat.challenges.storyteller import challenge_st

    ch = challenge_st(scene=t.scene, challenge=t.ch(ch), by=t.st, action="void", text="mistake")
    a, d = t.now(t.a), t.now(t.d)
    assert a["traits"]["social"]["Charismatic"] == 3
    assert a["abilities"]["Expression"] == 2 and d["abilities"]["Leadership"] == 2
    assert t.ch(ch).status == "void"
    assert SceneLogEntry.objects.filter(scene=t.scene, text__contains="voided").exists()
