"""C16 mob scenes through the services and the phones: every member bids and drops out from
its own phone, and several defenders can stand against one attacker."""

from __future__ import annotations

import pytest
from django.urls import reverse

from combat import services as scenes
from combat.challenges import recording
from combat.challenges.reads import engine_of, step_token
from combat.challenges.refusals import ChallengeError
from combat.models import Participant
from tests.conftest import client_for
from tests.factories import CharacterFactory, TraitFactory, UserFactory

pytestmark = pytest.mark.django_db


def _brute(t, *, negative: str = "Lazy"):
    """A third player's character with a single physical trait and one negative trait."""
    user = UserFactory(username=f"brute_{t.scene.pk}")
    brute = CharacterFactory(chronicle=t.scene.chronicle, name="Brute", player=user)
    TraitFactory(character=brute, category="physical", name="Burly", count=1)
    TraitFactory(character=brute, category="physical", name=negative, count=1, negative=True)
    member = scenes.scene_join(code=t.scene.join_code, user=user, character=brute)
    return user, member


def _mob_post(client, t, ch, member, **data):
    url = reverse("challenge_mob", args=[t.scene.pk, ch.pk])
    return client.post(url, {"member": member.pk, "token": step_token(t.ch(ch)), **data})


def _phone(client, t) -> str:
    return client.get(reverse("scene_phone", args=[t.scene.pk])).content.decode()


def test_a_member_who_cannot_match_the_negatives_named_drops_out_from_its_phone(classic):
    t = classic
    brute_user, brute = _brute(t)
    phone = client_for(brute_user)
    ch = t.start(category="physical", bid="Strong", mob=[brute])
    assert ch.timer_label == "the mob to bid (C16)"
    assert _mob_post(phone, t, ch, brute, bid="Burly", key="mob-bid-0001").status_code == 200
    assert t.ch(ch).timer_label == "Sophia to answer"
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    assert dict(engine_of(t.ch(ch)).penalties) == {"defender": 1}
    # Sophia names Brute's Lazy: Brute holds nothing beyond its bid to match it
    ch = t.do("name_negative", ch, t.d_user, side="defender", trait="Lazy")
    assert engine_of(t.ch(ch)).must_drop_out() == ["Brute"]
    assert "Drop out (C16)" in _phone(phone, t)
    with pytest.raises(ChallengeError, match=r"Brute must drop out .*\(C16\)"):
        t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    assert t.ch(ch).sealed == {}  # the refused throw was not sealed
    # nobody else drops Brute out: Marcus's player is refused
    r = _mob_post(client_for(t.a_user), t, ch, brute, drop_out="on", key="mob-out-0001")
    assert r.status_code == 409 and "You do not play" in r.content.decode()
    r = _mob_post(phone, t, ch, brute, drop_out="on", key="mob-out-0002")
    assert r.status_code == 200, r.content.decode()
    ch = t.ch(ch)
    assert "Brute cannot match the negatives named and drops out (C16)" in ch.history[-1]["text"]
    assert any("Sophia names Brute Lazy: right (C5)" in h["text"] for h in ch.history)
    assert dict(engine_of(ch).penalties) == {}  # one attacker left: no C16 penalty
    assert "dropped out of this challenge (C16)" in _phone(phone, t)
    ch = t.throw(ch, "rock", "paper")  # Sophia wins
    ch = t.do("accept", ch, t.a_user, side="attacker")
    assert ch.winner == "defender"
    assert t.now(t.a)["traits"]["physical"]["Strong"] == 1
    assert t.now(brute)["traits"]["physical"]["Burly"] == 1  # out: nothing at risk


