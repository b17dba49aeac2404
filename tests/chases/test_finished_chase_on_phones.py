"""Issue 19, bug 8: a finished chase stays on the phones (its ending) until the scene moves on
to a fight or a challenge; then it leaves them, and the tablet keeps it."""

from __future__ import annotations

import pytest

from chases import running, starting
from chases.tokens import token_of
from combat import fragments
from combat.models import Scene
from combat.rounds.starting import combat_start

pytestmark = pytest.mark.django_db


def test_bug8_a_finished_chase_leaves_the_phones_when_the_next_fight_starts(
    scene, storyteller, janet, hound
):
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[hound], prey=janet, start="escape", head_start=3
    )
    running.chase_call_off(chase=chase, by=storyteller, token=token_of(chase))
    scene = Scene.objects.get(pk=scene.pk)
    assert "Chase: Janet" in fragments.players_state(scene)  # its ending is told
    Scene.objects.filter(pk=scene.pk).update(ruleset="wod_dice")  # a dice fight follows
    scene = Scene.objects.get(pk=scene.pk)
    combat_start(scene=scene, by=storyteller, participants=[janet, hound])
    scene = Scene.objects.get(pk=scene.pk)
    assert "Chase: Janet" not in fragments.players_state(scene)
    assert 'id="chase"' in fragments.board_regions(scene, ("chase",))  # the tablet keeps it


def test_the_d10_chase_form_is_folded_away_in_a_met_scene(scene, janet, hound):
    """Issue 19: nothing of another ruleset is open by default on the tablet."""
    board = fragments.board_regions(Scene.objects.get(pk=scene.pk), ("people", "chase"))
    assert '<details class="panel chase-start">' in board
    Scene.objects.filter(pk=scene.pk).update(ruleset="wod_dice")
    board = fragments.board_regions(Scene.objects.get(pk=scene.pk), ("people", "chase"))
    assert '<details class="panel chase-start" open>' in board


def test_bug7_an_unseen_pursuer_is_named_in_lower_case_inside_the_sentence(
    scene, storyteller, janet, lurker
):
    from chases import selectors
    from tests.chases.conftest import Dice

    starting.start_chase(
        scene=scene,
        by=storyteller,
        predators=[lurker],
        prey=janet,
        start="cold",
        rng=Dice(1, 3, 4, 2, 5),  # a botched cold start: caught at once (K3)
    )
    ending = selectors.chase_state(Scene.objects.get(pk=scene.pk), public=True)["ending"]
    assert ending == "Janet was caught by an unseen pursuer"
