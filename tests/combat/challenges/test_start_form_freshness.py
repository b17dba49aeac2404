"""A start form stays good while the scene moves on around it.

The phone's private part and the board's challenge region are pushed only when they change, so
a start form rendered before a clock tap (or a newcomer) must still start a challenge after it;
and whoever joins shows up among the targets without a per-phone push.
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from combat import fragments
from combat import services as scenes
from combat.models import Challenge, Scene
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def _start_form_fields(html: str, attacker_pk: int) -> dict[str, str]:
    """The hidden fields of the start form for ``attacker_pk``, as the browser would post them."""
    forms = re.findall(r'<form[^>]*class="cc-start-form".*?</form>', html, flags=re.S)
    mine = [f for f in forms if f'name="attacker" value="{attacker_pk}"' in f]
    assert mine, "no start form for that attacker"
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', mine[0]))


def test_a_phone_starts_a_challenge_from_a_form_rendered_before_the_clock_moved(classic):
    t = classic
    phone = client_for(t.a_user)
    html = phone.get(reverse("scene_phone", args=[t.scene.pk])).content.decode()
    hidden = _start_form_fields(html, t.a.pk)
    scenes.scene_advance_clock(scene=t.scene, by=t.st, seconds=60)  # pushes no private part
    answer = phone.post(
        reverse("challenge_start", args=[t.scene.pk]),
        {**hidden, "mode": "contested", "defender": t.d.pk, "bid": "physical:Strong"},
        HTTP_HX_REQUEST="true",
    )
    assert answer.status_code == 200, answer.content.decode()
    assert Challenge.objects.filter(scene=t.scene, attacker=t.a).count() == 1


def test_the_tablet_starts_an_npc_challenge_from_a_board_rendered_before_the_clock_moved(
    classic,
):
    t = classic
    npc = scenes.scene_add_npc(scene=t.scene, by=t.st, name="Bouncer", pools={"physical": 5})
    tablet = client_for(t.st)
    html = tablet.get(reverse("scene_tablet", args=[t.scene.pk])).content.decode()
    hidden = _start_form_fields(html, npc.pk)
    scenes.scene_advance_clock(scene=t.scene, by=t.st, seconds=60)  # pushes the clock only
    answer = tablet.post(
        reverse("challenge_start", args=[t.scene.pk]),
        {**hidden, "mode": "contested", "defender": t.a.pk, "bid": "physical:Physical"},
        HTTP_HX_REQUEST="true",
    )
    assert answer.status_code == 200, answer.content.decode()
    assert Challenge.objects.filter(scene=t.scene, attacker=npc).count() == 1


def test_a_newcomer_is_a_target_on_the_phones_by_the_public_part_alone(classic):
    """The targets come from the public part (one render for every phone), so a join never
    needs each phone's private part re-rendered."""
    t = classic
    npc = scenes.scene_add_npc(scene=t.scene, by=t.st, name="Bouncer", pools={"physical": 5})
    lurker = scenes.scene_add_npc(scene=t.scene, by=t.st, name="Lurker", hidden=True)
    scene = Scene.objects.get(pk=t.scene.pk)
    public = fragments.players_state(scene)
    targets = re.search(r'<template id="scene-targets">(.*?)</template>', public, flags=re.S)
    assert targets, "the public part lists the targets"
    listed = dict(re.findall(r'<option value="(\d+)">([^<]*)</option>', targets.group(1)))
    assert listed[str(npc.pk)] == "Bouncer" and listed[str(t.d.pk)] == "Sophia"
    assert str(lurker.pk) not in listed  # a hidden NPC is nobody's target on a phone
    private = fragments.private_state(scene, t.a_user)
    assert "Bouncer" not in private  # the phone's own part does not carry the list
    assert 'data-targets="scene-targets"' in private
