"""The sheets' own counter of a player's part (``selectors.sheet_seq``): the chronicle's
newest game night and the newest ledger entry of the characters, read in one query; the hubs
compare it with what ``live.audience_seqs`` reads for them, so both must say the same."""

from __future__ import annotations

import pytest
from django.db.models import Max

from characters.models import GameNight, LedgerEntry
from combat import live, selectors
from tests.factories import CharacterFactory, ChronicleFactory, GameNightFactory

pytestmark = pytest.mark.django_db


def _spend(character, night) -> LedgerEntry:
    return LedgerEntry.objects.create(
        game_night=night, character=character, kind="willpower_spent", amount=1
    )


def test_the_counter_is_the_newest_night_and_ledger_entry_in_one_query(
    scene, character, chronicle, django_assert_num_queries
):
    night = GameNight.objects.get(chronicle=chronicle)
    other = CharacterFactory(chronicle=chronicle, name="Other")
    with django_assert_num_queries(1):
        assert selectors.sheet_seq(scene, [character.pk]) == f"{night.pk}.0"
    mine = _spend(character, night)
    _spend(other, night)  # not a character of the part: it does not count
    elsewhere = GameNightFactory(chronicle=ChronicleFactory(), number=5)  # another chronicle's
    assert elsewhere.pk > night.pk
    with django_assert_num_queries(1):
        assert selectors.sheet_seq(scene, [character.pk]) == f"{night.pk}.{mine.pk}"
    later = _spend(other, night)
    assert selectors.sheet_seq(scene, [character.pk, other.pk]) == f"{night.pk}.{later.pk}"
    top = LedgerEntry.objects.filter(character=character).aggregate(top=Max("pk"))["top"]
    seqs = live.audience_seqs([scene.pk])[scene.pk]["sheets"]
    assert seqs[character.player_id] == f"{night.pk}.{top}"
    assert selectors.sheet_seq(scene, []) == "0.0"
