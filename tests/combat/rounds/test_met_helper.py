"""met_classic: the tablet's Celerity order (C15) and mob scenes (C16)."""

from __future__ import annotations

import re

import pytest

from characters.selectors import current_values
from combat import services as scene_services
from combat.models import Combat, Scene
from combat.rounds import met
from combat.rounds.errors import RoundError
from combat.rounds.met_reads import met_view
from tests.conftest import client_for
from tests.factories import (
    CharacterFactory,
    ChronicleFactory,
    GameNightFactory,
    PowerFactory,
    StorytellerFactory,
    UserFactory,
)


@pytest.fixture
def court(db):
    st = StorytellerFactory(username="met_st")
    chronicle = ChronicleFactory(name="Court", ruleset="met_classic")
    chronicle.storytellers.add(st)
    GameNightFactory(chronicle=chronicle, number=1)
    scene = scene_services.scene_open(chronicle=chronicle, by=st, name="Elysium")
    users, p = {}, {}
    for name, cel in (("Vera", 2), ("Wes", 1), ("Xan", 0)):
        users[name] = UserFactory(username=f"met_{name.lower()}")
        c = CharacterFactory(chronicle=chronicle, name=name, player=users[name], blood=10)
        if cel:
            PowerFactory(character=c, name="Celerity", level=cel)
        p[name] = scene_services.scene_join(code=scene.join_code, user=users[name], character=c)
    return st, users, p, Scene.objects.get(pk=scene.pk)


def test_celerity_follow_ups_in_c15_order_with_their_blood_spent(court):
    st, users, p, scene = court
    combat = met.met_start(scene=scene, by=st, participants=list(p.values()))
    met.met_celerity_announce(
        combat=combat, by=users["Vera"], participant=p["Vera"], level=2, follow_ups=2
    )
    with pytest.raises(RoundError, match="not your character"):
        met.met_celerity_announce(
            combat=combat, by=users["Vera"], participant=p["Wes"], level=1, follow_ups=1
        )
    met.met_celerity_announce(
        combat=combat, by=users["Wes"], participant=p["Wes"], level=1, follow_ups=1
    )
    view = met_view(Combat.objects.get(pk=combat.pk), {x.pk: x for x in p.values()}, public=True)
    order = [(s["p"].name, s["action"]) for s in view["slots"]]
    # Vera's Alacrity beats Wes's lower Celerity; Wes's Alacrity is lost, its blood spent.
    assert order == [
        ("Vera", "Alacrity"),
        ("Vera", "normal"),
        ("Wes", "normal"),
        ("Xan", "normal"),
        ("Vera", "Swiftness"),
    ]
    assert current_values(p["Wes"].character)["blood"] == 9
    assert current_values(p["Vera"].character)["blood"] == 8
    with pytest.raises(RoundError, match="Only the storyteller"):
        met.met_celerity_take(
            combat=combat, by=users["Vera"], participant=p["Vera"], action="Alacrity"
        )
    met.met_celerity_take(combat=combat, by=st, participant=p["Vera"], action="Alacrity")
    with pytest.raises(RoundError, match="C15"):
        met.met_celerity_take(combat=combat, by=st, participant=p["Wes"], action="Alacrity")


def test_a_mob_scene_on_the_tablet_and_the_phones(court):
    st, users, p, scene = court
    client = client_for(st)
    client.post(f"/scenes/{scene.pk}/combat/start/", {"who": [x.pk for x in p.values()]})
    targets = {f"target_{p['Vera'].pk}": p["Xan"].pk, f"target_{p['Wes'].pk}": p["Xan"].pk}
    r = client.post(f"/scenes/{scene.pk}/combat/met-mob/", targets, HTTP_HX_REQUEST="true")
    assert r.status_code == 409 and "C16" in r.content.decode()
    r = client.post(
        f"/scenes/{scene.pk}/combat/met-mob/", {**targets, "agreed": "true"}, HTTP_HX_REQUEST="true"
    )
    assert "on <b>Xan</b>, −1 on a draw" in r.content.decode()
    phone = client_for(users["Xan"]).get(f"/scenes/{scene.pk}/phone/").content.decode()
    assert "on <b>Xan</b>, −1 on a draw" in phone
    vera = client_for(users["Vera"]).get(f"/scenes/{scene.pk}/phone/").content.decode()
    assert "Celerity this round: Vera" in vera


def _form_fields(page: str, action: str) -> dict[str, str]:
    """The hidden fields of the page's form that posts to ``action``, as the browser sends them."""
    form = re.search(rf'<form [^>]*action="{re.escape(action)}".*?</form>', page, re.S)
    assert form, f"no form posts to {action}"
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form.group(0)))


def test_a_double_tap_on_next_round_moves_one_round(court):
    """The tablet's met_classic *Next round* carries an idempotency key: the same tap sent twice
    (a double tap, a re-send after a lost answer) starts one new round, not two."""
    st, _users, p, scene = court
    client = client_for(st)
    client.post(f"/scenes/{scene.pk}/combat/start/", {"who": [x.pk for x in p.values()]})
    action = f"/scenes/{scene.pk}/combat/met-next/"
    fields = _form_fields(client.get(f"/scenes/{scene.pk}/").content.decode(), action)
    assert fields.get("key"), fields
    for _ in range(2):
        assert client.post(action, fields, HTTP_HX_REQUEST="true").status_code == 200
    assert Combat.objects.get(scene=scene).round_number == 2
