"""Fights that must not get stuck: an Incapacitated member (D2, D3), an abort never followed
by a new action (D16), a committed attack on an NPC (D5)."""

from __future__ import annotations

import random

import pytest

from characters.models import LedgerKind
from characters.services import ledger_spend
from combat.models import Combat, CombatStage
from combat.rounds.answers import combat_abort
from combat.rounds.bookkeeping import combat_book_keeping, combat_next_round
from combat.rounds.declaring import combat_declare
from combat.rounds.errors import RoundError
from combat.rounds.initiative import combat_begin_round, combat_initiative, combat_roll_missing
from combat.rounds.reads import wod_state
from combat.rounds.resolving import combat_resolve
from combat.rounds.sheets import stats_for
from combat.rounds.starting import combat_start
from combat.rounds.storyteller import combat_set_out, combat_skip
from tests.combat.rounds.test_views import _post, _tablet
from tests.conftest import client_for


@pytest.fixture
def clients(cast):
    return {"st": client_for(cast.storyteller)}


def _fresh() -> Combat:
    return Combat.objects.get()


def _knock_out(cast, name: str) -> None:
    character = cast.p[name].character
    ledger_spend(
        character=character,
        kind=LedgerKind.HEALTH_DAMAGE,
        by=cast.storyteller,
        category="lethal",
        amount=7,
        reason="test",
        source="test",
    )
    assert not stats_for([cast.p[name]])[cast.p[name].pk].can_act


def test_an_incapacitated_member_sits_out_and_the_storyteller_takes_one_out_and_back(cast, clients):
    st, p = cast.storyteller, cast.p
    combat = combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Frank"], p["Teddy"]])
    _knock_out(cast, "Frank")
    combat_roll_missing(combat=combat, by=st, rng=random.Random(2))  # skips Frank
    assert set(_fresh().initiative) == {str(p["Jane"].pk), str(p["Teddy"].pk)}
    # Only the storyteller takes someone out; out, Teddy rolls no initiative and waits not.
    with pytest.raises(RoundError, match="Only the storyteller"):
        combat_set_out(combat=combat, by=cast.users["Jane"], participant=p["Teddy"], out=True)
    r = _post(clients["st"], cast.scene, "out", participant=p["Teddy"].pk, out="true")
    assert r.status_code == 200 and "Bring back" in r.content.decode()
    combat_begin_round(combat=combat, by=st)
    state = wod_state(_fresh())
    assert list(state.up) == [str(p["Jane"].pk)]
    assert len(state.phase.declare) == 1
    assert "Not in this round: Frank (Incapacitated, D2)" in _tablet(clients, cast)
    combat_skip(combat=combat, by=st, participant=p["Jane"])
    combat_skip(combat=combat, by=st, participant=p["Jane"])
    combat_book_keeping(combat=combat, by=st)
    combat_next_round(combat=combat, by=st)
    assert _fresh().work["out"] == [str(p["Teddy"].pk)]  # out until brought back
    _post(clients["st"], cast.scene, "out", participant=p["Teddy"].pk)
    assert _fresh().work["out"] == []
    with pytest.raises(RoundError, match="Initiative still missing for Jane, Teddy"):
        combat_begin_round(combat=combat, by=st)


def _frank_aborts_against_teddy(cast) -> None:
    """D16: Frank (1) moves, Teddy (4) attacks him, Frank aborts against that later attack
    (Willpower 9 9 9 9 9) and names no new action: the round waits on the storyteller."""
    st, p, users = cast.storyteller, cast.p, cast.users
    combat = combat_start(scene=cast.scene, by=st, participants=[p["Frank"], p["Teddy"]])
    for name, die in (("Frank", 1), ("Teddy", 4)):
        combat_initiative(combat=combat, by=st, participant=p[name], roll=die)
    combat_begin_round(combat=combat, by=st)
    combat_declare(combat=_fresh(), by=users["Frank"], participant=p["Frank"], action="move")
    combat_declare(
        combat=_fresh(),
        by=users["Teddy"],
        participant=p["Teddy"],
        action="attack",
        target=p["Frank"],
    )
    combat_abort(
        combat=_fresh(),
        by=users["Frank"],
        participant=p["Frank"],
        reason="later_attack",
        attacker=p["Teddy"],
        dice="9 9 9 9 9",
    )


def test_an_abort_with_no_new_action_is_declared_for_or_passed_over(cast, clients):
    """D16: Frank aborts against Teddy's later attack and names nothing: the round waits on
    the storyteller, who declares for him or passes over him (no action)."""
    st, p = cast.storyteller, cast.p
    _frank_aborts_against_teddy(cast)
    board = _tablet(clients, cast)
    assert "Declare anew for Frank" in board and "Pass over Frank" in board
    combat_resolve(combat=_fresh(), by=st, participant=p["Teddy"], rng=random.Random(1))
    before = _fresh().state
    with pytest.raises(RoundError) as refused:
        combat_resolve(combat=_fresh(), by=st, participant=p["Frank"])
    assert "Frank aborted" in str(refused.value) and "pass over" in str(refused.value)
    assert str(p["Frank"].pk) not in str(refused.value).replace("D16", "")
    assert _fresh().state == before
    r = _post(clients["st"], cast.scene, "skip", participant=p["Frank"].pk)
    assert r.status_code == 200, r.content.decode()
    assert _fresh().stage == CombatStage.BOOK_KEEPING


