"""The tablet's roster (issue 19): everyone in the fight with the health track as the sheet
draws it, and whom the fight waits on, in the people panel every round step pushes."""

from __future__ import annotations

import re

from characters import services as sheet_services
from combat import fragments
from combat.models import Combat, Scene
from combat.rounds.declaring import combat_declare
from combat.rounds.initiative import combat_begin_round, combat_initiative
from combat.rounds.starting import combat_start


def _people(scene_pk: int) -> str:
    board = fragments.board_regions(Scene.objects.get(pk=scene_pk), ("people",))
    assert 'id="people-panel"' in board
    return board


def _row(board: str, participant) -> str:
    found = re.search(rf'<li class="[^"]*" id="participant-{participant.pk}">.*?</li>', board, re.S)
    assert found, participant
    return found.group(0)


def _waiting(board: str) -> str:
    found = re.search(r'class="waiting-on".*?</p>', board, re.S)
    return found.group(0) if found else ""


def test_it_shows_the_fighters_health_and_whom_the_round_waits_on(cast):
    p, st, users = cast.p, cast.storyteller, cast.users
    jane = p["Jane"].character
    sheet_services.ledger_damage(
        character=jane, by=st, damage_type="lethal", amount=2, empty_boxes=7
    )
    board = _people(cast.scene.pk)
    assert "fight-health" not in board and not _waiting(board)  # no fight: names only

    combat = combat_start(scene=cast.scene, by=st, participants=[p["Frank"], p["Jane"]])
    board = _people(cast.scene.pk)
    row = _row(board, p["Jane"])
    # the D2 track, as the sheet draws it: seven boxes, two lethal ("X"), level Hurt (-1)
    assert row.count('class="box ') == 7
    assert len(re.findall(r'class="box lethal"[^>]*>X<', row)) == 2
    assert "Hurt -1" in row
    assert "fight-health" not in _row(board, p["Teddy"])  # not in this fight
    assert "to roll initiative" in _waiting(board)
    assert "Jane" in _waiting(board) and "Frank" in _waiting(board)

    combat_initiative(combat=combat, by=st, participant=p["Jane"], roll=5)
    board = _people(cast.scene.pk)
    assert "Jane" not in _waiting(board) and "Frank" in _waiting(board)
    combat_initiative(combat=combat, by=st, participant=p["Frank"], roll=1)
    combat_begin_round(combat=Combat.objects.get(), by=st)
    waiting = _waiting(_people(cast.scene.pk))
    assert "Frank" in waiting and "to declare" in waiting and "Jane" not in waiting  # D4

    combat_declare(
        combat=Combat.objects.get(), by=users["Frank"], participant=p["Frank"], action="dodge"
    )
    waiting = _waiting(_people(cast.scene.pk))
    assert "Jane" in waiting and "Frank" not in waiting


def test_a_quick_npc_shows_the_fights_damage_on_its_rulesets_track(cast):
    p, st = cast.p, cast.storyteller
    combat = combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Lurker"]])
    Combat.objects.filter(pk=combat.pk).update(npc_damage={str(p["Lurker"].pk): 3})
    row = _row(_people(cast.scene.pk), p["Lurker"])
    assert row.count('class="box ') == 7
    assert row.count('class="box untyped"') == 3
