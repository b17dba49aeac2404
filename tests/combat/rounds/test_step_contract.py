"""The contract every write step keeps (combat/steps.py), run four ways for each step below:

1. a double tap (the same key twice) makes one change;
2. a tap made on a state that moved on (a stale token) is refused and changes nothing;
3. a refusal answers with its sentence and its rule ID;
4. what the step pushes equals a fresh render of the same audiences (zulip's ``verify_action``).

Each step is a row of ``STEPS``: how to set it up, the tap, the same tap on a stale token, and a
tap the rules refuse (with the rule it names).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from combat import fragments, live
from combat.challenges import reads, throwing
from combat.models import Challenge, Combat, Scene
from combat.rounds import bns
from combat.rounds.answers import combat_abort
from combat.rounds.bns_reads import engine_of
from combat.rounds.bookkeeping import combat_book_keeping, combat_next_round
from combat.rounds.declaring import combat_declare
from combat.rounds.initiative import combat_begin_round, combat_initiative
from combat.rounds.resolving import combat_resolve
from combat.rounds.starting import combat_start
from combat.rounds.tokens import state_token
from combat.steps import Refused, http_status
from tests.combat.challenges.conftest import make_table

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Step:
    name: str
    fixture: str
    setup: Callable[[Any], dict]  # -> what the taps need (``ctx``)
    tap: Callable[[dict, str, str | None], Any]  # (ctx, key, token)
    token: Callable[[dict], str | None]  # the token a screen shows now
    refused: Callable[[dict], Any]  # a tap the rules refuse
    rule: str
    state: Callable[[dict], tuple] = lambda ctx: _fight_state(ctx)
    regions: tuple[str, ...] | None = None  # the board regions it pushes (None: all)


def _wod(cast) -> dict:
    p, st = cast.p, cast.storyteller
    combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Frank"]])
    for name, die in (("Jane", 9), ("Frank", 1)):
        combat_initiative(combat=Combat.objects.get(), by=st, participant=p[name], roll=die)
    combat_begin_round(combat=Combat.objects.get(), by=st)
    return {"cast": cast, "scene": cast.scene, "users": cast.users}


def _initiative(cast) -> dict:
    p, st = cast.p, cast.storyteller
    combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Frank"]])
    return {"cast": cast, "scene": cast.scene, "users": cast.users}


def _bns(docks) -> dict:
    st, users, p, scene = docks
    fighters = list(p.values())
    bns.bns_start(scene=scene, by=st, participants=fighters, rng=random.Random(3))
    bns.bns_mediate(combat=Combat.objects.get(), by=st, agreed=False)
    bns.bns_assess(combat=Combat.objects.get(), by=st, participants=fighters)
    current = engine_of(Combat.objects.get()).current
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
    return throwing.challenge_declare(
        scene=t.scene, challenge=t.ch(ctx["ch"]), by=ctx["users"][side[0]], side=side,
        total=total, key=key, token=at,
    )  # fmt: skip


def _token(ctx: dict) -> str:
    return state_token(Combat.objects.get(), players=True)


def _tablet_token(ctx: dict) -> str:
    return state_token(Combat.objects.get())


def _resolving(cast) -> dict:
    """Both declared a dodge: Jane (initiative 9) resolves first (D4)."""
    ctx = _wod(cast)
    for name in ("Frank", "Jane"):  # slowest declares first
        combat_declare(
            combat=Combat.objects.get(), by=cast.storyteller, participant=cast.p[name],
            action="dodge",
        )  # fmt: skip
    return ctx


def _book_keeping(cast) -> dict:
    """Every action resolved: the round is at Book Keeping (D17)."""
    ctx = _resolving(cast)
    for name in ("Jane", "Frank"):
        combat_resolve(combat=Combat.objects.get(), by=cast.storyteller, participant=cast.p[name])
    return ctx


def _declared(cast) -> dict:
    """Frank (the slowest) has declared a dodge: he may abort it (D16)."""
    ctx = _wod(cast)
    combat_declare(
        combat=Combat.objects.get(), by=cast.users["Frank"], participant=cast.p["Frank"],
        action="dodge",
    )  # fmt: skip
    return ctx


def _abort(ctx: dict, name: str, key: str | None = None) -> Any:
    cast = ctx["cast"]
    return combat_abort(
        combat=Combat.objects.get(), by=cast.users[name], participant=cast.p[name],
        key=key,
    )  # fmt: skip


def _resolve(ctx: dict, name: str, key: str | None = None, at: str | None = None) -> Any:
    cast = ctx["cast"]
    return combat_resolve(
        combat=Combat.objects.get(), by=cast.storyteller, participant=cast.p[name], key=key, at=at
    )


STEPS = [
    Step(
        "round.abort",
        "cast",
        _declared,
        lambda c, key, at: _abort(c, "Frank", key),
        lambda c: None,  # an abort carries no token: it answers the character's own action
        lambda c: _abort(c, "Jane"),  # Jane has declared nothing to abort
        "D16",
    ),
    Step(
        "round.resolve",
        "cast",
        _resolving,
        lambda c, key, at: _resolve(c, "Jane", key, at),
        _tablet_token,
        lambda c: _resolve(c, "Frank"),  # the fastest resolves first
        "D4",
    ),
    Step(
        "round.book_keeping",
        "cast",
        _book_keeping,
        lambda c, key, at: combat_book_keeping(
            combat=Combat.objects.get(), by=c["cast"].storyteller, key=key, at=at
        ),
        _tablet_token,
        lambda c: combat_next_round(combat=Combat.objects.get(), by=c["cast"].storyteller),
        "D17",
    ),
    Step(
        "round.declare",
        "cast",
        _wod,
        lambda c, key, at: combat_declare(
            combat=Combat.objects.get(),
            by=c["users"]["Frank"],
            participant=c["cast"].p["Frank"],
            action="dodge",
            key=key,
            at=at,
        ),
        _token,
        lambda c: combat_declare(
            combat=Combat.objects.get(),
            by=c["users"]["Jane"],
            participant=c["cast"].p["Jane"],
            action="dodge",
        ),
        "D4",
    ),
    Step(
        "round.initiative",
        "cast",
        _initiative,
        lambda c, key, at: combat_initiative(
            combat=Combat.objects.get(),
            by=c["users"]["Jane"],
            participant=c["cast"].p["Jane"],
            roll=4,
            key=key,
        ),
        lambda c: None,  # an initiative carries no token: it is rolled once a round (D3)
        lambda c: combat_initiative(
            combat=Combat.objects.get(),
            by=c["users"]["Jane"],
            participant=c["cast"].p["Jane"],
            roll=11,
        ),
        "D3",
    ),
    Step(
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
    ),
    Step(
        "challenge.declare",
        "db",
        _draw,
        lambda c, key, at: _declare(c, "attacker", 10, key, at),
        # both sides declare at the same step: the token is the throw it belongs to
        lambda c: reads.round_token(Challenge.objects.get(pk=c["ch"].pk)),
        lambda c: _declare(c, "defender", 99),
        "C4",
        state=_challenge_state,
        regions=reads.CHALLENGE_REGIONS,
    ),
]


@pytest.fixture(params=STEPS, ids=[s.name for s in STEPS])
def step(request) -> tuple[Step, dict]:
    spec = request.param
    return spec, spec.setup(request.getfixturevalue(spec.fixture))


def test_a_double_tap_makes_one_change(step):
    spec, ctx = step
    spec.tap(ctx, "contract-tap-1", spec.token(ctx))
    once = spec.state(ctx)
    spec.tap(ctx, "contract-tap-1", spec.token(ctx))
    assert spec.state(ctx) == once


def test_a_stale_token_is_refused_and_changes_nothing(step):
    spec, ctx = step
    stale = spec.token(ctx)
    if stale is None:
        pytest.skip(f"{spec.name} carries no token")
    _move_on(spec, ctx)
    before = spec.state(ctx)
    with pytest.raises(Refused) as refused:
        spec.tap(ctx, "contract-stale-1", stale)
    assert http_status(refused.value) == 409 and "moved on" in refused.value.sentence
    assert spec.state(ctx) == before


def _move_on(spec: Step, ctx: dict) -> None:
    """The state moves on after the screen drew its token (another tap got in first)."""
    if spec.name.startswith("challenge"):  # a retest thrown meanwhile: a later throw
        ch = Challenge.objects.get(pk=ctx["ch"].pk)
        Challenge.objects.filter(pk=ch.pk).update(state={**ch.state, "throws": 99})
        return
    combat = Combat.objects.get()  # every step that moves a fight draws new tokens
    Combat.objects.filter(pk=combat.pk).update(
        work={**combat.work, "token": "moved", "players_token": "moved"}
    )


def test_a_refusal_answers_its_sentence_and_rule(step):
    spec, ctx = step
    before = spec.state(ctx)
    with pytest.raises(Refused) as refused:
        spec.refused(ctx)
    error = refused.value
    assert http_status(error) == 409
    assert error.rule == spec.rule and f"({spec.rule})" in str(error), str(error)
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
