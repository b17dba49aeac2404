"""A sheet's body kept per process (``characters.sheet_html``): what it gives is what the
include renders, and each part of its key shows a change that only that part sees."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from characters import services, sheet_cache, sheet_html
from characters.models import Character, Chronicle, LedgerKind
from characters.selectors import sheet
from tests.factories import AbilityFactory, CharacterFactory, lose_a_trait

pytestmark = pytest.mark.django_db

INCLUDE = Template(
    '{% include "characters/_sheet_body.html" with character=s.character'
    " categories=s.categories abilities=s.abilities now=s.now pools=s.pools %}"
)


def values(character: Character) -> dict:
    return sheet(*sheet_cache.sheets([character.pk])[character.pk])


def body(character: Character) -> str:
    return sheet_html.body(values(character))


def included(character: Character) -> str:
    """The phone's include of the sheet, in a context with more in it (as the page's)."""
    context = {"s": values(character), "oob": True, "csrf_token": "x", "row": "?", "now": "?"}
    return INCLUDE.render(Context(context))


def test_it_gives_what_the_include_renders(character) -> None:
    AbilityFactory(character=character, name="Dodge", rating=2)
    services.ledger_spend(character=character, kind=LedgerKind.WILLPOWER_SPENT, by=None)
    first = body(character)
    assert first == included(character)
    assert body(character) is first  # kept, not rendered again
    assert "Janet" in first and "Dodge" in first


def test_it_renders_once_while_nothing_changes(character, monkeypatch) -> None:
    body(character)
    rendered = []
    monkeypatch.setattr(sheet_html, "render", lambda s: rendered.append(s) or "again")
    body(character)
    assert rendered == []


def test_a_ledger_write_shows(character) -> None:  # the sheet version, in the row
    before = body(character)
    lose_a_trait(character)
    after = body(character)
    assert after != before and after == included(character)
    assert "1 lost" in after


def test_a_row_written_without_a_bump_shows(character) -> None:  # the row's other fields
    body(character)
    Character.objects.filter(pk=character.pk).update(affiliation="Camarilla")  # no bump
    assert "Camarilla" in body(character)


def test_a_new_game_night_shows(character, storyteller) -> None:  # the open night
    lose_a_trait(character)
    assert "1 lost" in body(character)
    services.game_night_open(chronicle=character.chronicle, by=storyteller)
    assert "lost" not in body(character)  # lost traits come back with the night


def test_the_chronicles_ruleset_shows(character) -> None:  # the default health track
    met = body(character)
    Chronicle.objects.filter(pk=character.chronicle_id).update(ruleset="wod_dice")
    wod = body(character)
    assert wod != met and wod == included(character)


def test_the_players_name_shows(character, player) -> None:  # the player's names
    assert "played by janet_player" in body(character)
    type(player).objects.filter(pk=player.pk).update(first_name="Jan", last_name="Et")
    assert "played by Jan Et" in body(character)
    type(player).objects.filter(pk=player.pk).update(first_name="", last_name="", username="j2")
    assert "played by j2" in body(character)


def test_each_character_keeps_its_own(character) -> None:
    other = CharacterFactory(chronicle=character.chronicle, name="Cody")
    mine, theirs = body(character), body(other)
    assert "Janet" in mine and "Cody" in theirs
    assert body(character) is mine and body(other) is theirs


def test_it_keeps_at_most_the_cache_size(character, settings) -> None:
    settings.SHEET_CACHE_SIZE = 1
    other = CharacterFactory(chronicle=character.chronicle, name="Cody")
    body(character)
    body(other)
    assert list(sheet_html._entries) == [other.pk]


def test_a_trait_edited_in_the_admin_shows_on_the_phone(scene, player, storyteller) -> None:
    from combat import fragments
    from tests.characters.test_sheet_cache import admin_sets_trait_count

    character = Character.objects.get(player=player)
    before = fragments.private_state(fragments.load(scene.pk), player)
    assert 'aria-label="3 of 3 left"' in before
    assert admin_sets_trait_count(storyteller, character, "Charismatic", 5).status_code == 302
    after = fragments.private_state(fragments.load(scene.pk), player)
    assert 'aria-label="5 of 5 left"' in after and after.count("5 of 5") == 1
