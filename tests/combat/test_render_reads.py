"""Boards get their data from selectors: a render of a scene's screens runs no query.

The scene's selectors read what every region shows (its own and the features', through
``combat.regions``) before the render; the features' template tags only hand it on.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.template.loader import render_to_string
from django.test.utils import CaptureQueriesContext

from combat import board, fragments, selectors
from tests.combat.challenges.conftest import make_table

pytestmark = pytest.mark.django_db


@pytest.fixture
def table():
    """A met_classic challenge under way: a board, a public part and two private parts."""
    t = make_table("met_classic")
    t.start(category="physical", bid="Strong")
    return t.refresh()


def _queries(render) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        render()
    return [q["sql"] for q in captured]


def test_the_board_renders_without_a_query(table):
    context = {**board.board_state(table.scene), "oob": False}
    assert "challenge_board" in context and "round_board" in context and "chase_board" in context
    assert _queries(lambda: render_to_string(f"{fragments.TABLET}#board", context)) == []


def test_the_public_part_renders_without_a_query(table):
    context = {**selectors.public_state(table.scene), "oob": False}
    assert _queries(lambda: render_to_string(f"{fragments.PHONE}#public", context)) == []


def test_a_private_part_renders_without_a_query(table):
    context = {**selectors.private_state(table.scene, table.a_user), "oob": False}
    assert context["challenge_prompts"]["cards"], "the attacker's card is read"
    assert _queries(lambda: render_to_string(f"{fragments.PHONE}#private", context)) == []


def test_a_region_reads_only_what_it_shows(table):
    """A clock tap's push reads no challenge, fight or chase."""
    clock = _queries(lambda: fragments.board_regions(table.scene, ("clock",)))
    everything = _queries(lambda: fragments.board_regions(table.scene, None))
    assert len(clock) == 0 < len(everything)
