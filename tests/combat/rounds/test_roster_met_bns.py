"""The tablet's "Waiting on" for MET fights (issue 19): a met_classic round waits on the next
Celerity action of its order (C15), under the steps of its challenges; a met_bns round on the
character whose action is resolved now (B4, B5, B7, B8), never during mediation, assessment or
a fair escape's call (B9, B11). The storyteller sees hidden NPCs in it; no phone reads it."""

from __future__ import annotations

import random

import pytest
from django.urls import reverse

from combat import live
from combat import services as scene_services
from combat.models import Combat, Presence, Scene
from combat.rounds import bns, met
from combat.rounds import waiting as round_waits
from tests.combat.challenges.conftest import make_table
from tests.combat.rounds.test_bns_services import _relent
from tests.combat.rounds.test_roster import _people, _waiting
from tests.conftest import client_for


def _waits(scene) -> dict[int, str]:
    return round_waits.waiting_on(Scene.objects.get(pk=scene.pk))


# --- met_classic -----------------------------------------------------------------------------


@pytest.fixture
def court(db):
    """met_classic: Marcus and Sophia on their phones, a hidden quick NPC (the Shade)."""
    t = make_table("met_classic")
    shade = scene_services.scene_add_npc(
        scene=t.scene, by=t.st, name="Shade", pools={"Physical": 6}, hidden=True
    )
    return t, shade


def test_a_met_round_waits_on_the_next_celerity_action_in_c15_order(court):
    t, shade = court
    combat = met.met_start(scene=t.scene, by=t.st, participants=[t.a, t.d, shade])
    assert _waits(t.scene) == {}  # no Celerity announced: the attacks are challenges
    met.met_celerity_announce(combat=combat, by=t.st, participant=shade, level=2, follow_ups=2)
    met.met_celerity_announce(combat=combat, by=t.a_user, participant=t.a, level=1, follow_ups=1)
    # The Shade's Celerity 2 beats Marcus's 1: its Alacrity first, Marcus's lost (C15).
    assert _waits(t.scene) == {shade.pk: round_waits.TO_TAKE_CELERITY.format(action="Alacrity")}
    met.met_celerity_take(combat=combat, by=t.st, participant=shade, action="Alacrity")
    # then the normal actions (challenges), then its Swiftness (Celerity 1 grants no more)
    assert _waits(t.scene) == {shade.pk: "to take Swiftness (C15)"}
    met.met_celerity_take(combat=combat, by=t.st, participant=shade, action="Swiftness")
    assert _waits(t.scene) == {}
    met.met_next_round(combat=Combat.objects.get(pk=combat.pk), by=t.st)
    assert _waits(t.scene) == {}


def test_the_people_panel_says_it_and_a_challenge_step_comes_first(court):
    t, shade = court
    combat = met.met_start(scene=t.scene, by=t.st, participants=[t.a, t.d, shade])
    met.met_celerity_announce(combat=combat, by=t.a_user, participant=t.a, level=1, follow_ups=1)
    waiting = _waiting(_people(t.scene.pk))
    assert "Marcus" in waiting and "to take Alacrity (C15)" in waiting
    # Sophia challenges Marcus: his answer is what the table waits on now (C1).
    t.start(by=t.d_user, attacker=t.d, defender=t.a, category="physical", bid="Tough")
    waiting = _waiting(_people(t.scene.pk))
    assert "Marcus" in waiting and "to answer" in waiting and "Alacrity" not in waiting
    met.met_celerity_announce(combat=combat, by=t.st, participant=shade, level=1, follow_ups=1)
    # Both use Celerity 1: matched, neither's Alacrity goes first (C15): nobody to take one.
    assert _waits(t.scene) == {}
    waiting = _waiting(_people(t.scene.pk))
    assert "Shade" not in waiting and "Marcus" in waiting and "to answer" in waiting


def test_a_hidden_npc_waited_on_shows_on_the_tablet_and_on_no_phone(court):
    t, shade = court
    combat = met.met_start(scene=t.scene, by=t.st, participants=[t.a, t.d, shade])
    met.met_celerity_announce(combat=combat, by=t.st, participant=shade, level=2, follow_ups=2)
    waiting = _waiting(_people(t.scene.pk))
    assert "Shade" in waiting and "to take Alacrity (C15)" in waiting
    tablet = client_for(t.st).get(reverse("scene_tablet", args=[t.scene.pk])).content.decode()
    assert "to take Alacrity (C15)" in tablet
    for user in (t.a_user, t.d_user):
        phone = client_for(user).get(reverse("scene_phone", args=[t.scene.pk])).content.decode()
        assert "Shade" not in phone and "Alacrity (C15)" not in phone
        assert "waiting-on" not in phone


