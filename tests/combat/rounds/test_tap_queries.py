"""A round tap's step in a fixed, small number of queries (tests/combat/tap_queries.py)."""

from __future__ import annotations

import pytest

from combat.models import Combat
from combat.rounds.initiative import combat_begin_round, combat_initiative
from combat.rounds.starting import combat_start
from combat.rounds.tokens import state_token
from tests.combat.tap_queries import HX, log_inserts, scene_writes, step_queries, without_sheets
from tests.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_declaration_from_a_phone(monkeypatch, cast):
    jane, frank = cast.p["Jane"], cast.p["Frank"]
    combat = combat_start(scene=cast.scene, by=cast.storyteller, participants=[jane, frank])
    for p, roll in ((jane, 7), (frank, 3)):
        combat_initiative(combat=combat, by=cast.storyteller, participant=p, roll=roll)
    combat_begin_round(combat=combat, by=cast.storyteller)
    data = {"participant": frank.pk, "action": "dodge", "from": "phone", "key": "key-declare"}
    data["token"] = state_token(Combat.objects.get(pk=combat.pk))
    phone = client_for(cast.users["Frank"])
    with step_queries(monkeypatch) as seen:
        r = phone.post(f"/scenes/{cast.scene.pk}/combat/declare/", data, **HX)
    assert r.status_code == 200, r.content.decode()
    seen = without_sheets(seen)
    # the session with its user (config.auth), the scene (who may post, locked), the fight
    # (locked), the participant named, the key, the fight's members, the fight, the scene and
    # the players' own seq (one statement on PostgreSQL), the log line and the character it
    # names (one statement on PostgreSQL)
    assert len(seen) == 6 + scene_writes(rows=1) + log_inserts(), "\n".join(seen)
    assert not any(q.startswith(("SAVEPOINT", "SELECT DISTINCT")) for q in seen)


def test_an_initiative_from_the_tablet(monkeypatch, cast):
    jane, frank = cast.p["Jane"], cast.p["Frank"]
    combat_start(scene=cast.scene, by=cast.storyteller, participants=[jane, frank])
    data = {"participant": jane.pk, "roll": 7, "key": "key-initiative"}
    tablet = client_for(cast.storyteller)
    with step_queries(monkeypatch) as seen:
        r = tablet.post(f"/scenes/{cast.scene.pk}/combat/initiative/", data, **HX)
    assert r.status_code == 200, r.content.decode()
    seen = without_sheets(seen)
    # the session with its user, the scene (who may post, the storyteller's rule, locked), the
    # fight (locked), the participant named, the key, its members, the fight, the scene and
    # the players' own seq (one statement on PostgreSQL), the log line and the character it
    # names (one statement on PostgreSQL): the storyteller's rule is not asked again
    assert len(seen) == 6 + scene_writes(rows=1) + log_inserts(), "\n".join(seen)
    assert not any(q.startswith(("SAVEPOINT", "SELECT DISTINCT")) for q in seen)
