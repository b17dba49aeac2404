"""Scene services: open, join, NPCs, the clock, removal; refusals change nothing."""

from __future__ import annotations

import pytest

from combat import services, steps
from combat.models import Participant, Scene, SceneLogEntry
from combat.services import SceneError
from tests.factories import CharacterFactory, ChronicleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene(chronicle, storyteller) -> Scene:
    return services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")


def test_it_opens_a_scene_in_the_open_night_with_the_chronicles_ruleset(scene, chronicle):
    assert scene.game_night.closed_at is None
    assert scene.ruleset == chronicle.ruleset
    assert len(scene.join_code) == 6
    assert scene.seq == 1
    assert SceneLogEntry.objects.get(scene=scene).text == "Scene opened: Elysium"


def test_it_refuses_a_scene_from_someone_who_does_not_run_the_chronicle(chronicle, player):
    with pytest.raises(SceneError, match="Only a storyteller"):
        services.scene_open(chronicle=chronicle, by=player, name="Elysium")
    assert not Scene.objects.exists()


def test_it_refuses_a_scene_without_an_open_night(storyteller):
    chronicle = ChronicleFactory()
    chronicle.storytellers.add(storyteller)
    with pytest.raises(SceneError, match="no open game night"):
        services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")


def test_it_joins_a_player_by_code_once(scene, character, player):
    first = services.scene_join(code=scene.join_code.lower(), user=player, character=character)
    again = services.scene_join(code=scene.join_code, user=player, character=character)
    assert first == again
    assert Participant.objects.filter(scene=scene).count() == 1


def test_it_refuses_someone_elses_character(scene, character, other_player):
    with pytest.raises(SceneError, match="not one of your characters"):
        services.scene_join(code=scene.join_code, user=other_player, character=character)


def test_it_refuses_a_character_of_another_chronicle(scene, other_player):
    stranger = CharacterFactory(player=other_player)
    with pytest.raises(SceneError, match="not in"):
        services.scene_join(code=scene.join_code, user=other_player, character=stranger)


def test_it_refuses_an_unknown_code(scene, character, player):
    with pytest.raises(SceneError, match="No open scene has the code"):
        services.scene_join(code="ZZZZZZ", user=player, character=character)


def test_it_advances_the_clock_and_logs_it(scene, storyteller):
    scene = services.scene_advance_clock(scene=scene, by=storyteller, seconds=300)
    assert scene.game_time == 300
    assert scene.log.last().text == "Game clock +5m 00s"


@pytest.mark.parametrize("seconds", [0, -5, 24 * 3600 + 1])
def test_it_refuses_a_clock_step_out_of_range(scene, storyteller, seconds):
    with pytest.raises(SceneError):
        services.scene_advance_clock(scene=scene, by=storyteller, seconds=seconds)
    scene.refresh_from_db()
    assert scene.game_time == 0


def test_it_refuses_a_stale_clock_step(scene, storyteller):
    with pytest.raises(SceneError, match="moved on"):
        services.scene_advance_clock(
            scene=scene, by=storyteller, seconds=60, seen=steps.token("scene", scene.pk, 0)
        )


def test_it_adds_a_quick_npc_and_removes_a_participant(scene, storyteller, character, player):
    npc = services.scene_add_npc(
        scene=scene, by=storyteller, name="Ghoul", pools={"physical": 6}, hidden=True
    )
    joined = services.scene_join(code=scene.join_code, user=player, character=character)
    services.scene_remove(scene=scene, by=storyteller, participant=joined)
    active = Participant.objects.filter(scene=scene, removed_at__isnull=True)
    assert list(active) == [npc]
    with pytest.raises(SceneError, match="not in this scene"):
        services.scene_remove(scene=scene, by=storyteller, participant=joined)


def test_a_player_cannot_change_the_scene(scene, player):
    with pytest.raises(SceneError, match="Only a storyteller"):
        services.scene_advance_clock(scene=scene, by=player, seconds=60)


def test_a_new_game_night_closes_the_open_scenes_of_the_last_one(
    scene, chronicle, storyteller, django_capture_on_commit_callbacks
):
    from characters.services import game_night_open

    done = services.scene_open(chronicle=chronicle, by=storyteller, name="Earlier")
    services.scene_close(scene=done, by=storyteller)
    closed_at = Scene.objects.get(pk=done.pk).closed_at
    with django_capture_on_commit_callbacks(execute=True):
        night = game_night_open(chronicle=chronicle, by=storyteller, expected_number=1)
    scene.refresh_from_db()
    assert scene.closed_at is not None
    line = SceneLogEntry.objects.filter(scene=scene).last()
    assert line.text == "Scene closed: game night 1 ended" and line.public
    assert Scene.objects.get(pk=done.pk).closed_at == closed_at  # closed before: left as it was
    fresh = services.scene_open(chronicle=chronicle, by=storyteller, name="Tonight")
    assert fresh.game_night == night and fresh.is_open