def test_the_storyteller_declares_anew_for_an_aborted_character(cast):
    st, p = cast.storyteller, cast.p
    _frank_aborts_against_teddy(cast)
    combat_declare(combat=_fresh(), by=st, participant=p["Frank"], action="dodge")
    assert wod_state(_fresh()).declaration(str(p["Frank"].pk)).action == "dodge"


def test_the_tablet_answers_a_committed_attack_on_an_npc(cast, clients):
    """D5: Jane's committed attack on the Thug waits on the Thug's answer: the tablet gives it
    (and a player's, on their word)."""
    st, p, users = cast.storyteller, cast.p, cast.users
    combat = combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Thug"]])
    for name, die in (("Jane", 5), ("Thug", 1)):
        combat_initiative(combat=combat, by=st, participant=p[name], roll=die)
    combat_begin_round(combat=combat, by=st)
    combat_declare(combat=_fresh(), by=st, participant=p["Thug"], action="dodge")
    combat_declare(
        combat=_fresh(),
        by=users["Jane"],
        participant=p["Jane"],
        action="attack",
        target=p["Thug"],
        maneuver="committed",
    )
    board = _tablet(clients, cast)
    assert "Waiting: Thug answers Jane's committed attack" in board
    assert "Thug accepts" in board
    r = _post(
        clients["st"],
        cast.scene,
        "committed",
        participant=p["Thug"].pk,
        attacker=p["Jane"].pk,
        answer="harder",
    )
    assert r.status_code == 200, r.content.decode()
    combat_resolve(combat=_fresh(), by=st, participant=p["Jane"], rng=random.Random(4))
    assert str(p["Jane"].pk) in wod_state(_fresh()).resolved


def _rage(cast, name: str) -> int:
    return stats_for([cast.p[name]])[cast.p[name].pk].rage


def _haste_fight(cast, haste: int) -> Combat:
    st, p = cast.storyteller, cast.p
    combat = combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Teddy"]])
    combat.haste = {str(p["Teddy"].pk): haste}  # chosen in an earlier round, carried over
    combat.save()
    for name, die in (("Jane", 1), ("Teddy", 10)):
        combat_initiative(combat=_fresh(), by=st, participant=p[name], roll=die)
    return _fresh()


def test_carried_over_haste_the_rage_no_longer_pays_for_is_cut_at_the_start(cast):
    """D4: Teddy carried 3 haste actions over but has 1 Rage left: the round begins with 1
    (the storyteller reads why) and resolution is not blocked."""
    st, p = cast.storyteller, cast.p
    ledger_spend(
        character=p["Teddy"].character,
        kind=LedgerKind.RAGE_SPENT,
        by=st,
        amount=3,
        reason="test",
        source="test",
    )
    combat = _haste_fight(cast, 3)
    combat_begin_round(combat=combat, by=st)
    assert _fresh().haste[str(p["Teddy"].pk)] == 1
    assert [ph.name for ph in wod_state(_fresh()).phases] == ["main", "haste 1"]
    from combat.models import SceneLogEntry

    note = SceneLogEntry.objects.get(text__contains="1 Rage for 3 haste")
    assert not note.public
    combat_declare(combat=_fresh(), by=st, participant=p["Jane"], action="dodge")
    combat_declare(
        combat=_fresh(), by=st, participant=p["Teddy"], action="attack", target=p["Jane"]
    )
    combat_resolve(combat=_fresh(), by=st, participant=p["Teddy"], rng=random.Random(2))
    assert _rage(cast, "Teddy") == 0


def test_a_garou_passed_over_pays_no_rage_and_gets_no_haste_phase(cast):
    st, p = cast.storyteller, cast.p
    combat = _haste_fight(cast, 2)
    combat_begin_round(combat=combat, by=st)
    combat_declare(combat=_fresh(), by=st, participant=p["Jane"], action="dodge")
    combat_skip(combat=_fresh(), by=st, participant=p["Teddy"])
    assert [ph.name for ph in wod_state(_fresh()).phases] == ["main"]
    combat_skip(combat=_fresh(), by=st, participant=p["Teddy"])
    combat_resolve(combat=_fresh(), by=st, participant=p["Jane"], rng=random.Random(2))
    assert _fresh().stage == CombatStage.BOOK_KEEPING
    assert _rage(cast, "Teddy") == 4
    assert _fresh().haste[str(p["Teddy"].pk)] == 2  # the choice still carries over
