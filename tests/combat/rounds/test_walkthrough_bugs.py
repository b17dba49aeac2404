"""Issue 19's walkthrough bugs in rounds, each through the services or the phones' posts as a
player makes them (each test failed before its fix)."""

from __future__ import annotations

import re

import pytest

from combat.models import Combat
from combat.rounds.declaring import combat_declare
from combat.rounds.errors import RoundError
from combat.rounds.initiative import combat_begin_round, combat_initiative
from combat.rounds.reads import wod_state
from combat.rounds.starting import combat_start
from combat.rounds.storyteller import combat_set_out
from tests.conftest import client_for

HX = {"HTTP_HX_REQUEST": "true"}


def _fight(cast, names=("Jane", "Frank")):
    combat = combat_start(
        scene=cast.scene, by=cast.storyteller, participants=[cast.p[n] for n in names]
    )
    for name, die in {"Jane": 5, "Frank": 1, "Teddy": 4, "Thug": 3}.items():
        if name in names:
            combat_initiative(
                combat=combat, by=cast.storyteller, participant=cast.p[name], roll=die
            )
    return combat_begin_round(combat=combat, by=cast.storyteller)


def _declare_form(client, cast) -> dict[str, str]:
    """The hidden fields of the declare form on the phone, as drawn now."""
    page = client.get(f"/scenes/{cast.scene.pk}/phone/").content.decode()
    form = re.search(r'<form id="declare-[^"]*".*?</form>', page, re.S)
    assert form, "no declare form on the phone"
    hidden = re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form.group(0))
    return dict(hidden)


def _maneuver(combat, who) -> str:
    state = wod_state(Combat.objects.get(pk=combat.pk))
    return state.declaration(str(who.pk)).maneuver


def test_bug1_back_and_forth_declaration_changes_each_count(cast):
    """basic -> power -> basic -> power: each change is made from the form as drawn after the
    last one; a key made from the state alone repeats, and the fourth replayed the second."""
    _fight(cast)  # Frank 6 declares first, Jane 13 last
    frank = client_for(cast.users["Frank"])
    combat = Combat.objects.get()
    for maneuver in ("basic", "power", "basic", "power"):
        form = _declare_form(frank, cast)
        answer = frank.post(
            f"/scenes/{cast.scene.pk}/combat/declare/",
            {**form, "action": "attack", "target": cast.p["Jane"].pk, "maneuver": maneuver},
            **HX,
        )
        assert answer.status_code == 200, answer.content.decode()[:300]
        assert _maneuver(combat, cast.p["Frank"]) == maneuver


def test_bug4_the_last_declarer_cannot_change_once_resolution_is_under_way(cast):
    combat = _fight(cast)
    combat_declare(
        combat=combat, by=cast.users["Frank"], participant=cast.p["Frank"], action="dodge"
    )
    combat_declare(combat=combat, by=cast.users["Jane"], participant=cast.p["Jane"], action="dodge")
    state = wod_state(Combat.objects.get(pk=combat.pk))
    assert state.step.value == "resolve"  # Jane, the fastest, is resolved first
    with pytest.raises(RoundError):
        combat_declare(
            combat=combat, by=cast.users["Jane"], participant=cast.p["Jane"], action="block"
        )
    state = wod_state(Combat.objects.get(pk=combat.pk))
    assert state.declaration(str(cast.p["Jane"].pk)).action == "dodge"


def _mine(cast, name):
    from combat.rounds import selectors

    out = selectors.prompts(cast.scene, cast.users[name])
    return next(m for m in out["mine"] if m["p"].pk == cast.p[name].pk)


def test_bug2_a_player_out_of_the_fight_is_not_asked_for_initiative_nor_a_target(cast):
    combat = combat_start(
        scene=cast.scene,
        by=cast.storyteller,
        participants=[cast.p[n] for n in ("Jane", "Frank", "Thug")],
    )
    combat_set_out(combat=combat, by=cast.storyteller, participant=cast.p["Jane"], out=True)
    assert _mine(cast, "Jane")["roll_initiative"] is False
    page = client_for(cast.users["Jane"]).get(f"/scenes/{cast.scene.pk}/phone/").content.decode()
    assert "Roll initiative" not in page and "out of the fight" in page
    for name, die in (("Frank", 1), ("Thug", 9)):
        combat_initiative(combat=combat, by=cast.storyteller, participant=cast.p[name], roll=die)
    combat_begin_round(combat=combat, by=cast.storyteller)
    targets = [t.name for t in _mine(cast, "Frank")["form"]["targets"]]
    assert targets == ["Thug"]


def test_bug3_an_incapacitated_player_is_not_asked_to_roll_initiative(cast):
    from characters.services import ledger_damage

    ledger_damage(
        character=cast.p["Jane"].character,
        by=cast.storyteller,
        damage_type="lethal",
        amount=7,
        empty_boxes=7,
    )
    combat_start(
        scene=cast.scene, by=cast.storyteller, participants=[cast.p["Jane"], cast.p["Frank"]]
    )
    assert _mine(cast, "Jane")["roll_initiative"] is False
    page = client_for(cast.users["Jane"]).get(f"/scenes/{cast.scene.pk}/phone/").content.decode()
    assert "Roll initiative" not in page and "Incapacitated: no initiative" in page
