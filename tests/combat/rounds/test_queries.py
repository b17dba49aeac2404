"""A round renders in the same number of queries whatever the number of fighters."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from combat import fragments
from combat import services as scene_services
from combat.models import Scene
from combat.rounds.initiative import combat_begin_round, combat_initiative
from combat.rounds.starting import combat_start
from combat.rounds.storyteller import combat_end


def _count(render) -> int:
    with CaptureQueriesContext(connection) as captured:
        render()
    return len(captured)


def test_a_round_renders_in_fixed_queries_for_few_or_many_fighters(cast):
    counts = []
    for extra in (0, 6):
        scene = scene_services.scene_open(
            chronicle=cast.scene.chronicle, by=cast.storyteller, name=f"Fight {extra}"
        )
        fighters = [
            scene_services.scene_join(
                code=scene.join_code, user=cast.users[n], character=cast.p[n].character
            )
            for n in ("Jane", "Frank")
        ]
        fighters += [
            scene_services.scene_add_npc(
                scene=scene,
                by=cast.storyteller,
                name=f"Goon {i}",
                pools={"Dexterity": 2, "Wits": 2},
            )
            for i in range(1 + extra)
        ]
        combat = combat_start(scene=scene, by=cast.storyteller, participants=fighters)
        for i, p in enumerate(fighters):
            combat_initiative(combat=combat, by=cast.storyteller, participant=p, roll=1 + i % 10)
        combat_begin_round(combat=combat, by=cast.storyteller)
        scene = Scene.objects.get(pk=scene.pk)
        counts.append(
            (
                _count(lambda s=scene: fragments.storyteller_state(s)),
                _count(lambda s=scene: fragments.players_state(s)),
                _count(lambda s=scene: fragments.private_state(s, cast.users["Jane"])),
            )
        )
        combat_end(combat=combat, by=cast.storyteller)
    assert counts[0] == counts[1]
