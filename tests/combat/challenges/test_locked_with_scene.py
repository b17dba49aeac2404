"""A challenge's post reads the scene and the challenge, both locked, in one statement
(combat.challenges.access.locked_with_scene); the sides read with them are never older than
the lock: a write committed while the post waited for the scene makes it read them again."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection, connections, transaction
from django.db.models import F
from django.urls import reverse

from combat import services as scenes
from combat.challenges.access import _WITH_SCENE
from combat.models import Participant, Scene
from tests.combat.challenges.conftest import make_table, token_for
from tests.combat.tap_queries import HX
from tests.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)


@contextmanager
def statements() -> Iterator[list[str]]:
    """The SQL of the requests made inside (one refused with a 404 rolls back: no commit)."""
    seen: list[str] = []

    def count(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        yield seen


def _waiting_on_a_lock(watch) -> bool:
    with watch.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
        return cursor.fetchone()[0] > 0


def test_a_npc_hidden_while_a_post_waited_for_the_scene_is_hidden_to_it():
    """Sophia taps on a challenge of a visible NPC against Marcus (not hers: 409) while the
    storyteller's step hides the NPC, holding the scene; when it commits, her post reads the
    challenge's sides as they now are: a challenge with a hidden NPC is nobody's business to
    her (404, as no challenge), not the sides its statement's snapshot held."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks and snapshots are PostgreSQL's")
    t = make_table("met_classic")
    lurker = scenes.scene_add_npc(scene=t.scene, by=t.st, name="Lurker", pools={"physical": 6})
    ch = t.start(attacker=lurker, defender=t.a, by=t.st, category="physical", bid="Physical")
    act = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    bid = {"action": "answer", "side": "defender", "answer": "bid", "bid": "Strong"}
    bid |= {"token": token_for(ch)}
    sophia = client_for(t.d_user)
    assert sophia.post(act, {**bid, "key": "key-visible"}, **HX).status_code == 409

    holding, done = threading.Event(), threading.Event()

    def storyteller_hides_the_npc() -> None:
        try:
            with transaction.atomic():
                Scene.objects.select_for_update().get(pk=t.scene.pk)
                Participant.objects.filter(pk=lurker.pk).update(hidden=True)
                Scene.objects.filter(pk=t.scene.pk).update(seq=F("seq") + 1)  # as a step does
                holding.set()
                done.wait(30)
        finally:
            connections.close_all()

    def release_once_the_post_waits() -> None:
        watch = connections.create_connection("default")
        try:
            while not done.is_set() and not _waiting_on_a_lock(watch):
                threading.Event().wait(0.01)
        finally:
            done.set()
            watch.close()

    writer = threading.Thread(target=storyteller_hides_the_npc)
    writer.start()
    assert holding.wait(30)
    watcher = threading.Thread(target=release_once_the_post_waits)
    watcher.start()
    with statements() as seen:
        r = sophia.post(act, {**bid, "key": "key-hidden"}, **HX)
    writer.join(30)
    watcher.join(30)
    assert r.status_code == 404, r.content.decode()
    # the statement that waited, then the scene's and the challenge's reads after the lock
    locks = [q for q in seen if "FOR UPDATE" in q]
    assert len(locks) == 3, "\n".join(locks)


def test_a_hidden_npcs_challenge_takes_the_reads_of_no_challenge():
    """To a phone that may not see it, a challenge with a hidden NPC takes the same
    statements (and the same 404) as an id of no challenge."""
    t = make_table("met_classic")
    lurker = scenes.scene_add_npc(
        scene=t.scene, by=t.st, name="Lurker", pools={"physical": 6}, hidden=True
    )
    ch = t.start(attacker=lurker, defender=t.a, by=t.st, category="physical", bid="Physical")
    sophia = client_for(t.d_user)
    bid = {"action": "answer", "side": "defender", "answer": "bid", "bid": "Strong"}
    bid |= {"token": token_for(ch), "key": "key-forged"}
    shapes, sentences = [], []
    for cid in (ch.pk, ch.pk + 1000):
        act = reverse("challenge_act", args=[t.scene.pk, cid])
        with statements() as seen:
            r = sophia.post(act, bid, **HX)
        assert r.status_code == 404
        sentences.append(r.content)
        shapes.append([" ".join(q.split())[:60] for q in seen])
    assert shapes[0] == shapes[1] and sentences[0] == sentences[1]


def test_every_players_post_is_read_with_one_plan():
    """The lock's statement takes the user's id as a value, not as its shape: one plan built
    in a process serves every player (built per user, each player's first tap paid for it)."""
    t = make_table("met_classic")
    ch = t.start(category="physical", bid="Strong")
    _WITH_SCENE._plans.clear()
    act = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    bid = {"action": "answer", "side": "defender", "answer": "bid", "bid": "Tough"}
    for user, key in ((t.a_user, "key-attacker"), (t.d_user, "key-defender")):
        client_for(user).post(act, {**bid, "token": token_for(ch), "key": key}, **HX)
    assert len(_WITH_SCENE._plans) == 1
