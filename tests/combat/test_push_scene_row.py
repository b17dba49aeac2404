"""A step's pushes read the scene's row once after its commit (issue 21, cheap taps): the
loser taking the result changes a sheet (its push: the players' own parts) and the scene (its
push), and both, and the answer, render the row read after the request's last write."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from combat import fragments, render_cache
from tests.combat.challenges.conftest import make_table, token_for
from tests.combat.tap_queries import HX
from tests.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)


def _scene_reads(queries: list[dict]) -> list[str]:
    """The scene's row read for renderings (fragments.load, with ``watched``), not the
    step's locking read."""
    return [
        q["sql"]
        for q in queries
        if 'FROM "combat_scene"' in q["sql"] and 'AS "watched"' in q["sql"]
    ]


def test_a_sheet_change_and_a_scene_change_of_one_commit_read_the_scene_once():
    t = make_table("met_classic")
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "scissors")
    act = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    accept = {"action": "accept", "side": "defender", "key": "key-accept", "token": token_for(ch)}
    sophia = client_for(t.d_user)
    with CaptureQueriesContext(connection) as seen:
        answer = sophia.post(act, accept, **HX)
    assert answer.status_code == 200, answer.content.decode()
    assert t.now(t.d)["traits"]["physical"]["Tough"] == 1  # a sheet changed: its push ran
    assert len(_scene_reads(seen.captured_queries)) == 1


def test_a_write_after_the_pushes_reads_the_scene_again():
    """A row read before a write of the request is never used after it."""
    t = make_table("met_classic")

    @render_cache.one_request
    def two_reads() -> tuple:
        first = fragments.load(t.scene.pk)
        again = fragments.load(t.scene.pk)
        t.scene.__class__.objects.filter(pk=t.scene.pk).update(name="Renamed")
        after = fragments.load(t.scene.pk)
        return first, again, after

    first, again, after = two_reads()
    assert again is first  # read once while nothing is written
    assert after is not first and after.name == "Renamed"


def _participant_reads(queries: list[dict]) -> list[str]:
    """The scene's participants read for renderings (selectors.active_participants)."""
    return [q["sql"] for q in queries if 'AS "character__player__username"' in q["sql"]]


def test_a_steps_pushes_read_the_participants_once_with_the_scenes_row_on_postgresql():
    """After the commit the renderings read the scene's row and its participants: one
    statement on PostgreSQL (config.prepared.read_with), two elsewhere, each read once."""
    t = make_table("met_classic")
    ch = t.start(category="physical", bid="Strong")
    act = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    answer = {"action": "answer", "side": "defender", "answer": "bid", "bid": "Tough"}
    with CaptureQueriesContext(connection) as seen:
        done = client_for(t.d_user).post(act, {**answer, "key": "key-answer"}, **HX)
    assert done.status_code == 200, done.content.decode()
    scene_reads = _scene_reads(seen.captured_queries)
    participant_reads = _participant_reads(seen.captured_queries)
    assert len(scene_reads) == 1 and len(participant_reads) == 1
    assert (scene_reads == participant_reads) is (connection.vendor == "postgresql")
