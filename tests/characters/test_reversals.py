"""Reversals: current values never rise above the sheet, whatever is reversed when."""

from __future__ import annotations

import pytest

from characters import services
from characters.models import LedgerEntry, LedgerKind
from characters.selectors import current_values

pytestmark = pytest.mark.django_db


def test_it_refuses_to_reverse_willpower_spent_before_a_refresh(character, chronicle) -> None:
    spent = services.ledger_spend(character=character, kind="willpower_spent", amount=2, by=None)
    services.game_night_refresh(chronicle=chronicle, by=None)
    with pytest.raises(services.LedgerError, match="no longer counts"):
        services.ledger_reverse(entry=spent, by=None, reason="wrong target")
    assert current_values(character)["willpower"] == 3
    assert not LedgerEntry.objects.filter(reverses=spent).exists()


def test_it_refuses_to_reverse_a_trait_lost_on_a_closed_night(character, chronicle) -> None:
    lost = services.ledger_spend(
        character=character, kind="trait_lost", subject="Quick", category="physical", by=None
    )
    services.game_night_open(chronicle=chronicle, by=None, expected_number=1)
    with pytest.raises(services.LedgerError, match="no longer counts"):
        services.ledger_reverse(entry=lost, by=None, reason="misclick")
    assert current_values(character)["traits"]["physical"]["Quick"] == 2


def test_it_ignores_a_reversal_whose_entry_no_longer_counts(character, chronicle) -> None:
    """Rows written before the refusal existed: the reversal alone must not add willpower."""
    spent = services.ledger_spend(character=character, kind="willpower_spent", amount=2, by=None)
    services.game_night_refresh(chronicle=chronicle, by=None)
    LedgerEntry.objects.create(
        game_night=spent.game_night,
        character=character,
        kind=LedgerKind.WILLPOWER_SPENT,
        amount=-2,
        reverses=spent,
        reason="legacy",
    )
    now = current_values(character)
    assert now["willpower"] == 3
    with pytest.raises(services.LedgerError, match="only 3 current willpower"):
        services.ledger_spend(character=character, kind="willpower_spent", amount=4, by=None)
