"""The step contract (tests/contract.py) for the chase's declared steps: one row each.

A row moves on as another tap would: the chase's step goes up.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from django.db.models import F

from chases import attacks, maneuvers, obstacles, running, starting
from chases.models import Chase
from chases.tokens import token_of
from combat.models import Scene
from tests import contract
from tests.contract import Contract

pytestmark = pytest.mark.django_db

ORIGIN = {"round_id": 0, "round": 1}


@pytest.fixture
def chase_cast(scene, storyteller, player, other_player, janet, cody, hound) -> SimpleNamespace:
    """Janet (the Prey, ``player``'s), Cody (``other_player``'s) and the Hound (an NPC)."""
    return SimpleNamespace(
        scene=scene,
        storyteller=storyteller,
        janet=janet,
        cody=cody,
        hound=hound,
        users={"st": storyteller, "janet": player, "cody": other_player},
    )


def key(participant) -> str:
    return f"p{participant.pk}"


def _state(ctx: dict) -> tuple:
    scene = Scene.objects.get(pk=ctx["scene"].pk)
    chases = Chase.objects.filter(scene=scene).order_by("pk")
    rows = [(c.pk, c.step, c.phase, c.state, c.pending, c.outcome, c.npc_damage) for c in chases]
    return scene.seq, scene.players_seq, scene.game_time, rows


def _chase() -> Chase:
    return Chase.objects.get(ended_at__isnull=True)


def _now(ctx: dict) -> str:
    return token_of(Chase.objects.filter(scene=ctx["scene"]).latest("pk"))


def _cast(cast) -> dict:
    return {"cast": cast, "scene": cast.scene, "users": cast.users, "st": cast.storyteller}


def _rolling(cast, head_start: int = 3) -> dict:
    """A chase from an escape: Janet flees the Hound, Lead 3, the round to roll (K4)."""
    starting.start_chase(
        scene=cast.scene,
        by=cast.storyteller,
        predators=[cast.hound],
        prey=cast.janet,
        start="escape",
        head_start=head_start,
        origin=ORIGIN,
    )
    return _cast(cast)


def _janet_won(cast) -> dict:
    """Janet won the round against the Hound: her maneuver waits (K6)."""
    ctx = _rolling(cast, head_start=5)
    running.chase_round(
        chase=_chase(),
        by=cast.storyteller,
        dice={"prey": [9, 9, 2, 2, 2], key(cast.hound): [2] * 7},
    )
    return ctx


def _obstacle(cast) -> dict:
    """An obstacle set for Janet and the Hound (K9)."""
    ctx = _rolling(cast)
    obstacles.chase_obstacle_set(
        chase=_chase(),
        by=cast.storyteller,
        label="A fence",
        difficulty=6,
        pool=("dexterity", "athletics"),
        facing=["prey", key(cast.hound)],
    )
    return ctx


def _start(ctx: dict, k: str | None, predators: list | None = None) -> Any:
    c = ctx["cast"]
    return starting.start_chase(
        scene=c.scene,
        by=c.storyteller,
        predators=[c.hound] if predators is None else predators,
        prey=c.janet,
        start="escape",
        head_start=3,
        key=k,
    )


def _join(ctx: dict, k: str | None) -> Any:
    c = ctx["cast"]
    return starting.join_escape_chase(
        scene=c.scene,
        by=c.storyteller,
        predator=c.cody,
        prey=c.janet,
        head_start=2,
        origin=ORIGIN,
        key=k,
    )


def _attack(ctx: dict, k: str | None, token: str | None, cover: str = "near") -> Any:
    c = ctx["cast"]
    return attacks.chase_attack(
        chase=_chase(),
        by=c.storyteller,
        attacker=key(c.hound),
        target="prey",
        means="weapon",
        pool=3,
        damage=2,
        cover=cover,
        token=token,
        key=k,
    )


def _move_on(ctx: dict) -> None:
    """Another tap got in first."""
    Chase.objects.filter(pk=_chase().pk).update(step=F("step") + 1)


def _row(*args: Any, **kw: Any) -> Contract:
    return Contract(*args, **{"state": _state, "move_on": _move_on, **kw})


ROWS = [
    _row(
        "chase.start",
        "chase_cast",
        _cast,
        lambda c, k, at: _start(c, k),
        lambda c: None,  # a new chase: no chase screen drew a token yet
        lambda c: _start(c, None, predators=[]),
        "K1",
    ),
    _row(
        "chase.join",
        "chase_cast",
        _rolling,
        lambda c, k, at: _join(c, k),
        lambda c: None,  # part of an escape's resolution (D13): the round's token, not the chase's
        lambda c: starting.join_escape_chase(
            scene=c["scene"],
            by=c["st"],
            predator=c["cast"].hound,
            prey=c["cast"].janet,
            head_start=2,
            origin=ORIGIN,
        ),
        "K1",
    ),
    _row(
        "chase.round",
        "chase_cast",
        _rolling,
        lambda c, k, at: running.chase_round(
            chase=_chase(),
            by=c["st"],
            dice={"prey": [2] * 5, key(c["cast"].hound): [2] * 7},
            token=at,
            key=k,
        ),
        _now,
        lambda c: running.chase_round(chase=_chase(), by=c["st"], dice={"prey": [9, 9]}),
        "D1",
    ),
    _row(
        "chase.course",
        "chase_cast",
        _rolling,
        lambda c, k, at: running.chase_set_course(
            chase=_chase(), by=c["st"], difficulty=8, token=at, key=k
        ),
        _now,
        lambda c: running.chase_set_course(chase=_chase(), by=c["st"], difficulty=11),
        "K6",
    ),
    _row(
        "chase.call_off",
        "chase_cast",
        _rolling,
        lambda c, k, at: running.chase_call_off(
            chase=Chase.objects.get(), by=c["st"], token=at, key=k
        ),
        _now,
        lambda c: running.chase_call_off(chase=_chase(), by=c["users"]["janet"]),
        "",  # only the storyteller calls a chase off: no rule of the book
    ),
    _row(
        "chase.maneuver",
        "chase_cast",
        _janet_won,
        lambda c, k, at: maneuvers.chase_maneuver(
            chase=_chase(),
            by=c["users"]["janet"],
            pursuit=key(c["cast"].hound),
            role="prey",
            maneuver="bait",
            token=at,
            key=k,
        ),
        _now,
        lambda c: maneuvers.chase_maneuver(
            chase=_chase(),
            by=c["users"]["janet"],
            pursuit=key(c["cast"].hound),
            role="prey",
            maneuver="in_there",
        ),
        "K7",
    ),
    _row(
        "chase.obstacle_set",
        "chase_cast",
        _rolling,
        lambda c, k, at: obstacles.chase_obstacle_set(
            chase=_chase(),
            by=c["st"],
            label="A wall",
            difficulty=7,
            pool=("strength", "athletics"),
            facing=["prey"],
            token=at,
            key=k,
        ),
        _now,
        lambda c: obstacles.chase_obstacle_set(
            chase=_chase(), by=c["st"], label="A wall", difficulty=7, pool=("wits", "drive")
        ),
        "K9",
    ),
    _row(
        "chase.obstacle_choice",
        "chase_cast",
        _obstacle,
        lambda c, k, at: obstacles.chase_obstacle_choice(
            chase=_chase(), by=c["st"], who=key(c["cast"].hound), token=at, key=k
        ),
        _now,
        # Nope! would bring Janet's Lead of 3 to 0 (K8)
        lambda c: obstacles.chase_obstacle_choice(
            chase=_chase(), by=c["users"]["janet"], who="prey"
        ),
        "K8",
    ),
    _row(
        "chase.obstacle_roll",
        "chase_cast",
        _obstacle,
        lambda c, k, at: obstacles.chase_obstacle_roll(
            chase=_chase(),
            by=c["st"],
            dice={"prey": [9] * 5, key(c["cast"].hound): [9] * 7},
            token=at,
            key=k,
        ),
        _now,
        lambda c: obstacles.chase_obstacle_roll(chase=_chase(), by=c["st"], dice={"prey": [9]}),
        "D1",
    ),
    _row(
        "chase.attack",
        "chase_cast",
        _rolling,
        lambda c, k, at: _attack(c, k, at),
        _now,
        lambda c: _attack(c, None, None, cover="behind"),
        "D6",
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