def brute_led_mob(t):
    """Brute starts a mob with Marcus; Marcus bids, Sophia answers and names Brute's Lazy
    (Brute must drop out, C16). Gives Brute and the challenge."""
    brute_user, brute = _brute(t)
    ch = t.start(attacker=brute, by=brute_user, category="physical", bid="Burly", mob=[t.a])
    ch = t.do("mob_bid", ch, t.a_user, member=t.a, bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.do("name_negative", ch, t.d_user, side="defender", trait="Lazy")
    return brute, ch


def test_the_storyteller_drops_out_an_absent_member_and_the_next_member_throws(classic):
    t = classic
    brute, ch = brute_led_mob(t)
    marcus, marcus_user = t.a, t.a_user
    with pytest.raises(ChallengeError, match="You do not play"):
        t.do("mob_drop", ch, marcus_user, member=brute)
    ch = t.do("mob_drop", ch, t.st, member=brute)
    ch = t.ch(ch)
    assert ch.attacker.pk == marcus.pk  # Marcus throws for the mob now, from his phone
    assert "Marcus throws for the mob now" in ch.history[-1]["text"]
    assert ch.options["attacker"]["bid"] == "Strong"
    ch = t.do("throw", ch, marcus_user, side="attacker", throw="rock")
    ch = t.do("throw", ch, t.d_user, side="defender", throw="paper")
    ch = t.do("accept", ch, marcus_user, side="attacker")
    assert ch.winner == "defender"
    assert t.now(marcus)["traits"]["physical"]["Strong"] == 1
    assert t.now(brute)["traits"]["physical"]["Burly"] == 1


def test_several_defenders_against_one_attacker(classic):
    t = classic
    brute_user, brute = _brute(t)
    phone = client_for(brute_user)
    ch = t.start(category="physical", bid="Strong", mob=[brute], mob_side="defender")
    page = _phone(phone, t)
    assert "defend together with Sophia against Marcus (C16)" in page
    assert _mob_post(phone, t, ch, brute, bid="Burly", key="mob-bid-0002").status_code == 200
    ch = t.ch(ch)
    assert "Marcus faces 2 defenders (C16)" in ch.history[-1]["text"]
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    engine = engine_of(t.ch(ch))
    assert dict(engine.penalties) == {"attacker": 1}  # C5, C16: the one facing the mob
    assert "Defending together (C16): Sophia (throws), Brute bids Burly" in _phone(phone, t)
    ch = t.throw(ch, "rock", "scissors")  # Marcus wins
    ch = t.do("accept", ch, t.d_user, side="defender")
    assert ch.winner == "attacker"
    assert t.now(t.d)["traits"]["physical"]["Tough"] == 1
    assert t.now(brute)["traits"]["physical"].get("Burly", 0) == 0  # every defender's bid
    assert t.now(t.a)["traits"]["physical"]["Strong"] == 2


def test_a_mob_side_that_is_neither_is_refused(classic):
    t = classic
    _user, brute = _brute(t)
    with pytest.raises(ChallengeError, match="C16"):
        t.start(category="physical", bid="Strong", mob=[brute], mob_side="bystander")
    assert not t.scene.challenges.exists()
    assert Participant.objects.filter(pk=brute.pk).exists()


def test_another_character_steps_in_for_the_one_who_dropped_out(classic):
    t = classic
    brute_user, brute = _brute(t)
    rex_user = UserFactory(username=f"rex_{t.scene.pk}")
    rex_character = CharacterFactory(chronicle=t.scene.chronicle, name="Rex", player=rex_user)
    TraitFactory(character=rex_character, category="physical", name="Wiry", count=2)
    rex = scenes.scene_join(code=t.scene.join_code, user=rex_user, character=rex_character)
    rex_phone = client_for(rex_user)
    ch = t.start(category="physical", bid="Strong", mob=[brute])
    ch = t.do("mob_bid", ch, brute_user, member=brute, bid="Burly")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    assert "Step in, bidding it" not in _phone(rex_phone, t)  # no place is free
    with pytest.raises(ChallengeError, match="C16"):
        t.do("mob_step_in", ch, rex_user, member=rex, bid="Wiry")
    ch = t.do("name_negative", ch, t.d_user, side="defender", trait="Lazy")
    ch = t.do("mob_drop", ch, brute_user, member=brute)
    assert "a place is free in the mob of Marcus (C16)" in _phone(rex_phone, t)
    with pytest.raises(ChallengeError, match="in this challenge already"):
        t.do("mob_step_in", ch, brute_user, member=brute, bid="Burly")
    with pytest.raises(ChallengeError, match="You do not play"):
        t.do("mob_step_in", ch, t.a_user, member=rex, bid="Wiry")
    r = _mob_post(rex_phone, t, ch, rex, step_in="on", bid="Wiry", key="mob-in-0001")
    assert r.status_code == 200, r.content.decode()
    ch = t.ch(ch)
    assert "Rex steps into the mob, bidding Wiry (C16)" in ch.history[-1]["text"]
    assert dict(engine_of(ch).penalties) == {"defender": 1}
    assert "Step in, bidding it" not in _phone(rex_phone, t)  # the place is taken
    ch = t.throw(ch, "rock", "paper")  # Sophia wins: every member still in loses its bid
    ch = t.do("accept", ch, t.a_user, side="attacker")
    assert t.now(rex)["traits"]["physical"]["Wiry"] == 1
    assert t.now(t.a)["traits"]["physical"]["Strong"] == 1
    assert t.now(brute)["traits"]["physical"]["Burly"] == 1


def test_the_first_throw_takes_the_step_in_offer_off_every_phone(classic, monkeypatch):
    t = classic
    brute_user, brute = _brute(t)
    rex_user = UserFactory(username=f"rex_{t.scene.pk}")
    rex_character = CharacterFactory(chronicle=t.scene.chronicle, name="Rex", player=rex_user)
    TraitFactory(character=rex_character, category="physical", name="Wiry", count=2)
    scenes.scene_join(code=t.scene.join_code, user=rex_user, character=rex_character)
    ch = t.start(category="physical", bid="Strong", mob=[brute])
    ch = t.do("mob_bid", ch, brute_user, member=brute, bid="Burly")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.do("name_negative", ch, t.d_user, side="defender", trait="Lazy")
    pushed: list[set[int]] = []
    real = recording.record_change

    def spy(*args, **kwargs):
        pushed.append(set(kwargs.get("private_user_ids") or ()))
        return real(*args, **kwargs)

    monkeypatch.setattr(recording, "record_change", spy)
    ch = t.do("mob_drop", ch, brute_user, member=brute)
    assert rex_user.pk in pushed[-1]  # Rex's phone is offered the place
    assert "Step in, bidding it" in _phone(client_for(rex_user), t)
    ch = t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    assert rex_user.pk not in pushed[-1]  # a sealed throw is for the two sides only
    ch = t.do("throw", ch, t.d_user, side="defender", throw="rock")
    assert rex_user.pk in pushed[-1]  # the first throw took the place away
    assert "Step in, bidding it" not in _phone(client_for(rex_user), t)
