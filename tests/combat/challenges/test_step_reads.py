"""The reads a challenge's step makes once, or with SQL built once: who a start names, an
attacker already busy, the engine of a row's state, the character a cost locks."""

from __future__ import annotations

import pytest
from django.http import QueryDict
from django.test import RequestFactory
from django.urls import reverse

from characters.models import Character
from characters.services import _lock_character
from combat import access
from combat import services as scenes
from combat.challenges.forms import StartForm
from combat.challenges.reads import engine_of
from combat.challenges.refusals import ChallengeError
from combat.models import Challenge
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def _screen(user, scene, *, phone: bool):
    request = RequestFactory().post("/", {"from": "phone"} if phone else {})
    request.user = user
    return access.screen_for(request, scene.pk)[0]


def test_a_start_names_only_whom_the_poster_may_name(classic):
    t = classic
    lurker = scenes.scene_add_npc(
        scene=t.scene, by=t.st, name="Lurker", pools={"physical": 6}, hidden=True
    )
    ids = {t.a.pk, t.d.pk, lurker.pk, 10**9}
    as_player = _screen(t.a_user, t.scene, phone=True)
    as_st = _screen(t.st, t.scene, phone=False)
    # with the storyteller rule asked with the scene (screen_for), and without it
    assert set(access.participants_named_among(as_player, t.a_user, ids)) == {t.a.pk, t.d.pk}
    assert set(access.participants_named_among(t.scene, t.a_user, ids)) == {t.a.pk, t.d.pk}
    assert set(access.participants_named_among(as_st, t.st, ids)) == {t.a.pk, t.d.pk, lurker.pk}
    assert set(access.participants_named_among(t.scene, t.st, ids)) == {
        t.a.pk,
        t.d.pk,
        lurker.pk,
    }
    named = access.participants_named_among(as_st, t.st, {lurker.pk})[lurker.pk]
    assert named.name == "Lurker" and named.scene_id == t.scene.pk


def test_a_forged_hidden_id_is_not_a_valid_attacker_for_a_player(classic):
    t = classic
    lurker = scenes.scene_add_npc(
        scene=t.scene, by=t.st, name="Lurker", pools={"physical": 6}, hidden=True
    )
    scene = _screen(t.a_user, t.scene, phone=True)
    post = QueryDict(mutable=True)
    post.update({"attacker": str(t.a.pk), "defender": str(lurker.pk), "key": "abcdefgh12"})
    form = StartForm(post, scene=scene, user=t.a_user)
    assert not form.is_valid()
    assert set(form.errors) == {"defender"}


def test_a_start_without_a_mob_names_an_empty_list(classic):
    t = classic
    scene = _screen(t.a_user, t.scene, phone=True)
    post = QueryDict(mutable=True)
    post.update({"attacker": str(t.a.pk), "defender": str(t.d.pk), "bid": "physical:Strong"})
    form = StartForm(post, scene=scene, user=t.a_user)
    assert form.is_valid(), form.errors
    assert form.service_kwargs()["mob"] == []
    assert form.service_kwargs()["defender"] == t.d


def test_an_attacker_in_an_open_challenge_starts_no_other_until_it_ends(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    with pytest.raises(ChallengeError, match="already in an open challenge as attacker"):
        t.start(category="physical", bid="Brawny")
    # the defender may attack meanwhile: the check is the attacker's
    t.refresh()
    other = t.start(attacker=t.d, defender=t.a, by=t.d_user, category="social", bid="Charismatic")
    assert other.status == "answer"
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "scissors")
    ch = t.do("accept", ch, t.d_user, side="defender")
    assert ch.status == "over"
    assert t.start(category="physical", bid="Brawny").status == "answer"


def test_the_engine_of_a_state_is_built_once_and_follows_a_new_state(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    row = t.ch(ch)
    engine = engine_of(row)
    assert engine is not None and engine_of(row) is engine
    t.throw(ch, "rock", "scissors")
    fresh = t.ch(ch)
    row.state = fresh.state  # a step sets a new state: the engine is built from it
    assert engine_of(row) is not engine
    assert engine_of(row) == engine_of(Challenge.objects.get(pk=ch.pk))
    row.state = {}
    assert engine_of(row) is None


def test_a_cost_locks_its_character_and_refuses_one_that_is_gone(classic):
    from django.db import transaction

    t = classic
    with transaction.atomic():
        _, locked = _lock_character(t.a.character)
        assert locked.pk == t.a.character_id
        assert locked.chronicle.pk == t.scene.chronicle_id
        gone = Character(pk=10**9)
        with pytest.raises(Character.DoesNotExist):
            _lock_character(gone)


def test_a_phone_start_posts_through_the_view(classic):
    t = classic
    answer = client_for(t.a_user).post(
        reverse("challenge_start", args=[t.scene.pk]),
        {
            "from": "phone",
            "attacker": t.a.pk,
            "defender": t.d.pk,
            "bid": "physical:Strong",
            "key": "abcdefgh1234",
        },
        HTTP_HX_REQUEST="true",
    )
    assert answer.status_code == 200
    ch = Challenge.objects.get(scene=t.scene)
    assert (ch.attacker_id, ch.defender_id, ch.status) == (t.a.pk, t.d.pk, "answer")
