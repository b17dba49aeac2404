"""The contract every chase step keeps (combat/steps.py), run four ways for each declared step:

1. a double tap (the same key twice) makes one change;
2. a tap made on a state that moved on (a stale token) is refused and changes nothing;
3. a refusal answers with its sentence and its rule ID;
4. what the step pushes equals a fresh render of the same audiences (zulip's ``verify_action``).

One row of ``ROWS`` per step declared in ``chases`` (the row format of
tests/combat/rounds/test_step_contract.py, until tests/contract.py holds it for every area).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from django.db.models import F

from chases import attacks, maneuvers, obstacles, running, starting
from chases.models import Chase
from chases.tokens import token_of
from combat import fragments, live, steps
from combat.models import Scene
from combat.steps import Refused, http_status

pytestmark = pytest.mark.django_db

ORIGIN = {"round_id": 0, "round": 1}


@dataclass(frozen=True)
class Contract:
    name: str
    fixture: str
    setup: Callable[[Any], dict]  # -> what the taps need (``ctx``)
    tap: Callable[[dict, str, str | None], Any]  # (ctx, key, token)
    token: Callable[[dict], str | None]  # the token a screen shows now
    refused: Callable[[dict], Any]  # a tap the rules refuse
    rule: str  # the rule it names ("": a refusal no rule of the book makes)
    state: Callable[[dict], tuple] = lambda ctx: _state(ctx)
    regions: tuple[str, ...] | None = None  # the board regions it pushes (None: all)


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


ROWS = [
    Contract(
        "chase.start",
        "chase_cast",
        _cast,
        lambda c, k, at: _start(c, k),
        lambda c: None,  # a new chase: no chase screen drew a token yet
        lambda c: _start(c, None, predators=[]),
        "K1",
    ),
    Contract(
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
    Contract(
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
    Contract(
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
    Contract(
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
    Contract(
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
    Contract(
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
    Contract(
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
    Contract(
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
    Contract(
        "chase.attack",
        "chase_cast",
        _rolling,
        lambda c, k, at: _attack(c, k, at),
        _now,
        lambda c: _attack(c, None, None, cover="behind"),
        "D6",
    ),
]


def test_every_declared_chase_step_has_a_row():
    declared = {action for action in steps.STEPS if action.startswith("chase.")}
    assert declared == {row.name for row in ROWS}


@pytest.fixture(params=ROWS, ids=[row.name for row in ROWS])
def step(request) -> tuple[Contract, dict]:
    spec = request.param
    return spec, spec.setup(request.getfixturevalue(spec.fixture))


def test_a_double_tap_makes_one_change(step):
    spec, ctx = step
    before = spec.state(ctx)
    spec.tap(ctx, "contract-tap-1", spec.token(ctx))
    once = spec.state(ctx)
    assert once != before
    spec.tap(ctx, "contract-tap-1", spec.token(ctx))
    assert spec.state(ctx) == once


def test_a_stale_token_is_refused_and_changes_nothing(step):
    spec, ctx = step
    stale = spec.token(ctx)
    if stale is None:
        pytest.skip(f"{spec.name} carries no token")
    Chase.objects.filter(pk=_chase().pk).update(step=F("step") + 1)  # another tap got in first
    before = spec.state(ctx)
    with pytest.raises(Refused) as refused:
        spec.tap(ctx, "contract-stale-1", stale)
    assert http_status(refused.value) == 409 and "moved on" in refused.value.sentence
    assert spec.state(ctx) == before


def test_a_refusal_answers_its_sentence_and_rule(step):
    spec, ctx = step
    before = spec.state(ctx)
    with pytest.raises(Refused) as refused:
        spec.refused(ctx)
    error = refused.value
    assert http_status(error) == 409 and error.sentence
    assert error.rule == spec.rule, str(error)
    assert not spec.rule or spec.rule in error.sentence, str(error)
    assert spec.state(ctx) == before


def test_the_pushed_fragments_equal_a_fresh_render(
    step, monkeypatch, django_capture_on_commit_callbacks
):
    spec, ctx = step
    sent: list[tuple[str, str]] = []
    monkeypatch.setattr(live, "_send", lambda group, html: sent.append((group, html)))
    with django_capture_on_commit_callbacks(execute=True):
        spec.tap(ctx, "contract-push-1", spec.token(ctx))
    scene = Scene.objects.get(pk=ctx["scene"].pk)
    pushed = dict(sent)
    regions = None if spec.regions is None else {*spec.regions, "clock", "log"}
    assert pushed[live.storytellers_group(scene.pk)] == fragments.board_regions(scene, regions)
    assert pushed[live.players_group(scene.pk)] == fragments.players_state(scene)
    for user in ctx["users"].values():
        group = live.player_group(scene.pk, user.pk)
        if group in pushed:
            assert pushed[group] == fragments.private_state(scene, user), user
