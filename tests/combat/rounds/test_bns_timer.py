"""The met_bns soft timer on the action the round waits on (issue 11, like the declaration's):
the phone that may act now and the tablet show until when; once it runs out only the words
change (the storyteller decides); nothing is filled in and nobody is moved on."""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta

from django.utils import timezone

from combat import fragments
from combat.models import Combat, Scene
from combat.rounds import bns
from combat.rounds.bns_reads import engine_of
from combat.rounds.storyteller import combat_pause
from combat.rounds.tokens import DECLARE_SECONDS


def _deadline(html: str) -> datetime | None:
    found = re.findall(r'data-deadline="([^"]+)"', html)
    return datetime.fromisoformat(found[0]) if found else None


def test_the_character_acting_and_the_tablet_see_until_when_and_a_pause_stops_it(docks):
    st, users, p, scene = docks
    combat = bns.bns_start(scene=scene, by=st, participants=list(p.values()), rng=random.Random(1))
    bns.bns_mediate(combat=combat, by=st, agreed=False)
    before = timezone.now()
    bns.bns_assess(combat=combat, by=st, participants=list(p.values()))
    fresh = Scene.objects.get(pk=scene.pk)
    ana = fragments.private_state(fresh, users["Ana"])
    board = fragments.board_regions(fresh, None)
    due = _deadline(ana)
    window = timedelta(seconds=DECLARE_SECONDS)
    assert due is not None and before + window <= due <= timezone.now() + window
    assert "then the storyteller decides" in ana
    assert _deadline(fragments.private_state(fresh, users["Bo"])) is None  # Bo is next (B4)
    assert _deadline(board) == due and "Time is up for Ana: your call" in board
    assert _deadline(fragments.players_state(fresh)) is None

    combat_pause(combat=Combat.objects.get(), by=st, paused=True)
    fresh = Scene.objects.get(pk=scene.pk)
    assert _deadline(fragments.private_state(fresh, users["Ana"])) is None
    assert _deadline(fragments.board_regions(fresh, None)) is None
    combat_pause(combat=Combat.objects.get(), by=st, paused=False)
    fresh = Scene.objects.get(pk=scene.pk)
    assert _deadline(fragments.private_state(fresh, users["Ana"])) >= due  # afresh

    # Ana is done: the timer moves on to Bo; nothing was ever done for anyone.
    bns.bns_finish(combat=Combat.objects.get(), by=users["Ana"], participant=p["Ana"])
    fresh = Scene.objects.get(pk=scene.pk)
    assert _deadline(fragments.private_state(fresh, users["Ana"])) is None
    assert _deadline(fragments.private_state(fresh, users["Bo"])) is not None
    state = engine_of(Combat.objects.get())
    assert state.current == str(p["Bo"].pk)
    assert not any(f.actions_used for f in state.fighters)


def test_a_hidden_npcs_turn_shows_no_phone_a_timer(docks):
    """Only the storyteller sees the hidden NPC's time; the phones get theirs when they act."""
    from combat import services as scene_services

    st, users, p, scene = docks
    ghost = scene_services.scene_add_npc(
        scene=scene, by=st, name="Ghost", pools={"Physical": 12, "Mental": 12}, hidden=True
    )
    everyone = [*p.values(), ghost]
    combat = bns.bns_start(scene=scene, by=st, participants=everyone, rng=random.Random(3))
    bns.bns_mediate(combat=combat, by=st, agreed=False)
    bns.bns_assess(combat=combat, by=st, participants=everyone)
    assert engine_of(Combat.objects.get()).current == str(ghost.pk)
    fresh = Scene.objects.get(pk=scene.pk)
    for user in users.values():
        assert _deadline(fragments.private_state(fresh, user)) is None
    assert _deadline(fragments.players_state(fresh)) is None
