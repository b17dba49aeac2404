"""A challenge tap's step in a fixed, small number of queries (tests/combat/tap_queries.py)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.urls import reverse

from characters.roles import storytellers_group
from combat import services as scenes
from combat.models import Challenge
from tests.combat.challenges.conftest import make_table, token_for
from tests.combat.tap_queries import (
    HX,
    ledger_writes,
    log_inserts,
    scene_writes,
    step_queries,
)
from tests.conftest import client_for
from tests.factories import ChronicleFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_throw_from_a_phone(monkeypatch):
    t = make_table("met_classic")
    a, d = client_for(t.a_user), client_for(t.d_user)
    start = {"attacker": t.a.pk, "defender": t.d.pk, "mode": "contested", "effect": "shove"}
    start |= {"bid": "physical:Strong", "key": "key-start", "seq": t.refresh().scene.seq}
    r = a.post(reverse("challenge_start", args=[t.scene.pk]), start, **HX)
    assert r.status_code == 200, r.content.decode()
    ch = Challenge.objects.get()
    act = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    answer = {"action": "answer", "side": "defender", "answer": "bid", "bid": "Tough"}
    r = d.post(act, {**answer, "token": token_for(ch), "key": "key-answer"}, **HX)
    assert r.status_code == 200, r.content.decode()
    throw = {"action": "throw", "side": "attacker", "throw": "rock", "key": "key-throw"}
    throw["token"] = token_for(ch, "throw")
    with step_queries(monkeypatch) as seen:
        r = a.post(act, throw, **HX)
    assert r.status_code == 200, r.content.decode()
    # the session with its user (config.auth: this process made the session), the
    # scene (who may post) and the challenge, both locked in one statement (the scene's row
    # first), the key, the challenge, the scene and the players' own seq (combat.hub's
    # catch-up of their own parts; one statement on PostgreSQL), the log line and the
    # characters it names (in that statement on PostgreSQL)
    assert len(seen) == 3 + scene_writes(rows=1) + log_inserts(), "\n".join(seen)
    both = [q for q in seen if 'FROM "combat_challenge" INNER JOIN "combat_scene"' in q]
    assert len(both) == 1 and not [q for q in seen if q.startswith('SELECT "combat_scene"')]
    if connection.vendor == "postgresql":
        assert both[0].endswith('FOR UPDATE OF "combat_scene", "combat_challenge"')
    assert not any(q.startswith(("SAVEPOINT", "SELECT DISTINCT")) for q in seen)


def test_a_challenge_with_a_hidden_npc_is_nobody_elses_business(monkeypatch):
    """The read that locks the challenge still answers a phone that may not see it as it
    answers for no challenge (404), and its own side's phone as usual."""
    t = make_table("met_classic")
    lurker = scenes.scene_add_npc(
        scene=t.scene, by=t.st, name="Lurker", pools={"physical": 6}, hidden=True
    )
    ch = t.start(attacker=lurker, defender=t.a, by=t.st, category="physical", bid="Physical")
    act = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    odds = reverse("challenge_odds", args=[t.scene.pk, ch.pk])
    bid = {"action": "answer", "side": "defender", "answer": "bid", "bid": "Strong"}
    bid |= {"token": token_for(ch), "key": "key-bid-lurker"}
    sophia, marcus = client_for(t.d_user), client_for(t.a_user)
    assert sophia.post(act, bid, **HX).status_code == 404
    assert sophia.get(odds, {"side": "defender"}).status_code == 404
    assert marcus.get(odds, {"side": "defender"}).status_code == 200
    assert marcus.post(act, bid, **HX).status_code == 200


def test_a_start_reads_both_sides_at_once_and_a_hidden_npc_is_nobody(monkeypatch):
    t = make_table("met_classic")
    lurker = scenes.scene_add_npc(scene=t.scene, by=t.st, name="Lurker", hidden=True)
    marcus = client_for(t.a_user)
    url = reverse("challenge_start", args=[t.scene.pk])
    start = {"attacker": t.a.pk, "mode": "contested", "bid": "physical:Strong", "effect": "x"}
    answers = [
        marcus.post(url, {**start, "defender": pk, "key": f"key-nobody-{i}"}, **HX)
        for i, pk in enumerate((lurker.pk, 999999, "x"))
    ]
    assert [r.status_code for r in answers] == [400] * 3  # a hidden NPC: as an id of nobody
    sentences = {r.content.decode().split('role="alert">')[1].split("<")[0] for r in answers}
    assert len(sentences) == 1 and not Challenge.objects.exists()
    with step_queries(monkeypatch) as seen:
        r = marcus.post(url, {**start, "defender": t.d.pk, "key": "key-start-both"}, **HX)
    assert r.status_code == 200, r.content.decode()
    named = [q for q in seen if q.startswith('SELECT "combat_participant"')]
    assert len(named) == 1, "\n".join(named)  # the attacker and the defender in one read


