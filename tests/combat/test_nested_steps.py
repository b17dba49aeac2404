"""A step nested in another step (a challenge's loss written through the ledger's step):
with a savepoint of its own where its caller survives a refusal, without one where the
refusal ends the outer step too (combat.steps.refusal_ends_step)."""

from __future__ import annotations

import contextlib

import pytest
from django.db import connection, transaction
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext

from characters.models import Character, LedgerKind
from characters.services import LedgerError, ledger_spend
from combat import steps

pytestmark = pytest.mark.django_db(transaction=True)


def _lose(character: Character, by, trait: str) -> None:
    ledger_spend(
        character=character, kind=LedgerKind.TRAIT_LOST, subject=trait, category="physical",
        by=by,
    )  # fmt: skip


def _notes(character: Character) -> str:
    return Character.objects.get(pk=character.pk).notes


def test_a_refusal_that_ends_the_step_takes_no_savepoint_and_commits_nothing(
    character, storyteller
):
    seen = CaptureQueriesContext(connection)
    with pytest.raises(LedgerError), transaction.atomic():
        Character.objects.filter(pk=character.pk).update(notes="written before")
        with steps.refusal_ends_step(), seen:
            _lose(character, storyteller, "Quick")  # spent: no savepoint taken
            _lose(character, storyteller, "Nimble")  # not on the sheet: refused
    assert not [q for q in seen.captured_queries if "SAVEPOINT" in q["sql"]]
    assert _notes(character) != "written before"  # the whole transaction rolled back
    assert not character.ledger.exists()


def test_no_query_runs_after_such_a_refusal_is_caught(character, storyteller):
    with transaction.atomic():
        try:
            with steps.refusal_ends_step():
                _lose(character, storyteller, "Nimble")
        except LedgerError:
            pass
        with pytest.raises(TransactionManagementError):  # nothing of it can commit
            Character.objects.filter(pk=character.pk).update(notes="written after")
    assert _notes(character) != "written after"


def test_a_caller_that_survives_a_refusal_keeps_its_savepoint(character, storyteller):
    with transaction.atomic():
        with contextlib.suppress(LedgerError):
            _lose(character, storyteller, "Nimble")
        Character.objects.filter(pk=character.pk).update(notes="written after")
    assert _notes(character) == "written after"
