"""Issue 19: on a phone with a card waiting on its player, every other card folds to its one
line (who, where it stands), so the one thing to do now is all the page shows at its top."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db


def _folds(html: str) -> dict[str, str]:
    """Each folded card of the page: its id, its one line."""
    found = re.findall(
        r'<details class="fold" id="fold-challenge-(\d+)"><summary><span class="fold-line">'
        r"(.*?)</span>",
        html,
        re.S,
    )
    return dict(found)


def test_an_open_card_not_waiting_on_the_player_folds_while_another_one_does(classic):
    t = classic
    first = t.start(category="physical", bid="Strong")
    first = t.do("answer", first, t.d_user, side="defender", answer="bid", bid="Tough")
    t.do("throw", first, t.a_user, side="attacker", throw="rock")  # Marcus waits on Sophia
    phone = t.phone(t.a_user)
    assert str(first.pk) not in _folds(phone)  # nothing else to do: it shows whole
    second = t.start(by=t.d_user, attacker=t.d, defender=t.a, category="social", bid="Charismatic")
    phone = t.phone(t.a_user)
    assert f'data-now="c{second.pk}-defender:answer"' in phone
    folds = _folds(phone)
    assert folds.get(str(first.pk), "").startswith("Marcus vs Sophia · In play"), folds
    assert str(second.pk) not in folds
