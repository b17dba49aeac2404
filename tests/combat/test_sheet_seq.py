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


def test_the_hubs_seqs_are_two_prepared_reads_as_the_orm_reads_them(
    scene, character, chronicle, monkeypatch, django_assert_num_queries
):
    """``live.audience_seqs`` (every hub's round) reads by texts built once, prepared on
    PostgreSQL, and gives what the ORM's queries give (more scenes than a plan takes)."""
    from django.db import connection

    from config import prepared

    _spend(character, GameNight.objects.get(chronicle=chronicle))
    with django_assert_num_queries(2):
        seqs = live.audience_seqs([scene.pk])
    assert seqs[scene.pk]["sheets"][character.player_id].endswith(
        f".{LedgerEntry.objects.get().pk}"
    )
    monkeypatch.setattr(prepared, "MAX_ITEMS", 0)
    assert live.audience_seqs([scene.pk]) == seqs
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements")
            texts = [s for (s,) in cursor.fetchall()]
        assert [s for s in texts if 'MAX("combat_participant"."own_seq")' in s]
        assert [s for s in texts if 'FROM "combat_scene"' in s and 'AS "night"' in s]
