"""K4: the attacker elects to pursue a surviving escape (D9) or lets it go; while the chase
runs its Prey and Predators are away from the fight, and its ending brings them back, or
not (D9, D13, K1, K10)."""

from __future__ import annotations

import pytest

from chases.models import Chase
from combat.models import Combat, SceneLogEntry
from combat.rounds import handback
from combat.rounds.bookkeeping import combat_book_keeping, combat_next_round
from combat.rounds.errors import RoundError
from combat.rounds.initiative import combat_begin_round, combat_roll_missing
from combat.rounds.planning import resolution_preview
from combat.rounds.pursuit import combat_pursue
from combat.rounds.reads import wod_state
from tests.combat.rounds.test_views import _phone, _post, _tablet
from tests.combat.rounds.test_wod_services import _declare, _fresh, _resolve, _roll_all, _start
from tests.conftest import client_for


@pytest.fixture
def clients(cast):
    out = {name: client_for(user) for name, user in cast.users.items()}
    out["st"] = client_for(cast.storyteller)
    return out


def _escape(cast, names=("Jane", "Thug", "Teddy")):
    """Jane (slowest) escapes; the Thug (fastest) attacks her and her escape survives with 2
    to spare (D9); Teddy, in the middle, has yet to resolve his block."""
    combat = _start(cast, names)
    combat = _roll_all(cast, combat, {"Jane": 1, "Thug": 10, "Teddy": 5, "Lurker": 2})
    _declare(cast, combat, "Jane", "escape")
    if "Lurker" in names:
        _declare(cast, combat, "Lurker", "dodge")
    if "Teddy" in names:
        _declare(cast, combat, "Teddy", "block")
    _declare(cast, combat, "Thug", "attack", "Jane", weapon="Club")
    _resolve(cast, combat, "Thug", attack_dice="7 2 2 2", defense_dice="7 8 9 2 2 2 2")
    return _fresh(combat)


def _up(combat):
    state = wod_state(_fresh(combat))
    return state.step.value, list(state.up)


def test_the_tablet_offers_pursue_or_let_go_and_a_phone_does_not(cast, clients):
    """K4: the storyteller's tablet asks (for a player's attacker, on their word)."""
    combat = _escape(cast, ("Jane", "Thug"))
    tablet = _tablet(clients, cast)
    assert "Does Thug pursue? (K4)" in tablet and ">Pursue</button>" in tablet
    assert ">Let go</button>" in tablet
    assert ">Pursue</button>" not in _phone(clients, cast, "Jane")
    r = _post(clients["Jane"], cast.scene, "pursue", participant=cast.p["Thug"].pk, pursue="true")
    assert r.status_code in (404, 409) and not Chase.objects.exists()
    with pytest.raises(RoundError, match="Only the storyteller"):
        combat_pursue(combat=combat, by=cast.users["Jane"], predator=cast.p["Thug"], pursue=True)
    r = _post(clients["st"], cast.scene, "pursue", participant=cast.p["Thug"].pk, pursue="true")
    assert r.status_code == 200, r.content.decode()[:500]
    chase = Chase.objects.get()
    assert chase.origin == {"round_id": combat.pk, "round": 1}
    assert "Does Thug pursue?" not in r.content.decode()
    assert "In the chase: Jane, Thug" in r.content.decode()


def test_let_go_through_the_tablet(cast, clients):
    _escape(cast, ("Jane", "Thug"))
    r = _post(clients["st"], cast.scene, "pursue", participant=cast.p["Thug"].pk, pursue="false")
    assert r.status_code == 200 and not Chase.objects.exists()
    assert _fresh(Combat.objects.get()).work["out"] == [str(cast.p["Jane"].pk)]


