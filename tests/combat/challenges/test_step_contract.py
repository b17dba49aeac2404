"""The step contract (tests/contract.py) for the challenge's declared steps: one row each."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db.models import F

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
from tests import contract
from tests.combat.challenges.conftest import Table, make_table
from tests.contract import Contract
from tests.factories import CharacterFactory, TraitFactory, UserFactory

pytestmark = pytest.mark.django_db


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


def _brute(t: Table, user=None) -> tuple[Any, Any]:
    """A third player's Brute: one physical trait (Burly) and one negative (Lazy)."""
    user = UserFactory(username=f"brute_{t.scene.pk}")
    brute = CharacterFactory(chronicle=t.scene.chronicle, name="Brute", player=user)
    TraitFactory(character=brute, category="physical", name="Burly", count=1)
    TraitFactory(character=brute, category="physical", name="Lazy", count=1, negative=True)
    return user, scenes.scene_join(code=t.scene.join_code, user=user, character=brute)


def _must_drop(db) -> dict:
    """The defender named Brute's Lazy: Brute cannot match it and must drop out (C16)."""
    t = make_table("met_classic")
    user, brute = _brute(t)
    ch = t.start(category="physical", bid="Strong", mob=[brute])
    ch = t.do("mob_bid", ch, user, member=brute, bid="Burly")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.do("name_negative", ch, t.d_user, side="defender", trait="Lazy")
    ctx = _ctx(t, ch)
    ctx["users"]["b"] = user
    return {**ctx, "member": brute}


def _place_free(db) -> dict:
    """Brute dropped out: Rex (two Wiry) may step into the mob in his place (C16)."""
    ctx = _must_drop(db)
    t = ctx["t"]
    mob.challenge_mob_drop(
        scene=t.refresh().scene, challenge=_ch(ctx), by=ctx["users"]["b"], member=ctx["member"]
    )
    user = UserFactory(username=f"rex_{t.scene.pk}")
    rex = CharacterFactory(chronicle=t.scene.chronicle, name="Rex", player=user)
    TraitFactory(character=rex, category="physical", name="Wiry", count=2)
    ctx["users"]["r"] = user
    ctx["rex"] = scenes.scene_join(code=t.scene.join_code, user=user, character=rex)
    return ctx


def _member(ctx: dict, fn: Callable, user: str, member: str, **kw: Any) -> Any:
    return fn(
        scene=ctx["t"].refresh().scene, challenge=_ch(ctx), by=ctx["users"][user],
        member=ctx[member], **kw,
    )  # fmt: skip


def _retested(db) -> dict:
    """Cody won; Janet retests with Expression: Cody may cancel with Leadership (W10)."""
    t = make_table("met_werewolf")
    ch = t.start(category="social", bid="Charismatic", ability="Expression", effect="backs off")
    ch = t.do(
        "answer", ch, t.d_user, side="defender", answer="bid", bid="Impressive",
        ability="Leadership",
    )  # fmt: skip
    ch = t.throw(ch, "rock", "paper")
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="ability", ability="Expression")
    return _ctx(t, ch)


def _to_choose(db) -> dict:
    """Janet named Cody's Arrogant and won: Cody picks one more trait to cross off (W8)."""
    t = make_table("met_werewolf")
    TraitFactory(
        character=t.d.character, category="social", name="Arrogant", count=1, negative=True
    )
    ch = t.start(category="social", bid="Charismatic")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Impressive")
    ch = t.do("name_negative", ch, t.a_user, side="attacker", trait="Arrogant")
    ch = t.throw(ch, "rock", "scissors")
    return _ctx(t, t.do("accept", ch, t.d_user, side="defender"))


def _relent(ctx: dict, by: str, key: str | None = None, token: str | None = None) -> Any:
    return answering.challenge_relent(
        scene=ctx["t"].refresh().scene, challenge=_ch(ctx), by=ctx["users"][by],
        side="attacker", key=key, token=token,
    )  # fmt: skip


