"""The scene's participants, read once for a change's renderings
(``selectors.active_participants``), are built from their columns without a model's
``__init__`` per row (issue 21): they must be the rows ``select_related`` made, field for
field, with their characters and players (a quick NPC has no character, an NPC sheet no
player; a player's columns the renderings use, ``selectors.PLAYER_COLUMNS``), and no one
taken out of the scene."""

from __future__ import annotations

import pytest
from django.db.models.signals import post_init, pre_init

from characters.models import GameNight
from combat import render_cache, selectors
from combat import services as scenes
from combat.models import Participant
from tests.factories import CharacterFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db


def _fields(row) -> dict:
    return {f.attname: getattr(row, f.attname) for f in type(row)._meta.concrete_fields}


def test_the_participants_are_the_rows_select_related_reads(django_assert_num_queries):
    scene = SceneFactory()
    scene.chronicle.storytellers.add(scene.storyteller)
    for name in ("Marcus", "Sophia", "Gone"):
        character = CharacterFactory(chronicle=scene.chronicle, name=name, player=UserFactory())
        scenes.scene_join(code=scene.join_code, user=character.player, character=character)
    sheet = CharacterFactory(chronicle=scene.chronicle, name="Ghoul", npc=True, player=None)
    Participant.objects.create(scene=scene, character=sheet, name="Ghoul", npc=True)
    scenes.scene_add_npc(scene=scene, by=scene.storyteller, name="Thrall", pools={"mental": 3})
    gone = Participant.objects.get(scene=scene, name="Gone")
    scenes.scene_remove(scene=scene, participant=gone, by=scene.storyteller)

    with render_cache.RenderCache().active():
        found = selectors.active_participants(scene)
    expected = list(
        Participant.objects.filter(scene=scene, removed_at__isnull=True).select_related(
            "character", "character__player"
        )
    )
    assert [p.pk for p in found] == [p.pk for p in expected]  # the model's order
    assert {p.name for p in found} == {"Marcus", "Sophia", "Ghoul", "Thrall"}
    night = GameNight.objects.get(chronicle=scene.chronicle, closed_at__isnull=True).pk
    for got, want in zip(found, expected, strict=True):
        with django_assert_num_queries(0):  # their characters and players read with them
            character = got.character
            player = character.player if character is not None else None
        assert _fields(got) == _fields(want)
        assert not got._state.adding and got._state.db == want._state.db
        assert got.open_night == (night if character is not None else None)
        assert (character is None) == (want.character is None)
        if character is not None:
            assert _fields(character) == _fields(want.character)
            assert (player is None) == (want.character.player is None)
            if player is not None:  # the columns the renderings use; the others on demand
                wanted = _fields(want.character.player)
                skipped = {"password", "last_login", "email", "date_joined"}
                assert player.get_deferred_fields() == skipped
                assert {n: player.__dict__[n] for n in set(wanted) - skipped} == {
                    n: v for n, v in wanted.items() if n not in skipped
                }
                assert _fields(player) == wanted  # a column not read is read when asked


def test_the_models_built_so_have_no_init_signal():
    """What the rows skip (``Model.__init__``) sends these signals: a receiver added later
    must be given its rows, so the read is built the ORM's way again."""
    for model, _path, _names in selectors._joined():
        assert not pre_init.has_listeners(model)
        assert not post_init.has_listeners(model)


def test_the_participants_read_with_the_scenes_row_are_those_read_alone():
    """``selectors.scene_with_participants`` (one statement on PostgreSQL): the same rows,
    in the same order, as the participants' read alone, a quick NPC's and an NPC sheet's
    NULL columns (no character, no player) and their JSON pools included; no scene, none."""
    from combat import fragments

    scene = SceneFactory()
    scene.chronicle.storytellers.add(scene.storyteller)
    for name in ("Zoe", "Adam"):
        character = CharacterFactory(chronicle=scene.chronicle, name=name, player=UserFactory())
        scenes.scene_join(code=scene.join_code, user=character.player, character=character)
    sheet = CharacterFactory(chronicle=scene.chronicle, name="Ghoul", npc=True, player=None)
    Participant.objects.create(scene=scene, character=sheet, name="Ghoul", npc=True)
    scenes.scene_add_npc(scene=scene, by=scene.storyteller, name="Thrall", pools={"mental": 3})
    scenes.scene_add_npc(
        scene=scene, by=scene.storyteller, name="Bat", pools={"physical": 2}, hidden=True
    )
    row, rows = selectors.scene_with_participants(fragments._scene_row, scene.pk)
    assert row.pk == scene.pk and row.chronicle_id == scene.chronicle_id
    assert rows == selectors._active_participants.run(scene.pk)
    assert [r[3] for r in rows] == ["Adam", "Zoe", "Bat", "Ghoul", "Thrall"]  # npc, name
    assert selectors.scene_with_participants(fragments._scene_row, scene.pk + 999) == (None, [])
