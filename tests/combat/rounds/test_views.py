"""The round through the tablet's and the phones' posts: roles, prompts, what each sees."""

from __future__ import annotations

import pytest

from combat.models import Combat
from combat.rounds.bns_reads import engine_of
from tests.conftest import client_for

HX = {"HTTP_HX_REQUEST": "true"}


def _post(client, scene, slug, **data):
    return client.post(f"/scenes/{scene.pk}/combat/{slug}/", data, **HX)


@pytest.fixture
def clients(cast):
    out = {name: client_for(user) for name, user in cast.users.items()}
    out["st"] = client_for(cast.storyteller)
    return out


def _phone(clients, cast, name):
    return clients[name].get(f"/scenes/{cast.scene.pk}/phone/").content.decode()


def _tablet(clients, cast):
    return clients["st"].get(f"/scenes/{cast.scene.pk}/").content.decode()


def test_a_round_runs_from_the_tablet_and_the_phones(cast, clients):
    p = cast.p
    who = [p[n].pk for n in ("Jane", "Frank", "Teddy", "Lurker")]
    r = _post(clients["Jane"], cast.scene, "start", who=who)
    assert r.status_code == 409 and "Only the storyteller" in r.content.decode()
    assert not Combat.objects.exists()
    r = _post(clients["st"], cast.scene, "start", who=who)
    assert r.status_code == 200, r.content.decode()[:500]
    combat = Combat.objects.get()
    assert "Roll initiative for Jane" in _phone(clients, cast, "Jane")
    r = _post(
        clients["Jane"],
        cast.scene,
        "initiative",
        participant=p["Jane"].pk,
        roll=5,
        key="ini-jane-1",
        **{"from": "phone"},
    )
    assert r.status_code == 200 and "initiative <b>13</b>" in r.content.decode()
    r = _post(
        clients["Jane"],
        cast.scene,
        "initiative",
        participant=p["Frank"].pk,
        roll=5,
        **{"from": "phone"},
    )
    assert r.status_code == 409 and "not your character" in r.content.decode()
    for name, die in (("Frank", 1), ("Teddy", 4), ("Lurker", 2)):
        _post(clients["st"], cast.scene, "initiative", participant=p[name].pk, roll=die)
    assert _post(clients["Jane"], cast.scene, "begin").status_code == 409
    r = _post(clients["st"], cast.scene, "begin")
    assert r.status_code == 200, r.content.decode()
    # Frank 6 declares first; Lurker (hidden, 8) next; then Teddy 10, Jane 13.
    frank = _phone(clients, cast, "Frank")
    assert "Declare now: Frank" in frank
    assert "Lurker" not in frank and "Lurker" not in _phone(clients, cast, "Teddy")
    r = _post(
        clients["Frank"],
        cast.scene,
        "declare",
        participant=p["Frank"].pk,
        action="dodge",
        at=combat_token(combat),
        **{"from": "phone"},
    )
    assert r.status_code == 200, r.content.decode()
    # The hidden Lurker is up: the players see Teddy as now (no gap, no blank highlight), and
    # Teddy's phone says so too, with Jane next: nothing hints at someone in between.
    teddy = _phone(clients, cast, "Teddy")
    assert "Declare now: Teddy" in teddy and "Lurker" not in teddy
    assert "You're next: Jane" in _phone(clients, cast, "Jane")
    public = teddy.split('id="round-public"')[1].split("</div>")[0]
    assert '<li class="now">Teddy' in public and "the storyteller" not in public
    tablet = _tablet(clients, cast)
    assert "Waiting on <b>Lurker</b>" in tablet
    # Teddy declares at once; it is held (the storyteller does not read it) until Lurker has.
    r = _post(
        clients["Teddy"],
        cast.scene,
        "declare",
        participant=p["Teddy"].pk,
        action="attack",
        target=p["Frank"].pk,
        haste=0,
        at=combat_token(combat),
        **{"from": "phone"},
    )
    assert r.status_code == 200, r.content.decode()
    assert "Attack on Frank" not in _tablet(clients, cast)
    assert "Declare now" not in _phone(clients, cast, "Teddy")
    _post(
        clients["st"],
        cast.scene,
        "declare",
        participant=p["Lurker"].pk,
        action="attack",
        target=p["Jane"].pk,
    )
    assert "Lurker" not in _phone(clients, cast, "Jane").split('id="round-public"')[1]
    frank = _phone(clients, cast, "Frank")
    assert "Attack on Frank" in frank
    assert "Declare now: Jane" in _phone(clients, cast, "Jane")
    _post(
        clients["Jane"],
        cast.scene,
        "declare",
        participant=p["Jane"].pk,
        action="block",
        **{"from": "phone"},
    )
    tablet = _tablet(clients, cast)
    assert "Resolve Jane" in tablet
    for name in ("Jane", "Teddy", "Lurker", "Frank"):
        r = _post(clients["st"], cast.scene, "resolve", participant=p[name].pk)
        assert r.status_code == 200, r.content.decode()
    assert "Book keeping" in _tablet(clients, cast)
    r = _post(clients["Jane"], cast.scene, "book-keeping")
    assert r.status_code == 409 and "Only the storyteller" in r.content.decode()


