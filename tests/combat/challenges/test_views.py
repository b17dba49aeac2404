"""The challenge posts through HTTP: the actor gets its region back; refusals say why."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from combat import fragments
from combat.models import Challenge
from tests.combat.challenges.conftest import token_for
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def _post(client, url, **data):
    return client.post(url, data, HTTP_HX_REQUEST="true")


def _act(t, client, ch, **data):
    ch = Challenge.objects.get(pk=ch.pk)
    data.setdefault("token", token_for(ch, data.get("action", "")))
    url = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    return _post(client, url, **data)


def test_two_phones_play_a_classic_challenge_over_http(classic):
    t = classic
    a, d = client_for(t.a_user), client_for(t.d_user)
    page = a.get(reverse("scene_phone", args=[t.scene.pk]))
    assert page.status_code == 200 and "Challenge someone" in page.content.decode()
    r = _post(
        a,
        reverse("challenge_start", args=[t.scene.pk]),
        attacker=t.a.pk,
        defender=t.d.pk,
        mode="contested",
        bid="physical:Strong",
        effect="I shove her",
        seq=t.refresh().scene.seq,
        key="start-key-0001",
    )
    assert r.status_code == 200, r.content.decode()
    ch = Challenge.objects.get()
    phone = d.get(reverse("scene_phone", args=[t.scene.pk])).content.decode()
    assert "Nothing to bid" in phone and "Tough (2)" in phone
    r = _act(
        t, d, ch, action="answer", side="defender", answer="bid", bid="Tough", key="k-bid-0001"
    )
    assert r.status_code == 200, r.content.decode()
    r = _act(t, a, ch, action="throw", side="attacker", throw="rock", key="k-throw-a01")
    assert "Your throw: <b>rock</b>" in r.content.decode()
    other = d.get(reverse("scene_phone", args=[t.scene.pk])).content.decode()
    assert "locked in" in other and "rock" not in re.sub(
        r'value="rock"|throw-rock|>Rock<', "", other
    )
    r = _act(t, d, ch, action="throw", side="defender", throw="scissors", key="k-throw-d01")
    assert "Marcus rock, Sophia scissors" in r.content.decode()
    r = _act(t, d, ch, action="accept", side="defender", key="k-accept-01")
    assert "Marcus wins" in r.content.decode()
    assert t.now(t.d)["traits"]["physical"]["Tough"] == 1


def test_a_refused_step_answers_409_with_the_rule(classic):
    t = classic
    d = client_for(t.d_user)
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "scissors")
    r = _act(t, d, ch, action="retest", side="defender", kind="willpower", key="k-wp-00001")
    assert r.status_code == 409
    assert "(C10)" in r.content.decode()


def test_the_tablet_shows_the_board_and_the_storyteller_voids(classic):
    t = classic
    st = client_for(t.st)
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    board = st.get(reverse("scene_tablet", args=[t.scene.pk])).content.decode()
    assert 'id="challenge-board"' in board and "Force the step" in board
    ch = t.throw(ch, "rock", "scissors")
    ch = t.do("accept", ch, t.d_user, side="defender")
    r = _post(
        st,
        reverse("challenge_st", args=[t.scene.pk, ch.pk]),
        action="void",
        text="wrong target",
        key="st-void-0001",
    )
    assert r.status_code == 200 and "Voided: wrong target" in r.content.decode()
    assert t.now(t.d)["traits"]["physical"]["Tough"] == 2


def test_fragments_render_for_every_audience(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    t.refresh()
    out = fragments.scene_change_fragments(t.scene.pk, private_user_ids=[t.a_user.pk, t.d_user.pk])
    assert 'id="challenge-board"' in out.storytellers
    assert 'id="challenge-public"' in out.players and "Marcus vs Sophia" in out.players
    assert 'id="challenge-prompts"' in out.private[t.d_user.pk]


@pytest.mark.parametrize(
    ("ruleset", "mode", "bid"),
    [
        ("classic", "static", "Alert"),
        ("classic", "simple", "Alert"),
        ("werewolf", "extended", "Clever"),  # W0: extended challenges are met_werewolf's
    ],
)
def test_every_audience_renders_at_every_step_of_a_test_against_the_storyteller(
    request, ruleset, mode, bid
):
    t = request.getfixturevalue(ruleset)
    users = [t.a_user.pk, t.d_user.pk]

    def render():
        t.refresh()
        out = fragments.scene_change_fragments(t.scene.pk, private_user_ids=users)
        assert 'id="challenge-board"' in out.storytellers
        return out

    ch = t.start(by=t.st, defender=None, mode=mode, category="mental", difficulty=3)
    render()
    if ch.status == "answer":
        ch = t.do("answer", ch, t.a_user, side="attacker", answer="bid", bid=bid)
        render()
    ch = t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    render()
    ch = t.do("throw", ch, t.st, side="defender", throw="scissors", as_st=True)
    out = render()
    if mode == "static":  # C11: the storyteller's static side takes the result, no retest
        assert "Take the result" in out.storytellers


def test_the_odds_come_from_the_engine_for_ones_own_side_only(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "scissors")
    url = reverse("challenge_odds", args=[t.scene.pk, ch.pk])
    body = client_for(t.d_user).get(url + "?side=defender").content.decode()
    assert re.search(r"^\d+% to win from here · \d+% with a \w+ retest \(C\d\)", body), body
    assert client_for(t.d_user).get(url + "?side=attacker").status_code == 404


@pytest.mark.rules("C8")
def test_an_ability_retest_does_not_show_the_opposing_rating_before_it_is_named(classic):
    """C8: the opponent names its rating when the retest is called; the card offering the
    retest does not carry it (Marcus's Melee 1 here; only Sophia's ratings above it are
    offered, test_card_offers)."""
    t = classic
    ch = t.start(category="physical", bid="Strong", ability="Melee")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough", ability="Dodge")
    ch = t.throw(ch, "rock", "scissors")
    phone = client_for(t.d_user).get(reverse("scene_phone", args=[t.scene.pk])).content.decode()
    assert "retest-ability" in phone
    assert "named when you retest (C8)" in phone
    assert "theirs (1)" not in phone and "theirs (" not in phone


def test_a_storyteller_who_plays_acts_from_the_phone_for_their_own_character(classic):
    """One way of telling the screens apart (combat.access.screen_for): the phone's forms say
    ``from=phone``, so a storyteller playing the defender gets the phone's prompts back."""
    t = classic
    t.d.character.player = t.st
    t.d.character.save(update_fields=["player"])
    st = client_for(t.st)
    ch = t.start(category="physical", bid="Strong")
    phone = st.get(reverse("scene_phone", args=[t.scene.pk])).content.decode()
    prompts = phone[phone.index('id="challenge-prompts"') :]
    assert prompts.count("<form") == prompts.count('name="from" value="phone"') > 0
    r = _act(
        t,
        st,
        ch,
        action="answer",
        side="defender",
        answer="bid",
        bid="Tough",
        key="k-st-bid",
        **{"from": "phone"},
    )
    assert r.status_code == 200, r.content.decode()
    body = r.content.decode()
    assert 'id="challenge-prompts"' in body and 'id="challenge-board"' not in body
