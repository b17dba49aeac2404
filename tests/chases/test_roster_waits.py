"""The tablet's "Waiting on" for a chase (issue 19): everyone in a running chase is in the
roster; it waits on each winner of the round just rolled to choose a maneuver (K6-K8) and on
whoever faces a set obstacle and may still pass it (K9); the rolls and the obstacle's setting
are the storyteller's. Hidden NPCs are on the tablet, on no phone."""

from __future__ import annotations

import pytest
from django.urls import reverse

from chases import maneuvers, obstacles
from chases import waiting as chase_waits
from combat.models import Scene
from tests.chases.test_services import escape, key, round_
from tests.combat.rounds.test_roster import _people, _row, _waiting
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def _waits(scene) -> dict[int, str]:
    return chase_waits.waiting_on(Scene.objects.get(pk=scene.pk))


@pytest.mark.rules("K6", "K7", "K8")
def test_a_chase_waits_on_each_winners_maneuver(scene, storyteller, janet, cody, hound, player):
    chase = escape(scene, storyteller, janet, cody, hound, head_start=3)
    assert _waits(scene) == {}  # the storyteller rolls the round
    board = _people(scene.pk)
    for p in (janet, cody, hound):
        assert "fight-health" in _row(board, p)  # everyone in the chase, with their health
    assert not _waiting(board)
    # Janet beats Cody, the Hound beats Janet: each winner chooses a maneuver (K6)
    round_(
        chase,
        storyteller,
        [8, 9, 2, 2, 2],
        **{key(cody): [2, 2, 2, 2, 2], key(hound): [9, 9, 9, 9, 2, 2, 2]},
    )
    assert _waits(scene) == {
        janet.pk: chase_waits.TO_MANEUVER_PREY,
        hound.pk: chase_waits.TO_MANEUVER_PREDATOR,
    }
    waiting = _waiting(_people(scene.pk))
    assert "Janet" in waiting and "to choose a maneuver (K7)" in waiting
    assert "Hound" in waiting and "(K8)" in waiting and "Cody" not in waiting
    chase.refresh_from_db()
    maneuvers.chase_maneuver(
        chase=chase, by=player, pursuit=key(cody), role="prey", maneuver="gun_it"
    )
    assert _waits(scene) == {hound.pk: chase_waits.TO_MANEUVER_PREDATOR}
    chase.refresh_from_db()
    maneuvers.chase_maneuver(
        chase=chase, by=storyteller, pursuit=key(hound), role="predator", maneuver=None
    )
    assert _waits(scene) == {}


@pytest.mark.rules("K7", "K9")
def test_a_set_obstacle_waits_on_who_may_still_pass_it(scene, storyteller, janet, hound, player):
    chase = escape(scene, storyteller, janet, hound, head_start=5)
    obstacles.chase_obstacle_set(
        chase=chase,
        by=storyteller,
        label="Traffic",
        difficulty=7,
        pool=("dexterity", "athletics"),
        facing=["prey"],
    )
    assert _waits(scene) == {janet.pk: "to pass or face Traffic (K7, K8, K9)"}
    chase.refresh_from_db()
    obstacles.chase_obstacle_choice(chase=chase, by=player, who="prey")
    assert _waits(scene) == {}  # Nope! taken: the storyteller rolls the rest


@pytest.mark.rules("K7", "K9")
def test_nobody_waits_on_an_obstacle_nope_cannot_pass(scene, storyteller, janet, hound):
    chase = escape(scene, storyteller, janet, hound, head_start=3)  # Nope! would end it
    obstacles.chase_obstacle_set(
        chase=chase,
        by=storyteller,
        label="Wall",
        difficulty=6,
        pool=("dexterity", "athletics"),
        facing=["prey"],
    )
    assert _waits(scene) == {}


def test_a_hidden_predator_waited_on_is_on_the_tablet_and_on_no_phone(
    scene, storyteller, janet, lurker, player
):
    chase = escape(scene, storyteller, janet, lurker, head_start=3)
    round_(chase, storyteller, [2, 2, 2, 2, 2], **{key(lurker): [9, 9, 2, 2]})
    assert _waits(scene) == {lurker.pk: chase_waits.TO_MANEUVER_PREDATOR}
    tablet = client_for(storyteller).get(reverse("scene_tablet", args=[scene.pk]))
    waiting = _waiting(tablet.content.decode())
    assert "Lurker" in waiting and "to choose a maneuver (K8)" in waiting
    phone = client_for(player).get(reverse("scene_phone", args=[scene.pk])).content.decode()
    assert "Lurker" not in phone and "waiting-on" not in phone and "(K8)" not in phone


def test_a_finished_chase_waits_on_nobody(scene, storyteller, janet, hound):
    chase = escape(scene, storyteller, janet, hound, head_start=1)
    round_(chase, storyteller, [2, 2, 2, 2, 2], **{key(hound): [9, 9, 9, 2, 2, 2, 2]})
    chase.refresh_from_db()
    assert chase.ended_at is not None  # caught (K10)
    assert chase_waits.chasing(Scene.objects.get(pk=scene.pk)) == set()
    assert _waits(scene) == {}
