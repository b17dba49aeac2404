"""Django admin: scoped to the storyteller's chronicles, closed to players, fixed query counts."""

from __future__ import annotations

import pytest

from characters.models import Character, GameNight, LedgerEntry
from tests.conftest import client_for
from tests.factories import (
    CharacterFactory,
    ChronicleFactory,
    StorytellerFactory,
    TraitFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def test_it_keeps_a_player_out_of_the_admin(player) -> None:
    response = client_for(player).get("/admin/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_it_shows_a_storyteller_only_their_chronicles_characters(character, storyteller) -> None:
    foreign = CharacterFactory(name="Stranger")  # in a chronicle someone else runs
    client = client_for(storyteller)
    listing = client.get("/admin/characters/character/").content.decode()
    assert "Janet" in listing
    assert "Stranger" not in listing
    assert client.get(f"/admin/characters/character/{foreign.pk}/change/").status_code == 302
    url = f"/admin/characters/character/{foreign.pk}/change/"
    client.post(url, {"name": "Hijacked", "chronicle": foreign.chronicle_id})
    foreign.refresh_from_db()
    assert foreign.name == "Stranger"


def test_it_offers_only_the_storytellers_chronicles_in_the_sheet_form(
    character, storyteller
) -> None:
    other = ChronicleFactory(name="Someone Else's Chronicle")
    page = client_for(storyteller).get("/admin/characters/character/add/").content.decode()
    assert character.chronicle.name in page
    assert other.name not in page


def test_it_edits_a_sheet_with_every_inline(character, storyteller) -> None:
    page = client_for(storyteller).get(f"/admin/characters/character/{character.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    for prefix in (
        "traits",
        "abilities",
        "powers",
        "attributes",
        "health",
        "equipment",
        "entries",
        "experience",
    ):
        assert f'name="{prefix}-TOTAL_FORMS"' in html, prefix
    assert "Ledger entries" in html


def test_it_opens_a_game_night_and_refreshes_from_admin_actions(chronicle, storyteller) -> None:
    CharacterFactory.create_batch(3, chronicle=chronicle)
    client = client_for(storyteller)
    confirm = client.post(
        "/admin/characters/chronicle/",
        {"action": "open_next_game_night", "_selected_action": [chronicle.pk]},
    )
    assert "game night 1 closes, 2 opens" in confirm.content.decode()
    assert GameNight.objects.filter(chronicle=chronicle).count() == 1, "nothing before confirming"
    confirmed = {
        "action": "open_next_game_night",
        "_selected_action": [chronicle.pk],
        "confirm": "yes",
        f"expected_{chronicle.pk}": "1",
    }
    client.post("/admin/characters/chronicle/", confirmed)
    again = client.post("/admin/characters/chronicle/", confirmed, follow=True)
    assert "no longer the open one" in again.content.decode()
    assert GameNight.objects.get(chronicle=chronicle, closed_at__isnull=True).number == 2
    assert GameNight.objects.filter(chronicle=chronicle).count() == 2
    client.post(
        "/admin/characters/chronicle/",
        {"action": "refresh_pools", "_selected_action": [chronicle.pk]},
    )
    assert LedgerEntry.objects.filter(kind="refresh").count() == 3


def test_it_keeps_the_ledger_read_only(character, storyteller) -> None:
    from characters import services

    entry = services.ledger_spend(character=character, kind="willpower_spent", by=None)
    client = client_for(storyteller)
    assert client.get("/admin/characters/ledgerentry/").status_code == 200
    assert client.get("/admin/characters/ledgerentry/add/").status_code == 403
    client.post(f"/admin/characters/ledgerentry/{entry.pk}/delete/", {"post": "yes"})
    assert LedgerEntry.objects.filter(pk=entry.pk).exists()


def test_it_lists_500_characters_in_a_fixed_number_of_queries(
    chronicle, storyteller, django_assert_num_queries
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = client_for(storyteller)
    CharacterFactory.create_batch(5, chronicle=chronicle)
    with CaptureQueriesContext(connection) as few:
        assert client.get("/admin/characters/character/?all=").status_code == 200
    players = UserFactory.create_batch(50)
    Character.objects.bulk_create(
        Character(chronicle=chronicle, name=f"Extra {i}", player=players[i % 50])
        for i in range(495)
    )
    with django_assert_num_queries(len(few.captured_queries)):
        response = client.get("/admin/characters/character/")
    assert "500 characters" in response.content.decode()


def test_it_scopes_a_second_storyteller_separately(character) -> None:
    rival = StorytellerFactory(username="rival")
    mine = ChronicleFactory(name="Rival Chronicle")
    mine.storytellers.add(rival)
    TraitFactory(character=CharacterFactory(chronicle=mine, name="Rival PC"))
    listing = client_for(rival).get("/admin/characters/character/").content.decode()
    assert "Rival PC" in listing and "Janet" not in listing
