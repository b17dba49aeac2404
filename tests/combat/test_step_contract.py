"""The step contract (tests/contract.py) for the scene's own steps: one row each."""

from __future__ import annotations

from typing import Any

import pytest

from combat import services
from combat.models import Scene
from combat.selectors import scene_token
from tests import contract
from tests.contract import Contract
from tests.factories import CharacterFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene_cast(chronicle, storyteller, player, character) -> dict[str, Any]:
    """An open scene of the storyteller's with the player's character in it."""
    scene = services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")
    services.scene_join(code=scene.join_code, user=player, character=character)
    return {
        "scene": scene,
        "chronicle": chronicle,
        "st": storyteller,
        "users": {"st": storyteller, "player": player},
    }


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


def _token(ctx: dict) -> str:
    return scene_token(_scene(ctx))


def _clock(ctx: dict, key: str | None, seen: str | None, seconds: int = 60) -> Any:
    return services.scene_advance_clock(
        scene=_scene(ctx), by=ctx["st"], seconds=seconds, seen=seen, idempotency_key=key
    )


def _situation(ctx: dict, key: str | None, seen: str | None) -> Any:
    return services.scene_set_situation(
        scene=_scene(ctx), by=ctx["st"], situation="Fog.", key=key, seen=seen
    )


def _ruleset(ctx: dict, key: str | None, seen: str | None) -> Any:
    return services.scene_set_ruleset(
        scene=_scene(ctx), by=ctx["st"], ruleset="met_bns", key=key, seen=seen
    )


def _npc(ctx: dict, key: str | None, seen: str | None) -> Any:
    return services.scene_add_npc(
        scene=_scene(ctx), by=ctx["st"], name="Ghoul", pools={"Physical": 6}, key=key, seen=seen
    )


def _remove(ctx: dict, key: str | None, seen: str | None) -> Any:
    joined = _scene(ctx).participants.get(character__player=ctx["users"]["player"])
    return services.scene_remove(
        scene=_scene(ctx), by=ctx["st"], participant=joined, key=key, seen=seen
    )


def _close(ctx: dict, key: str | None, seen: str | None) -> Any:
    return services.scene_close(scene=_scene(ctx), by=ctx["st"], key=key, seen=seen)


def _player(ctx: dict) -> dict:
    """The same tap from the player's phone: only a storyteller of the chronicle may."""
    return {**ctx, "st": ctx["users"]["player"]}


def _open(ctx: dict, key: str | None, _seen: str | None, by: str = "st") -> Any:
    return services.scene_open(
        chronicle=ctx["chronicle"], by=ctx["users"][by], name="Docks", key=key
    )


def _opened(ctx: dict) -> tuple:
    return (*_scene_state(ctx), Scene.objects.count())


def _opening(cast: dict) -> dict:
    """A second scene opens; its pushes are checked on the scene it opened."""
    return {**cast, "scene": _Newest()}


class _Newest:
    """The newest scene, looked up when the contract asks for its ``pk``."""

    @property
    def pk(self) -> int:
        return Scene.objects.latest("pk").pk


def _with_sheet(cast: dict) -> dict:
    """Janet's cousin, another of the player's characters, not yet in the scene."""
    cousin = CharacterFactory(
        chronicle=cast["chronicle"], player=cast["users"]["player"], name="Cousin"
    )
    return {**cast, "cousin": cousin}


def _join(ctx: dict, key: str | None, _seen: str | None, who: str = "player") -> Any:
    return services.scene_join(
        code=_scene(ctx).join_code, user=ctx["users"][who], character=ctx["cousin"], key=key
    )


_SCENE = {"state": _scene_state, "move_on": _scene_moves_on}


ROWS = [
    Contract(
        "scene.clock", "scene_cast", lambda cast: cast, _clock, _token,
        lambda c: _clock(_player(c), None, None), "", regions=(), **_SCENE,
    ),
    Contract(
        "scene.situation", "scene_cast", lambda cast: cast, _situation, _token,
        lambda c: _situation(_player(c), None, None), "", regions=(), logged=False, **_SCENE,
    ),
    Contract(
        "scene.ruleset", "scene_cast", lambda cast: cast, _ruleset, _token,
        lambda c: _ruleset(_player(c), None, None), "", **_SCENE,
    ),
    Contract(
        "scene.npc", "scene_cast", lambda cast: cast, _npc, _token,
        lambda c: _npc(_player(c), None, None), "",
        regions=services.PARTICIPANT_REGIONS, **_SCENE,
    ),
    Contract(
        "scene.remove", "scene_cast", lambda cast: cast, _remove, lambda c: None,
        lambda c: _remove(_player(c), None, None), "",
        regions=services.PARTICIPANT_REGIONS, **_SCENE,
    ),
    Contract(
        "scene.close", "scene_cast", lambda cast: cast, _close, _token,
        lambda c: _close(_player(c), None, None), "", **_SCENE,
    ),
    Contract(
        "scene.join", "scene_cast", _with_sheet, _join, lambda c: None,
        lambda c: _join(c, None, None, who="st"), "",
        regions=services.PARTICIPANT_REGIONS, **_SCENE,
    ),
    Contract(
        "scene.open", "scene_cast", _opening, _open, lambda c: None,
        lambda c: _open(c, None, None, by="player"), "", _opened,
    ),
]  # fmt: skip


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
