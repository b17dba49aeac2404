"""A finished challenge's row is read once per process (combat/challenges/finished.py ``rows``,
combat/challenges/reads.py): each change lists the scene's challenges by pk and step and reads
whole only those not kept; a row kept is served at its step only, who left it is read afresh,
an open one is never kept, and what is served is what the database holds."""

from __future__ import annotations

import pytest
from django.db import connection
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext

from combat import fragments, render_cache
from combat.challenges import finished, reads, selectors
from combat.challenges.leaving import challenge_leave
from combat.challenges.reads import step_token
from combat.challenges.storyteller import challenge_st
from combat.models import Challenge
from combat.templatetags import finished_cards

pytestmark = pytest.mark.django_db


def _rows(t) -> list[Challenge]:
    """The scene's challenges as one change's renderings read them."""
    with render_cache.RenderCache().active():
        return reads.scene_rows(t.refresh().scene)


def _whole_reads(captured: CaptureQueriesContext) -> int:
    """Reads of challenges' whole rows by their ids; the list reads pk and step (and an open
    one's every field)."""
    return sum(
        'FROM "combat_challenge"' in q["sql"]
        and '"combat_challenge"."id" IN (' in q["sql"]
        and 'AS "always"' not in q["sql"]  # a list (the phones' picks its ids by a subquery)
        for q in captured.captured_queries
    )


def _as_stored(row: Challenge) -> dict:
    return model_to_dict(row) | {"step": row.step, "created_at": row.created_at}


def test_a_finished_row_and_card_are_served_without_reading_the_row_again(classic):
    t = classic
    ch = t.finished()
    users = [t.a_user.pk, t.d_user.pk]
    first = fragments.scene_change_fragments(t.refresh().scene.pk, private_user_ids=users)
    kept = dict(finished.rows.stats)
    with CaptureQueriesContext(connection) as captured:
        again = fragments.scene_change_fragments(t.refresh().scene.pk, private_user_ids=users)
    assert _whole_reads(captured) == 0  # listed by pk and step only
    listed = [q["sql"] for q in captured.captured_queries if 'FROM "combat_challenge"' in q["sql"]]
    # the scene's row (whose flag asks whether it had a challenge), then the phones' list
    # (bounded: reads.phone_rows), the board's bounded one (its open rows whole, its newest
    # finished ones' pks and steps with their count: combat/challenges/board_reads.py); no NPC
    # start form, so no participant's latest challenge (the test form's key is the list's
    # newest: test_board_start_keys.py)
    assert len([q for q in listed if not q.startswith('SELECT "combat_scene"')]) == 2
    assert finished.rows.stats["hits"] > kept["hits"]
    assert again == first
    assert f"challenge-{ch.pk}-attacker" in again.private[t.a_user.pk]
    (row,) = _rows(t)
    assert _as_stored(row) == _as_stored(Challenge.objects.get(pk=ch.pk))
    assert row.attacker.pk == t.a.pk and row.scene.pk == t.scene.pk
    assert row.scene_id == t.scene.pk and row.defender is not None and row.defender.pk == t.d.pk
    assert row.token == step_token(row)  # kept with the row: a function of its pk and step
    (other,) = _rows(t)
    assert other is not row  # each change's rows its own: what one attaches stays there
    finished.rows.clear()
    finished.cards.clear()
    finished_cards.clear()
    assert fragments.scene_change_fragments(t.scene.pk, private_user_ids=users) == again


def test_a_changed_step_is_read_anew_never_served_stale(classic):
    t = classic
    ch = t.finished()
    (before,) = _rows(t)
    assert before.status == "over" and (ch.pk, before.step) in finished.rows.held()
    challenge_st(scene=t.refresh().scene, challenge=t.ch(ch), by=t.st, action="void", text="oops")
    with CaptureQueriesContext(connection) as captured:
        (after,) = _rows(t)
    assert _whole_reads(captured) == 1  # its step moved: the row is read again
    assert after.status == "void" and after.step == before.step + 1
    assert _as_stored(after) == _as_stored(Challenge.objects.get(pk=ch.pk))
    board = selectors.board_card_list(t.scene)
    assert [c["status"] for c in board] == ["Voided"]


def test_leaving_moves_no_step_and_is_read_afresh(classic):
    t = classic
    ch = t.finished()
    assert len(selectors.player_cards(t.refresh().scene, t.a_user)["cards"]) == 1
    (before,) = _rows(t)
    challenge_leave(scene=t.refresh().scene, challenge=t.ch(ch), by=t.a_user)
    with CaptureQueriesContext(connection) as captured:
        (after,) = _rows(t)
    assert _whole_reads(captured) == 0  # the same step: the row kept, who left it read
    assert after.step == before.step and after.options["left"] == [t.a_user.pk]
    assert "left" not in before.options  # the kept row is not changed
    with render_cache.RenderCache().active():
        assert selectors.player_cards(t.scene, t.a_user)["cards"] == []
    with render_cache.RenderCache().active():
        assert len(selectors.player_cards(t.scene, t.d_user)["cards"]) == 1  # until she leaves


def test_an_open_challenge_is_never_kept_and_comes_whole_with_the_list(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    (row,) = _rows(t)
    assert row.is_open and not any(key[0] == ch.pk for key in finished.rows.held())
    with CaptureQueriesContext(connection) as captured:
        (again,) = _rows(t)
    assert _whole_reads(captured) == 0  # its every field read with the list, in one query
    challenge_reads = [q for q in _not_the_scene_row(captured) if "combat_challenge" in q["sql"]]
    assert len(challenge_reads) == 1
    stored = Challenge.objects.get(pk=ch.pk)
    assert _as_stored(again) == _as_stored(stored) and again.options
    assert again.deadline == stored.deadline and again.created_at == stored.created_at
    assert not again._state.adding and again.get_deferred_fields() == set()


def _not_the_scene_row(captured: CaptureQueriesContext) -> list[dict]:
    scene_row = 'SELECT "combat_scene"."id"'
    return [q for q in captured.captured_queries if not q["sql"].startswith(scene_row)]


def test_a_kept_hidden_npc_stays_hidden_from_players(classic):
    t = classic
    ch = t.lost_to_a_hidden_npc()
    users = [t.a_user.pk, t.d_user.pk]
    for _ in range(2):  # the row read, then kept
        out = fragments.scene_change_fragments(t.refresh().scene.pk, private_user_ids=users)
        assert "Lurker" not in out.players and "Lurker" not in out.private[t.a_user.pk]
        assert "Lurker" in out.storytellers
    assert any(key[0] == ch.pk for key in finished.rows.held())
