"""The public part's lists of who is here are rendered once per list (``{% kept_here %}``,
combat/templatetags/scenes.py), not on every change: what is kept is always what a fresh
rendering shows, a hidden NPC never in it, and each part of its key is proved here (drop one
and its test fails)."""

from __future__ import annotations

import pytest
from django.template import Context

from combat import fragments
from combat import services as scenes
from combat.models import Participant
from combat.templatetags import scenes as scene_tags
from combat.templatetags.scenes import here_key
from tests.combat.challenges.conftest import make_table

pytestmark = pytest.mark.django_db


def _public(t) -> str:
    return fragments.players_state(t.refresh().scene)


def _fresh(t) -> str:
    scene_tags.clear()
    return _public(t)


def test_the_lists_are_rendered_once_and_equal_a_fresh_rendering() -> None:
    t = make_table("met_classic")
    first = _fresh(t)
    hits = scene_tags.here_stats["hits"]
    assert _public(t) == first == _fresh(t)
    assert scene_tags.here_stats["hits"] > hits
    assert 'id="scene-targets"' in first and "Marcus" in first and "Sophia" in first


def test_a_join_a_rename_a_hidden_npc_show_as_a_fresh_rendering_shows_them() -> None:
    t = make_table("met_classic")
    before = _public(t)
    scenes.scene_add_npc(scene=t.scene, by=t.st, name="Lurker", pools={"physical": 6}, hidden=True)
    hidden = _public(t)
    assert "Lurker" not in hidden and hidden == _fresh(t)
    guard = scenes.scene_add_npc(scene=t.scene, by=t.st, name="Guard", pools={"physical": 6})
    joined = _public(t)
    assert "Guard" in joined and joined != before and joined == _fresh(t)
    Participant.objects.filter(pk=guard.pk).update(name="Captain")
    renamed = _public(t)
    assert "Captain" in renamed and "Guard" not in renamed and renamed == _fresh(t)


@pytest.mark.parametrize("part", ["pk", "name", "npc", "order"])
def test_the_key_holds_each_part_the_lists_show(part) -> None:
    t = make_table("met_classic")
    participants = list(Participant.objects.filter(scene=t.scene).order_by("pk"))
    before = here_key(Context({"participants": participants}))
    if part == "pk":
        participants[0].pk += 1000
    elif part == "name":
        participants[0].name = "Someone else"
    elif part == "npc":
        participants[0].npc = not participants[0].npc
    else:
        participants.reverse()
    assert here_key(Context({"participants": participants})) != before
