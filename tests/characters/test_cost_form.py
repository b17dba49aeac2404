"""The storyteller's cost form: pick from the sheets, errors beside the field, nothing lost."""

from __future__ import annotations

import pytest

from characters import services
from characters.models import LedgerEntry, Trait
from characters.selectors import current_values
from tests.conftest import client_for
from tests.factories import AbilityFactory, CharacterFactory, TraitFactory

pytestmark = pytest.mark.django_db


def test_it_matches_trait_and_ability_names_whatever_their_case(character) -> None:
    AbilityFactory(character=character, name="Brawl", rating=2)
    lost = services.ledger_spend(
        character=character, kind="trait_lost", subject="qUICK", category="Physical", by=None
    )
    spent = services.ledger_spend(
        character=character, kind="ability_spent", subject="BRAWL", by=None
    )
    assert (lost.subject, lost.category, spent.subject) == ("Quick", "physical", "Brawl")
    now = current_values(character)
    assert (now["traits"]["physical"]["Quick"], now["abilities"]["Brawl"]) == (1, 1)


def test_it_counts_entries_recorded_in_another_case(character, chronicle) -> None:
    """Rows written before names were matched: 'quick' still crosses off Quick."""
    LedgerEntry.objects.create(
        game_night=chronicle.game_nights.get(),
        character=character,
        kind="trait_lost",
        subject="quick",
        category="physical",
    )
    assert current_values(character)["traits"]["physical"]["Quick"] == 1


def test_it_offers_each_characters_traits_and_abilities_to_pick(
    character, chronicle, storyteller
) -> None:
    AbilityFactory(character=character, name="Brawl", rating=2)
    other = CharacterFactory(chronicle=chronicle, name="Cody")
    TraitFactory(character=other, category="mental", name="Clever", count=2)
    services.ledger_spend(
        character=character, kind="trait_lost", subject="Quick", category="physical", by=None
    )
    html = client_for(storyteller).get(f"/chronicles/{chronicle.pk}/").content.decode()
    quick = Trait.objects.get(name="Quick")
    assert '<select name="subject"' in html
    assert '<optgroup label="Janet">' in html and '<optgroup label="Cody">' in html
    assert f'<option value="trait:{quick.pk}">Quick (physical) 1/2</option>' in html
    assert "Brawl (ability) 2/2" in html
    assert "Tactless" not in html.split('name="subject"')[1].split("</select>")[0]


def _post(client, chronicle, character, **fields):
    if "subject" not in fields:
        quick = Trait.objects.get(character=character, name="Quick")
        fields["subject"] = f"trait:{quick.pk}"
    data = {
        "character": character.pk,
        "kind": "trait_lost",
        "amount": 1,
        "reason": "lost a brawl",
        "key": "tap-1",
    }
    data.update(fields)
    return client.post(f"/chronicles/{chronicle.pk}/ledger/", data)


def test_it_keeps_what_was_typed_and_shows_the_error_beside_the_field(
    character, chronicle, storyteller
) -> None:
    response = _post(client_for(storyteller), chronicle, character, subject="", amount="1")
    assert response.status_code == 400
    html = response.content.decode()
    assert 'value="lost a brawl"' in html
    assert "<details open>" in html
    assert '<p class="error" id="id_subject_error">Pick the trait lost.</p>' in html
    assert not LedgerEntry.objects.exists()


def test_it_shows_a_refusal_of_the_ledger_beside_the_field(
    character, chronicle, storyteller
) -> None:
    client = client_for(storyteller)
    _post(client, chronicle, character, key="tap-a")
    _post(client, chronicle, character, key="tap-b")
    response = _post(client, chronicle, character, key="tap-c", reason="third brawl")
    assert response.status_code == 400
    html = response.content.decode()
    assert '<p class="error" id="id_subject_error">Janet has no current Quick' in html
    assert 'value="third brawl"' in html
    assert LedgerEntry.objects.count() == 2


def test_it_refuses_a_trait_of_another_character(character, chronicle, storyteller) -> None:
    cody = CharacterFactory(chronicle=chronicle, name="Cody")
    quick = Trait.objects.get(character=character, name="Quick")
    response = _post(client_for(storyteller), chronicle, cody, subject=f"trait:{quick.pk}")
    assert response.status_code == 400
    assert "Quick is not on Cody&#x27;s sheet." in response.content.decode()
    assert not LedgerEntry.objects.exists()


@pytest.mark.rules("W7")
def test_it_regains_traits_from_the_form(character, chronicle, storyteller) -> None:
    client = client_for(storyteller)
    _post(client, chronicle, character, key="tap-a")
    response = _post(
        client,
        chronicle,
        character,
        kind="trait_regained",
        subject="",
        category="physical",
        key="tap-b",
    )
    assert response.status_code == 302
    assert current_values(character)["traits"]["physical"]["Quick"] == 2
    again = _post(
        client,
        chronicle,
        character,
        kind="trait_regained",
        subject="",
        category="physical",
        key="tap-c",
    )
    assert again.status_code == 400
    assert "W7:" in again.content.decode()


def test_it_draws_the_chronicle_page_in_fixed_queries(
    chronicle, storyteller, django_assert_num_queries
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = client_for(storyteller)
    first = CharacterFactory(chronicle=chronicle)
    TraitFactory(character=first)
    services.ledger_spend(character=first, kind="willpower_spent", by=None)
    with CaptureQueriesContext(connection) as few:
        assert client.get(f"/chronicles/{chronicle.pk}/").status_code == 200
    for _ in range(8):
        character = CharacterFactory(chronicle=chronicle)
        TraitFactory.create_batch(3, character=character)
        AbilityFactory(character=character)
        services.ledger_spend(character=character, kind="willpower_spent", by=None)
    with django_assert_num_queries(len(few.captured_queries)):
        assert client.get(f"/chronicles/{chronicle.pk}/").status_code == 200
