"""One round change's renderings read each row once: every audience's part (the board, the
public part, each player's own) and the answer of the tap that made it (the same ``seq``,
:mod:`combat.render_cache`). A read after a write sees the write."""

from __future__ import annotations

import re
from contextlib import contextmanager

import pytest
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from combat import fragments, render_cache
from combat.models import Combat, Scene
from combat.rounds import views
from combat.rounds.declaring import combat_declare

pytestmark = pytest.mark.django_db

SHEET_TABLES = ("characters_character", "characters_trait", "characters_ledgerentry")


def _from(queries: list[str], table: str, *, count: bool = False) -> list[str]:
    """The queries that read rows of ``table`` (``count``: its COUNTs and MAXes instead)."""
    rows = [q for q in queries if re.match(rf'SELECT (DISTINCT )?"{table}"', q)]
    if not count:
        return rows
    return [q for q in queries if re.search(rf'FROM "{table}"', q) and q not in rows]


def _character_ids(queries: list[str]) -> list[int]:
    """The sheets read, one id per sheet each time it is read."""
    ids: list[int] = []
    for q in _from(queries, "characters_character"):
        found = re.search(r'"characters_character"\."id" IN \(([^)]*)\)', q)
        if found:
            ids += [int(i) for i in found.group(1).split(",")]
    return ids


def _change(scene: Scene, users: list, **kw) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        list(fragments.scene_change_parts(scene.pk, private_user_ids=[u.pk for u in users], **kw))
    return [q["sql"] for q in captured]


def test_one_change_reads_the_fight_its_sheets_and_the_chase_once(fight, cast):
    queries = _change(fight, [cast.users["Jane"], cast.users["Frank"]], own_parts=False)
    members = [q for q in _from(queries, "combat_participant") if '"id" IN' in q]
    assert members == [], "the fight's members: from the scene's participants, read once"
    scene_people = [q for q in _from(queries, "combat_participant") if "removed_at" in q]
    assert len(scene_people) == 1, "the scene's participants: once for every audience"
    ids = _character_ids(queries)
    # each sheet once, whoever shows it: its row (its version) with the scene's participants
    assert ids == [], "no sheet's row read apart from the scene's participants"
    assert len(_from(queries, "combat_combat")) == 1, "the fight once"
    assert _from(queries, "chases_chase") == [], "no chase: the scene's row says it had none"
    assert _from(queries, "combat_challenge") == [], "no challenge: the scene's row says so"


def _answer(scene: Scene, user, users: list, *, tablet: bool) -> list[str]:
    """A tap's pushes (every audience) then its answer, in one request: the answer's queries."""
    request = RequestFactory().post("/", HTTP_HX_REQUEST="true")
    request.user = user

    @render_cache.one_request
    def tap() -> list[str]:
        _change(scene, users, own_parts=False)
        fresh = Scene.objects.get(pk=scene.pk)
        with CaptureQueriesContext(connection) as captured:
            answer = views._reply(request, fresh, tablet)
        assert answer.status_code == 200
        return [q["sql"] for q in captured]

    return tap()


def test_a_phone_answer_reads_nothing_its_pushes_read(fight, cast):
    jane = cast.users["Jane"]
    queries = _answer(fight, jane, [jane, cast.users["Frank"]], tablet=False)
    for table in (*SHEET_TABLES, "combat_participant", "combat_combat", "chases_chase"):
        assert _from(queries, table) == [], table
    assert _from(queries, "combat_scenelogentry") == [], "the player's log, read by the pushes"


def test_a_tablet_answer_reads_nothing_its_pushes_read(fight, cast):
    users = [cast.users["Jane"], cast.users["Frank"]]
    queries = _answer(fight, cast.storyteller, users, tablet=True)
    for table in (*SHEET_TABLES, "combat_participant", "combat_presence", "chases_chase"):
        assert _from(queries, table) == [] and _from(queries, table, count=True) == [], table
    assert _from(queries, "combat_scenelogentry") == []
    assert queries == [], "the scene's row too: the one its pushes read after the commit"


@contextmanager
def _unseen_by_this_request():
    """A write made elsewhere (another process's tap): this request sees no write of its own
    (render_cache drops a request's reads on the request's own writes)."""
    wrappers = connection.execute_wrappers
    saved = list(wrappers)
    wrappers.clear()
    try:
        yield
    finally:
        wrappers[:] = saved


def test_a_board_read_after_a_change_shows_it(fight, cast):
    """The reads a request shares are the scene's at one seq: a change moves the seq on, even
    one made elsewhere, so a board read after it (in the same request) reads afresh."""
    frank = cast.p["Frank"]

    @render_cache.one_request
    def request() -> tuple[str, str]:
        before = fragments.board_regions(fight, ("combat", "people"))
        combat = Combat.objects.get(scene=fight, ended_at__isnull=True)
        with _unseen_by_this_request():
            combat_declare(combat=combat, by=cast.users["Frank"], participant=frank, action="dodge")
        scene = Scene.objects.get(pk=fight.pk)
        assert scene.seq > fight.seq
        return before, fragments.board_regions(scene, ("combat", "people"))

    before, after = request()
    assert 'Frank · <span class="decl">Dodge</span>' not in before
    assert 'Frank · <span class="decl">Dodge</span>' in after


def test_the_shared_reads_render_as_fresh_ones(fight, cast):
    """Every audience's part rendered with the change's shared reads equals the same part
    rendered alone, reading everything afresh: no rendering changed what another read."""
    users = [cast.users["Jane"], cast.users["Frank"]]
    ids = [u.pk for u in users]
    shared = list(fragments.scene_change_parts(fight.pk, private_user_ids=ids, own_parts=False))
    scene = Scene.objects.get(pk=fight.pk)
    alone = [("private", u.pk, fragments.private_pieces(scene, u)) for u in users]
    alone += [("players", None, fragments.players_state(scene))]
    alone += [("storytellers", None, fragments.board_regions(scene, None))]
    assert shared == alone
