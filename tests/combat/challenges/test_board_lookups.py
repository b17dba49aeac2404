"""The storyteller's board asks its templates about names that are there: a name Django
cannot find costs four exceptions, on every push of the board (issue 21)."""

from __future__ import annotations

import pytest

from combat import fragments
from combat.models import Presence

pytestmark = pytest.mark.django_db


def test_the_board_finds_every_name_it_asks_about(classic, misses):
    t = classic
    Presence.objects.create(scene=t.scene, user=t.st, channel_name="tablet.board")
    ch = t.start(category="physical", bid="Strong")
    states = [ch]
    states.append(t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough"))
    states.append(t.do("throw", ch, t.a_user, side="attacker", throw="rock"))
    states.append(t.do("throw", ch, t.d_user, side="defender", throw="scissors"))
    for state in states:
        misses.clear()
        scene = fragments.load(t.scene.pk)
        html = fragments.board_regions(scene)
        assert 'id="challenge-board"' in html and 'id="log-panel"' in html
        assert misses == [], (state.status, misses)