def test_a_phones_announcement_pushes_the_wait_to_the_tablet_alone(
    court, pushes, django_capture_on_commit_callbacks
):
    """Live: Marcus announces his Celerity from his phone; the push to the storytellers shows
    whom the round waits on now; no push to a phone says it."""
    t, shade = court
    Presence.objects.create(scene=t.scene, user=t.st, channel_name="tablet.1")  # a tablet is open
    met.met_start(scene=t.scene, by=t.st, participants=[t.a, t.d, shade])
    url = reverse("round_met_celerity", args=[t.scene.pk])
    data = {"participant": t.a.pk, "level": 1, "follow_ups": 1, "from": "phone"}
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(t.a_user).post(url, data, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    to_tablet = [s.html for s in pushes if s.group == live.storytellers_group(t.scene.pk)]
    assert to_tablet, "the storytellers got no push"
    waiting = _waiting(to_tablet[-1])
    assert "Marcus" in waiting and "to take Alacrity (C15)" in waiting
    to_phones = [s.html for s in pushes if s.group != live.storytellers_group(t.scene.pk)]
    assert to_phones and not any("to take Alacrity" in html for html in to_phones)


# --- met_bns ---------------------------------------------------------------------------------


def test_a_bns_round_waits_on_whose_action_is_resolved_now(docks):
    st, users, p, scene = docks
    combat = bns.bns_start(scene=scene, by=st, participants=list(p.values()), rng=random.Random(1))
    assert _waits(scene) == {}  # B11: mediation is the storyteller's
    bns.bns_mediate(combat=combat, by=st, agreed=False)
    bns.bns_celerity(combat=combat, by=users["Ana"], participant=p["Ana"], rounds=1)
    assert _waits(scene) == {}  # B11: so is the assessment
    bns.bns_assess(combat=combat, by=st, participants=list(p.values()), started_by=p["Bo"])
    assert _waits(scene) == {p["Bo"].pk: round_waits.TO_ACT_SURPRISE}  # B7
    waiting = _waiting(_people(scene.pk))
    assert "Bo" in waiting and "to take the surprise action (B7)" in waiting
    bns.bns_act(
        combat=combat, by=users["Bo"], participant=p["Bo"], standard="attack", target=p["Cy"]
    )
    # B4: Ana 8 first; Cy's answer to Bo's attack is the challenge's (C1), on the same panel
    assert _waits(scene) == {p["Ana"].pk: round_waits.TO_ACT}
    waiting = _waiting(_people(scene.pk))
    assert "Ana" in waiting and "to act on their initiative (B4)" in waiting
    assert "Cy" in waiting and "to answer" in waiting
    _relent(scene, p["Bo"])
    bns.bns_act(combat=combat, by=users["Ana"], participant=p["Ana"], simple="move")
    bns.bns_finish(combat=combat, by=users["Ana"], participant=p["Ana"])
    assert _waits(scene) == {p["Bo"].pk: round_waits.TO_ACT}
    bns.bns_finish(combat=combat, by=users["Bo"], participant=p["Bo"])
    bns.bns_finish(combat=combat, by=users["Cy"], participant=p["Cy"])
    assert _waits(scene) == {}  # everyone acted: the storyteller ends the round
    bns.bns_end_round(combat=combat, by=st)
    assert _waits(scene) == {p["Ana"].pk: "to act in celerity round 1 (B5)"}


def test_a_delayer_stepping_back_in_and_a_fair_escape(docks):
    st, users, p, scene = docks
    combat = bns.bns_start(scene=scene, by=st, participants=list(p.values()), rng=random.Random(2))
    bns.bns_mediate(combat=combat, by=st, agreed=False)
    bns.bns_assess(combat=combat, by=st, participants=list(p.values()))
    assert _waits(scene) == {p["Ana"].pk: round_waits.TO_ACT}
    bns.bns_escape_announce(combat=combat, by=users["Ana"], participant=p["Ana"])
    assert _waits(scene) == {}  # B9: the intents are called, the storyteller settles
    bns.bns_escape_settle(combat=combat, by=st)
    bns.bns_delay(combat=combat, by=users["Bo"], participant=p["Bo"])
    assert _waits(scene) == {p["Cy"].pk: round_waits.TO_ACT}
    bns.bns_resume(combat=combat, by=users["Bo"], participant=p["Bo"])
    assert _waits(scene) == {p["Bo"].pk: round_waits.TO_ACT_BACK}  # B8
