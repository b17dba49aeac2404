"""D14 split actions beyond one attack and one defense, through the services and the posts."""

from __future__ import annotations

import pytest

from combat.models import Presence
from combat.rounds.errors import RoundError
from combat.rounds.planning import resolution_preview
from combat.rounds.reads import wod_state
from combat.rounds.tokens import state_token
from tests.combat.rounds.test_wod_services import _declare, _fresh, _resolve, _roll_all, _start


def _decl(cast, combat, name):
    return wod_state(_fresh(combat)).declaration(str(cast.p[name].pk))


def _three(cast):
    """Declare low to high: Thug 5, Frank 6, Jane 18 (Wits 4: up to four actions)."""
    combat = _start(cast, ("Jane", "Frank", "Thug"))
    return _roll_all(cast, combat, {"Jane": 10, "Frank": 1, "Thug": 1})


def test_three_actions_each_lose_four_dice_and_resolve_one_attack_at_a_time(cast):
    combat = _three(cast)
    _declare(cast, combat, "Thug", "attack", "Frank", weapon="Club")
    _declare(cast, combat, "Frank", "dodge")
    _declare(
        cast,
        combat,
        "Jane",
        "attack",
        "Thug",
        extra=[("attack", cast.p["Frank"]), ("dodge", None)],
    )
    jane = _decl(cast, combat, "Jane")
    frank, thug = str(cast.p["Frank"].pk), str(cast.p["Thug"].pk)
    assert jane.actions == 3 and jane.extra == (("attack", frank), ("dodge", None))
    # Every phone hears the whole split (D4): both attacks and the defense.
    line = combat.scene.log.filter(text__startswith="Jane declares").get()
    assert line.public and "+ attack on Frank, + dodge (split in 3)" in line.text

    # Part 1 of 2: Dexterity 4 + Brawl 2 = 6, -(2 + 2) = 2 dice (D14).
    plan = resolution_preview(_fresh(combat), str(cast.p["Jane"].pk))
    assert (plan["part"], plan["parts"], plan["target"]) == (1, 2, thug)
    assert plan["attack"]["dice"] == 2
    _resolve(cast, combat, "Jane", attack_dice="8 8", damage_dice="7 7 2", soak_dice="1 1")
    combat = _fresh(combat)
    assert "Jane → Thug: Jane hits Thug (2 net), 2 bashing" in combat.results[-1]["text"]
    assert wod_state(combat).up == (str(cast.p["Jane"].pk),)  # still Jane's turn

    # Part 2 of 2: the attack on Frank, who dodges with his whole pool (3 dice).
    plan = resolution_preview(combat, str(cast.p["Jane"].pk))
    assert (plan["part"], plan["target"], plan["attack"]["dice"]) == (2, frank, 2)
    assert plan["defense_action"] == "dodge" and plan["defense"]["dice"] == 3
    _resolve(cast, combat, "Jane", attack_dice="9 9", defense_dice="2 3 4")
    combat = _fresh(combat)
    assert "Jane → Frank" in combat.results[-1]["text"]
    assert wod_state(combat).up == (frank,)  # Jane is done: Frank resolves next


def test_a_split_defense_answers_attacks_with_the_split_pool(cast):
    """D14: a dodge split off an attack defends with the split pool (7 - 3 = 4 dice)."""
    combat = _start(cast, ("Jane", "Frank", "Thug"))
    combat = _roll_all(cast, combat, {"Jane": 1, "Frank": 1, "Thug": 10})
    _declare(cast, combat, "Frank", "none")
    _declare(cast, combat, "Jane", "attack", "Frank", extra=[("dodge", None)])
    _declare(cast, combat, "Thug", "attack", "Jane", weapon="Club")
    plan = resolution_preview(_fresh(combat), str(cast.p["Thug"].pk))
    assert plan["defense_action"] == "dodge" and plan["defense"]["dice"] == 4


@pytest.mark.parametrize(
    ("extra", "rule"),
    [
        (lambda p: [("attack", p["Thug"])], "D14"),  # two attacks on one target
        (lambda p: [("attack", p["Jane"]), ("attack", p["Teddy"]), ("dodge", None)], "D14"),
        (lambda p: [("attack", None)], "D14"),  # an attack with no target
        (lambda p: [("dodge", None)], "D5"),  # committed: no defense, split or not
    ],
)
def test_a_split_the_rules_refuse_changes_nothing(cast, extra, rule):
    combat = _start(cast, ("Jane", "Frank", "Teddy", "Thug"))
    # Thug 5, Frank 6, Teddy 10, Jane 18; Jane has Wits 4, Frank Wits 3.
    combat = _roll_all(cast, combat, {"Jane": 10, "Frank": 1, "Teddy": 4, "Thug": 1})
    _declare(cast, combat, "Thug", "none")
    before = _fresh(combat).state
    maneuver = "committed" if rule == "D5" else "basic"
    with pytest.raises(RoundError, match=rule):
        _declare(cast, combat, "Frank", "attack", "Thug", maneuver=maneuver, extra=extra(cast.p))
    assert _fresh(combat).state == before


