"""The step contract (tests/contract.py) for the rounds' declared steps: one row each.

Every step that moves a fight draws new tokens, so a row moves on by replacing them.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from combat import services as scenes
from combat.models import Combat, Scene
from combat.rounds import bns, met
from combat.rounds import storyteller as st_steps
from combat.rounds.answers import combat_abort, combat_answer_committed
from combat.rounds.bns_reads import engine_of
from combat.rounds.bookkeeping import combat_book_keeping, combat_next_round, combat_remind
from combat.rounds.declaring import combat_declare
from combat.rounds.initiative import combat_begin_round, combat_initiative
from combat.rounds.pursuit import combat_pursue
from combat.rounds.resolving import combat_resolve
from combat.rounds.starting import combat_start
from combat.rounds.tokens import state_token
from tests import contract
from tests.contract import Contract
from tests.factories import (
    CharacterFactory,
    ChronicleFactory,
    GameNightFactory,
    PowerFactory,
    StorytellerFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


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


def _fight() -> Combat:
    return Combat.objects.get()


def _by(ctx: dict, name: str | None = None) -> Any:
    """The storyteller (no name), or the named character's player."""
    return ctx["cast"].storyteller if name is None else ctx["cast"].users[name]


def _booked(cast) -> dict:
    """Book Keeping is done: the next round may start (D4)."""
    ctx = _book_keeping(cast)
    combat_book_keeping(combat=_fight(), by=cast.storyteller)
    return ctx


def _all_rolled(cast) -> dict:
    """Every initiative is in: the storyteller opens the Main Phase (D4)."""
    ctx = _initiative(cast)
    for name, die in (("Jane", 9), ("Frank", 1)):
        combat_initiative(combat=_fight(), by=cast.storyteller, participant=cast.p[name], roll=die)
    return ctx


def _committed(cast) -> dict:
    """The Thug's committed attack on Jane waits for her answer (D5); Frank only dodges."""
    p, st = cast.p, cast.storyteller
    combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Frank"], p["Thug"]])
    for name, die in (("Jane", 1), ("Frank", 5), ("Thug", 10)):
        combat_initiative(combat=_fight(), by=st, participant=p[name], roll=die)
    combat_begin_round(combat=_fight(), by=st)
    for name, action, target, extra in (
        ("Jane", "attack", "Thug", {}),
        ("Frank", "dodge", None, {}),
        ("Thug", "attack", "Jane", {"weapon": "Club", "maneuver": "committed"}),
    ):
        combat_declare(
            combat=_fight(), by=st, participant=p[name], action=action,
            target=p[target] if target else None, **extra,
        )  # fmt: skip
    return {"cast": cast, "scene": cast.scene, "users": cast.users}


def _answer(ctx: dict, name: str, key: str | None = None) -> Any:
    p = ctx["cast"].p
    return combat_answer_committed(
        combat=_fight(), by=_by(ctx, name), participant=p[name], attacker=p["Thug"],
        answer="harder", key=key,
    )  # fmt: skip


def _set_out(ctx: dict, key: str | None = None, name: str | None = None) -> Any:
    return st_steps.combat_set_out(
        combat=_fight(), by=_by(ctx, name), participant=ctx["cast"].p["Frank"], out=True, key=key
    )


def _skip(ctx: dict, key: str | None = None, at: str | None = None, name=None) -> Any:
    return st_steps.combat_skip(
        combat=_fight(), by=_by(ctx, name), participant=ctx["cast"].p["Frank"], at=at, key=key
    )


def _effect(ctx: dict, key: str | None = None, rounds: int = 2) -> Any:
    return st_steps.combat_add_effect(
        combat=_fight(), by=_by(ctx), participant=ctx["cast"].p["Jane"], name="Blinded",
        rounds=rounds, key=key,
    )  # fmt: skip


def _remind(ctx: dict, key: str | None = None, text: str = "Frank's arm is broken") -> Any:
    return combat_remind(
        combat=_fight(), by=_by(ctx, "Frank"), participant=ctx["cast"].p["Frank"], text=text,
        key=key,
    )  # fmt: skip


def _conflict(docks) -> dict:
    """A met_bns conflict opens with mediation (B11)."""
    st, users, p, scene = docks
    bns.bns_start(scene=scene, by=st, participants=list(p.values()), rng=random.Random(2))
    return {"scene": scene, "users": users, "st": st, "p": p}


def _assessing(docks) -> dict:
    """No agreement: the storyteller names who takes part (B11)."""
    ctx = _conflict(docks)
    bns.bns_mediate(combat=_fight(), by=ctx["st"], agreed=False)
    return ctx


