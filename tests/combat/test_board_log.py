"""The board's log read with its SQL built once and drawn without the template's loop
(issue 21): what the board shows is what the loop it replaced drew, line for line."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.template import Context, Template
from django.utils import timezone

from combat import board_log
from combat.models import SceneLogEntry
from combat.selectors import log_for_storyteller
from tests.factories import SceneFactory

# The loop of templates/combat/scene_tablet.html#log-panel before issue 21.
LOOP = Template(
    "{% load scenes %}{% for entry in log reversed %}"
    '<li class="log-{{ entry.kind }}{% if not entry.public %} private{% endif %}">'
    '<span class="t">{{ entry.game_time|game_time }}</span> <time class="t night" '
    'datetime="{{ entry.created_at|date:\'c\' }}">{{ entry.created_at|time:"H:i" }}</time> '
    "{{ entry.text }}</li>{% endfor %}"
)


def _line(pk: int, seq: int, game_time: int, text: str, *, public: bool, kind: str = "note"):
    at = datetime(2026, 11, 27, 21, 4 + pk, 5, 123456, tzinfo=UTC)
    return SceneLogEntry(
        pk=pk, seq=seq, game_time=game_time, kind=kind, text=text, public=public, created_at=at
    )


LINES = [
    _line(1, 1, 0, "Ana joined", public=True, kind="join"),
    _line(2, 3, 75, "Ana <b>bids</b> & \"Strong\" 'twice'", public=False),
    _line(3, 4, 3725, "Ana wins: 2 > 1", public=True, kind="challenge"),
]


@pytest.mark.parametrize("lines", [[], LINES[:1], LINES])
@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin"])
def test_the_items_are_what_the_template_drew(lines, zone) -> None:
    with timezone.override(zone):
        drawn = Template("{% load scenes %}{% board_log_items log %}").render(
            Context({"log": lines})
        )
        assert drawn == LOOP.render(Context({"log": lines}))
        assert board_log.items(lines) == drawn


@pytest.mark.django_db
def test_it_reads_the_newest_lines_oldest_first() -> None:
    scene = SceneFactory()
    for n in range(5):
        SceneLogEntry.objects.create(
            scene=scene, seq=n + 1, game_time=10 * n, kind="scene", text=f"line {n}"
        )
    read = board_log.read(scene.pk, 3)
    assert [e.pk for e in read] == [e.pk for e in log_for_storyteller(scene, limit=3)]
    assert [e.text for e in read] == ["line 2", "line 3", "line 4"]
    assert board_log.items(read) == LOOP.render(Context({"log": read}))
