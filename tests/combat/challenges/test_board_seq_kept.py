"""The board's clock panel kept with marks in the seq's and tokens' places, and a
run of settled challenges kept in pieces (combat/templatetags/board_kept.py, board_runs.py):
after every kind of change each pushed region equals a fresh rendering, carries the seq and
the board's token of now, and the kept parts are used."""

from __future__ import annotations

import re

import pytest
from django.template.loader import render_to_string

from characters.services import ledger_spend
from combat import fragments, selectors
from combat import services as scenes
from combat.challenges import selectors as challenge_selectors
from combat.models import Participant, Presence
from combat.render_cache import RenderCache, health_now, sheets_now
from combat.templatetags import board_kept, board_runs
from tests.conftest import forget_kept_renderings

pytestmark = pytest.mark.django_db


def _board(t) -> str:
    return fragments.board_regions(t.refresh().scene)  # every region


def _same(t) -> str:
    kept = _board(t)
    forget_kept_renderings()
    assert kept == _board(t)
    return kept


def _panel(html: str, name: str) -> str:
    found = re.search(rf'<section id="{name}".*?</section>', html, re.S)
    assert found is not None
    return found.group(0)


def test_the_clock_panel_carries_the_seq_of_now_and_equal_a_fresh_rendering(classic):
    t = classic
    t.finished()
    live = t.start(category="physical", bid="Strong")
    _same(t)
    before = _board(t)
    hits = board_kept.stats["hits"]
    t.do("answer", live, t.d_user, side="defender", answer="bid", bid="Tough")
    after = _same(t)
    seq = t.scene.seq
    clock = _panel(after, "clock-panel")
    assert f'data-seq="{seq}"' in clock and f"clock-{t.scene.pk}-{seq}-60" in clock
    assert selectors.scene_token(t.scene) in clock
    assert f'data-seq="{seq}"' in _panel(after, "people-panel")
    assert _panel(after, "people-panel") != _panel(before, "people-panel")  # whom it waits on
    _board(t)
    hits = board_kept.stats["hits"]
    t.do("throw", live, t.a_user, side="attacker", throw="rock")
    assert _board(t) == _same(t)
    assert board_kept.stats["hits"] > hits  # the clock panel kept: only its seq moved
    # what the clock panel shows
    scenes.scene_advance_clock(scene=t.refresh().scene, by=t.st, seconds=60)
    _board(t)
    _same(t)
    scenes.scene_set_situation(scene=t.refresh().scene, by=t.st, situation="A <storm> & rain")
    assert "A &lt;storm&gt; &amp; rain" in _same(t)
    # who is here: a connection, an NPC (hidden), a reveal, a removal
    Presence.objects.create(scene=t.scene, user=t.a_user, channel_name="x1")
    assert "connected now" in _same(t)
    Presence.objects.filter(channel_name="x1").delete()
    _same(t)
    guard = scenes.scene_add_npc(
        scene=t.refresh().scene, by=t.st, name="Guard", pools={"physical": 6}, hidden=True
    )
    assert "Guard" in _same(t)
    Participant.objects.filter(pk=guard.pk).update(hidden=False)
    _same(t)
    scenes.scene_remove(scene=t.refresh().scene, by=t.st, participant=guard)
    assert "Guard" not in _panel(_same(t), "people-panel")
    scenes.scene_set_ruleset(scene=t.refresh().scene, by=t.st, ruleset="met_werewolf")
    _same(t)
    scenes.scene_close(scene=t.refresh().scene, by=t.st)
    assert "This scene is closed." in _same(t)


def test_a_refusal_a_page_and_a_push_each_get_their_own_marks(classic):
    t = classic
    scene = t.refresh().scene
    context = {**selectors.clock_state(scene), "error": "", "csrf_token": "tokA"}
    plain = render_to_string(fragments.REGION_TEMPLATES["clock"], context)
    refused = render_to_string(fragments.REGION_TEMPLATES["clock"], {**context, "error": "No."})
    other = render_to_string(fragments.REGION_TEMPLATES["clock"], {**context, "csrf_token": "tB"})
    forget_kept_renderings()
    assert render_to_string(fragments.REGION_TEMPLATES["clock"], context) == plain
    assert "No." in refused and "No." not in plain
    assert 'value="tB"' in other and "tokA" not in other
    forget_kept_renderings()
    assert render_to_string(fragments.REGION_TEMPLATES["clock"], {**context, "error": "No."}) == (
        refused
    )
    page = t.board()
    assert "csrfmiddlewaretoken" in _panel(page, "clock-panel")
    assert "csrfmiddlewaretoken" not in _panel(_board(t), "clock-panel")


def test_a_run_is_kept_in_pieces_and_a_step_makes_only_its_own_again(classic, monkeypatch):
    t = classic
    monkeypatch.setattr(board_runs, "CHUNK", 2)
    for loser in ("defender", "attacker"):
        t.finished(loser=loser)
    live = t.start(category="physical", bid="Strong")
    (run,) = challenge_selectors.board_cards(t.refresh().scene)["cards"]
    assert len(board_runs.pieces(run["run"])) >= 2
    _same(t)
    live = t.do("answer", live, t.d_user, side="defender", answer="bid", bid="Tough")
    _same(t)
    pieces = dict(board_runs.stats["pieces"])
    t.do("throw", live, t.a_user, side="attacker", throw="rock")
    stepped = _board(t)
    assert board_runs.stats["pieces"]["hits"] > pieces["hits"]  # the finished ones' pieces
    assert board_runs.stats["pieces"]["misses"] <= pieces["misses"] + 1  # the live one's
    forget_kept_renderings()
    assert _board(t) == stepped
    # the live one finishes: it moves among the finished ones
    t.do("throw", live, t.d_user, side="defender", throw="scissors")
    t.do("accept", live, t.d_user, side="defender")
    assert not t.ch(live).is_open
    _same(t)


def test_health_from_the_offered_rows_equals_the_sheets_after_a_change(classic):
    t = classic
    ids = [t.a.character_id, t.d.character_id]

    def both() -> tuple[dict, dict]:
        with RenderCache().active():
            selectors.active_participants(t.refresh().scene)  # offers the sheets' rows
            alone = health_now(ids)
        with RenderCache().active():
            whole = sheets_now(ids)
        return alone, {i: {k: whole[i][1][k] for k in ("damage", "health")} for i in ids}

    alone, whole = both()
    assert alone == whole
    ledger_spend(character=t.d.character, kind="health_damage", by=t.st, amount=2)
    alone, whole = both()
    assert alone == whole and alone[t.d.character_id]["damage"]
    forget_kept_renderings()
    assert both()[0] == alone