def _turn(docks) -> dict:
    """Everyone takes part: Ana acts first (B4, seed 2)."""
    ctx = _assessing(docks)
    bns.bns_assess(combat=_fight(), by=ctx["st"], participants=list(ctx["p"].values()))
    return ctx


def _escaping(docks) -> dict:
    """Ana announced a fair escape: those yet to act may announce an intent (B9)."""
    ctx = _turn(docks)
    bns.bns_escape_announce(combat=_fight(), by=ctx["users"]["Ana"], participant=ctx["p"]["Ana"])
    return ctx


def _intent(docks) -> dict:
    """Cy intends to attack the escaping Ana: the storyteller closes the intents (B9)."""
    ctx = _escaping(docks)
    bns.bns_escape_intent(combat=_fight(), by=ctx["users"]["Cy"], participant=ctx["p"]["Cy"])
    return ctx


def _delayed(docks) -> dict:
    """Ana moved, Bo delays, Cy moved: Bo may step back in (B8)."""
    ctx = _turn(docks)
    u, p = ctx["users"], ctx["p"]
    bns.bns_act(combat=_fight(), by=u["Ana"], participant=p["Ana"], simple="drop_prone")
    bns.bns_delay(combat=_fight(), by=u["Bo"], participant=p["Bo"])
    bns.bns_act(combat=_fight(), by=u["Cy"], participant=p["Cy"], simple="move")
    return ctx


def _round_done(docks) -> dict:
    """Everyone is done with the everyman round: the storyteller closes it (B5)."""
    ctx = _turn(docks)
    for name in ("Ana", "Bo", "Cy"):
        bns.bns_finish(combat=_fight(), by=ctx["users"][name], participant=ctx["p"][name])
    return ctx


def _mine(ctx: dict, fn, name: str, as_: str | None = None, **kw: Any) -> Any:
    """``fn`` for ``name``'s character, from ``as_``'s phone (default: its own)."""
    return fn(combat=_fight(), by=ctx["users"][as_ or name], participant=ctx["p"][name], **kw)


@pytest.fixture
def court(db) -> dict:
    """A met_classic fight: Vera (Celerity 2), Wes (Celerity 1) and Xan (C15)."""
    st = StorytellerFactory(username="met_st")
    chronicle = ChronicleFactory(name="Court", ruleset="met_classic")
    chronicle.storytellers.add(st)
    GameNightFactory(chronicle=chronicle, number=1)
    scene = scenes.scene_open(chronicle=chronicle, by=st, name="Elysium")
    users, p = {}, {}
    for name, cel in (("Vera", 2), ("Wes", 1), ("Xan", 0)):
        users[name] = UserFactory(username=f"met_{name.lower()}")
        c = CharacterFactory(chronicle=chronicle, name=name, player=users[name], blood=10)
        if cel:
            PowerFactory(character=c, name="Celerity", level=cel)
        p[name] = scenes.scene_join(code=scene.join_code, user=users[name], character=c)
    met.met_start(scene=scene, by=st, participants=list(p.values()))
    return {"scene": Scene.objects.get(pk=scene.pk), "users": users, "st": st, "p": p}


def _announced(court: dict) -> dict:
    """Vera announced Celerity 2 with two follow-ups: the storyteller ticks them off (C15)."""
    _mine(court, met.met_celerity_announce, "Vera", level=2, follow_ups=2)
    return court


def _met_state(ctx: dict) -> tuple:
    return (*_fight_state(ctx), _fight().round_number)


def _mob(ctx: dict, key: str | None = None, agreed: bool = True) -> Any:
    p = ctx["p"]
    return met.met_mob(
        combat=_fight(), by=ctx["st"], targets={p["Vera"]: p["Xan"], p["Wes"]: p["Xan"]},
        agreed=agreed, key=key,
    )  # fmt: skip


def _escaped(cast) -> dict:
    """Jane's escape survived the Thug's attack with 2 to spare: does he pursue? (D9, K4)"""
    p, st = cast.p, cast.storyteller
    combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Thug"]])
    for name, die in (("Jane", 1), ("Thug", 10)):
        combat_initiative(combat=_fight(), by=st, participant=p[name], roll=die)
    combat_begin_round(combat=_fight(), by=st)
    combat_declare(combat=_fight(), by=st, participant=p["Jane"], action="escape")
    combat_declare(
        combat=_fight(), by=st, participant=p["Thug"], action="attack", target=p["Jane"],
        weapon="Club",
    )  # fmt: skip
    combat_resolve(
        combat=_fight(), by=st, participant=p["Thug"], attack_dice="7 2 2 2",
        defense_dice="7 8 9 2 2 2 2",
    )  # fmt: skip
    return {"cast": cast, "scene": cast.scene, "users": cast.users}


