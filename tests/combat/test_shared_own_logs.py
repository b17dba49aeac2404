"""One change's renderings read the own logs of every player they render in one query
(issue 21), with exactly the rules of one player's own read (``selectors.log_for_player``):
a line reaches a player when it concerns one of their characters, and nothing else does (a
hidden NPC's line, another player's private line, a public line no character of theirs is in).
"""

from __future__ import annotations

import itertools
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from combat import fragments, render_cache, selectors
from combat.models import Participant, Scene, SceneLogEntry
from tests.combat.challenges.conftest import make_table
from tests.factories import CharacterFactory

pytestmark = pytest.mark.django_db


def _line(scene: Scene, text: str, *characters, public: bool = False) -> SceneLogEntry:
    seq = (SceneLogEntry.objects.filter(scene=scene).order_by("-seq").first().seq or 0) + 1
    entry = SceneLogEntry.objects.create(
        scene=scene, seq=seq, game_time=0, kind="note", text=text, public=public
    )
    entry.characters.set(characters)
    return entry


@pytest.fixture
def table():
    t = make_table("met_classic")
    t.start(category="physical", bid="Strong")
    return t.refresh()


def _own_logs(scene_id: int, users) -> dict[int, list[str]]:
    """Each player's own log as the renderings of one change read it."""
    scene = Scene.objects.get(pk=scene_id)
    cache = render_cache.RenderCache()
    with cache.active():
        render_cache.cached(("private_users", scene.pk), lambda: tuple(u.pk for u in users))
        return {u.pk: [e.text for e in selectors.own_log(scene, u)] for u in users}


def test_one_change_reads_the_own_logs_of_its_players_once(table) -> None:
    users = [table.a_user.pk, table.d_user.pk]
    with CaptureQueriesContext(connection) as captured:
        parts = list(
            fragments.scene_change_parts(
                table.scene.pk, private_user_ids=users, own_parts=False, board=False
            )
        )
    assert len([p for p in parts if p[0] == "private"]) == 2
    logs = [q["sql"] for q in captured if 'FROM "combat_scenelogentry"' in q["sql"]]
    assert len(logs) == 1, logs


def test_the_shared_read_shows_each_player_what_their_own_read_shows(table) -> None:
    """A hidden NPC's line, the other player's private line and a public line that concerns
    nobody of theirs never reach a player; a line with two of a player's characters counts once;
    the newest ``PHONE_LOG_LENGTH`` lines only, in order."""
    scene = table.scene
    npc = CharacterFactory(chronicle=scene.chronicle, name="Lurker", npc=True, player=None)
    Participant.objects.create(scene=scene, character=npc, name="Lurker", hidden=True, npc=True)
    second = CharacterFactory(chronicle=scene.chronicle, name="Twin", player=table.a_user)
    a, d = table.a.character, table.d.character
    _line(scene, "the lurker watches", npc)
    _line(scene, "the lurker bites the defender", npc, d)
    _line(scene, "only the attacker knows", a)
    _line(scene, "a public line about nobody", public=True)
    _line(scene, "both of mine", a, second)
    for n in range(selectors.PHONE_LOG_LENGTH + 3):
        _line(scene, f"defender line {n}", d)
    shared = _own_logs(scene.pk, [table.a_user, table.d_user])
    for user in (table.a_user, table.d_user):
        alone = [
            e.text
            for e in selectors.log_for_player(
                scene, user, limit=selectors.PHONE_LOG_LENGTH, public=False
            )
        ]
        assert shared[user.pk] == alone
    mine = shared[table.a_user.pk]
    assert "only the attacker knows" in mine and mine.count("both of mine") == 1
    assert not any("lurker" in t or "defender line" in t or "nobody" in t for t in mine)
    theirs = shared[table.d_user.pk]
    assert len(theirs) == selectors.PHONE_LOG_LENGTH
    assert theirs[-1] == f"defender line {selectors.PHONE_LOG_LENGTH + 2}"
    assert "only the attacker knows" not in theirs and "the lurker watches" not in theirs
    assert "both of mine" not in theirs


def test_players_beyond_one_statement_read_alike(table, monkeypatch) -> None:
    """More players than one statement takes (``own_log.READERS_AT_ONCE``) read what they
    read together."""
    from combat import own_log

    a, d = table.a.character, table.d.character
    _line(table.scene, "theirs and mine", a, d)
    _line(table.scene, "only mine", a)
    users = [table.a_user, table.d_user]
    together = _own_logs(table.scene.pk, users)
    monkeypatch.setattr(own_log, "READERS_AT_ONCE", 1)
    with CaptureQueriesContext(connection) as captured:
        apart = _own_logs(table.scene.pk, users)
    logs = [q["sql"] for q in captured if 'FROM "combat_scenelogentry"' in q["sql"]]
    assert apart == together and len(logs) == 2
    assert together[table.d_user.pk][-1] == "theirs and mine"
    assert together[table.a_user.pk][-2:] == ["theirs and mine", "only mine"]


