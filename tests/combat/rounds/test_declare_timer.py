"""The declaration's soft timer (issue 11): the phone whose turn it is and the tablet show until
when; once it runs out only the words change (the storyteller decides); nothing is filled in."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from django.utils import timezone

from combat import fragments
from combat.models import Combat, Scene
from combat.rounds.declaring import combat_declare
from combat.rounds.initiative import combat_begin_round, combat_initiative
from combat.rounds.reads import wod_state
from combat.rounds.starting import combat_start
from combat.rounds.storyteller import combat_pause
from combat.rounds.tokens import DECLARE_SECONDS


def _deadline(html: str) -> datetime | None:
    found = re.findall(r'data-deadline="([^"]+)"', html)
    return datetime.fromisoformat(found[0]) if found else None


def test_the_player_declaring_and_the_tablet_see_until_when_and_a_pause_stops_it(cast):
    p, st, users = cast.p, cast.storyteller, cast.users
    combat = combat_start(scene=cast.scene, by=st, participants=[p["Frank"], p["Jane"]])
    for name, die in (("Jane", 5), ("Frank", 1)):
        combat_initiative(combat=combat, by=st, participant=p[name], roll=die)
    before = timezone.now()
    combat_begin_round(combat=combat, by=st)
    scene = Scene.objects.get(pk=cast.scene.pk)
    frank = fragments.private_state(scene, users["Frank"])
    jane = fragments.private_state(scene, users["Jane"])
    board = fragments.board_regions(scene, None)
    due = _deadline(frank)
    assert due is not None and "then the storyteller decides" in frank
    window = timedelta(seconds=DECLARE_SECONDS)
    assert before + window <= due <= timezone.now() + window
    assert _deadline(jane) is None  # Jane declares later (D4: slowest first)
    assert _deadline(board) == due and "Time is up for Frank: your call" in board

    combat_pause(combat=Combat.objects.get(), by=st, paused=True)
    scene = Scene.objects.get(pk=cast.scene.pk)
    assert _deadline(fragments.private_state(scene, users["Frank"])) is None
    assert _deadline(fragments.board_regions(scene, None)) is None

    combat_pause(combat=Combat.objects.get(), by=st, paused=False)
    scene = Scene.objects.get(pk=cast.scene.pk)
    assert _deadline(fragments.private_state(scene, users["Frank"])) >= due  # a fresh minute

    # Frank declares: the timer moves on to Jane; nothing was ever declared for anyone.
    combat_declare(
        combat=Combat.objects.get(), by=users["Frank"], participant=p["Frank"], action="dodge"
    )
    scene = Scene.objects.get(pk=cast.scene.pk)
    assert _deadline(fragments.private_state(scene, users["Frank"])) is None
    assert _deadline(fragments.private_state(scene, users["Jane"])) is not None
    state = wod_state(Combat.objects.get())
    assert [d.who for d in state.declarations] == [str(p["Frank"].pk)]
