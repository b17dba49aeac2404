"""A tap sent again (a double tap, or one queued offline and sent when the phone is back)
answers as the first did, whatever happened since: the key is claimed before any other check
(combat/steps.py), so a replay after a pause or a stage change is no 409 for a change that
was applied."""

from __future__ import annotations

import random
import re
from pathlib import Path

from combat.models import Combat
from combat.rounds import bns
from combat.rounds.bns_reads import engine_of
from combat.rounds.errors import PAUSED
from combat.rounds.initiative import combat_begin_round, combat_initiative
from combat.rounds.starting import combat_start
from combat.rounds.storyteller import combat_pause
from tests.combat.rounds.test_views import _post
from tests.conftest import client_for

PHONE = {"from": "phone"}


def _fight(cast):
    p, st = cast.p, cast.storyteller
    combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Frank"]])
    return Combat.objects.get


def test_a_declaration_sent_again_after_a_pause_answers_as_it_was_applied(cast):
    p, st = cast.p, cast.storyteller
    combat = _fight(cast)
    for name, die in (("Jane", 9), ("Frank", 1)):
        combat_initiative(combat=combat(), by=st, participant=p[name], roll=die)
    combat_begin_round(combat=combat(), by=st)
    frank = client_for(cast.users["Frank"])
    tap = {"participant": p["Frank"].pk, "action": "dodge", "key": "frank-dodge-1", **PHONE}
    first = _post(frank, cast.scene, "declare", **tap)
    assert first.status_code == 200, first.content.decode()[:500]
    combat_pause(combat=combat(), by=st, paused=True)
    state = combat().state
    again = _post(frank, cast.scene, "declare", **tap)
    assert again.status_code == 200, again.content.decode()[:500]
    assert "paused" not in again.content.decode().split('role="alert"')[-1][:200]
    assert combat().state == state
    fresh = _post(frank, cast.scene, "declare", **{**tap, "key": "frank-dodge-2"})
    assert fresh.status_code == 409 and PAUSED in fresh.content.decode()


def test_an_initiative_sent_again_after_the_round_began_answers_as_it_was_applied(cast):
    p, st = cast.p, cast.storyteller
    combat = _fight(cast)
    jane = client_for(cast.users["Jane"])
    tap = {"participant": p["Jane"].pk, "roll": 7, "key": "jane-ini-1", **PHONE}
    assert _post(jane, cast.scene, "initiative", **tap).status_code == 200
    combat_initiative(combat=combat(), by=st, participant=p["Frank"], roll=1)
    combat_begin_round(combat=combat(), by=st)
    before = combat().initiative
    again = _post(jane, cast.scene, "initiative", **tap)
    assert again.status_code == 200, again.content.decode()[:500]
    assert combat().initiative == before


def test_a_met_bns_action_sent_again_after_a_pause_answers_as_it_was_applied(docks):
    st, users, p, scene = docks
    combat = Combat.objects.get
    fighters = list(p.values())
    bns.bns_start(scene=scene, by=st, participants=fighters, rng=random.Random(3))
    bns.bns_mediate(combat=combat(), by=st, agreed=False)
    bns.bns_assess(combat=combat(), by=st, participants=fighters)
    current = engine_of(combat()).current
    who = next(x for x in fighters if str(x.pk) == current)
    rounds_user = users[who.name]
    bns.bns_act(combat=combat(), by=rounds_user, participant=who, simple="move", key="bns-move-1")
    combat_pause(combat=combat(), by=st, paused=True)
    state = combat().state
    bns.bns_act(combat=combat(), by=rounds_user, participant=who, simple="move", key="bns-move-1")
    assert combat().state == state


# Forms whose step needs no key: starting a fight (one may run at a time), choosing what to
# pursue or roll (sets a value), and a player's Celerity rounds (B5: set to a value, kept until
# changed, so the same choice twice is the same state, and a different one must not replay).
UNKEYED = {
    "round_start",
    "round_pursue",
    "round_initiative",
    "round_roll_missing",
    "round_declare",
    "round_resolve",
    "round_bns_celerity@phone",
}


def test_every_round_form_carries_an_idempotency_key():
    """A double tap on any round form counts once: each one carries a ``key`` (save UNKEYED)."""
    missing = []
    for path in sorted(Path("templates/combat/rounds").glob("*.html")):
        for form in re.findall(r"<form\b[^>]*method=\"post\".*?</form>", path.read_text(), re.S):
            name = re.search(r"url '(round_[a-z_]+)'", form).group(1)
            where = "@phone" if 'name="from" value="phone"' in form else ""
            if 'name="key"' not in form and name not in UNKEYED and name + where not in UNKEYED:
                missing.append(f"{path.name}: {name}{where}")
    assert not missing, missing