def test_a_storyteller_of_another_chronicle_plays_here_from_the_phone():
    """Who runs another chronicle's scenes is asked with the scene; whether they play in this
    one, then (the phone's answer)."""
    t = make_table("met_classic")
    marcus = t.a_user
    marcus.is_staff = True
    marcus.save()
    marcus.groups.add(storytellers_group())
    ChronicleFactory().storytellers.add(marcus)
    phone = client_for(marcus)
    assert phone.get(reverse("challenge_region", args=[t.scene.pk])).status_code == 200
    start = {"attacker": t.a.pk, "defender": t.d.pk, "mode": "contested", "effect": "shove"}
    start |= {"bid": "physical:Strong", "key": "key-start-st"}
    r = phone.post(reverse("challenge_start", args=[t.scene.pk]), start, **HX)
    assert r.status_code == 200, r.content.decode()
    assert Challenge.objects.get().attacker_id == t.a.pk
    stranger = client_for(UserFactory())
    assert stranger.post(reverse("challenge_start", args=[t.scene.pk]), start).status_code == 404


def test_taking_the_result_writes_the_loss_in_the_step_own_transaction(monkeypatch):
    """The loser takes the result: the trait it lost is spent through the ledger's own step,
    nested in the challenge's with no savepoint of its own (a refusal there refuses the
    challenge's step), and the night's locks are not read when the challenge leaves none
    (C10, W9)."""
    t = make_table("met_classic")
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "scissors")
    act = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    accept = {"action": "accept", "side": "defender", "key": "key-accept"}
    accept["token"] = token_for(ch)
    sophia = client_for(t.d_user)
    with step_queries(monkeypatch) as seen:
        r = sophia.post(act, accept, **HX)
    assert r.status_code == 200, r.content.decode()
    assert t.now(t.d)["traits"]["physical"]["Tough"] == 1
    assert not any(q.startswith(("SAVEPOINT", "RELEASE")) for q in seen), "\n".join(seen)
    assert not any("combat_challengelock" in q for q in seen), "\n".join(seen)
    # the sheet the loss is checked against comes from the sheet cache, kept at the locked
    # row's version (its traits, abilities, health and ledger were read 4 queries); the
    # entry with its sheet's version bump; 12 before that, 21 before (issue 21), 18 before
    # the user came with the session (config.auth), one more before the scene and the
    # challenge were locked in one statement
    writes = scene_writes(rows=1) + log_inserts() + ledger_writes()
    assert len(seen) == 5 + writes, "\n".join(seen)


def test_a_tap_form_is_read_before_the_scene_is_locked(monkeypatch):
    """A form that takes nothing of the scene (a side's step) is cleaned before the scene's
    lock, so its CPU is not held against the scene's other taps; what it answers is as
    before: a scene the poster cannot see is a 404 whatever the form, an unreadable form of
    a player in it a 400 with nothing changed (issue 21)."""
    from combat.challenges.forms import ActForm

    t = make_table("met_classic")
    ch = t.start(category="physical", bid="Strong")
    act = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    cleaned_after: list[list[str]] = []
    real = ActForm.full_clean

    def full_clean(form):
        cleaned_after.append(list(seen))
        return real(form)

    monkeypatch.setattr(ActForm, "full_clean", full_clean)
    answer = {"action": "answer", "side": "defender", "answer": "bid", "bid": "Tough"}
    answer |= {"token": token_for(ch), "key": "key-early-form"}
    sophia = client_for(t.d_user)
    with step_queries(monkeypatch) as seen:
        r = sophia.post(act, answer, **HX)
    assert r.status_code == 200, r.content.decode()
    # the scene's read (its lock on PostgreSQL) comes after the form's cleaning
    scene_read = 'FROM "combat_scene"'
    assert len(cleaned_after) == 1 and any(scene_read in q for q in seen)
    assert not any(scene_read in q for q in cleaned_after[0]), "\n".join(cleaned_after[0])
    unreadable = {"action": "answer", "side": "nobody", "key": "key-unreadable"}
    assert client_for(UserFactory()).post(act, unreadable, **HX).status_code == 404
    step = Challenge.objects.get().step
    r = sophia.post(act, unreadable, **HX)
    assert r.status_code == 400 and "Nothing changed." in r.content.decode()
    assert Challenge.objects.get().step == step
