"""An open card asks its template about every move it may offer, and a name Django cannot
find costs four exceptions: the card's dicts (selectors.Offers) read an absent move, blood or
retest field as None, so rendering a side's card looks up nothing that is missing (issue 21)."""

from __future__ import annotations

import pytest
from django.template import base
from django.template.loader import render_to_string

from combat.challenges import selectors
from tests.combat.challenges.conftest import rendered_row

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


def _render(t, ch, viewer: str) -> str:
    scene, row = rendered_row(t, ch)
    # st_url: the board's own URL, which a side's card on the board compares with
    context = {"c": selectors.card(row, viewer), "scene": scene, "st_url": None}
    return render_to_string("combat/challenges/_prompt_card.html", context)


def test_it_finds_every_name_a_sides_card_asks_about(classic, misses):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    states = [ch]
    states.append(t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough"))
    states.append(t.do("throw", ch, t.a_user, side="attacker", throw="rock"))
    states.append(t.do("throw", ch, t.d_user, side="defender", throw="scissors"))  # retests
    for state in states:
        for side in ("attacker", "defender"):
            misses.clear()
            html = _render(t, state, side)
            assert f"you are the {side}" in html
            assert misses == [], (state.status, side)
