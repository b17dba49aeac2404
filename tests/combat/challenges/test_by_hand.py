"""C3: a pair that throws by hand records the result: one side records it, the other side (or
the storyteller) confirms it; the history and the log say "by hand", never throws."""

from __future__ import annotations

import pytest
from django.urls import reverse

from combat import services as scenes
from combat.challenges.reads import engine_of, step_token
from combat.challenges.refusals import ChallengeError
from combat.challenges.throwing import challenge_by_hand
from combat.models import SceneLogEntry
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def _live(t):
    ch = t.start(category="physical", bid="Strong")
    return t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")


def _texts(t, ch) -> list[str]:
    return [h["text"] for h in t.ch(ch).history]


@pytest.mark.rules("C3")
def test_one_side_records_the_result_and_it_counts_when_the_other_confirms(classic):
    t = classic
    ch = _live(t)
    ch = t.do("by_hand", ch, t.a_user, side="attacker", result="attacker")
    assert engine_of(t.ch(ch)).throws == 0  # nothing counts yet
    assert _texts(t, ch)[-1] == "Marcus records by hand: Marcus won; waiting for Sophia to confirm"
    assert "Confirm by hand: Marcus won" in t.phone(t.d_user)
    mine = t.phone(t.a_user)
    assert "waiting for Sophia to confirm (or the storyteller)" in mine
    assert "Confirm by hand" not in mine  # not his to confirm
    # recording it again from the same side does not confirm it
    ch = t.do("by_hand", ch, t.a_user, side="attacker", result="attacker")
    assert engine_of(t.ch(ch)).throws == 0
    ch = t.do("by_hand", ch, t.d_user, side="defender", result="attacker")
    engine = engine_of(t.ch(ch))
    assert engine.throws == 1 and engine.leader.value == "attacker"
    texts = _texts(t, ch)
    assert texts[-1] == (
        "By hand: Marcus won (recorded by Marcus, confirmed by Sophia) — Marcus is winning"
    )
    assert not any(text.startswith("Throws:") for text in texts)
    logged = SceneLogEntry.objects.filter(scene=t.scene).order_by("-pk").first()
    assert logged.text.startswith("By hand: Marcus won")
    assert "by_hand" not in t.ch(ch).options


@pytest.mark.rules("C3")
def test_a_different_result_from_the_other_side_waits_in_turn(classic):
    t = classic
    ch = _live(t)
    ch = t.do("by_hand", ch, t.a_user, side="attacker", result="attacker")
    ch = t.do("by_hand", ch, t.d_user, side="defender", result="draw")
    assert engine_of(t.ch(ch)).throws == 0
    assert _texts(t, ch)[-1] == (
        "Sophia records by hand: a draw; Marcus recorded Marcus won: Marcus confirms, "
        "or the storyteller rules (C3)"
    )
    assert "Confirm by hand: a draw" in t.phone(t.a_user)
    ch = t.do("by_hand", ch, t.a_user, side="attacker", result="draw")
    engine = engine_of(t.ch(ch))
    assert engine.throws == 1 and engine.phase.value == "declarations"
    assert _texts(t, ch)[-1] == (
        "By hand: a draw (recorded by Sophia, confirmed by Marcus) — a draw: declare totals (C4)"
    )


@pytest.mark.rules("C3")
def test_the_storyteller_confirms_from_the_board(classic):
    t = classic
    ch = _live(t)
    ch = t.do("by_hand", ch, t.d_user, side="defender", result="defender")
    board = client_for(t.st).get(reverse("scene_tablet", args=[t.scene.pk])).content.decode()
    assert "Confirm by hand: Sophia won" in board
    url = reverse("challenge_st", args=[t.scene.pk, ch.pk])
    r = client_for(t.st).post(
        url,
        {
            "action": "by_hand",
            "side": "defender",
            "token": step_token(t.ch(ch)),
            "key": "st-hand-0001",
        },
        HTTP_HX_REQUEST="true",
    )
    assert r.status_code == 200, r.content.decode()
    assert engine_of(t.ch(ch)).leader.value == "defender"
    assert _texts(t, ch)[-1] == (
        "By hand: Sophia won (recorded by Sophia, confirmed by the storyteller) — Sophia is winning"
    )


