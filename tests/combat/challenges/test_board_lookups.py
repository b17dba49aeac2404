"""The storyteller's board asks its templates about names that are there: a name Django
cannot find costs four exceptions, on every push of the board (issue 21)."""

from __future__ import annotations

import pytest
from django.template import base

from combat import fragments
from combat.models import Presence

pytestmark = pytest.mark.django_db


@pytest.fixture
def misses(monkeypatch) -> list[str]:
    """The variables a rendering failed to find, as written in the template."""
    found: list[str] = []
    lookup = base.Variable._resolve_lookup

    def counted(self, context):
        try:
            return lookup(self, context)
        except base.VariableDoesNotExist:
            found.append(self.var)
            raise

    monkeypatch.setattr(base.Variable, "_resolve_lookup", counted)
    return found


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
