"""The phone sheet, the print view and the storyteller's chronicle page."""

from __future__ import annotations

import pytest

from characters import services
from characters.models import GameNight, LedgerEntry, Trait
from tests.conftest import client_for
from tests.factories import AbilityFactory, CharacterFactory, PowerFactory, TraitFactory

pytestmark = pytest.mark.django_db


def test_it_shows_a_player_their_sheet_with_lost_traits_struck(character, player) -> None:
    services.ledger_spend(
        character=character, kind="trait_lost", subject="Quick", category="physical", by=None
    )
    response = client_for(player).get(f"/characters/{character.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Janet" in html
    assert 'aria-label="1 of 2 left"' in html
    assert html.count('class="dot lost"') == 1
    assert "Tactless" in html


def test_it_hides_a_sheet_from_another_player(character, other_player) -> None:
    assert client_for(other_player).get(f"/characters/{character.pk}/").status_code == 404
    assert client_for(other_player).get(f"/characters/{character.pk}/print/").status_code == 404


def test_it_sends_a_visitor_to_log_in(character, visitor) -> None:
    response = visitor.get(f"/characters/{character.pk}/")
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_it_lets_the_storyteller_see_every_character_of_the_chronicle(
    character, storyteller
) -> None:
    assert client_for(storyteller).get(f"/characters/{character.pk}/").status_code == 200


def test_it_prints_a_paper_backup(character, player) -> None:
    response = client_for(player).get(f"/characters/{character.pk}/print/")
    assert response.status_code == 200
    assert b"paper backup" in response.content
    assert b"print.css" in response.content


def test_it_renders_a_sheet_in_the_same_number_of_queries_whatever_its_size(
    chronicle, player, django_assert_num_queries
) -> None:
    small = CharacterFactory(chronicle=chronicle, player=player)
    TraitFactory(character=small)
    big = CharacterFactory(chronicle=chronicle, player=player, willpower=9)
    TraitFactory.create_batch(40, character=big)
    AbilityFactory.create_batch(15, character=big)
    for _ in range(4):
        services.ledger_spend(character=big, kind="willpower_spent", by=None)
    client = client_for(player)
    small_count = _sheet_queries(client, small.pk)
    with django_assert_num_queries(small_count):
        assert client.get(f"/characters/{big.pk}/").status_code == 200


def _sheet_queries(client, pk: int) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        assert client.get(f"/characters/{pk}/").status_code == 200
    return len(ctx.captured_queries)


def test_it_lists_a_players_characters_and_a_storytellers_chronicles(
    character, player, storyteller, chronicle
) -> None:
    assert b"Janet" in client_for(player).get("/").content
    home = client_for(storyteller).get("/").content.decode()
    assert chronicle.name in home


def test_it_opens_the_next_game_night_from_the_chronicle_page(chronicle, storyteller) -> None:
    client = client_for(storyteller)
    response = client.post(f"/chronicles/{chronicle.pk}/nights/open/", {"expected": "1"})
    assert response.status_code == 302
    assert GameNight.objects.get(chronicle=chronicle, closed_at__isnull=True).number == 2
    again = client.post(f"/chronicles/{chronicle.pk}/nights/open/", {"expected": "1"}, follow=True)
    assert b"no longer the open one" in again.content
    assert GameNight.objects.filter(chronicle=chronicle).count() == 2


def test_it_keeps_players_off_the_storytellers_page(chronicle, player) -> None:
    client = client_for(player)
    assert client.get(f"/chronicles/{chronicle.pk}/").status_code == 404
    assert client.post(f"/chronicles/{chronicle.pk}/nights/refresh/").status_code == 404
    assert not LedgerEntry.objects.exists()


def test_it_reverses_an_entry_from_the_chronicle_page(character, chronicle, storyteller) -> None:
    entry = services.ledger_spend(character=character, kind="willpower_spent", by=None)
    client = client_for(storyteller)
    empty = client.post(f"/chronicles/{chronicle.pk}/ledger/{entry.pk}/reverse/", {}, follow=True)
    assert b"Say why" in empty.content
    client.post(f"/chronicles/{chronicle.pk}/ledger/{entry.pk}/reverse/", {"reason": "misclick"})
    assert LedgerEntry.objects.filter(reverses=entry, reason="misclick").exists()
    page = client.get(f"/chronicles/{chronicle.pk}/").content.decode()
    assert "(reversed)" in page


def _record(client, chronicle, character, **fields):
    if "subject" not in fields:
        quick = Trait.objects.get(character__chronicle=chronicle, name="Quick")
        fields["subject"] = f"trait:{quick.pk}"
    data = {
        "character": character.pk,
        "kind": "trait_lost",
        "amount": 1,
        "reason": "lost a brawl",
        "key": "tap-1",
    }
    data.update(fields)
    return client.post(f"/chronicles/{chronicle.pk}/ledger/", data, follow=True)


def test_it_records_a_cost_by_hand_once_for_a_double_tap(character, chronicle, storyteller) -> None:
    client = client_for(storyteller)
    _record(client, chronicle, character)
    page = _record(client, chronicle, character)
    assert LedgerEntry.objects.filter(character=character).count() == 1
    assert "Recorded for Janet" in page.content.decode()
    sheet = client_for(storyteller).get(f"/characters/{character.pk}/").content.decode()
    assert 'aria-label="1 of 2 left"' in sheet


def test_it_explains_a_cost_it_refuses(character, chronicle, storyteller) -> None:
    client = client_for(storyteller)
    page = _record(client, chronicle, character, subject="", key="tap-2").content.decode()
    assert "Pick the trait lost." in page
    page = _record(client, chronicle, character, subject="Mighty", key="tap-3").content.decode()
    assert "Select a valid choice. Mighty is not one of the available choices." in page
    assert not LedgerEntry.objects.exists()


def test_it_refuses_a_character_of_another_chronicle(character, chronicle, storyteller) -> None:
    stranger = CharacterFactory(name="Stranger")
    page = _record(client_for(storyteller), chronicle, stranger, key="tap-4").content.decode()
    assert "Select a valid choice. That choice is not one of the available choices." in page
    assert not LedgerEntry.objects.exists()


def test_it_shows_a_powers_and_an_abilitys_note_on_the_sheet(character, player) -> None:
    PowerFactory(character=character, name="Auspex: Spirit's Touch", level=6, note="int.")
    AbilityFactory(character=character, name="Academics", rating=2, note="Anthropology")
    page = client_for(player).get(f"/characters/{character.pk}/").content.decode()
    assert '<b>6</b> <span class="muted small">(int.)</span>' in page
    assert "(Anthropology)" in page
