"""Issue 19, bug 7: the words of a round never contradict its state (the board's preview of a
grapple's roll, the Control track beside the last result)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from combat.rounds.bookkeeping import combat_book_keeping
from tests.combat.rounds.test_wod_services import _declare, _fresh, _grappled, _resolve
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _board(cast) -> str:
    url = reverse("scene_tablet", args=[cast.scene.pk])
    return _text(client_for(cast.storyteller).get(url).content.decode())


def _phone(cast, name: str) -> str:
    url = reverse("scene_phone", args=[cast.scene.pk])
    return _text(client_for(cast.users[name]).get(url).content.decode())


@pytest.mark.rules("G2", "G3")
@pytest.mark.parametrize(
    ("action", "label"), [("resist", "Resist the grapple"), ("reverse", "Reverse the grapple")]
)
def test_the_sustain_preview_names_the_victims_declared_answer(cast, action, label):
    """G2, G3: Frank declared Resist; the board's roll for Teddy's sustain said "Frank No
    defense: Strength 2 + Brawl 1" (the Victim's grapple pool is the answer it declared)."""
    combat = _grappled(cast, ("Teddy", "Frank"))
    _declare(cast, combat, "Frank", action)
    _declare(cast, combat, "Teddy", "sustain")
    board = _board(cast)
    assert "No defense" not in board
    assert f"Frank {label}: Strength 2 + Brawl 1 = 3 dice" in board


@pytest.mark.rules("G4")
def test_the_control_track_says_the_point_lost_at_the_rounds_end(cast):
    """G4: the round's last result says "Control 5"; book keeping takes one off a sustained
    grapple and the track showed 4 without a word (the two disagreed)."""
    combat = _grappled(cast, ("Teddy", "Frank"))
    _declare(cast, combat, "Frank", "resist")
    _declare(cast, combat, "Teddy", "sustain")
    _resolve(cast, combat, "Teddy", attack_dice="8 9 10 2 2 2 2 2", defense_dice="7 2 2")
    _resolve(cast, combat, "Frank")
    assert "Control 5" in _board(cast)
    combat_book_keeping(combat=_fresh(combat), by=cast.storyteller)
    assert _fresh(combat).grapples[0]["control"] == 4
    for page in (_board(cast), _phone(cast, "Frank"), _phone(cast, "Jane")):
        assert "Control 4 (5 − 1 at the round's end, G4)" in page, page


@pytest.mark.rules("G8")
def test_a_single_effect_grapple_says_it_ends(cast):
    """G8: all the opening Control on one effect; the grapple is not sustained. The line said
    "Teddy grapples Frank, Control 3 (D10, G1); drop (G6)" and the track was simply gone."""
    from tests.combat.rounds.test_wod_services import _roll_all, _start

    combat = _start(cast, ("Teddy", "Frank"))
    combat = _roll_all(cast, combat, {"Teddy": 9, "Frank": 1})
    _declare(cast, combat, "Frank", "dodge")
    _declare(cast, combat, "Teddy", "grapple", "Frank")
    _resolve(
        cast, combat, "Teddy", attack_dice="8 9 10 2 2 2 2 2", defense_dice="2 2 2", effect="drop"
    )
    assert _fresh(combat).grapples == []
    assert "G8" in _fresh(combat).results[-1]["text"]
    assert "G8" in _phone(cast, "Frank").split("Teddy grapples Frank")[1]


def _declare_form(cast, name: str) -> str:
    url = reverse("scene_phone", args=[cast.scene.pk])
    html = client_for(cast.users[name]).get(url).content.decode()
    return re.search(r'<form [^>]*class="declare-form".*?</form>', html, re.S).group(0)


def test_the_declare_form_starts_on_the_weapon_the_character_carries(cast):
    """Issue 19, good defaults: Jane carries a knife; her declare form started on Fists."""
    from tests.combat.rounds.test_wod_services import _roll_all, _start
    from tests.factories import EquipmentFactory

    EquipmentFactory(character=cast.p["Jane"].character, name="Knife", kind="weapon", damage=1)
    combat = _start(cast, ("Jane", "Thug"))
    _roll_all(cast, combat, {"Jane": 1, "Thug": 9})
    form = _declare_form(cast, "Jane")
    weapon = re.search(r'<select name="weapon">(.*?)</select>', form, re.S).group(1)
    assert re.search(r'<option value="Knife"[^>]*selected', weapon), weapon
    assert "Fists" in weapon  # still there to pick
