"""The contract of combat/steps.py for the challenge's declared steps, four ways each (as
tests/combat/rounds/test_step_contract.py runs the rounds'): a double tap makes one change; a
stale token is refused and changes nothing; a refusal answers its sentence and rule; the
pushed fragments equal a fresh render of the same audiences.

Rows are in that file's format (``name, fixture, setup, tap, token, refused, rule, state,
regions``), one per declared action; a tap is ``(ctx, key, token)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.db.models import F

from combat import fragments, live
from combat import services as scenes
from combat.challenges import (
    answering,
    mob,
    negatives,
    reads,
    retests,
    spending,
    starting,
    storyteller,
    throwing,
)
from combat.models import Challenge, Scene
from combat.steps import Refused, http_status
from tests.combat.challenges.conftest import Table, make_table
from tests.factories import CharacterFactory, TraitFactory, UserFactory

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Row:
    name: str
    fixture: str
    setup: Callable[[Any], dict]
    tap: Callable[[dict, str, str | None], Any]
    token: Callable[[dict], str | None]
    refused: Callable[[dict], Any]
    rule: str
    state: Callable[[dict], tuple] = lambda ctx: _state(ctx)
    regions: tuple[str, ...] | None = reads.CHALLENGE_REGIONS


def _state(ctx: dict) -> tuple:
    scene = Scene.objects.get(pk=ctx["t"].scene.pk)
    rows = Challenge.objects.filter(scene=scene).order_by("pk")
    return scene.seq, scene.players_seq, [(c.step, c.state, c.sealed, c.history) for c in rows]


def _ctx(t: Table, ch: Challenge | None = None) -> dict:
    return {"t": t, "scene": t.scene, "users": {"a": t.a_user, "d": t.d_user}, "ch": ch}


def _waiting(db) -> dict:
    """A met_classic challenge waiting for the defender's answer (C1)."""
    t = make_table("met_classic")
    return _ctx(t, t.start(category="physical", bid="Strong"))


def _live(db) -> dict:
    """Both sides have bid: a throw is called for (C3)."""
    ctx = _waiting(db)
    t = ctx["t"]
    ctx["ch"] = t.do("answer", ctx["ch"], t.d_user, side="defender", answer="bid", bid="Tough")
    return ctx


def _lost(db) -> dict:
    """The attacker leads after a throw: the defender may retest or take the result (C8)."""
    ctx = _live(db)
    ctx["ch"] = ctx["t"].throw(ctx["ch"], "rock", "scissors")
    return ctx


def _draw(db) -> dict:
    """A draw: both sides declare their totals (C4)."""
    ctx = _live(db)
    ctx["ch"] = ctx["t"].throw(ctx["ch"], "rock", "rock")
    return ctx


def _mob(db) -> dict:
    """A mob forming (C16): a third player's Brute, one physical trait, has still to bid."""
    t = make_table("met_classic")
    user = UserFactory(username=f"brute_{t.scene.pk}")
    brute = CharacterFactory(chronicle=t.scene.chronicle, name="Brute", player=user)
    TraitFactory(character=brute, category="physical", name="Burly", count=1)
    member = scenes.scene_join(code=t.scene.join_code, user=user, character=brute)
    ctx = _ctx(t, t.start(category="physical", bid="Strong", mob=[member]))
    ctx["users"]["b"] = user
    return {**ctx, "member": member}


def _bid(ctx: dict, bid: str, key: str | None = None, token: str | None = None) -> Any:
    t = ctx["t"].refresh()
    return mob.challenge_mob_bid(
        scene=t.scene,
        challenge=_ch(ctx),
        by=ctx["users"]["b"],
        member=ctx["member"],
        bid=bid,
        key=key,
        token=token,
    )


def _table(db) -> dict:
    return _ctx(make_table("met_classic"))


def _ch(ctx: dict) -> Challenge:
    ctx["t"].refresh()
    return ctx["t"].ch(ctx["ch"])


def _side(ctx: dict, fn: Callable, side: str, **kw: Any) -> Any:
    user = ctx["users"][side[0]]
    return fn(scene=ctx["t"].scene, challenge=_ch(ctx), by=user, side=side, **kw)


def _step(ctx: dict) -> str:
    return reads.step_token(Challenge.objects.get(pk=ctx["ch"].pk))


def _round(ctx: dict) -> str:
    return reads.round_token(Challenge.objects.get(pk=ctx["ch"].pk))


def _start(ctx: dict, key: str | None = None, token: str | None = None, **kw: Any) -> Any:
    t = ctx["t"].refresh()
    kw = {"attacker": t.a, "defender": t.d, "category": "physical", "bid": "Strong", **kw}
    seq = None if token is None else int(token)
    return starting.challenge_start(scene=t.scene, by=t.a_user, key=key, expected_seq=seq, **kw)


