"""The step contract (tests/contract.py) for the scene's own steps: one row each."""

from __future__ import annotations

from typing import Any

import pytest

from combat import services
from combat.models import Scene
from tests import contract
from tests.contract import Contract

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene_cast(chronicle, storyteller, player, character) -> dict[str, Any]:
    """An open scene of the storyteller's with the player's character in it."""
    scene = services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")
    services.scene_join(code=scene.join_code, user=player, character=character)
    return {"scene": scene, "st": storyteller, "users": {"st": storyteller, "player": player}}


def _scene(ctx: dict) -> Scene:
    return Scene.objects.get(pk=ctx["scene"].pk)


def _scene_state(ctx: dict) -> tuple:
    scene = _scene(ctx)
    return (
        scene.seq,
        scene.players_seq,
        scene.game_time,
        scene.situation,
        scene.ruleset,
        scene.closed_at,
        scene.log.count(),
        scene.participants.filter(removed_at__isnull=True).count(),
    )


def _scene_moves_on(ctx: dict) -> None:
    services.scene_set_situation(scene=_scene(ctx), by=ctx["st"], situation="Rain.")


def _clock(ctx: dict, key: str | None, seen: str | None, seconds: int = 60) -> Any:
    return services.scene_advance_clock(
        scene=_scene(ctx),
        by=ctx["st"],
        seconds=seconds,
        expected_seq=None if seen is None else int(seen),
        idempotency_key=key,
    )


ROWS = [
    Contract(
        "scene.clock",
        "scene_cast",
        lambda cast: cast,
        _clock,
        lambda c: str(_scene(c).seq),
        lambda c: _clock({**c, "st": c["users"]["player"]}, None, None),
        "",
        _scene_state,
        regions=(),
        move_on=_scene_moves_on,
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