def _sheets(ctx: dict) -> tuple:
    """The challenge and what the sheets hold now (a cancel or a choice crosses off)."""
    t = ctx["t"]
    return (*_state(ctx), str(t.now(t.a)), str(t.now(t.d)))


def _move_on(ctx: dict) -> None:
    """Another tap got in after the screen drew its token: the scene and the challenge step
    on and a later throw is called for."""
    Scene.objects.filter(pk=ctx["t"].scene.pk).update(seq=F("seq") + 1)
    if ctx["ch"] is not None:
        ch = Challenge.objects.get(pk=ctx["ch"].pk)
        Challenge.objects.filter(pk=ch.pk).update(
            step=F("step") + 1, state={**ch.state, "throws": 99} if ch.state else ch.state
        )


def _row(*args: Any, **kw: Any) -> Contract:
    return Contract(
        *args, **{"state": _state, "move_on": _move_on, "regions": reads.CHALLENGE_REGIONS, **kw}
    )


ROWS = [
    _row(
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
    _row(
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
    _row(
        "challenge.mob.bid",
        "db",
        _mob,
        lambda c, key, at: _bid(c, "Burly", key, at),
        _step,
        lambda c: _bid(c, "Nothing"),
        "C1",
    ),
    _row(
        "challenge.start",
        "db",
        _table,
        lambda c, key, at: _start(c, key, at),
        lambda c: str(Scene.objects.get(pk=c["t"].scene.pk).seq),
        lambda c: _start(c, category="physical", bid="Strong", race=True, mode="simple"),
        "W13",
    ),
    _row(
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
    _row(
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
    _row(
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
    _row(
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
    _row(
        "challenge.accept",
        "db",
        _lost,
        lambda c, key, at: _side(c, retests.challenge_accept, "defender", key=key, token=at),
        _step,
        lambda c: _side(c, retests.challenge_accept, "attacker"),
        "C3",
    ),
    _row(
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
    _row(
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
    _row(
        "challenge.relent", "db", _live, lambda c, key, at: _relent(c, "a", key, at), _step,
        lambda c: _relent(c, "d"), "",  # nobody relents for the other side: no rule of the book
    ),
    _row(
        "challenge.dispute", "db", _live,
        lambda c, key, at: _side(
            c, storyteller.challenge_dispute, "attacker", text="a bad call", key=key
        ),
        lambda c: None,  # a call for the storyteller carries no token: always reachable
        lambda c: storyteller.challenge_dispute(
            scene=c["t"].refresh().scene, challenge=_ch(c), by=c["users"]["d"], side="attacker"
        ),
        "",  # nobody calls for the other side: no rule of the book
    ),
    _row(
        "challenge.mob.drop", "db", _must_drop,
        lambda c, key, at: _member(c, mob.challenge_mob_drop, "b", "member", key=key, token=at),
        _step,
        lambda c: _member(c, mob.challenge_mob_drop, "d", "member"), "",  # not Sophia's to drop
    ),
    _row(
        "challenge.mob.step_in", "db", _place_free,
        lambda c, key, at: _member(
            c, mob.challenge_mob_step_in, "r", "rex", bid="Wiry", key=key, token=at
        ),
        _step,
        lambda c: _member(c, mob.challenge_mob_step_in, "r", "rex"),  # no bid
        "C16",
    ),
    _row(
        "challenge.cancel", "db", _retested,
        lambda c, key, at: _side(
            c, retests.challenge_cancel, "defender", ability="Leadership", key=key, token=at
        ),
        _step,
        # Janet has no retest of Cody's to cancel
        lambda c: _side(c, retests.challenge_cancel, "attacker", ability="Leadership"),
        "C8", state=_sheets,
    ),
    _row(
        "challenge.choose", "db", _to_choose,
        lambda c, key, at: _side(
            c, negatives.challenge_choose_trait, "defender", trait="Dignified", key=key, token=at
        ),
        _step,
        lambda c: _side(c, negatives.challenge_choose_trait, "defender", trait="Wise"),
        "W8", state=_sheets,
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