def test_the_storyteller_alone_on_both_sides_needs_no_confirmation(classic):
    t = classic
    thug = scenes.scene_add_npc(scene=t.scene, by=t.st, name="Thug", pools={"physical": 5})
    bouncer = scenes.scene_add_npc(scene=t.scene, by=t.st, name="Bouncer", pools={"physical": 4})
    ch = t.start(attacker=thug, defender=bouncer, by=t.st, category="physical", bid="Physical")
    ch = t.do("answer", ch, t.st, side="defender", answer="bid", bid="Physical", as_st=True)
    ch = t.do("by_hand", ch, t.st, side="attacker", result="defender", as_st=True)
    assert engine_of(t.ch(ch)).leader.value == "defender"
    assert _texts(t, ch)[-1].startswith("By hand: Bouncer won (recorded by Thug)")


def test_a_static_test_by_hand_is_confirmed_by_the_storyteller_side(classic):
    t = classic
    ch = t.start(defender=None, mode="static", category="mental", bid="Alert", difficulty=3)
    ch = t.do("by_hand", ch, t.a_user, side="attacker", result="attacker")
    assert engine_of(t.ch(ch)).throws == 0
    ch = t.do("by_hand", ch, t.st, side="defender", result="attacker", as_st=True)
    assert engine_of(t.ch(ch)).leader.value == "attacker"
    assert _texts(t, ch)[-1].startswith("By hand: Marcus won (recorded by Marcus, confirmed by the")


def test_a_proposal_for_an_earlier_throw_is_gone_and_app_throws_clear_it(classic):
    t = classic
    ch = _live(t)
    ch = t.do("by_hand", ch, t.a_user, side="attacker", result="attacker")
    ch = t.throw(ch, "rock", "rock")  # they threw on the phones after all: a draw
    assert "by_hand" not in t.ch(ch).options
    assert "Confirm by hand" not in t.phone(t.d_user)


def test_by_hand_clears_a_sealed_throw_and_is_refused_outside_the_throws(classic):
    t = classic
    ch = _live(t)
    ch = t.do("throw", ch, t.a_user, side="attacker", throw="paper")
    ch = t.do("by_hand", ch, t.a_user, side="attacker", result="defender")
    ch = t.do("by_hand", ch, t.d_user, side="defender", result="defender")
    assert t.ch(ch).sealed == {}
    with pytest.raises(ChallengeError, match=r"No throw is called for right now. \(C3\)"):
        t.do("by_hand", ch, t.a_user, side="attacker", result="attacker")
    with pytest.raises(ChallengeError, match="You do not play"):
        challenge_by_hand(
            scene=t.refresh().scene,
            challenge=t.ch(ch),
            by=t.a_user,
            side="defender",
            result="attacker",
        )


def test_two_phones_record_and_confirm_over_http(classic):
    t = classic
    ch = _live(t)
    url = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    a, d = client_for(t.a_user), client_for(t.d_user)
    r = a.post(
        url,
        {
            "action": "by_hand",
            "side": "attacker",
            "result": "draw",
            "token": step_token(t.ch(ch)),
            "key": "hand-a-00001",
        },
        HTTP_HX_REQUEST="true",
    )
    assert r.status_code == 200 and "waiting for Sophia to confirm" in r.content.decode()
    r = d.post(
        url,
        {
            "action": "by_hand",
            "side": "defender",
            "result": "draw",
            "token": step_token(t.ch(ch)),
            "key": "hand-d-00001",
        },
        HTTP_HX_REQUEST="true",
    )
    assert r.status_code == 200
    assert "By hand: a draw (recorded by Marcus, confirmed by Sophia)" in r.content.decode()
