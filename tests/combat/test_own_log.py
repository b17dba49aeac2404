"""The phone's own log read as plain rows and drawn without the template's loop (issue 21):
what the phone shows is what the loop it replaced drew, line for line."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from combat import own_log
from combat.own_log import OwnLine

# The loop of templates/combat/scene_phone.html#player-log before issue 21.
LOOP = Template(
    '{% load scenes %}{% for entry in log reversed %}<li><span class="t">'
    "{{ entry.game_time|game_time }}</span> {{ entry.text }}</li>{% empty %}"
    '<li class="muted">Nothing yet.</li>{% endfor %}'
)


@pytest.mark.parametrize(
    "lines",
    [
        [],
        [OwnLine(1, 1, 0, "Ana joined")],
        [
            OwnLine(1, 1, 0, "Ana <b>bids</b> & \"Strong\" 'twice'"),
            OwnLine(2, 3, 75, "Ben loses 1 Health"),
            OwnLine(3, 4, 3725, "Ana wins: 2 > 1"),
        ],
    ],
)
def test_the_items_are_what_the_template_drew(lines) -> None:
    assert own_log.items(lines) == LOOP.render(Context({"log": lines}))


def test_the_tag_draws_the_items_unescaped_once() -> None:
    lines = [OwnLine(1, 1, 15, "a <b> & c")]
    drawn = Template("{% load scenes %}{% own_log_items log %}").render(Context({"log": lines}))
    assert drawn == LOOP.render(Context({"log": lines}))
    assert "&amp;lt;" not in drawn and "&lt;b&gt;" in drawn


def test_the_items_kept_are_those_of_the_same_lines() -> None:
    """Made once per process for the same lines: a line's text or time that differs, or one
    more line, is drawn anew (each part of the key)."""
    first = [OwnLine(1, 1, 15, "Ana joined"), OwnLine(2, 2, 30, "Ben joined")]
    assert own_log.items(first) == LOOP.render(Context({"log": first}))
    for other in (
        [OwnLine(1, 1, 15, "Ana joined"), OwnLine(2, 2, 30, "Ben left")],
        [OwnLine(1, 1, 15, "Ana joined"), OwnLine(2, 2, 45, "Ben joined")],
        [*first, OwnLine(3, 3, 60, "Cy joined")],
        first[:1],
    ):
        assert own_log.items(other) == LOOP.render(Context({"log": other}))


def test_lines_of_another_kind_are_never_kept() -> None:
    """Only a log's own rows are kept by what they are: any other line (a model row, equal to
    another by its pk alone) is drawn every time."""

    class Row:
        def __init__(self, text: str) -> None:
            self.game_time, self.text = 0, text

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 1

    assert "first" in own_log.items([Row("first")])
    assert "second" in own_log.items([Row("second")])