def test_the_read_is_one_text_per_number_of_readers_prepared_on_postgresql(table) -> None:
    """The players' ids are parameters, not written into the text: players of any ids share
    one statement per number of readers, which PostgreSQL prepares once per connection
    (``config.prepared.statement_cursor``) instead of parsing and planning it on every push."""
    from combat import own_log

    a, d = table.a.character, table.d.character
    _line(table.scene, "theirs and mine", a, d)
    texts = []

    def seen(execute, sql, params, many, context):
        if "AS reader" in sql:
            texts.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(seen):
        for users in ([table.a_user.pk], [table.d_user.pk], [table.a_user.pk, table.d_user.pk]):
            logs = own_log.read(table.scene.pk, users, selectors.PHONE_LOG_LENGTH)
            assert all(log[-1].text == "theirs and mine" for log in logs.values())
    assert texts[0] == texts[1] != texts[2]
    assert not any(str(pk) in texts[0] for pk in (table.a_user.pk, table.d_user.pk))
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements")
            prepared = {s for (s,) in cursor.fetchall() if "AS reader" in s}
        # one reader's text and two readers', each prepared (the connection, which earlier
        # tests used too, may hold other readers' shapes: the board's, three readers)
        assert {_numbered(texts[0]), _numbered(texts[2])} <= prepared, prepared


def _numbered(sql: str) -> str:
    """``sql`` with its ``%s`` numbered as psycopg sends a statement it prepares ($1, $2...)."""
    count = itertools.count(1)
    return re.sub("%s", lambda _: f"${next(count)}", sql)


def test_lines_of_another_scene_and_of_others_leave_a_player_s_own_as_their_own_read(table):
    """The read walks each of the player's characters' lines (combat.own_log): lines of the
    same character in another scene, newer or older, and a crowd of others' lines in this
    one, leave exactly ``log_for_player``'s lines, however many."""
    scene = table.scene
    a, d = table.a.character, table.d.character
    other = make_table("met_classic").scene
    second = CharacterFactory(chronicle=scene.chronicle, name="Twin", player=table.a_user)
    for n in range(selectors.PHONE_LOG_LENGTH):  # more than the phone shows: the limit bites
        _line(scene, f"mine {n}", a)
        _line(other, f"elsewhere {n}", a)
    _line(scene, "both of mine, late", a, second)
    for n in range(3 * selectors.PHONE_LOG_LENGTH):
        _line(scene, f"theirs {n}", d)
        _line(other, f"elsewhere, later {n}", a, second)
    _line(scene, "the twin's alone", second)
    shared = _own_logs(scene.pk, [table.a_user, table.d_user])
    for user in (table.a_user, table.d_user):
        alone = selectors.log_for_player(
            scene, user, limit=selectors.PHONE_LOG_LENGTH, public=False
        )
        assert shared[user.pk] == [e.text for e in alone]
    mine = shared[table.a_user.pk]
    assert len(mine) == selectors.PHONE_LOG_LENGTH
    assert mine[-2:] == ["both of mine, late", "the twin's alone"]
    assert not any(t.startswith(("elsewhere", "theirs")) for t in mine)


def test_the_boards_log_comes_with_the_players_own_and_equals_its_own_read(table) -> None:
    """A change that renders the players' own parts and the board's log reads both in one
    query; the board's lines are those of its own read (every line, hidden NPCs' and private
    ones too, the newest ``BOARD_LOG_LENGTH``), and the log panel pushed is a fresh one."""
    scene = table.scene
    lurker = Participant.objects.create(scene=scene, name="Lurker", npc=True, hidden=True)
    for n in range(selectors.BOARD_LOG_LENGTH + 2):
        _line(scene, f"line {n}", public=n % 3 == 0)
    _line(scene, "Lurker <waits> & watches", public=False)
    _line(scene, "Marcus & Sophia", table.a.character, table.d.character, public=True)
    assert lurker.pk
    users = [table.a_user.pk, table.d_user.pk]
    with CaptureQueriesContext(connection) as captured:
        parts = list(
            fragments.scene_change_parts(
                scene.pk, private_user_ids=users, own_parts=False, board=True, regions=["log"]
            )
        )
    logs = [q["sql"] for q in captured if 'FROM "combat_scenelogentry"' in q["sql"]]
    assert len(logs) == 1, logs
    (board,) = [html for audience, _, html in parts if audience == "storytellers"]
    assert "Lurker &lt;waits&gt; &amp; watches" in board and "line 2" in board
    fresh = Scene.objects.get(pk=scene.pk)
    assert board == fragments.board_regions(fresh, ["log"])
    shown = selectors.log_for_storyteller(fresh, selectors.BOARD_LOG_LENGTH)
    cache = render_cache.RenderCache()
    with cache.active():
        render_cache.cached(("board_log", scene.pk), lambda: True)
        selectors.own_logs(fresh, users)
        lines = render_cache.known(("log", scene.pk))
    assert [(e.pk, e.kind, e.public, e.created_at) for e in lines] == [
        (e.pk, e.kind, e.public, e.created_at) for e in shown
    ]


