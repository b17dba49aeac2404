"""Boards get their data from selectors: a render of a scene's screens runs no query.

The scene's selectors read what every region shows (its own and the features', through
``combat.regions``) before the render; the features' template tags only hand it on.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from characters.models import Trait
from combat import board, fragments, render_cache, selectors
from combat.challenges import views as challenge_views
from combat.models import Scene
from tests.combat.challenges.conftest import make_table

pytestmark = pytest.mark.django_db


@pytest.fixture
def table():
    """A met_classic challenge under way: a board, a public part and two private parts."""
    t = make_table("met_classic")
    t.start(category="physical", bid="Strong")
    return t.refresh()


def _queries(render) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        render()
    return [q["sql"] for q in captured]


def test_the_board_renders_without_a_query(table):
    context = {**board.board_state(table.scene), "oob": False}
    assert "challenge_board" in context and "round_board" in context and "chase_board" in context
    assert _queries(lambda: render_to_string(f"{fragments.TABLET}#board", context)) == []


def test_the_public_part_renders_without_a_query(table):
    context = {**selectors.public_state(table.scene), "oob": False}
    assert _queries(lambda: render_to_string(f"{fragments.PHONE}#public", context)) == []


def test_a_private_part_renders_without_a_query(table):
    context = {**selectors.private_state(table.scene, table.a_user), "oob": False}
    assert context["challenge_prompts"]["cards"], "the attacker's card is read"
    assert _queries(lambda: render_to_string(f"{fragments.PHONE}#private", context)) == []


def test_a_region_reads_only_what_it_shows(table):
    """A clock tap's push reads no challenge, fight or chase."""
    clock = _queries(lambda: fragments.board_regions(table.scene, ("clock",)))
    everything = _queries(lambda: fragments.board_regions(table.scene, None))
    assert len(clock) == 0 < len(everything)


def _change(table, **kw) -> list[str]:
    users = [table.a_user.pk, table.d_user.pk]
    scene = table.scene.pk
    return _queries(lambda: list(fragments.scene_change_parts(scene, private_user_ids=users, **kw)))


def test_a_change_of_a_scene_with_no_fight_or_chase_reads_neither(table):
    """Every audience shows the scene's fight and chase: the scene's row says, in its own
    query, whether it has a running fight and whether it had a chase, so a challenge's change
    in a scene with neither reads neither (tests/chases/test_shared_reads.py: a chase is read
    once)."""
    queries = _change(table, own_parts=False)
    rest = [q for q in queries if not q.startswith('SELECT "combat_scene"."id"')]
    assert len(rest) < len(queries), "the scene's row is read"
    assert not [q for q in rest if 'FROM "combat_combat"' in q or 'FROM "chases_chase"' in q]


def test_a_challenge_answer_reads_no_card_its_pushes_read(table):
    """The phone's answer after a step is its prompts, which its push rendered at this seq."""
    request = RequestFactory().post("/", HTTP_HX_REQUEST="true")
    request.user = table.a_user

    @render_cache.one_request
    def tap() -> list[str]:
        _change(table, own_parts=False)
        scene = Scene.objects.get(pk=table.scene.pk)
        return _queries(lambda: challenge_views._region(request, scene, False))

    assert tap() == [], "the scene's row too: the one its pushes read after the commit"


def test_a_read_after_a_write_in_the_same_request_shows_the_write(table):
    """A write that does not move the scene's seq (a sheet's) still drops what the request's
    renderings read before it: nothing read before a write is served after it."""
    character = table.a.character

    @render_cache.one_request
    def request() -> tuple[str, str]:
        scene = Scene.objects.get(pk=table.scene.pk)
        before = fragments.private_state(scene, table.a_user)
        Trait.objects.create(character=character, category="mental", name="Unflappable")
        assert Scene.objects.get(pk=scene.pk).seq == scene.seq
        return before, fragments.private_state(scene, table.a_user)

    before, after = request()
    assert "Unflappable" not in before
    assert "Unflappable" in after


def test_a_change_takes_its_players_from_the_scene_participants_it_reads(table):
    """The players whose own parts a change renders are the users of the participants it
    reads anyway: no query of the users table of its own."""
    queries = _change(table, own_parts=False)
    assert not [q for q in queries if q.startswith('SELECT "auth_user"')]


def test_a_removed_player_still_gets_their_own_part(table):
    """A player no longer in the scene's participants (just removed) is read on their own."""
    table.d.removed_at = timezone.now()
    table.d.save(update_fields=["removed_at"])
    users = [table.a_user.pk, table.d_user.pk]
    parts = list(fragments.scene_change_parts(table.scene.pk, private_user_ids=users))
    assert {u for kind, u, _h in parts if kind == "private"} == set(users)


def test_one_change_reads_the_scene_participants_once_board_included(table):
    """The board's challenge region (its NPCs' start forms) takes the scene's participants
    from the one read every audience shares."""
    queries = _change(table, own_parts=False)
    reads = [q for q in queries if q.startswith('SELECT "combat_participant"."id"')]
    assert len([q for q in reads if '"removed_at" IS NULL' in q]) == 1, reads


def test_a_write_that_opens_with_a_common_table_expression_is_a_write_too(table):
    """``WITH … UPDATE`` (the prepared steps' statements write so: config.prepared) drops
    what the request's renderings read before it, as a plain ``UPDATE`` does."""
    from django.db import connection

    participant = table.d

    @render_cache.one_request
    def request() -> tuple[str, str]:
        scene = Scene.objects.get(pk=table.scene.pk)
        before = fragments.players_state(scene)
        with connection.cursor() as cursor:
            cursor.execute(
                "WITH renamed AS (SELECT %s AS name) UPDATE combat_participant "
                "SET name = (SELECT name FROM renamed) WHERE id = %s",
                ["Unflappable Ulrich", participant.pk],
            )
        return before, fragments.players_state(scene)

    before, after = request()
    assert "Unflappable Ulrich" not in before
    assert "Unflappable Ulrich" in after
