"""G6 with G7: a Grappler answers a third party's attack with a forced effect (Shrug Off,
Hostage Block), paid in Control even past what it has."""

from __future__ import annotations

import pytest

from characters.selectors import current_values
from combat.models import Combat
from combat.rounds.errors import RoundError
from combat.rounds.planning import resolution_preview
from tests.combat.rounds.test_wod_services import _declare, _fresh, _grappled, _resolve


def _jane_attacks_teddy(cast, control: int | None = None):
    """Round 2: Teddy holds Frank (Control 3); Jane (18, resolves first) attacks Teddy."""
    combat = _grappled(cast)
    if control is not None:
        grapples = [{**g, "control": control} for g in _fresh(combat).grapples]
        Combat.objects.filter(pk=combat.pk).update(grapples=grapples)
    _declare(cast, combat, "Frank", "resist")
    _declare(cast, combat, "Teddy", "sustain")
    _declare(cast, combat, "Jane", "attack", "Teddy")
    return _fresh(combat)


def roll_damage(cast, name):
    return current_values(cast.p[name].character)["damage"]


def test_the_tablet_offers_the_forced_effects_with_the_grapplers_block_pool(cast, client):
    combat = _jane_attacks_teddy(cast)
    plan = resolution_preview(combat, str(cast.p["Jane"].pk))
    assert plan["forced"] == [("shrug_off", 1), ("hostage_block", 2)]
    # D6: Dexterity 3 + Brawl 4 against fists, the same pool: difficulty 4.
    assert (plan["forced_pool"]["dice"], plan["forced_pool"]["difficulty"]) == (7, 4)
    client.force_login(cast.storyteller)
    board = client.get(f"/scenes/{cast.scene.pk}/").content.decode()
    assert 'name="forced"' in board and "Hostage Block: the Victim as a shield (2)" in board
    # Teddy's own action is no third party's attack on a Grappler: nothing forced to offer.
    assert "forced" not in resolution_preview(combat, str(cast.p["Teddy"].pk))


def test_shrug_off_is_a_defense_roll_paid_with_one_control(cast):
    combat = _jane_attacks_teddy(cast)
    _resolve(
        cast,
        combat,
        "Jane",
        attack_dice="8 8 8 2 2 2",  # Dexterity 4 + Brawl 2
        forced="shrug_off",
        forced_dice="5 5 2 2 2 2 2",  # Dexterity 3 + Brawl 4 at 4
        damage_dice="7 7",
        soak_dice="1 1 1 1",
    )
    combat = _fresh(combat)
    assert combat.grapples[0]["control"] == 2
    text = combat.results[-1]["text"]
    assert "Teddy answers with Shrug Off (G6, −1 Control)" in text
    assert "Jane hits Teddy (1 net), 2 bashing" in text
    assert roll_damage(cast, "Teddy") == 2 and roll_damage(cast, "Frank") == 0


def test_a_hostage_block_that_negates_the_attack_lands_its_base_damage_on_the_victim(cast):
    combat = _jane_attacks_teddy(cast)
    # Jane 2 successes, the block 3: fully negated. Base damage: Strength 2 + fists 0 = 2 dice.
    _resolve(
        cast,
        combat,
        "Jane",
        attack_dice="8 8 2 2 2 2",
        forced="hostage_block",
        forced_dice="5 5 5 2 2 2 2",
        damage_dice="7 7",
        soak_dice="1 1",
    )
    combat = _fresh(combat)
    assert combat.grapples[0]["control"] == 1
    assert "Jane hits Frank (the hostage takes the base damage)" in combat.results[-1]["text"]
    assert len([r for r in combat.results[-1]["rolls"] if r["label"].startswith("Damage")]) == 1
    assert next(r for r in combat.results[-1]["rolls"] if r["label"].startswith("Damage"))[
        "label"
    ].startswith("Damage (2 dice")
    assert roll_damage(cast, "Frank") == 2 and roll_damage(cast, "Teddy") == 0


def test_a_hostage_block_that_falls_short_lets_the_rest_hit_the_grappler(cast):
    combat = _jane_attacks_teddy(cast)
    _resolve(
        cast,
        combat,
        "Jane",
        attack_dice="8 8 8 2 2 2",
        forced="hostage_block",
        forced_dice="5 2 2 2 2 2 2",
        damage_dice="7 7 7",
        soak_dice="1 1 1 1",
    )
    combat = _fresh(combat)
    assert "Jane hits Teddy (2 net), 3 bashing" in combat.results[-1]["text"]
    assert roll_damage(cast, "Teddy") == 3 and roll_damage(cast, "Frank") == 0


def test_a_forced_effect_is_paid_past_the_control_left_and_frees_the_victim(cast):
    combat = _jane_attacks_teddy(cast, control=1)
    _resolve(
        cast,
        combat,
        "Jane",
        attack_dice="2 2 2 2 2 2",
        forced="hostage_block",
        forced_dice="2 2 2 2 2 2 2",
    )
    combat = _fresh(combat)
    assert combat.grapples == []
    assert "Control 0: Frank breaks free (G5)" in combat.results[-1]["text"]
    assert "nothing lands (0 against 0)" in combat.results[-1]["text"]


def test_a_forced_effect_where_no_grappler_is_attacked_is_refused_and_changes_nothing(cast):
    combat = _grappled(cast)
    _declare(cast, combat, "Frank", "resist")
    _declare(cast, combat, "Teddy", "sustain")
    _declare(cast, combat, "Jane", "attack", "Frank")
    before = _fresh(combat)
    with pytest.raises(RoundError, match="G6"):
        _resolve(cast, combat, "Jane", attack_dice="8 2 2 2 2 2", forced="shrug_off")
    after = _fresh(combat)
    assert (after.state, after.grapples, after.results) == (
        before.state,
        before.grapples,
        before.results,
    )
