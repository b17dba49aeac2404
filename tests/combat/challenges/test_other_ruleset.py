"""Issue 19: nothing of another ruleset takes room. A wod_dice scene has no MET challenge to
show: the challenge regions of the tablet and the phones are left empty, and collapse
(scene.css's ``.region:empty``), unless challenges from before a ruleset change are there."""

from __future__ import annotations

import re

import pytest

from combat import fragments
from combat.models import Scene

pytestmark = pytest.mark.django_db

EMPTY = {
    "board": r'<div id="challenge-board"[^>]*></div>',
    "prompts": r'<div id="challenge-prompts"[^>]*></div>',
    "public": r'<div id="challenge-public"[^>]*></div>',
}


def _to_wod_dice(t) -> None:
    Scene.objects.filter(pk=t.scene.pk).update(ruleset="wod_dice")
    t.refresh()


def test_a_wod_dice_scene_s_challenge_regions_take_no_room(classic):
    t = classic
    assert "No challenge yet" in t.board()  # a MET scene: its board, ready to start one
    _to_wod_dice(t)
    board, phone = t.board(), t.phone(t.a_user)
    assert "No challenge yet" not in board and "<h2>Challenges</h2>" not in board
    assert re.search(EMPTY["board"], board), board
    assert re.search(EMPTY["prompts"], phone) and re.search(EMPTY["public"], phone)
    # and so in what is pushed to the tablet and the phones
    assert re.search(EMPTY["board"], fragments.board_regions(t.scene, ("challenges",)))
    assert re.search(EMPTY["public"], fragments.players_state(t.scene))
    assert re.search(EMPTY["prompts"], fragments.private_state(t.scene, t.a_user))


def test_a_challenge_from_before_a_ruleset_change_stays_in_view(classic):
    t = classic
    challenge = t.start(category="physical", bid="Strong")
    _to_wod_dice(t)
    board, phone = t.board(), t.phone(t.d_user)
    assert "<h2>Challenges</h2>" in board and f'id="challenge-{challenge.pk}"' in board
    assert f'id="challenge-{challenge.pk}-defender"' in phone
    assert not re.search(EMPTY["board"], board)
