"""Damage fills the health track box by box, never past its end, and the sheet shows it."""

from __future__ import annotations

import pytest

from characters import services
from characters.models import HEALTH_TRACKS, HealthLevel
from characters.selectors import current_values
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def track(character):
    """Janet with the wod_dice track of D2: seven levels of one box each."""
    for order, (name, boxes, penalty) in enumerate(HEALTH_TRACKS["wod_dice"]):
        HealthLevel.objects.create(
            character=character, name=name, boxes=boxes, penalty=penalty, order=order
        )
    return character


def _hurt(character, amount: int, kind: str = "") -> None:
    services.ledger_spend(
        character=character, kind="health_damage", category=kind, amount=amount, by=None
    )


def test_it_refuses_damage_past_the_end_of_the_track(track) -> None:
    _hurt(track, 5)
    with pytest.raises(services.LedgerError, match="only 2 empty health boxes"):
        _hurt(track, 3)
    _hurt(track, 2)
    assert current_values(track)["damage"] == 7
    with pytest.raises(services.LedgerError, match="no empty health box"):
        _hurt(track, 1)


def test_it_refuses_a_damage_type_it_does_not_know(track) -> None:
    with pytest.raises(services.LedgerError, match="bashing, lethal or aggravated"):
        _hurt(track, 1, "fire")
    assert current_values(track)["damage"] == 0


def test_it_fills_the_worst_damage_first_and_names_the_wound_penalty(track) -> None:
    _hurt(track, 1, "bashing")
    _hurt(track, 2, "lethal")
    _hurt(track, 1, "aggravated")
    health = current_values(track)["health"]
    boxes = [box for level in health["levels"] for box in level["boxes"]]
    assert boxes == ["aggravated", "lethal", "lethal", "bashing", None, None, None]
    assert (health["level"], health["penalty"]) == ("Wounded", -2)


def test_it_uses_the_rulesets_track_when_the_sheet_has_none(character) -> None:
    _hurt(character, 4)
    with pytest.raises(services.LedgerError, match="no empty health box"):
        _hurt(character, 1)
    assert [lvl["name"] for lvl in current_values(character)["health"]["levels"]] == [
        "Healthy",
        "Bruised",
        "Wounded",
        "Incapacitated",
    ]


@pytest.mark.parametrize("page", ["", "print/"])
def test_it_draws_health_boxes_by_type_on_the_sheet(track, player, page) -> None:
    _hurt(track, 1, "lethal")
    _hurt(track, 1, "bashing")
    html = client_for(player).get(f"/characters/{track.pk}/{page}").content.decode()
    assert html.count('class="box lethal"') == 1
    assert html.count('class="box bashing"') == 1
    assert html.count('class="box empty"') == 5
    assert "Wound penalty -1 (Hurt)" in html


def test_a_hit_takes_what_fits_on_the_track_the_fight_counted(track) -> None:
    """ledger_damage (the fights' and chases' hits): as much as the empty boxes the caller
    counted take, and nothing at all on a full track."""
    entry = services.ledger_damage(
        character=track, by=None, damage_type="lethal", amount=9, empty_boxes=3, source="test"
    )
    assert (entry.kind, entry.category, entry.amount, entry.source) == (
        "health_damage",
        "lethal",
        3,
        "test",
    )
    assert (
        services.ledger_damage(
            character=track, by=None, damage_type="lethal", amount=2, empty_boxes=0
        )
        is None
    )
    assert current_values(track)["damage"] == 3


@pytest.mark.rules("C5", "C6", "C7")
def test_a_met_track_names_the_level_whose_boxes_are_left_as_the_challenges_do(character) -> None:
    """Grapevine's MET track: Healthy ×2, Bruised ×3, Wounded ×2, Incapacitated, Torpor."""
    from combat.challenges import sheets
    from combat.rules.terms import Health

    for order, (name, boxes) in enumerate(
        [("Healthy", 2), ("Bruised", 3), ("Wounded", 2), ("Incapacitated", 1), ("Torpor", 1)]
    ):
        HealthLevel.objects.create(character=character, name=name, boxes=boxes, order=order)
    seen = []
    for _ in range(9):
        _hurt(character, 1)
        sheet = sheets.Sheet(participant=None, character=character, now=current_values(character))
        seen.append((current_values(character)["health"]["level"], sheet.health()))
    assert [level for level, _ in seen] == [
        "Healthy",
        "Bruised",
        "Bruised",
        "Bruised",
        "Wounded",
        "Wounded",
        "Incapacitated",
        "Torpor",
        "Torpor",
    ]
    bruised, wounded = [Health.BRUISED] * 3, [Health.WOUNDED] * 2
    # C6 (clarified 2026-11-26), C7: Torpor is Wounded or worse and down, like Incapacitated
    down = [Health.INCAPACITATED, Health.TORPOR, Health.TORPOR]
    assert [health for _, health in seen] == [Health.HEALTHY, *bruised, *wounded, *down]
    assert all(h.wounded and h.down for h in down)
