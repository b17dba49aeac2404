"""The paper backup shows tonight's state: lost traits, spent pools, health, readable text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

from characters import services
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    """What a reader sees: tags dropped, whitespace collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


@pytest.fixture
def tonight(character):
    character.blood, character.blood_per_turn = 12, 1
    character.save()
    services.ledger_spend(
        character=character, kind="trait_lost", subject="Quick", category="physical", by=None
    )
    services.ledger_spend(character=character, kind="willpower_spent", amount=2, by=None)
    return character


def test_it_reads_blood_and_its_limit_apart(tonight, player) -> None:
    text = _text(client_for(player).get(f"/characters/{tonight.pk}/print/").content.decode())
    assert "Blood 12/12 · 1 per turn" in text


def test_it_marks_spent_pools_and_lost_traits_on_paper(tonight, player) -> None:
    html = client_for(player).get(f"/characters/{tonight.pk}/print/").content.decode()
    text = _text(html)
    assert "Willpower 1/3 · 2 spent" in text
    assert "Quick 1 lost" in text
    pools = html.split('class="pools"')[1].split("</section>")[0]
    assert pools.count('<s class="dot lost">') == 2, "two willpower crossed off"


def test_it_fits_the_print_view_to_a_phone(character, player) -> None:
    html = client_for(player).get(f"/characters/{character.pk}/print/").content.decode()
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html


def test_it_prints_the_phone_sheet_black_on_white(character, player) -> None:
    html = client_for(player).get(f"/characters/{character.pk}/").content.decode()
    assert "css/sheet.css" in html
    static = Path(settings.BASE_DIR) / "static" / "css"
    # The page's cards print white in every page's print block (app.css), the sheet's pools in
    # the sheet's own (sheet.css), its damage marks kept in colour.
    page = (static / "app.css").read_text().split("@media print", 1)[1]
    sheet = (static / "sheet.css").read_text().split("@media print", 1)[1]
    assert ".card { background: #fff !important" in page
    assert ".pool { background: #fff !important" in sheet
    assert "print-color-adjust: exact" in sheet