def _pursue(ctx: dict, key: str | None = None, at: str | None = None, name=None) -> Any:
    return combat_pursue(
        combat=_fight(), by=_by(ctx, name), predator=ctx["cast"].p["Thug"], pursue=False,
        at=at, key=key,
    )  # fmt: skip


def _fights(ctx: dict) -> tuple:
    scene = Scene.objects.get(pk=ctx["scene"].pk)
    return scene.seq, scene.players_seq, list(Combat.objects.values_list("pk", "stage"))


def _start(ctx: dict, key: str | None = None, name: str | None = None) -> Any:
    p = ctx["cast"].p
    return combat_start(
        scene=Scene.objects.get(pk=ctx["scene"].pk), by=_by(ctx, name),
        participants=[p["Jane"], p["Frank"]], key=key,
    )  # fmt: skip


def _move_on(ctx: dict) -> None:
    """Another tap got in first: every step that moves a fight draws new tokens."""
    combat = Combat.objects.get()
    Combat.objects.filter(pk=combat.pk).update(
        work={**combat.work, "token": "moved", "players_token": "moved"}
    )


def _row(*args: Any, **kw: Any) -> Contract:
    return Contract(*args, **{"state": _fight_state, "move_on": _move_on, **kw})


ROWS = [
    _row(
        "round.abort",
        "cast",
        _declared,
        lambda c, key, at: _abort(c, "Frank", key),
        lambda c: None,  # an abort carries no token: it answers the character's own action
        lambda c: _abort(c, "Jane"),  # Jane has declared nothing to abort
        "D16",
    ),
    _row(
        "round.resolve",
        "cast",
        _resolving,
        lambda c, key, at: _resolve(c, "Jane", key, at),
        _tablet_token,
        lambda c: _resolve(c, "Frank"),  # the fastest resolves first
        "D4",
    ),
    _row(
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
    _row(
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
    _row(
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
    _row(
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
    _row(
        "round.set_out", "cast", _wod, lambda c, key, at: _set_out(c, key), lambda c: None,
        lambda c: _set_out(c, name="Frank"), "",  # only the storyteller: no rule of the book
    ),
    _row(
        "round.skip", "cast", _wod, lambda c, key, at: _skip(c, key, at), _tablet_token,
        lambda c: _skip(c, name="Frank"), "",  # only the storyteller passes a character over
    ),
    _row(
        "round.pause", "cast", _wod,
        lambda c, key, at: st_steps.combat_pause(combat=_fight(), by=_by(c), paused=True, key=key),
        lambda c: None,
        lambda c: st_steps.combat_pause(combat=_fight(), by=_by(c, "Jane"), paused=True), "",
    ),
    _row(
        "round.effect", "cast", _wod, lambda c, key, at: _effect(c, key), lambda c: None,
        lambda c: _effect(c, rounds=0), "D17",
    ),
    _row(
        "round.end", "cast", _wod,
        lambda c, key, at: st_steps.combat_end(combat=_fight(), by=_by(c), key=key),
        lambda c: None,
        lambda c: st_steps.combat_end(combat=_fight(), by=_by(c, "Jane")), "",
    ),
    _row(
        "round.begin", "cast", _all_rolled,
        lambda c, key, at: combat_begin_round(combat=_fight(), by=_by(c), key=key, at=at),
        _tablet_token,
        lambda c: combat_begin_round(combat=_fight(), by=_by(c, "Jane")), "",
    ),
    _row(
        "round.next", "cast", _booked,
        lambda c, key, at: combat_next_round(combat=_fight(), by=_by(c), key=key, at=at),
        _tablet_token,
        lambda c: combat_next_round(combat=_fight(), by=_by(c, "Jane")), "",
    ),
    _row(
        "round.remind", "cast", _wod, lambda c, key, at: _remind(c, key), lambda c: None,
        lambda c: _remind(c, text=" "), "",  # a reminder says something: no rule of the book
        state=lambda c: (*_fight_state(c), _fight().reminders),
    ),
    _row(
        "round.committed", "cast", _committed, lambda c, key, at: _answer(c, "Jane", key),
        lambda c: None,  # an answer carries no token: it answers the attack on her
        lambda c: _answer(c, "Frank"), "D5",  # no committed attack on Frank waits
    ),
    _row(
        "round.bns.mediate", "docks", _conflict,
        lambda c, key, at: bns.bns_mediate(combat=_fight(), by=c["st"], agreed=False, key=key),
        lambda c: None,
        lambda c: bns.bns_mediate(combat=_fight(), by=c["users"]["Bo"], agreed=False), "",
    ),
    _row(
        "round.bns.assess", "docks", _assessing,
        lambda c, key, at: bns.bns_assess(
            combat=_fight(), by=c["st"], participants=list(c["p"].values()), key=key
        ),
        lambda c: None,
        lambda c: bns.bns_assess(
            combat=_fight(), by=c["users"]["Bo"], participants=list(c["p"].values())
        ), "",
    ),
    _row(
        "round.bns.celerity", "docks", _assessing,
        lambda c, key, at: _mine(c, bns.bns_celerity, "Ana", rounds=1, key=key),
        lambda c: None,
        lambda c: _mine(c, bns.bns_celerity, "Bo", rounds=1), "B5",  # Bo has no Celerity
    ),
    _row(
        "round.bns.finish", "docks", _turn,
        lambda c, key, at: _mine(c, bns.bns_finish, "Ana", key=key), lambda c: None,
        lambda c: _mine(c, bns.bns_finish, "Ana", as_="Bo"), "",  # not Bo's character
    ),
    _row(
        "round.bns.delay", "docks", _turn,
        lambda c, key, at: _mine(c, bns.bns_delay, "Ana", key=key), lambda c: None,
        lambda c: _mine(c, bns.bns_delay, "Ana", as_="Bo"), "",  # not Bo's character
    ),
    _row(
        "round.bns.resume", "docks", _delayed,
        lambda c, key, at: _mine(c, bns.bns_resume, "Bo", key=key), lambda c: None,
        lambda c: _mine(c, bns.bns_resume, "Cy"), "B8",  # Cy did not delay
    ),
    _row(
        "round.bns.escape", "docks", _turn,
        lambda c, key, at: _mine(c, bns.bns_escape_announce, "Ana", key=key), lambda c: None,
        lambda c: _mine(c, bns.bns_escape_announce, "Ana", as_="Bo"), "",  # not Bo's
    ),
    _row(
        "round.bns.intent", "docks", _escaping,
        lambda c, key, at: _mine(c, bns.bns_escape_intent, "Cy", key=key), lambda c: None,
        lambda c: _mine(c, bns.bns_escape_intent, "Ana"), "B9",  # nobody attacks itself
    ),
    _row(
        "round.bns.settle", "docks", _intent,
        lambda c, key, at: bns.bns_escape_settle(combat=_fight(), by=c["st"], key=key),
        lambda c: None,
        lambda c: bns.bns_escape_settle(combat=_fight(), by=c["users"]["Cy"]), "",
    ),
    _row(
        "round.bns.end_round", "docks", _round_done,
        lambda c, key, at: bns.bns_end_round(combat=_fight(), by=c["st"], at=at, key=key),
        _tablet_token,
        lambda c: bns.bns_end_round(combat=_fight(), by=c["users"]["Cy"]), "",
    ),
    _row(
        "round.met.celerity", "court", lambda court: court,
        lambda c, key, at: _mine(
            c, met.met_celerity_announce, "Vera", level=2, follow_ups=2, key=key
        ),
        lambda c: None,
        lambda c: _mine(c, met.met_celerity_announce, "Wes", as_="Vera", level=1, follow_ups=1),
        "",  # not Vera's character
    ),
    _row(
        "round.met.take", "court", _announced,
        lambda c, key, at: met.met_celerity_take(
            combat=_fight(), by=c["st"], participant=c["p"]["Vera"], action="Alacrity", key=key
        ),
        lambda c: None,
        lambda c: met.met_celerity_take(
            combat=_fight(), by=c["st"], participant=c["p"]["Wes"], action="Alacrity"
        ),
        "C15",  # Wes announced nothing
    ),
    _row(
        "round.met.mob", "court", lambda court: court, lambda c, key, at: _mob(c, key),
        lambda c: None, lambda c: _mob(c, agreed=False), "C16",
    ),
    _row(
        "round.met.next", "court", lambda court: court,
        lambda c, key, at: met.met_next_round(combat=_fight(), by=c["st"], key=key),
        lambda c: None,
        lambda c: met.met_next_round(combat=_fight(), by=c["users"]["Vera"]), "",
        state=_met_state,
    ),
    _row(
        "round.pursue", "cast", _escaped, lambda c, key, at: _pursue(c, key, at),
        _tablet_token, lambda c: _pursue(c, name="Jane"), "",  # the storyteller's call (K4)
    ),
    _row(
        "round.start", "cast",
        lambda cast: {"cast": cast, "scene": cast.scene, "users": cast.users},
        lambda c, key, at: _start(c, key), lambda c: None,  # a new fight: no screen drew one
        lambda c: _start(c, name="Jane"), "", state=_fights,
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
