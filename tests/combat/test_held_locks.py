"""A tap's view locks the scene (and its row) and the step's lock takes them from there
(combat.steps.hold / held): once, only inside the request's transaction, never after a change
was recorded."""

from __future__ import annotations

import pytest

from combat import steps
from combat.models import Scene
from combat.services import lock_scene, record_change, scene_open

pytestmark = pytest.mark.django_db


def test_a_held_row_is_the_steps_lock_once(chronicle, storyteller):
    scene = scene_open(chronicle=chronicle, by=storyteller, name="Held")
    with steps.request_transaction():
        view = steps.hold(Scene.objects.select_for_update().get(pk=scene.pk))
        assert lock_scene(scene.pk) is view  # not read again
        assert lock_scene(scene.pk) is not view  # a second lock reads afresh


def test_nothing_is_held_outside_a_tap_or_after_a_change(chronicle, storyteller):
    scene = scene_open(chronicle=chronicle, by=storyteller, name="Held")
    steps.hold(scene)
    assert steps.held(Scene, scene.pk) is None  # no request's transaction: nothing kept
    with steps.request_transaction():
        view = steps.hold(Scene.objects.select_for_update().get(pk=scene.pk))
        other = Scene.objects.select_for_update().get(pk=scene.pk)
        record_change(other, by=storyteller)  # written through another read of the row
        locked = lock_scene(scene.pk)
        assert locked is not view and locked.seq == view.seq + 1
