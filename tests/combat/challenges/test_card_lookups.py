"""An open card asks its template about every move it may offer, and a name Django cannot
find costs four exceptions: the card's dicts (selectors.Offers) read an absent move, blood or
retest field as None, so rendering a side's card looks up nothing that is missing (issue 21)."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string

from combat.challenges import selectors
from tests.combat.challenges.conftest import rendered_row

pytestmark = pytest.mark.django_db


def _render(t, ch, viewer: str) -> str:
    scene, row = rendered_row(t, ch)
    # a phone's card says it has no board URL (st_url), which a card on the board compares with
    context = {"c": selectors.card(row, viewer), "scene": scene}
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