def combat_token(combat):
    from combat.rounds.tokens import state_token

    return state_token(Combat.objects.get(pk=combat.pk))


def test_a_met_bns_turn_runs_from_the_tablet_and_the_phones(docks):
    st, users, p, scene = docks
    c = {n: client_for(u) for n, u in users.items()}
    c["st"] = client_for(st)
    who = [x.pk for x in p.values()]
    assert _post(c["st"], scene, "start", who=who).status_code == 200
    r = _post(c["st"], scene, "bns-mediate", agreed="false")
    assert "The scene is frozen" in r.content.decode()
    r = _post(
        c["Ana"], scene, "bns-celerity", participant=p["Ana"].pk, rounds=1, **{"from": "phone"}
    )
    assert r.status_code == 200, r.content.decode()
    r = _post(c["st"], scene, "bns-assess", who=who)
    assert r.status_code == 200
    ana = c["Ana"].get(f"/scenes/{scene.pk}/phone/").content.decode()
    assert "Act now: Ana" in ana and "Fair escape" in ana
    assert "You're next: Bo" in c["Bo"].get(f"/scenes/{scene.pk}/phone/").content.decode()
    r = _post(c["Bo"], scene, "bns-act", participant=p["Bo"].pk, simple="move", **{"from": "phone"})
    assert r.status_code == 409 and "B4" in r.content.decode()
    r = _post(
        c["Ana"],
        scene,
        "bns-act",
        participant=p["Ana"].pk,
        standard="attack",
        target=p["Cy"].pk,
        **{"from": "phone"},
    )
    assert r.status_code == 200, r.content.decode()
    assert "Attack on Cy" in c["Cy"].get(f"/scenes/{scene.pk}/phone/").content.decode()
    r = _post(c["Bo"], scene, "bns-escape", participant=p["Bo"].pk, **{"from": "phone"})
    assert r.status_code == 200, r.content.decode()
    cy = c["Cy"].get(f"/scenes/{scene.pk}/phone/").content.decode()
    assert "I intend to attack Bo" in cy
    _post(c["Cy"], scene, "bns-intent", participant=p["Cy"].pk, **{"from": "phone"})
    r = _post(c["st"], scene, "bns-escape-settle")
    assert "escape on hold" in r.content.decode()
    assert "escape on hold" in c["Ana"].get(f"/scenes/{scene.pk}/phone/").content.decode()
    r = _post(c["st"], scene, "bns-end-round")
    assert "Celerity 1 round" in r.content.decode()


def test_a_player_who_does_not_declare_is_left_to_the_storyteller(cast, clients):
    """Nothing is ever filled in for a slow player (the soft timer only changes its words when
    it runs out). The tablet says whom it waits on and offers to declare for them or to pass
    them over."""
    from combat.rounds.initiative import combat_begin_round, combat_initiative
    from combat.rounds.starting import combat_start

    st, p = cast.storyteller, cast.p
    combat = combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Frank"]])
    for name, die in (("Jane", 5), ("Frank", 1)):
        combat_initiative(combat=combat, by=st, participant=p[name], roll=die)
    combat_begin_round(combat=combat, by=st)
    board = _tablet(clients, cast)
    assert "Waiting on <b>Frank</b> to declare. No action is filled in for them" in board
    assert "Declare for Frank" in board and "Pass over Frank" in board
    state = Combat.objects.get().state
    r = _post(clients["Frank"], cast.scene, "skip", participant=p["Frank"].pk)
    assert r.status_code == 409 and "Only the storyteller" in r.content.decode()
    assert Combat.objects.get().state == state
    r = _post(clients["st"], cast.scene, "skip", participant=p["Frank"].pk)
    assert r.status_code == 200 and "Frank is passed over" in _tablet(clients, cast)


