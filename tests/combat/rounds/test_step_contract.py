"""The step contract (tests/contract.py) for the steps of fights and challenges: one row each."""

from __future__ import annotations

import random
from typing import Any

import pytest

from combat.challenges import services as challenges
from combat.models import Challenge, Combat, Scene
from combat.rounds import bns
from combat.rounds import services as rounds
from tests import contract
from tests.combat.challenges.conftest import make_table
from tests.contract import Contract

pytestmark = pytest.mark.django_db


def _wod(cast) -> dict:
    p, st = cast.p, cast.storyteller
    rounds.combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Frank"]])
    for name, die in (("Jane", 9), ("Frank", 1)):
        rounds.combat_initiative(combat=Combat.objects.get(), by=st, participant=p[name], roll=die)
    rounds.combat_begin_round(combat=Combat.objects.get(), by=st)
    return {"cast": cast, "scene": cast.scene, "users": cast.users}


def _initiative(cast) -> dict:
    p, st = cast.p, cast.storyteller
    rounds.combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Frank"]])
    return {"cast": cast, "scene": cast.scene, "users": cast.users}


def _bns(docks) -> dict:
    st, users, p, scene = docks
    fighters = list(p.values())
    bns.bns_start(scene=scene, by=st, participants=fighters, rng=random.Random(3))
    bns.bns_mediate(combat=Combat.objects.get(), by=st, agreed=False)
    bns.bns_assess(combat=Combat.objects.get(), by=st, participants=fighters)
    current = bns._engine(Combat.objects.get()).current
    who = next(x for x in fighters if str(x.pk) == current)
    other = next(x for x in fighters if x != who)
    return {"scene": scene, "users": users, "who": who, "by": users[who.name], "other": other}


def _fight_state(ctx: dict) -> tuple:
    scene = Scene.objects.get(pk=ctx["scene"].pk)
    combat = Combat.objects.get()
    return scene.seq, scene.players_seq, combat.state, combat.initiative, combat.results


def _draw(db) -> dict:
    """A met_classic challenge thrown to a draw: both sides declare their totals (C4)."""
    t = make_table("met_classic")
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "rock")
    return {"t": t, "scene": t.scene, "users": {"a": t.a_user, "d": t.d_user}, "ch": ch}


def _challenge_state(ctx: dict) -> tuple:
    scene = Scene.objects.get(pk=ctx["scene"].pk)
    ch = Challenge.objects.get(pk=ctx["ch"].pk)
    return scene.seq, scene.players_seq, ch.step, ch.state, ch.sealed, ch.history


def _declare(ctx: dict, side: str, total: int, key: str | None = None, at=None) -> Any:
    t = ctx["t"]
    t.refresh()
    return challenges.challenge_declare(
        scene=t.scene, challenge=t.ch(ctx["ch"]), by=ctx["users"][side[0]], side=side,
        total=total, key=key, expected_round=at,
    )  # fmt: skip


def _fight_moves_on(ctx: dict) -> None:
    """Every step that moves a fight draws new tokens."""
    combat = Combat.objects.get()
    Combat.objects.filter(pk=combat.pk).update(
        work={**combat.work, "token": "moved", "players_token": "moved"}
    )


def _challenge_moves_on(ctx: dict) -> None:
    """A retest thrown meanwhile: a later throw."""
    ch = Challenge.objects.get(pk=ctx["ch"].pk)
    Challenge.objects.filter(pk=ch.pk).update(state={**ch.state, "throws": 99})


def _token(ctx: dict) -> str:
    return rounds.state_token(Combat.objects.get(), players=True)


ROWS = [
    Contract(
        "round.declare",
        "cast",
        _wod,
        lambda c, key, at: rounds.combat_declare(
            combat=Combat.objects.get(),
            by=c["users"]["Frank"],
            participant=c["cast"].p["Frank"],
            action="dodge",
            key=key,
            at=at,
        ),
        _token,
        lambda c: rounds.combat_declare(
            combat=Combat.objects.get(),
            by=c["users"]["Jane"],
            participant=c["cast"].p["Jane"],
            action="dodge",
        ),
        "D4",
        _fight_state,
        move_on=_fight_moves_on,
    ),
    Contract(
        "round.initiative",
        "cast",
        _initiative,
        lambda c, key, at: rounds.combat_initiative(
            combat=Combat.objects.get(),
            by=c["users"]["Jane"],
            participant=c["cast"].p["Jane"],
            roll=4,
            key=key,
        ),
        lambda c: None,  # an initiative carries no token: it is rolled once a round (D3)
        lambda c: rounds.combat_initiative(
            combat=Combat.objects.get(),
            by=c["users"]["Jane"],
            participant=c["cast"].p["Jane"],
            roll=11,
        ),
        "D3",
        _fight_state,
    ),
    Contract(
        "round.bns.act",
        "docks",
        _bns,
        lambda c, key, at: bns.bns_act(
            combat=Combat.objects.get(),
            by=c["by"],
            participant=c["who"],
            simple="move",
            key=key,
            at=at,
        ),
        _token,
        lambda c: bns.bns_act(
            combat=Combat.objects.get(),
            by=c["users"][c["other"].name],
            participant=c["other"],
            simple="move",
        ),
        "B4",
        _fight_state,
        move_on=_fight_moves_on,
    ),
    Contract(
        "challenge.declare",
        "db",
        _draw,
        lambda c, key, at: _declare(c, "attacker", 10, key, at),
        # both sides declare at the same step: the token is the throw it belongs to
        lambda c: challenges.round_of(challenges.engine_of(Challenge.objects.get(pk=c["ch"].pk))),
        lambda c: _declare(c, "defender", 99),
        "C4",
        _challenge_state,
        regions=challenges.CHALLENGE_REGIONS,
        move_on=_challenge_moves_on,
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