def test_those_in_the_chase_have_no_turn_in_the_fight_while_it_runs(cast):
    """D9, K4: Jane's own turn (her escape) is passed over by itself; next round neither
    she nor the Thug rolls initiative or declares, and the round begins without them."""
    combat = _escape(cast)
    jane, thug, teddy = (str(cast.p[n].pk) for n in ("Jane", "Thug", "Teddy"))
    assert _up(combat) == ("resolve", [teddy])
    combat_pursue(combat=combat, by=cast.storyteller, predator=cast.p["Thug"], pursue=True)
    assert _fresh(combat).work["chase"] == [jane, thug]
    _resolve(cast, combat, "Teddy")
    combat = _fresh(combat)
    assert combat.stage == "book_keeping"  # Jane's turn passed over, not waited on
    texts = list(SceneLogEntry.objects.values_list("text", flat=True))
    assert "Jane is away in the chase: no turn in the fight (K4)" in texts
    combat_book_keeping(combat=combat, by=cast.storyteller)
    combat_next_round(combat=combat, by=cast.storyteller)
    combat_roll_missing(combat=combat, by=cast.storyteller)
    combat = _fresh(combat)
    assert set(combat.initiative) == {teddy} and combat.work["chase"] == [jane, thug]
    combat_begin_round(combat=combat, by=cast.storyteller)  # waits on no one
    assert _up(combat) == ("declare", [teddy])


def _end(cast, combat, outcome):
    chase = Chase.objects.get()
    handback.chase_ended(
        Chase, chase=chase, outcome=outcome, origin={"round_id": combat.pk, "round": 1}
    )
    return _fresh(combat)


def test_a_catch_brings_prey_and_predators_back_into_the_fight(cast):
    """K1, D9: caught: both back in the fight, each said in the log."""
    combat = _escape(cast, ("Jane", "Thug"))
    combat_pursue(combat=combat, by=cast.storyteller, predator=cast.p["Thug"], pursue=True)
    combat = _end(cast, combat, "caught")
    assert combat.work["chase"] == [] and combat.work.get("out", []) == []
    texts = list(SceneLogEntry.objects.values_list("text", flat=True))
    assert "Jane was caught in the chase: back in the fight (K1, D9)" in texts
    assert "Thug is back in the fight from the chase (K1)" in texts
    assert "Jane was caught" in combat.reminders[-1]["text"]


def test_an_escape_takes_the_prey_out_of_the_fight_and_brings_the_predators_back(cast):
    """K10: escaped: the Prey has left the fight, the Predators are back in it."""
    combat = _escape(cast, ("Jane", "Thug"))
    combat_pursue(combat=combat, by=cast.storyteller, predator=cast.p["Thug"], pursue=True)
    combat = _end(cast, combat, "escaped")
    assert combat.work["chase"] == [] and combat.work["out"] == [str(cast.p["Jane"].pk)]
    texts = list(SceneLogEntry.objects.values_list("text", flat=True))
    assert "Jane got away in the chase and has left the fight (K10)" in texts
    assert "Thug is back in the fight from the chase (K1)" in texts


def test_a_hidden_npc_in_the_chase_is_never_named_to_players(cast):
    """A hidden NPC's pursuit, absence and return are the storyteller's lines alone."""
    combat = _start(cast, ("Jane", "Lurker"))
    combat = _roll_all(cast, combat, {"Jane": 1, "Lurker": 10})
    _declare(cast, combat, "Jane", "escape")
    _declare(cast, combat, "Lurker", "attack", "Jane")
    dice = resolution_preview(_fresh(combat), str(cast.p["Lurker"].pk))["attack"]["dice"]
    _resolve(
        cast, combat, "Lurker", attack_dice=" ".join(["2"] * dice), defense_dice="7 8 9 2 2 2 2"
    )
    combat_pursue(combat=combat, by=cast.storyteller, predator=cast.p["Lurker"], pursue=True)
    _end(cast, combat, "escaped")
    named = SceneLogEntry.objects.filter(text__contains="Lurker")
    assert named.exists() and not named.filter(public=True).exists()
