"""One chase change's renderings (the board with its roster and its rolling pools, the public
part, each chaser's prompts) read the chase and each chaser's sheet once."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from combat import fragments
from tests.chases.test_services import escape

pytestmark = pytest.mark.django_db


def test_one_chase_change_reads_the_chase_and_each_sheet_once(
    scene, storyteller, janet, cody, hound, player, other_player
):
    escape(scene, storyteller, janet, cody, hound, head_start=3)
    users = [player.pk, other_player.pk]
    with CaptureQueriesContext(connection) as captured:
        parts = list(fragments.scene_change_parts(scene.pk, private_user_ids=users))
    assert {audience for audience, _u, _h in parts} == {"private", "players", "storytellers"}
    queries = [q["sql"] for q in captured]
    # the scene's row says whether it had a chase, in its own query
    chase_reads = [q for q in queries if not q.startswith('SELECT "combat_scene"."id"')]
    assert len([q for q in chase_reads if 'FROM "chases_chase"' in q]) == 1
    sheets = []
    for q in queries:
        found = re.search(
            r'FROM "characters_character" .*"characters_character"\."id" IN \(([^)]*)\)', q
        )
        if found:
            sheets += [int(i) for i in found.group(1).split(",")]
    # each sheet once, whoever shows it: its row (its version) comes with the scene's
    # participants, read once for every audience
    assert sheets == []
    people = [q for q in queries if q.startswith('SELECT "combat_participant"."id"')]
    assert len([q for q in people if '"removed_at" IS NULL' in q]) == 1
