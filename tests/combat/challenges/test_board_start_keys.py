"""The board's start forms' keys: the test form's names the scene's newest challenge, read from
the board's own list (board_reads.board_rows: open ones and the newest finished ones), so a
board reads no participant's latest challenge; each NPC's form names its own latest, as
start_form.last_started says it (``Participant.last_started``, its row's own: no query)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import Max
from django.test.utils import CaptureQueriesContext

from combat import fragments
from combat import services as scenes
from combat.challenges import board_reads, start_form
from combat.models import Challenge, Scene
from tests.combat.challenges.test_render_cache import _last_started

pytestmark = pytest.mark.django_db


def _region(scene_pk: int) -> tuple[str, int]:
    """The board's challenge region now, and how many latest-challenge reads it made."""
    scene = Scene.objects.get(pk=scene_pk)
    with CaptureQueriesContext(connection) as captured:
        html = fragments.board_regions(scene, ["challenges"])
    return html, sum(_last_started(q["sql"]) for q in captured.captured_queries)


def _test_key(scene_pk: int) -> str:
    """The test form's key as the database's own answer says it (the scene's newest)."""
    newest = Challenge.objects.filter(scene_id=scene_pk).aggregate(newest=Max("pk"))["newest"]
    return f"start-{scene_pk}-test-{newest or 0}"


def _copies(scene_pk: int, count: int) -> None:
    """``count`` copies of the scene's newest finished challenge (newer than it)."""
    newest = Challenge.objects.filter(scene_id=scene_pk, status="over").order_by("-pk")[0]
    for _ in range(count):
        newest.pk = None
        newest.save()


def test_without_an_npc_the_board_reads_no_latest_challenge(classic):
    t = classic
    steps = [
        lambda: None,
        lambda: t.finished(),
        # copies of it, newer: the first one goes behind the board's fold
        lambda: _copies(t.scene.pk, board_reads.SHOWN + 1),
        lambda: t.start(category="physical", bid="Strong"),
        lambda: t.start(category="physical", bid="Tough", attacker=t.d, defender=t.a, by=t.d_user),
    ]
    for step in steps:
        step()
        html, reads = _region(t.scene.pk)
        assert reads == 0
        assert f'id="cc-test-{_test_key(t.scene.pk)}"' in html


def test_an_npcs_start_form_names_its_own_latest_challenge_with_no_read_of_it(classic):
    t = classic
    npc = scenes.scene_add_npc(scene=t.scene, by=t.st, name="Bouncer", pools={"physical": 5})
    ch = t.start(attacker=npc, defender=t.a, by=t.st, category="physical", bid="Physical")
    t.finished()  # newer than the NPC's: the test form's key names it, the NPC's form its own
    html, reads = _region(t.scene.pk)
    assert reads == 0  # the NPC's row says it (Participant.last_started)
    assert start_form.last_started(Scene.objects.get(pk=t.scene.pk))[npc.pk] == ch.pk
    assert f"start-{t.scene.pk}-{npc.pk}-{ch.pk}" in html
    assert f'id="cc-test-{_test_key(t.scene.pk)}"' in html
    assert _test_key(t.scene.pk) != f"start-{t.scene.pk}-test-{ch.pk}"