# The own-log arm of PostgreSQL before its scene check answered a boolean (commit history of
# combat/own_log.py): kept to compare the reads on random logs.
_OLD_ARM = (
    "SELECT * FROM (SELECT DISTINCT CAST(%s AS bigint) AS reader, l.id AS id,"
    " l.seq AS seq, l.game_time AS game_time, l.text AS text"
    ' FROM "characters_character" c CROSS JOIN LATERAL (SELECT t.scenelogentry_id AS id'
    ' FROM "combat_scenelogentry_characters" t WHERE t.character_id = c.id'
    ' AND (SELECT m.scene_id FROM "combat_scenelogentry" m WHERE m.id = t.scenelogentry_id) = %s'
    ' ORDER BY t.scenelogentry_id DESC LIMIT %s) x INNER JOIN "combat_scenelogentry" l'
    " ON l.id = x.id WHERE c.player_id = %s ORDER BY l.seq DESC, l.id DESC LIMIT %s) arm"
)


def _old_read(scene_id: int, user_id: int, limit: int) -> list[tuple[int, int, int, str]]:
    with connection.cursor() as cursor:
        cursor.execute(_OLD_ARM, [user_id, scene_id, limit, user_id, limit])
        rows = [(pk, seq, game_time, text) for _, pk, seq, game_time, text in cursor.fetchall()]
    return sorted(rows, key=lambda r: (r[1], r[0]))


def test_random_logs_read_as_the_old_statement_and_log_for_player(table) -> None:
    """Random lines of two scenes, naming none, one or several of four characters (two of
    one player's, one of the other's, a hidden NPC): each player's own log, for several
    limits, is ``log_for_player``'s and, on PostgreSQL, the previous statement's."""
    import random

    from combat import own_log

    rng = random.Random(35)
    scene = table.scene
    other = make_table("met_classic").scene
    npc = CharacterFactory(chronicle=scene.chronicle, name="Lurker", npc=True, player=None)
    Participant.objects.create(scene=scene, character=npc, name="Lurker", hidden=True, npc=True)
    second = CharacterFactory(chronicle=scene.chronicle, name="Twin", player=table.a_user)
    cast = [table.a.character, second, table.d.character, npc]
    for n in range(160):
        named = rng.sample(cast, rng.choice((0, 1, 1, 1, 2, 3)))
        _line(rng.choice((scene, scene, other)), f"line {n}", *named, public=rng.random() < 0.2)
    users = [table.a_user, table.d_user]
    for limit in (1, 3, 7, 20, 200):
        for place in (scene, other):
            logs = own_log.read(place.pk, [u.pk for u in users], limit)
            for user in users:
                got = [(e.pk, e.seq, e.game_time, e.text) for e in logs[user.pk]]
                spec = selectors.log_for_player(place, user, limit=limit, public=False)
                assert got == [(e.pk, e.seq, e.game_time, e.text) for e in spec], limit
                if connection.vendor == "postgresql":
                    assert got == _old_read(place.pk, user.pk, limit)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's plan")
def test_a_player_s_read_walks_their_characters_newest_lines_only(table) -> None:
    """Each of the player's characters' lines are walked back from the newest and the walk
    stops at the ``limit``-th of the scene: a character's older lines of the night are not
    read (the scene check written as ``(SELECT scene_id ...) = %s``, which the planner
    guessed few lines pass, read and sorted every one of them on every push)."""
    import json

    from combat import own_log

    a = table.a.character
    for n in range(150):
        _line(table.scene, f"mine {n}", a)
    limit = 5
    sql = own_log._statement(connection.vendor, 1)
    with connection.cursor() as cursor:
        # as autovacuum has the tables after a night's lines (a fresh table's guess of a
        # character's lines, 8, is fewer than a phone's log: walking back would not pay)
        cursor.execute("ANALYZE combat_scenelogentry, combat_scenelogentry_characters")
        cursor.execute(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + sql,
            own_log._params(connection.vendor, table.a_user.pk, table.scene.pk, limit),
        )
        (plan,) = cursor.fetchone()
    plan = plan if isinstance(plan, list) else json.loads(plan)

    def nodes(node):
        yield node
        for child in node.get("Plans", []):
            yield from nodes(child)

    walked = [
        n["Actual Rows"] * n["Actual Loops"]
        for n in nodes(plan[0]["Plan"])
        if n.get("Relation Name") == "combat_scenelogentry_characters"
    ]
    assert walked and sum(walked) <= 2 * limit, json.dumps(plan, indent=1)
