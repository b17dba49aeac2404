"""W7: once per game night per category, one willpower regains the traits lost in it so far."""

from __future__ import annotations

import pytest

from characters import services
from characters.models import LedgerEntry
from characters.selectors import current_values

pytestmark = [pytest.mark.django_db, pytest.mark.rules("W7")]


def _lose(character, name: str, category: str = "physical") -> LedgerEntry:
    return services.ledger_spend(
        character=character, kind="trait_lost", subject=name, category=category, by=None
    )


def test_it_spends_one_willpower_and_restores_the_losses_so_far(character) -> None:
    _lose(character, "Quick")
    _lose(character, "Quick")
    _lose(character, "Charismatic", "social")
    services.ledger_regain(character=character, category="physical", by=None)
    now = current_values(character)
    assert now["traits"]["physical"]["Quick"] == 2
    assert now["traits"]["social"]["Charismatic"] == 2, "another category is untouched"
    assert now["willpower"] == 2


def test_it_counts_losses_after_the_regain(character) -> None:
    _lose(character, "Quick")
    services.ledger_regain(character=character, category="physical", by=None)
    _lose(character, "Quick")
    assert current_values(character)["traits"]["physical"]["Quick"] == 1


def test_it_refuses_a_second_regain_in_a_category_the_same_night(character, chronicle) -> None:
    _lose(character, "Quick")
    services.ledger_regain(character=character, category="physical", by=None)
    _lose(character, "Quick")
    with pytest.raises(services.LedgerError, match="W7") as refused:
        services.ledger_regain(character=character, category="physical", by=None)
    assert refused.value.rule_id == "W7"
    assert "once per game night" in str(refused.value)
    now = current_values(character)
    assert (now["traits"]["physical"]["Quick"], now["willpower"]) == (1, 2)
    _lose(character, "Charismatic", "social")
    services.ledger_regain(character=character, category="social", by=None)
    services.game_night_open(chronicle=chronicle, by=None, expected_number=1)
    _lose(character, "Quick")
    services.ledger_regain(character=character, category="physical", by=None)
    assert current_values(character)["traits"]["physical"]["Quick"] == 2


def test_it_refuses_a_regain_without_willpower(character) -> None:
    _lose(character, "Quick")
    services.ledger_spend(character=character, kind="willpower_spent", amount=3, by=None)
    with pytest.raises(services.LedgerError, match=r"W7.*willpower"):
        services.ledger_regain(character=character, category="physical", by=None)
    assert current_values(character)["traits"]["physical"]["Quick"] == 1


def test_it_refuses_a_regain_with_nothing_lost(character) -> None:
    with pytest.raises(services.LedgerError, match=r"W7.*nothing"):
        services.ledger_regain(character=character, category="mental", by=None)
    assert current_values(character)["willpower"] == 3
    assert not LedgerEntry.objects.exists()


def test_it_refuses_a_category_the_rule_does_not_know(character) -> None:
    with pytest.raises(services.LedgerError, match="physical, social or mental"):
        services.ledger_regain(character=character, category="willpower", by=None)


def test_it_reverses_a_regain_with_its_willpower(character) -> None:
    _lose(character, "Quick")
    regain = services.ledger_regain(character=character, category="physical", by=None)
    with pytest.raises(services.LedgerError, match="reverse the regain"):
        services.ledger_reverse(entry=regain.paid_by, by=None, reason="misclick")
    services.ledger_reverse(entry=regain, by=None, reason="misclick")
    now = current_values(character)
    assert (now["traits"]["physical"]["Quick"], now["willpower"]) == (1, 3)
    services.ledger_regain(character=character, category="physical", by=None)
    assert current_values(character)["traits"]["physical"]["Quick"] == 2


def test_it_refuses_a_regain_recorded_as_a_plain_cost(character) -> None:
    _lose(character, "Quick")
    with pytest.raises(services.LedgerError, match="not a cost"):
        services.ledger_spend(
            character=character, kind="trait_regained", category="physical", by=None
        )
    assert current_values(character)["traits"]["physical"]["Quick"] == 1
