"""A cost checks what the character has now through the sheet cache (issue 21, cheap taps):
under the character's lock its ``sheet_version`` is the sheet's, so a sheet this process holds
at that version is not read again, and any write since is (``characters.sheet_cache``)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from characters import services, sheet_cache
from characters.models import LedgerKind
from characters.services import LedgerError
from tests.characters.test_sheet_cache import admin_sets_trait_count, social
from tests.factories import lose_a_trait

pytestmark = pytest.mark.django_db

SHEET_TABLES = ("characters_trait", "characters_ability", "characters_healthlevel")


def _sheet_rows_read(queries: list[dict]) -> list[str]:
    return [
        q["sql"]
        for q in queries
        if q["sql"].startswith("SELECT") and any(f'FROM "{t}"' in q["sql"] for t in SHEET_TABLES)
    ]


def test_a_cost_on_a_sheet_held_at_its_version_reads_none_of_its_rows(character) -> None:
    assert social(character) == {"Charismatic": 3}  # this process holds the sheet now
    with CaptureQueriesContext(connection) as seen:
        lose_a_trait(character)
    assert _sheet_rows_read(seen.captured_queries) == []
    assert social(character) == {"Charismatic": 2}


def test_a_cost_sees_a_write_made_since_the_sheet_was_held(character, storyteller) -> None:
    """The admin lowers the trait after the sheet was read: the second cost is refused, as a
    read of the rows would refuse it (the version moved)."""
    assert social(character) == {"Charismatic": 3}
    assert admin_sets_trait_count(storyteller, character, "Charismatic", 1).status_code == 302
    lose_a_trait(character)
    with pytest.raises(LedgerError):
        lose_a_trait(character)


def test_a_cost_sees_the_ledger_written_since(character) -> None:
    """Each cost counts the ones before it, whichever process wrote them (the cache dropped:
    every read is afresh)."""
    for _ in range(3):
        sheet_cache.clear()
        lose_a_trait(character)
    with pytest.raises(LedgerError):
        services.ledger_spend(
            character=character,
            kind=LedgerKind.TRAIT_LOST,
            by=None,
            subject="Charismatic",
            category="social",
        )
    assert social(character) == {"Charismatic": 0}
