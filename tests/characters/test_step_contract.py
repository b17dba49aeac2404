"""The step contract (tests/contract.py) for the ledger's steps: one row each."""

from __future__ import annotations

from typing import Any

import pytest

from characters import services
from characters.models import Character, LedgerEntry
from characters.selectors import current_values
from combat import fragments
from combat import services as scenes
from tests import contract
from tests.contract import Contract

pytestmark = pytest.mark.django_db


@pytest.fixture
def sheet_cast(chronicle, storyteller, player, character) -> dict[str, Any]:
    """Janet (the player's) in an open scene, so her sheet's changes reach a board and a phone."""
    scene = scenes.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")
    scenes.scene_join(code=scene.join_code, user=player, character=character)
    return {
        "scene": scene,
        "st": storyteller,
        "character": character,
        "users": {"st": storyteller, "player": player},
    }


def _janet(ctx: dict) -> Character:
    return Character.objects.get(pk=ctx["character"].pk)


def _sheet_state(ctx: dict) -> tuple:
    now = current_values(_janet(ctx))
    entries = LedgerEntry.objects.filter(character=ctx["character"])
    return entries.count(), now["willpower"], now["damage"], str(now["traits"])


def _spend(ctx: dict, key: str | None, _seen: str | None, amount: int = 1) -> Any:
    return services.ledger_spend(
        character=_janet(ctx), kind="willpower_spent", amount=amount, by=ctx["st"],
        idempotency_key=key,
    )  # fmt: skip


def _damage(ctx: dict, key: str | None, _seen: str | None, kind: str = "bashing") -> Any:
    return services.ledger_damage(
        character=_janet(ctx), by=ctx["st"], damage_type=kind, amount=1, empty_boxes=3,
        idempotency_key=key,
    )  # fmt: skip


def _lost(cast: dict) -> dict:
    services.ledger_spend(
        character=cast["character"], kind="trait_lost", subject="Quick", category="physical",
        by=None,
    )  # fmt: skip
    return cast


def _regain(ctx: dict, key: str | None, _seen: str | None, category: str = "physical") -> Any:
    return services.ledger_regain(
        character=_janet(ctx), category=category, by=ctx["st"], idempotency_key=key
    )


def _reversible(cast: dict) -> dict:
    """A willpower spent (to reverse), and one that paid for a regain (not to be, W7)."""
    _lost(cast)
    regain = services.ledger_regain(character=cast["character"], category="physical", by=None)
    spent = services.ledger_spend(
        character=cast["character"], kind="willpower_spent", amount=1, by=None
    )
    return {**cast, "entry": spent, "paid": regain.paid_by}


def _reverse(ctx: dict, key: str | None, _seen: str | None, entry: str = "entry") -> Any:
    return services.ledger_reverse(
        entry=ctx[entry], by=ctx["st"], reason="Recorded by mistake", idempotency_key=key
    )


ROWS = [
    Contract(
        "ledger.spend",
        "sheet_cast",
        lambda cast: cast,
        _spend,
        lambda c: None,  # a cost carries no token: what the sheet has now pays or refuses
        lambda c: _spend(c, None, None, amount=99),
        "",
        _sheet_state,
        regions=fragments.SHEET_REGIONS,
        sheet=True,
    ),
    Contract(
        "ledger.damage",
        "sheet_cast",
        lambda cast: cast,
        _damage,
        lambda c: None,
        lambda c: _damage(c, None, None, kind="fire"),
        "",
        _sheet_state,
        regions=fragments.SHEET_REGIONS,
        sheet=True,
    ),
    Contract(
        "ledger.regain",
        "sheet_cast",
        _lost,
        _regain,
        lambda c: None,
        lambda c: _regain(c, None, None, category="social"),
        "W7",
        _sheet_state,
        regions=fragments.SHEET_REGIONS,
        sheet=True,
    ),
    Contract(
        "ledger.reverse",
        "sheet_cast",
        _reversible,
        _reverse,
        lambda c: None,
        lambda c: _reverse(c, None, None, entry="paid"),
        "W7",
        _sheet_state,
        regions=fragments.SHEET_REGIONS,
        sheet=True,
    ),
]


@pytest.fixture(params=ROWS, ids=contract.ids(ROWS))
def row(request) -> tuple[Contract, dict]:
    return contract.prepare(request)


def test_a_double_tap_makes_one_change(row):
    contract.double_tap(row)


def test_a_stale_token_is_refused_and_changes_nothing(row):
    contract.stale_token(row)


def test_a_refusal_answers_its_sentence_and_rule(row):
    contract.refusal(row)


def test_the_pushed_fragments_equal_a_fresh_render(
    row, monkeypatch, django_capture_on_commit_callbacks
):
    contract.pushes(row, monkeypatch, django_capture_on_commit_callbacks)
