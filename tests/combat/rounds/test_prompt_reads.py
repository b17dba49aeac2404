"""A player's round prompts read their characters' sheets only when a prompt needs them (the
initiative's D2 check, a declare form): a player waiting on another's declaration reads none
(issue 21: their prompts are drawn on every change of the round)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from combat.models import Scene
from combat.rounds import selectors
from combat.rounds.starting import combat_start

pytestmark = pytest.mark.django_db


def _prompts(scene: Scene, user) -> tuple[dict, list[str]]:
    with CaptureQueriesContext(connection) as captured:
        read = selectors.prompts(scene, user)
    sheets = [q["sql"] for q in captured if q["sql"].startswith('SELECT "characters_character"')]
    return read, sheets


def test_a_player_waiting_reads_no_sheet(fight, cast):
    read, sheets = _prompts(fight, cast.users["Jane"])
    (jane,) = read["mine"]
    assert not jane["declare_now"] and "form" not in jane
    assert sheets == []


def test_the_player_declaring_gets_the_form_of_their_sheet(fight, cast):
    read, sheets = _prompts(fight, cast.users["Frank"])
    (frank,) = read["mine"]
    assert frank["declare_now"] and frank["form"]["max_actions"] == 3  # Frank's Wits
    assert len(sheets) == 1


def test_the_initiative_reads_the_sheets_for_d2(cast):
    """D2: an Incapacitated character rolls no initiative; the sheet says."""
    jane = cast.p["Jane"]
    combat_start(scene=cast.scene, by=cast.storyteller, participants=[jane, cast.p["Frank"]])
    read, sheets = _prompts(Scene.objects.get(pk=cast.scene.pk), cast.users["Jane"])
    (mine,) = read["mine"]
    assert mine["roll_initiative"] and mine["incapacitated"] is False
    assert len(sheets) == 1
