"""One change's renderings read each sheet and the scene's challenges once (combat.render_cache);
a step's answer shares its pushes' reads while the scene stays at that seq; nothing is ever
read from the cache of another change."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from combat import fragments, render_cache
from combat.challenges import sheets, start_form
from combat.challenges.answering import challenge_answer

pytestmark = pytest.mark.django_db


def _sheet_reads(captured: CaptureQueriesContext) -> int:
    """Reads of characters' rows; not the own logs' (combat.own_log: the lines of each
    player's characters, which it names by their player alone)."""
    return sum(
        'FROM "characters_character"' in q["sql"] and "combat_scenelogentry" not in q["sql"]
        for q in captured.captured_queries
    )


def _challenge_lists(captured: CaptureQueriesContext) -> int:
    return sum(
        'FROM "combat_challenge"' in q["sql"]
        and not _board_list(q["sql"])
        and not _last_started(q["sql"])
        for q in _not_the_scene_row(captured)
    )


def _board_list(sql: str) -> bool:
    """The board's own bounded list (board_reads._listed: pk, step, status, finished or not
    of the open ones and the newest finished ones), not a read of whole rows."""
    return 'AS "done"' in sql


def _last_started(sql: str) -> bool:
    """The board's start forms' key: each participant's latest challenge as attacker
    (start_form.last_started, one index look-up each), not a list of challenges."""
    return sql.startswith('SELECT "combat_participant"."id" AS "pk", (SELECT')


def _not_the_scene_row(captured: CaptureQueriesContext) -> list[dict]:
    """The queries but the scene's row (whose flags ask whether it had a challenge)."""
    scene_row = 'SELECT "combat_scene"."id"'
    return [q for q in captured.captured_queries if not q["sql"].startswith(scene_row)]


def test_one_change_reads_each_sheet_and_the_challenges_once_for_every_audience(classic):
    t = classic
    t.start(category="physical", bid="Strong")  # the defender's turn: the board reads its sheet
    t.refresh()
    users = [t.a_user.pk, t.d_user.pk]
    with CaptureQueriesContext(connection) as captured:
        out = fragments.scene_change_fragments(t.scene.pk, private_user_ids=users)
    # Marcus's and Sophia's sheets, whoever shows them: their rows (the sheets' versions)
    # come with the scene's participants, which every audience reads (combat.selectors)
    assert _sheet_reads(captured) == 0
    # the public part and both private parts: the phones' list of challenges (pk and step,
    # and the open one's every field: reads.phone_rows) once; the board takes its open row
    # from it (board_reads._open_ones; its own bounded list is of pks and steps, the count
    # of finished ones the scene row's: combat/challenges/board_reads.py); no finished one
    assert _challenge_lists(captured) == 1
    assert "Marcus vs Sophia" in out.players and 'id="challenge-board"' in out.storytellers
    assert "Nothing to bid" in out.private[t.d_user.pk]  # the card's bids: Sophia's sheet
    assert "Tough" in out.private[t.d_user.pk] and "Strong" in out.private[t.a_user.pk]


def test_a_step_answer_shares_its_pushes_reads_until_the_scene_moves_on(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    t.refresh()

    @render_cache.one_request
    def step() -> tuple[int, int]:
        fragments.private_state(t.scene, t.a_user)  # the push, on commit
        with CaptureQueriesContext(connection) as answer:
            fragments.private_state(t.scene, t.a_user)  # the answer's region, same seq
        challenge_answer(  # the next step (its pushes wait for a commit)
            scene=t.refresh().scene,
            challenge=t.ch(ch),
            by=t.d_user,
            side="defender",
            answer="bid",
            bid="Tough",
        )
        with CaptureQueriesContext(connection) as moved:
            fragments.private_state(t.refresh().scene, t.a_user)  # another seq: afresh
        return _sheet_reads(answer), _sheet_reads(moved)

    assert step() == (0, 1)


def test_outside_a_rendering_every_read_is_fresh(classic):
    """The services (and a socket's whole state) read what is there now: a loss written
    between two reads shows in the second."""
    t = classic
    with CaptureQueriesContext(connection) as captured:
        fragments.private_state(t.scene, t.d_user)
        fragments.private_state(t.scene, t.d_user)
    assert _sheet_reads(captured) == 2
    before = sheets.load(t.d).traits("physical")["Tough"]
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "scissors")
    t.do("accept", ch, t.d_user, side="defender")
    assert sheets.load(t.d).traits("physical")["Tough"] == before - 1


def test_a_cache_is_never_shared_by_two_seqs_of_a_scene(classic):
    t = classic
    t.refresh()

    @render_cache.one_request
    def caches() -> tuple[bool, bool]:
        first = render_cache.for_scene(t.scene)
        same = render_cache.for_scene(t.scene) is first
        t.scene.seq += 1
        return same, render_cache.for_scene(t.scene) is first

    assert caches() == (True, False)
    assert render_cache.for_scene(t.scene) is not render_cache.for_scene(t.scene)


def test_a_changes_pieces_read_the_players_characters_and_sheets_once_for_all(classic):
    """The players' own pieces of one change (their prompts: the start forms need their
    sheets) read their characters in one query and their sheets in one batch, and each
    player's pieces are what they are rendered alone: nobody's start form reaches another."""
    t = classic
    t.start(category="physical", bid="Strong")
    t.refresh()
    users = [t.a_user.pk, t.d_user.pk]
    with CaptureQueriesContext(connection) as captured:
        parts = list(
            fragments.scene_change_parts(
                t.scene.pk, private_user_ids=users, own_parts=False, board=False
            )
        )
    assert _sheet_reads(captured) == 0  # their rows come with the scene's participants
    # the scene's challenges once (their list, with the open one's row): the start forms'
    # keys (each attacker's latest) from them too
    assert sum('FROM "combat_challenge"' in q["sql"] for q in _not_the_scene_row(captured)) == 1
    own = [q for q in captured.captured_queries if 'FROM "combat_participant"' in q["sql"]]
    assert len([q for q in own if '"characters_character"."player_id"' in q["sql"]]) == 1
    together = {user: html for kind, user, html in parts if kind == "private"}
    alone = {u.pk: fragments.private_pieces(t.scene, u) for u in (t.a_user, t.d_user)}
    assert together == alone
    last = start_form.last_started(t.scene)  # no rendering: the database's own answer
    assert last[t.a.pk] > 0
    mine = f"start-{t.scene.pk}-{t.a.pk}-{last[t.a.pk]}"
    theirs = f"start-{t.scene.pk}-{t.d.pk}-{last.get(t.d.pk, 0)}"
    assert mine in together[t.a_user.pk] and theirs not in together[t.a_user.pk]
    assert theirs in together[t.d_user.pk] and mine not in together[t.d_user.pk]


def _participant_reads(captured: CaptureQueriesContext) -> int:
    return sum(
        q["sql"].startswith('SELECT "combat_participant"."id"') and not _last_started(q["sql"])
        for q in captured.captured_queries
    )


def test_the_challenges_sides_are_the_participants_the_change_reads_anyway(classic):
    """A challenge's sides come from the scene's participants (one read for every audience);
    one taken out of the scene since is read apart, and still named on the cards."""
    from combat import services as scenes
    from combat.challenges import reads
    from combat.selectors import active_participants

    t = classic
    ch = t.start(category="physical", bid="Strong")
    with render_cache.RenderCache().active():
        (row,) = reads.scene_rows(t.refresh().scene)
        present = {p.pk: p for p in active_participants(t.scene)}
        assert row.attacker is present[t.a.pk] and row.defender is present[t.d.pk]
    t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    t.throw(ch, "rock", "scissors")
    t.do("accept", ch, t.d_user, side="defender")
    scenes.scene_remove(scene=t.refresh().scene, by=t.st, participant=t.d)
    with CaptureQueriesContext(connection) as captured:
        out = fragments.scene_change_fragments(t.scene.pk, private_user_ids=[t.a_user.pk])
    # the scene's, then Sophia's (taken out), for the phones' list and the board's
    assert _participant_reads(captured) == 3
    assert "Marcus vs Sophia" in out.private[t.a_user.pk]
    assert "Marcus vs Sophia" in out.storytellers
