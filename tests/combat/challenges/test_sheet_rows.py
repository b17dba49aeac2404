"""A change's renderings take their sheets' rows (what a sheet's read asks first: its version,
the chronicle's open night and ruleset, the player) from the scene's participants they read
anyway (combat.selectors.active_participants), not from a query of their own; what they key
the per-process sheet cache on is what a fresh read of those rows gives."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from characters import sheet_cache
from characters.models import GameNight
from combat import fragments, render_cache
from combat.models import Scene
from combat.selectors import active_participants
from tests.factories import GameNightFactory

pytestmark = pytest.mark.django_db


def _sheet_row_reads(captured: CaptureQueriesContext) -> int:
    return sum(  # not the own logs' (combat.own_log: the lines of a player's characters)
        'FROM "characters_character"' in q["sql"] and "combat_scenelogentry" not in q["sql"]
        for q in captured.captured_queries
    )


def _keys(scene: Scene) -> dict[int, object]:
    """The sheet cache's key of each character of the scene, as a change's renderings read
    it (from the participants' rows)."""
    with render_cache.RenderCache().active():
        ids = [p.character_id for p in active_participants(scene) if p.character_id]
        return {
            pk: sheet_cache._key(row) for pk, (row, _now) in render_cache.sheets_now(ids).items()
        }


def _fresh_keys(ids: list[int]) -> dict[int, object]:
    return {row.pk: sheet_cache._key(row) for row in sheet_cache._rows(ids)}


def _scene(pk: int) -> Scene:
    return Scene.objects.select_related("chronicle").get(pk=pk)


def test_the_sheets_keys_are_a_fresh_reads_even_after_a_new_night(classic):
    t = classic
    ids = [t.a.character_id, t.d.character_id]
    assert _keys(_scene(t.scene.pk)) == _fresh_keys(ids)
    GameNight.objects.filter(chronicle_id=t.scene.chronicle_id).update(closed_at=timezone.now())
    GameNightFactory(chronicle=t.scene.chronicle, number=99)  # the night the ledger counts
    keys = _keys(_scene(t.scene.pk))
    assert keys == _fresh_keys(ids)
    assert {key[2] for key in keys.values()} == {  # type: ignore[index]
        GameNight.objects.get(chronicle_id=t.scene.chronicle_id, closed_at__isnull=True).pk
    }


def test_a_sheet_written_since_is_read_at_its_new_version(classic):
    t = classic
    before = _keys(_scene(t.scene.pk))[t.d.character_id]
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "scissors")
    t.do("accept", ch, t.d_user, side="defender")  # Sophia loses her bid (the ledger)
    after = _keys(_scene(t.scene.pk))[t.d.character_id]
    assert after != before and after == _fresh_keys([t.d.character_id])[t.d.character_id]
    with render_cache.RenderCache().active():
        active_participants(_scene(t.scene.pk))
        (row, now) = render_cache.sheets_now([t.d.character_id])[t.d.character_id]
    assert now["traits"]["physical"]["Tough"] == t.now(t.d)["traits"]["physical"]["Tough"]
    assert row.player_id == t.d_user.pk and row.chronicle.ruleset == "met_classic"


def test_a_change_reads_no_sheet_row_and_renders_what_a_fresh_read_does(classic):
    t = classic
    t.start(category="physical", bid="Strong")
    users = [t.a_user.pk, t.d_user.pk]
    with CaptureQueriesContext(connection) as captured:
        out = fragments.scene_change_fragments(t.scene.pk, private_user_ids=users)
    assert _sheet_row_reads(captured) == 0
    sheet_cache.clear()  # every sheet read afresh, its rows by their own query
    with CaptureQueriesContext(connection) as captured:
        fresh = fragments.scene_change_fragments(t.scene.pk, private_user_ids=users)
    assert out == fresh
    assert _sheet_row_reads(captured) == 0  # the rows still come with the participants


def test_a_scene_read_without_its_chronicle_reads_its_sheets_rows(classic):
    """The chronicle (its ruleset, in the key) comes from the scene's row: a scene read
    without it leaves the sheets to read their own rows."""
    t = classic
    bare = Scene.objects.get(pk=t.scene.pk)
    with CaptureQueriesContext(connection) as captured, render_cache.RenderCache().active():
        people = active_participants(bare)
        render_cache.sheets_now(p.character_id for p in people if p.character_id)
    assert _sheet_row_reads(captured) == 1


def test_a_change_copies_only_the_rows_of_the_sheets_it_reads(classic, monkeypatch):
    """Issue 21: a shared scene's change renders a few players' own parts of many players: the
    participants' rows are copied for a sheet's read only for the sheets it reads, not for
    everyone in the scene, and what it renders is what a fresh read gives."""
    from characters.demo import CAST, _write_sheet
    from combat import selectors
    from combat import services as scenes
    from tests.factories import CharacterFactory, UserFactory

    t = classic
    for i in range(3):
        user = UserFactory(username=f"bystander_{i}")
        character = CharacterFactory(
            chronicle=t.scene.chronicle, name=f"Bystander {i}", player=user
        )
        _write_sheet(character, "met_classic", CAST["Marcus"][1])
        scenes.scene_join(code=t.scene.join_code, user=user, character=character)
    copied = []
    copy_row = selectors.copy_row
    monkeypatch.setattr(
        selectors, "copy_row", lambda row, **kw: copied.append(row.pk) or copy_row(row, **kw)
    )
    out = fragments.scene_change_fragments(t.scene.pk, private_user_ids=[t.a_user.pk])
    assert sorted(copied) == [t.a.character_id]  # Marcus's start form reads his sheet alone
    sheet_cache.clear()
    assert out == fragments.scene_change_fragments(t.scene.pk, private_user_ids=[t.a_user.pk])