ROWS = [
    Row(
        "challenge.retest",
        "db",
        _lost,
        lambda c, key, at: _side(
            c, retests.challenge_retest, "defender", kind="overbid", declared=8, key=key, token=at
        ),
        _step,
        lambda c: _side(c, retests.challenge_retest, "attacker", kind="willpower"),
        "C8",
    ),
    Row(
        "challenge.blood",
        "db",
        _live,
        lambda c, key, at: _side(
            c, spending.challenge_blood, "attacker", amount=1, key=key, token=at
        ),
        _step,
        lambda c: _side(c, spending.challenge_blood, "attacker", amount=4),
        "C5",
    ),
    Row(
        "challenge.mob.bid",
        "db",
        _mob,
        lambda c, key, at: _bid(c, "Burly", key, at),
        _step,
        lambda c: _bid(c, "Nothing"),
        "C1",
    ),
    Row(
        "challenge.start",
        "db",
        _table,
        lambda c, key, at: _start(c, key, at),
        lambda c: str(Scene.objects.get(pk=c["t"].scene.pk).seq),
        lambda c: _start(c, category="physical", bid="Strong", race=True, mode="simple"),
        "W13",
    ),
    Row(
        "challenge.answer",
        "db",
        _waiting,
        lambda c, key, at: _side(
            c, answering.challenge_answer, "defender", answer="bid", bid="Tough", key=key, token=at
        ),
        _step,
        lambda c: _side(c, answering.challenge_answer, "defender", answer="bid", bid="Nothing"),
        "C1",
    ),
    Row(
        "challenge.throw",
        "db",
        _live,
        lambda c, key, at: _side(
            c, throwing.challenge_throw, "attacker", throw="rock", key=key, token=at
        ),
        _round,
        lambda c: _side(c, throwing.challenge_throw, "attacker", throw="lizard"),
        "C3",
    ),
    Row(
        "challenge.by_hand",
        "db",
        _live,
        lambda c, key, at: _side(
            c, throwing.challenge_by_hand, "attacker", result="attacker", key=key, token=at
        ),
        _step,
        lambda c: _side(c, throwing.challenge_by_hand, "attacker", result="nobody"),
        "C3",
    ),
    Row(
        "challenge.declare",
        "db",
        _draw,
        lambda c, key, at: _side(
            c, throwing.challenge_declare, "attacker", total=10, key=key, token=at
        ),
        _round,
        lambda c: _side(c, throwing.challenge_declare, "defender", total=99),
        "C4",
    ),
    Row(
        "challenge.accept",
        "db",
        _lost,
        lambda c, key, at: _side(c, retests.challenge_accept, "defender", key=key, token=at),
        _step,
        lambda c: _side(c, retests.challenge_accept, "attacker"),
        "C3",
    ),
    Row(
        "challenge.negative",
        "db",
        _live,
        lambda c, key, at: _side(
            c, negatives.challenge_name_negative, "attacker", trait="Lazy", key=key, token=at
        ),
        _step,
        lambda c: _side(c, negatives.challenge_name_negative, "attacker", trait=" "),
        "C5",
    ),
    Row(
        "challenge.st",
        "db",
        _waiting,
        lambda c, key, at: storyteller.challenge_st(
            scene=c["t"].refresh().scene,
            challenge=_ch(c),
            by=c["t"].st,
            action="pause",
            key=key,
            token=at,
        ),
        _step,
        lambda c: storyteller.challenge_st(
            scene=c["t"].refresh().scene,
            challenge=_ch(c),
            by=c["t"].st,
            action="surprise",
            side="maybe",
        ),
        "C12",
    ),
]


@pytest.fixture(params=ROWS, ids=[r.name for r in ROWS])
def row(request) -> tuple[Row, dict]:
    spec = request.param
    return spec, spec.setup(request.getfixturevalue(spec.fixture))


def _move_on(ctx: dict) -> None:
    """Another tap got in after the screen drew its token: the scene and the challenge step
    on and a later throw is called for."""
    Scene.objects.filter(pk=ctx["t"].scene.pk).update(seq=F("seq") + 1)
    if ctx["ch"] is not None:
        ch = Challenge.objects.get(pk=ctx["ch"].pk)
        Challenge.objects.filter(pk=ch.pk).update(
            step=F("step") + 1, state={**ch.state, "throws": 99} if ch.state else ch.state
        )


def test_a_double_tap_makes_one_change(row):
    spec, ctx = row
    spec.tap(ctx, "contract-tap-1", spec.token(ctx))
    once = spec.state(ctx)
    spec.tap(ctx, "contract-tap-1", spec.token(ctx))
    assert spec.state(ctx) == once


def test_a_stale_token_is_refused_and_changes_nothing(row):
    spec, ctx = row
    stale = spec.token(ctx)
    if stale is None:
        pytest.skip(f"{spec.name} carries no token")
    _move_on(ctx)
    before = spec.state(ctx)
    with pytest.raises(Refused) as refused:
        spec.tap(ctx, "contract-stale-1", stale)
    assert http_status(refused.value) == 409 and "moved on" in refused.value.sentence
    assert spec.state(ctx) == before


def test_a_refusal_answers_its_sentence_and_rule(row):
    spec, ctx = row
    before = spec.state(ctx)
    with pytest.raises(Refused) as refused:
        spec.refused(ctx)
    error = refused.value
    assert http_status(error) == 409
    assert error.rule == spec.rule and f"({spec.rule})" in str(error), str(error)
    assert spec.state(ctx) == before


def test_the_pushed_fragments_equal_a_fresh_render(
    row, monkeypatch, django_capture_on_commit_callbacks
):
    spec, ctx = row
    sent: list[tuple[str, str]] = []
    monkeypatch.setattr(live, "_send", lambda group, html: sent.append((group, html)))
    with django_capture_on_commit_callbacks(execute=True):
        spec.tap(ctx, "contract-push-1", spec.token(ctx))
    scene = Scene.objects.get(pk=ctx["t"].scene.pk)
    pushed = dict(sent)
    regions = None if spec.regions is None else {*spec.regions, "clock", "log"}
    assert pushed[live.storytellers_group(scene.pk)] == fragments.board_regions(scene, regions)
    assert pushed[live.players_group(scene.pk)] == fragments.players_state(scene)
    for user in ctx["users"].values():
        group = live.player_group(scene.pk, user.pk)
        if group in pushed:
            assert pushed[group] == fragments.private_state(scene, user), user
