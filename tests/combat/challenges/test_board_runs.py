"""The board's challenges that are a function of their row come in runs rendered once per
process (combat/templatetags/board_runs.py), its people list and test form kept whole
(combat/templatetags/board_kept.py): what is kept is always what a fresh rendering shows."""

from __future__ import annotations

import re

import pytest

from characters.services import ledger_spend
from combat import fragments
from combat import services as scenes
from combat.challenges import reads, selectors
from combat.models import Participant
from combat.render_cache import RenderCache, health_now, sheets_now
from combat.templatetags import board_kept, board_runs, finished_cards

pytestmark = pytest.mark.django_db


def _board(t) -> str:
    return fragments.board_regions(t.refresh().scene, ("challenges",))


def _fresh(t) -> str:
    finished_cards.clear()  # the cards, the runs and the kept parts of the board
    reads.forget_engines()
    return _board(t)


def _entries(t) -> list[dict]:
    return selectors.board_cards(t.refresh().scene)["cards"]


def test_finished_and_live_challenges_come_as_one_run_and_equal_a_fresh_rendering(classic):
    t = classic
    t.finished()
    t.finished(loser="attacker")
    live = t.start(category="physical", bid="Strong")
    live = t.do("answer", live, t.d_user, side="defender", answer="bid", bid="Tough")
    (run,) = _entries(t)
    assert run["run"][0][1].pk == live.pk  # the open one first, then the finished ones
    assert len(run["run"]) == 3
    assert len(selectors.board_card_list(t.scene)) == 3
    first = _fresh(t)
    hits = board_runs.stats["runs"]["hits"]
    assert _board(t) == first and board_runs.stats["runs"]["hits"] == hits + 1
    # a step moves the live one's key: the run is made again, the finished sections kept
    # (found as sections, or in a piece of the run kept whole: board_runs.CHUNK)
    kept = board_runs.stats["sections"]["hits"] + board_runs.stats["pieces"]["hits"]
    t.do("throw", live, t.a_user, side="attacker", throw="rock")
    stepped = _board(t)
    assert stepped != first and "locked in" in stepped and stepped == _fresh(t)
    t.do("throw", live, t.d_user, side="defender", throw="rock")
    assert _board(t) == _fresh(t)
    assert board_runs.stats["sections"]["hits"] + board_runs.stats["pieces"]["hits"] > kept


def test_a_rename_or_a_reveal_is_never_served_stale(classic):
    t = classic
    t.finished()
    kept = _board(t)
    Participant.objects.filter(pk=t.a.pk).update(name="Marcus the Bold")
    renamed = _board(t)
    assert "Marcus the Bold" in renamed and renamed != kept and renamed == _fresh(t)


def test_the_key_holds_the_ruling_on_surprise(classic):
    """Before the defender's bid the card says whether the defender is surprised (C12),
    which the row does not say alone: an incapacitated defender is (C7, C12), and damage
    goes to the ledger without moving the challenge's step."""
    t = classic
    ch = t.start(category="physical", bid="Strong")
    (run,) = _entries(t)
    ((key, row),) = run["run"]
    assert row.status == "answer" and key[-1] is False
    before = _board(t)  # kept
    assert "is not surprised" in before
    step = t.ch(ch).step
    ledger_spend(character=t.d.character, kind="health_damage", by=t.st, amount=3)
    assert t.ch(ch).step == step
    (run,) = _entries(t)
    ((surprised, _),) = run["run"]
    assert surprised[-1] is True and surprised[:2] == key[:2]  # the same row's pk and step
    after = _board(t)
    assert "is surprised" in after and after == _fresh(t)


def test_a_card_the_storyteller_plays_a_side_of_or_a_mob_is_built_every_time(classic):
    t = classic
    npc = scenes.scene_add_npc(scene=t.scene, by=t.st, name="Guard", pools={"physical": 6})
    ch = t.start(attacker=npc, defender=t.a, by=t.st, category="physical", bid="Physical")
    (card,) = _entries(t)
    assert "run" not in card and card["ch"].pk == ch.pk and card["st_sides"]
    assert selectors.settled_key(t.ch(ch)) is None


def test_a_run_carries_each_pages_token_and_a_push_none(classic):
    t = classic
    t.finished()
    pushed = _fresh(t)
    assert "cc-void-form" in pushed and "csrfmiddlewaretoken" not in pushed
    pages = [t.board(), t.board()]
    assert _board(t) == pushed
    tokens = [set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', p)) for p in pages]
    assert all(len(found) == 1 for found in tokens) and tokens[0] != tokens[1]


def test_an_engine_is_built_again_for_another_state_at_the_same_step(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    row = t.ch(ch)
    engine = reads.engine_of(row)
    again = t.ch(ch)
    assert again is not row and reads.engine_of(again) is engine  # kept by pk and step
    other = t.ch(ch)
    other.state = {**other.state, "wins": 7}  # a state written and rolled back, say
    assert reads.engine_of(other) is not engine


def test_health_alone_equals_the_sheets(classic):
    t = classic
    ids = [t.a.character_id, t.d.character_id]
    with RenderCache().active():
        alone = health_now(ids)
    with RenderCache().active():
        whole = sheets_now(ids)
    assert alone == {i: {k: whole[i][1][k] for k in ("damage", "health")} for i in ids}


def test_the_people_list_and_the_test_form_are_kept_and_equal_a_fresh_rendering(classic):
    t = classic
    whole = ("people", "challenges")
    first = fragments.board_regions(t.refresh().scene, whole)
    hits = board_kept.stats["hits"]
    assert fragments.board_regions(t.refresh().scene, whole) == first
    assert board_kept.stats["hits"] == hits + 2  # the list and the form
    Participant.objects.filter(pk=t.d.pk).update(name="Sophia the Bold")
    renamed = fragments.board_regions(t.refresh().scene, whole)
    assert renamed.count("Sophia the Bold") >= 2  # her row, the form's option
    finished_cards.clear()
    assert fragments.board_regions(t.refresh().scene, whole) == renamed
