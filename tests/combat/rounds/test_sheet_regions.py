"""A sheet's change renders the board regions that show sheets in the scene now
(fragments.sheet_regions): the people and the challenges always, a fight's region only while a
fight runs, a chase's once the scene had one. Without them those regions show names at most,
and a sheet's change leaves them as they were."""

from __future__ import annotations

import pytest

from characters import services as sheets
from chases import starting as chases
from combat import fragments, live
from combat.models import Presence

pytestmark = pytest.mark.django_db

ALWAYS = ("people", "challenges")


def _hurt(cast, name: str = "Jane") -> None:
    sheets.ledger_damage(
        character=cast.p[name].character, by=cast.storyteller, damage_type="bashing",
        amount=1, empty_boxes=3,
    )  # fmt: skip


def _chase(cast) -> None:
    chases.start_chase(
        scene=cast.scene, by=cast.storyteller, predators=[cast.p["Teddy"]],
        prey=cast.p["Frank"], start="escape", head_start=3,
    )  # fmt: skip


def test_a_scene_with_nothing_running_shows_sheets_in_its_people_and_challenges(cast):
    assert fragments.sheet_regions(fragments.load(cast.scene.pk)) == ALWAYS


def test_without_a_fight_or_a_chase_their_regions_do_not_move_with_a_sheet(
    cast, django_capture_on_commit_callbacks
):
    quiet = ("combat", "chase")
    before = fragments.board_regions(fragments.load(cast.scene.pk), quiet)
    assert 'id="combat"' in before and 'id="chase"' in before and "Jane" in before
    with django_capture_on_commit_callbacks(execute=True):
        _hurt(cast)
        sheets.ledger_spend(
            character=cast.p["Frank"].character, kind="willpower_spent", amount=2,
            by=cast.storyteller,
        )  # fmt: skip
    assert fragments.board_regions(fragments.load(cast.scene.pk), quiet) == before


def test_a_running_fight_shows_sheets_in_its_region(fight):
    assert fragments.sheet_regions(fragments.load(fight.pk)) == (*ALWAYS, "combat")


def test_a_chase_shows_sheets_in_its_region_while_it_runs_and_after(cast):
    _chase(cast)
    assert fragments.sheet_regions(fragments.load(cast.scene.pk)) == (*ALWAYS, "chase")


def test_a_sheet_push_renders_a_running_fights_region_as_it_is_now(
    fight, cast, monkeypatch, django_capture_on_commit_callbacks
):
    Presence.objects.create(scene=fight, user=cast.storyteller, channel_name="tablet.1")
    sent: list[tuple[str, str]] = []
    monkeypatch.setattr(live, "_send", lambda group, html: sent.append((group, html)))
    with django_capture_on_commit_callbacks(execute=True):
        _hurt(cast)
    (board,) = [html for group, html in sent if group == live.storytellers_group(fight.pk)]
    scene = fragments.load(fight.pk)
    assert board == fragments.board_regions(scene, (*ALWAYS, "combat"))
    assert 'id="combat"' in board and 'id="chase"' not in board