def test_a_victim_splits_only_to_block_and_haste_is_never_split(cast):
    from tests.combat.rounds.test_wod_services import _grappled

    combat = _grappled(cast, ("Teddy", "Frank"))
    with pytest.raises(RoundError, match="G7"):
        _declare(cast, combat, "Frank", "resist", extra=[("dodge", None)])
    _declare(cast, combat, "Frank", "resist", extra=[("block", None)])
    assert _decl(cast, combat, "Frank").actions == 2
    # G2: a Grappler's defense beside its sustain is no split; an attack beside it is.
    _declare(cast, combat, "Teddy", "sustain", extra=[("dodge", None)], haste=1)
    assert _decl(cast, combat, "Teddy").actions == 1
    # G7 with D14: the blocking Victim's grapple roll is split too: Strength 2 + Brawl 1 - 3.
    plan = resolution_preview(_fresh(combat), str(cast.p["Teddy"].pk))
    assert plan["kind"] == "grapple_hold" and plan["defense"]["dice"] == 0
    _resolve(cast, combat, "Teddy", attack_dice="8 2 2 2 2 2 2 2", defense_dice="")
    _resolve(cast, combat, "Frank")
    # Haste phase 1: Teddy alone, never split (D14).
    assert wod_state(_fresh(combat)).phase.name == "haste 1"
    with pytest.raises(RoundError, match="D14"):
        _declare(cast, combat, "Teddy", "sustain", extra=[("attack", cast.p["Frank"])])


def test_the_phone_and_the_npc_form_declare_a_split(cast, client):
    combat = _three(cast)
    client.force_login(cast.storyteller)
    url = f"/scenes/{cast.scene.pk}/combat/declare/"
    board = client.get(f"/scenes/{cast.scene.pk}/").content.decode()
    # The Thug (Wits 2) may split in two: one select for the further action.
    assert board.count('aria-label="split action 2 of Thug (D14)"') == 1
    token = state_token(_fresh(combat))
    thug = cast.p["Thug"].pk
    bad = client.post(
        url,
        {"participant": thug, "action": "attack", "target": cast.p["Jane"].pk, "also": "kick"},
        HTTP_HX_REQUEST="true",
    )
    assert bad.status_code == 400 and "Not an action to split off" in bad.content.decode()
    assert _fresh(combat).state == combat.state
    ok = client.post(
        url,
        {
            "participant": thug,
            "action": "attack",
            "target": cast.p["Jane"].pk,
            "also": ["block", ""],
            "token": token,
        },
        HTTP_HX_REQUEST="true",
    )
    assert ok.status_code == 200
    assert _decl(cast, combat, "Thug").extra == (("block", None),)

    _declare(cast, combat, "Frank", "dodge")
    jane = client.__class__()
    jane.force_login(cast.users["Jane"])
    page = jane.get(f"/scenes/{cast.scene.pk}/phone/").content.decode()
    assert page.count('<select name="also">') == 3  # Wits 4: three further actions
    assert f'value="attack:{thug}"' in page
    r = jane.post(
        url,
        {
            "participant": cast.p["Jane"].pk,
            "from": "phone",
            "action": "attack",
            "target": thug,
            "also": [f"attack:{cast.p['Frank'].pk}", "dodge", ""],
            "key": "split-jane-1",
            "token": state_token(_fresh(combat)),
        },
        HTTP_HX_REQUEST="true",
    )
    assert r.status_code == 200, r.content.decode()[:400]
    assert _decl(cast, combat, "Jane").actions == 3


def test_a_split_attack_on_a_hidden_npc_never_reaches_a_phone(
    cast, pushes, django_capture_on_commit_callbacks
):
    """A hidden NPC is not named to players, not even as the target of a split's attack."""
    from combat import live

    combat = _start(cast, ("Jane", "Thug", "Lurker"))
    combat = _roll_all(cast, combat, {"Jane": 10, "Thug": 1, "Lurker": 1})
    # Thug 5, Lurker 6, Jane 18: the Thug declares first, for the storyteller.
    Presence.objects.create(scene=cast.scene, user=cast.storyteller, channel_name="tablet.1")
    pushes.clear()
    with django_capture_on_commit_callbacks(execute=True):
        _declare(
            cast,
            combat,
            "Thug",
            "attack",
            "Jane",
            by=cast.storyteller,
            extra=[("attack", cast.p["Lurker"])],
        )
    to_players = [s for s in pushes if s.group != live.storytellers_group(cast.scene.pk)]
    to_storyteller = [s for s in pushes if s.group == live.storytellers_group(cast.scene.pk)]
    assert to_players and not [s.group for s in to_players if "Lurker" in s.html]
    assert any("+ attack on Lurker" in s.html for s in to_storyteller)
    line = cast.scene.log.filter(text__startswith="Thug declares").get()
    assert not line.public