def test_the_tablet_refuses_typed_dice_other_than_the_pool_and_changes_nothing(cast, clients):
    """D1: the storyteller types 3 dice for Teddy's 8-dice grapple pool: 409 with the pool's
    size and whose it is; nothing rolled, logged or held. The whole pool goes through."""
    from html import unescape

    from combat.models import SceneLogEntry
    from tests.combat.rounds.test_wod_services import _declare, _fresh, _roll_all, _start

    combat = _start(cast, ("Teddy", "Frank"))
    combat = _roll_all(cast, combat, {"Teddy": 9, "Frank": 1})
    _declare(cast, combat, "Frank", "dodge")
    _declare(cast, combat, "Teddy", "grapple", "Frank")
    assert "= <b>8</b> dice" in _tablet(clients, cast)  # the pool the tablet shows
    before = _fresh(combat)
    logged = SceneLogEntry.objects.filter(scene=cast.scene).count()
    r = _post(
        clients["st"],
        cast.scene,
        "resolve",
        participant=cast.p["Teddy"].pk,
        attack_dice="8 9 10",
        at=combat_token(before),
    )
    assert r.status_code == 409
    assert "Teddy's pool is 8 dice; 3 typed: type 8 or leave it blank (D1)" in unescape(
        r.content.decode()
    )
    after = _fresh(combat)
    assert (after.state, after.work, after.grapples, after.results) == (
        before.state,
        before.work,
        before.grapples,
        before.results,
    )
    assert SceneLogEntry.objects.filter(scene=cast.scene).count() == logged
    r = _post(
        clients["st"],
        cast.scene,
        "resolve",
        participant=cast.p["Teddy"].pk,
        attack_dice="8 9 10 2 2 2 2 2",
        defense_dice="2 2 2",
        at=combat_token(before),
    )
    assert r.status_code == 200, r.content.decode()[:400]
    assert _fresh(combat).grapples[0]["control"] == 3


def test_the_tablet_sets_an_npcs_celerity_and_its_fair_escape(docks):
    """B5, B9: the storyteller has the phones' forms for the NPCs: Celerity rounds (kept until
    changed) and a fair escape at the start of the NPC's initiative, through the same
    services, acting for the NPC; a player cannot post them for an NPC."""
    from combat import services as scene_services

    st, users, p, scene = docks
    hound = scene_services.scene_add_npc(
        scene=scene, by=st, name="Hound", pools={"Physical": 12, "Mental": 3, "Celerity": 2}
    )
    c = {n: client_for(u) for n, u in users.items()}
    c["st"] = client_for(st)
    who = [x.pk for x in (*p.values(), hound)]
    assert _post(c["st"], scene, "start", who=who).status_code == 200
    r = _post(c["st"], scene, "bns-mediate", agreed="false")
    board = r.content.decode()
    assert "Hound&#x27;s Celerity rounds" in board or "Hound's Celerity rounds" in board
    r = _post(c["Ana"], scene, "bns-celerity", participant=hound.pk, rounds=2, **{"from": "phone"})
    assert r.status_code == 409 and "not your character" in r.content.decode()
    assert str(hound.pk) not in Combat.objects.get().haste
    r = _post(c["st"], scene, "bns-celerity", participant=hound.pk, rounds=2)
    assert r.status_code == 200, r.content.decode()[:500]
    assert Combat.objects.get().haste[str(hound.pk)] == 2
    r = _post(c["st"], scene, "bns-assess", who=who)
    board = r.content.decode()
    assert engine_of(Combat.objects.get()).current == str(hound.pk)  # initiative 12 (B4)
    assert "Fair escape for Hound (B9)" in board
    r = _post(c["st"], scene, "bns-escape", participant=hound.pk)
    assert r.status_code == 200, r.content.decode()[:500]
    assert Combat.objects.get().work["escape_call"]["who"] == str(hound.pk)
    assert "I intend to attack Hound" in c["Cy"].get(f"/scenes/{scene.pk}/phone/").content.decode()
    r = _post(c["st"], scene, "bns-escape-settle")
    assert engine_of(Combat.objects.get()).escapes == {str(hound.pk): "escaped"}
    r = _post(c["st"], scene, "bns-end-round")
    state = engine_of(Combat.objects.get())
    assert state.fighter(str(hound.pk)).out and str(hound.pk) not in state.order  # B9


def test_the_tablet_announces_an_npcs_intent_to_attack_an_escaping_character(docks):
    """B9: an NPC yet to act may intend to attack a character trying to escape; the
    storyteller posts it from the tablet."""
    from combat import services as scene_services

    st, users, p, scene = docks
    goon = scene_services.scene_add_npc(
        scene=scene, by=st, name="Goon", pools={"Physical": 2, "Mental": 2, "Social": 1}
    )
    c = {n: client_for(u) for n, u in users.items()}
    c["st"] = client_for(st)
    who = [x.pk for x in (*p.values(), goon)]
    _post(c["st"], scene, "start", who=who)
    _post(c["st"], scene, "bns-mediate", agreed="false")
    _post(c["st"], scene, "bns-assess", who=who)
    _post(c["Ana"], scene, "bns-escape", participant=p["Ana"].pk, **{"from": "phone"})
    board = c["st"].get(f"/scenes/{scene.pk}/").content.decode()
    assert "Goon intends to attack Ana (B9)</button>" in board
    r = _post(c["st"], scene, "bns-intent", participant=goon.pk)
    assert r.status_code == 200, r.content.decode()[:500]
    assert Combat.objects.get().work["escape_call"]["intents"] == [str(goon.pk)]
    assert "Goon intends to attack Ana (B9)</button>" not in r.content.decode()
