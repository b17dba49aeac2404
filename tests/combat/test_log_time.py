"""Issue 19: the tablet's log says the time of night (the venue's clock) beside the game time,
on the page and in what is pushed to it ("0s" on every line said nothing of when)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from combat import fragments, services
from combat.models import Scene, SceneLogEntry

pytestmark = pytest.mark.django_db


def test_the_tablet_s_log_says_the_time_of_night_beside_the_game_time(
    chronicle, storyteller, settings
):
    settings.TIME_ZONE = "Europe/Berlin"  # the venue's
    scene = services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")
    services.scene_set_situation(scene=scene, by=storyteller, situation="Rain on the roof")
    at = datetime(2026, 11, 26, 21, 4, tzinfo=UTC)
    SceneLogEntry.objects.filter(scene=scene).update(created_at=at)
    html = fragments.board_regions(Scene.objects.get(pk=scene.pk), ("log",))
    line = re.search(
        r'<li class="log-[^"]*"><span class="t">([^<]+)</span> (<time[^>]*>[^<]*</time>)', html
    )
    assert line, html
    assert (
        line.group(2) == '<time class="t night" datetime="2026-11-26T22:04:00+01:00">22:04</time>'
    )
