"""wod_dice rounds driven through the services, with every role (D3-D17, G1-G9)."""

from __future__ import annotations

import random

import pytest

from characters.selectors import current_values
from combat.models import Combat, CombatStage, SceneLogEntry
from combat.rounds.answers import combat_abort, combat_answer_committed
from combat.rounds.bookkeeping import combat_book_keeping, combat_next_round, combat_remind
from combat.rounds.declaring import combat_declare
from combat.rounds.errors import RoundError
from combat.rounds.initiative import combat_begin_round, combat_initiative
from combat.rounds.planning import resolution_preview
from combat.rounds.pursuit import combat_pursue
from combat.rounds.reads import wod_state
from combat.rounds.resolving import combat_resolve
from combat.rounds.starting import combat_start
from combat.rounds.storyteller import combat_add_effect, combat_end, combat_pause
from combat.rounds.tokens import state_token


def _start(cast, names=("Jane", "Frank", "Teddy", "Thug")):
    return combat_start(
        scene=cast.scene, by=cast.storyteller, participants=[cast.p[n] for n in names]
    )


def _roll_all(cast, combat, rolls):
    members = _fresh(combat).members
    for name, die in rolls.items():
        if cast.p[name].pk not in members:
            continue
        combat_initiative(combat=combat, by=cast.storyteller, participant=cast.p[name], roll=die)
    return combat_begin_round(combat=combat, by=cast.storyteller)


def _fresh(combat):
    return Combat.objects.get(pk=combat.pk)


def _up(combat):
    state = wod_state(_fresh(combat))
    return state.step.value, list(state.up)


def test_it_lets_only_the_storyteller_start_and_advance(cast):
    with pytest.raises(RoundError, match="Only the storyteller"):
        combat_start(scene=cast.scene, by=cast.users["Jane"], participants=list(cast.p.values()))
    combat = _start(cast)
    with pytest.raises(RoundError, match="not your character"):
        combat_initiative(combat=combat, by=cast.users["Jane"], participant=cast.p["Frank"], roll=5)
    combat_initiative(combat=combat, by=cast.users["Jane"], participant=cast.p["Jane"], roll=5)
    with pytest.raises(RoundError, match="Only the storyteller"):
        combat_begin_round(combat=combat, by=cast.users["Jane"])
    with pytest.raises(RoundError, match="D3"):
        combat_begin_round(combat=combat, by=cast.storyteller)
    with pytest.raises(RoundError, match="Only the storyteller"):
        combat_pause(combat=combat, by=cast.users["Frank"], paused=True)


def test_it_orders_declarations_low_to_high_and_resolutions_high_to_low(cast):
    combat = _start(cast)
    # Jane 4+4+5=13, Frank 3+2+1=6, Teddy 3+3+4=10, Thug 2+2+3=7
    combat = _roll_all(cast, combat, {"Jane": 5, "Frank": 1, "Teddy": 4, "Thug": 3})
    assert _up(combat) == ("declare", [str(cast.p["Frank"].pk)])
    with pytest.raises(RoundError, match="D4"):
        combat_declare(
            combat=combat, by=cast.users["Jane"], participant=cast.p["Jane"], action="dodge"
        )
    with pytest.raises(RoundError, match="not your character"):
        combat_declare(
            combat=combat, by=cast.users["Jane"], participant=cast.p["Frank"], action="dodge"
        )
    combat_declare(
        combat=combat, by=cast.users["Frank"], participant=cast.p["Frank"], action="dodge"
    )
    # Frank may change his mind until the next character declares.
    combat_declare(
        combat=combat, by=cast.users["Frank"], participant=cast.p["Frank"], action="escape"
    )
    combat_declare(
        combat=combat,
        by=cast.storyteller,
        participant=cast.p["Thug"],
        action="attack",
        target=cast.p["Frank"],
        weapon="Club",
    )
    with pytest.raises(RoundError, match="D4"):
        combat_declare(
            combat=combat, by=cast.users["Frank"], participant=cast.p["Frank"], action="dodge"
        )
    combat_declare(
        combat=combat,
        by=cast.users["Teddy"],
        participant=cast.p["Teddy"],
        action="attack",
        target=cast.p["Thug"],
        haste=1,
    )
    combat_declare(combat=combat, by=cast.users["Jane"], participant=cast.p["Jane"], action="block")
    state = wod_state(_fresh(combat))
    assert [p.name for p in state.phases] == ["main", "haste 1"]
    assert _up(combat) == ("resolve", [str(cast.p["Jane"].pk)])
    rng = random.Random(3)
    for name in ("Jane", "Teddy", "Thug", "Frank"):
        combat_resolve(combat=combat, by=cast.storyteller, participant=cast.p[name], rng=rng)
    # Teddy paid one Rage for his haste action (D4).
    assert current_values(cast.p["Teddy"].character)["rage"] == 3
    assert _up(combat) == ("declare", [str(cast.p["Teddy"].pk)])
    combat_declare(
        combat=combat,
        by=cast.users["Teddy"],
        participant=cast.p["Teddy"],
        action="attack",
        target=cast.p["Thug"],
    )
    combat_resolve(combat=combat, by=cast.storyteller, participant=cast.p["Teddy"], rng=rng)
    combat = _fresh(combat)
    assert combat.stage == CombatStage.BOOK_KEEPING
    before = cast.scene.__class__.objects.get(pk=cast.scene.pk).game_time
    combat_book_keeping(combat=combat, by=cast.storyteller)
    assert cast.scene.__class__.objects.get(pk=cast.scene.pk).game_time == before + 15
    combat_next_round(combat=combat, by=cast.storyteller)
    combat = _fresh(combat)
    assert combat.round_number == 2 and combat.stage == CombatStage.INITIATIVE
    assert combat.haste[str(cast.p["Teddy"].pk)] == 1  # carries over until changed


def test_damage_lands_on_the_health_track_through_the_ledger(cast):
    combat = _start(cast, ("Jane", "Thug"))
    combat = _roll_all(cast, combat, {"Jane": 1, "Thug": 10})
    combat_declare(combat=combat, by=cast.users["Jane"], participant=cast.p["Jane"], action="dodge")
    combat_declare(
        combat=combat,
        by=cast.storyteller,
        participant=cast.p["Thug"],
        action="attack",
        target=cast.p["Jane"],
        weapon="Club",
    )
    combat_resolve(
        combat=combat,
        by=cast.storyteller,
        participant=cast.p["Thug"],
        attack_dice="8 9 10 7",
        defense_dice="2 3 4 9 1 1 5",
        damage_dice="6 7 8 9 2 3 4 5",
        soak_dice="1 6",
    )
    # Dexterity 2 + Melee 2 = 4 dice, 4 successes against Jane's 7-dice dodge of 0 (the 9
    # and the 5 at 5, cancelled by the 1s, D1); damage: Strength 3 + Club 2 + (4 - 1) = 8
    # dice, 4 successes; soak Stamina 2 dice, 1 success → 3 bashing.
    jane = current_values(cast.p["Jane"].character)
    assert jane["damage"] == 3
    line = SceneLogEntry.objects.filter(scene=cast.scene).last()
    assert "3 bashing" in line.text and line.public


def test_a_grapple_starts_and_is_held_with_a_control_track(cast):
    combat = _start(cast, ("Teddy", "Frank"))
    combat = _roll_all(cast, combat, {"Teddy": 9, "Frank": 1})
    combat_declare(
        combat=combat, by=cast.users["Frank"], participant=cast.p["Frank"], action="dodge"
    )
    combat_declare(
        combat=combat,
        by=cast.users["Teddy"],
        participant=cast.p["Teddy"],
        action="grapple",
        target=cast.p["Frank"],
    )
    combat_resolve(
        combat=combat,
        by=cast.storyteller,
        participant=cast.p["Teddy"],
        attack_dice="8 9 10 7 6 6 2 3",
        defense_dice="2 3 4",
    )
    combat = _fresh(combat)
    assert combat.grapples[0]["grappler"] == str(cast.p["Teddy"].pk)
    assert combat.grapples[0]["control"] == 6
    combat_resolve(combat=combat, by=cast.storyteller, participant=cast.p["Frank"])
    combat_book_keeping(combat=combat, by=cast.storyteller)
    combat_next_round(combat=combat, by=cast.storyteller)
    combat = _roll_all(cast, combat, {"Teddy": 9, "Frank": 1})
    with pytest.raises(RoundError, match="G2"):
        combat_declare(
            combat=combat, by=cast.users["Frank"], participant=cast.p["Frank"], action="dodge"
        )
    combat_declare(
        combat=combat, by=cast.users["Frank"], participant=cast.p["Frank"], action="resist"
    )
    combat_declare(
        combat=combat, by=cast.users["Teddy"], participant=cast.p["Teddy"], action="sustain"
    )
    combat_resolve(
        combat=combat,
        by=cast.storyteller,
        participant=cast.p["Teddy"],
        attack_dice="8 9 10 2 2 2 2 2",  # Strength 4 + Brawl 4
        defense_dice="2 2 2",  # Strength 2 + Brawl 1
        effect="clinch",
    )
    combat = _fresh(combat)
    # Round 1 opened the grapple, it was not sustained: no G4 loss. 6 + (3 - 1) = 8 (G3),
    # Clinch costs 1: 7... the Victim's 2 is no success at 6: 6 + 3 = 9, Clinch: 8.
    assert combat.grapples[0]["control"] == 8
    result = combat.results[-1]
    assert any(r["label"].startswith("Damage") for r in result["rolls"])  # G6 with D11
    # D1: the table's dice are marked typed in the grapple's rolls, as in an attack's
    grapple_rolls = [r for r in result["rolls"] if r["label"].startswith("Grapple")]
    assert len(grapple_rolls) == 2 and all(r["typed"] for r in grapple_rolls)


def _declare(cast, combat, name, action, target=None, by=None, **extra):
    user = by or cast.users.get(name) or cast.storyteller
    return combat_declare(
        combat=_fresh(combat),
        by=user,
        participant=cast.p[name],
        action=action,
        target=cast.p[target] if target else None,
        **extra,
    )


def _resolve(cast, combat, name, **dice):
    return combat_resolve(
        combat=_fresh(combat), by=cast.storyteller, participant=cast.p[name], **dice
    )


def test_two_attacks_on_each_other_meet_and_only_the_higher_lands(cast):
    """D7: the lower successes come off the higher; the Thug's attack is spent in it."""
    combat = _start(cast, ("Teddy", "Thug"))
    combat = _roll_all(cast, combat, {"Teddy": 9, "Thug": 1})
    _declare(cast, combat, "Thug", "attack", "Teddy", weapon="Club")
    _declare(cast, combat, "Teddy", "attack", "Thug")
    _resolve(
        cast,
        combat,
        "Teddy",
        attack_dice="7 8 9 10 2 2 2",  # Dexterity 3 + Brawl 4: 4 successes
        defense_dice="6 7 1 2",  # Dexterity 2 + Melee 2 (Club): 1 success
        damage_dice="6 6 2 2 2 2",  # Strength 4 + (3 - 1)
        soak_dice="2 2",
    )
    combat = _fresh(combat)
    assert "Teddy hits Thug (3 net), 2 bashing" in combat.results[-1]["text"]
    _resolve(cast, combat, "Thug")
    assert "already met" in _fresh(combat).results[-1]["text"]
    assert current_values(cast.p["Thug"].character)["damage"] == 2


def test_a_guard_turns_into_an_attack_on_the_first_attacker(cast):
    """D6: the guard meets the first attack as an attack (D7)."""
    combat = _start(cast, ("Teddy", "Thug"))
    combat = _roll_all(cast, combat, {"Teddy": 1, "Thug": 10})
    _declare(cast, combat, "Teddy", "guard")
    _declare(cast, combat, "Thug", "attack", "Teddy", weapon="Club")
    _resolve(
        cast,
        combat,
        "Thug",
        attack_dice="7 2 2 2",  # Dexterity 2 + Melee 2 (Club): 1 success
        defense_dice="7 8 9 2 2 2 2",  # Dexterity 3 + Brawl 4: 3 successes
        damage_dice="9 9 9 2 2",  # Strength 4 + (2 - 1)
        soak_dice="1 2",
    )
    assert "Teddy hits Thug (2 net)" in _fresh(combat).results[-1]["text"]


def test_a_committed_attack_waits_for_the_targets_answer(cast):
    """D5: accept, +2 difficulty, or abort to a defense without a roll."""
    combat = _start(cast, ("Jane", "Thug"))
    combat = _roll_all(cast, combat, {"Jane": 1, "Thug": 10})
    _declare(cast, combat, "Jane", "attack", "Thug")
    _declare(cast, combat, "Thug", "attack", "Jane", weapon="Club", maneuver="committed")
    with pytest.raises(RoundError, match="D5"):
        _resolve(cast, combat, "Thug")
    with pytest.raises(RoundError, match="not your character"):
        combat_answer_committed(
            combat=combat,
            by=cast.users["Frank"],
            participant=cast.p["Jane"],
            attacker=cast.p["Thug"],
            answer="harder",
        )
    combat_answer_committed(
        combat=combat,
        by=cast.users["Jane"],
        participant=cast.p["Jane"],
        attacker=cast.p["Thug"],
        answer="abort",
    )
    with pytest.raises(RoundError, match="D16"):
        _declare(cast, combat, "Jane", "attack", "Thug")
    _declare(cast, combat, "Jane", "dodge")
    # Club 4 dice, 1 success; Jane's dodge 7 dice, 2 successes.
    _resolve(cast, combat, "Thug", attack_dice="7 2 2 2", defense_dice="8 8 2 2 2 2 2")
    assert "nothing lands" in _fresh(combat).results[-1]["text"]


def test_an_abort_rolls_willpower_and_opens_a_new_declaration(cast):
    """D16: Willpower at 8; a failed abort leaves the action, a second needs the first."""
    combat = _start(cast, ("Jane", "Thug"))
    combat = _roll_all(cast, combat, {"Jane": 10, "Thug": 1})
    _declare(cast, combat, "Thug", "attack", "Jane", weapon="Club")
    _declare(cast, combat, "Jane", "attack", "Thug")
    combat_abort(combat=combat, by=cast.users["Jane"], participant=cast.p["Jane"], dice="3 4 5 2 2")
    with pytest.raises(RoundError, match="D16"):
        combat_abort(
            combat=combat, by=cast.users["Jane"], participant=cast.p["Jane"], dice="9 2 2 2 2"
        )
    combat = _start_again(cast, combat)
    _declare(cast, combat, "Thug", "attack", "Jane", weapon="Club")
    _declare(cast, combat, "Jane", "attack", "Thug")
    combat_abort(combat=combat, by=cast.users["Jane"], participant=cast.p["Jane"], dice="9 2 2 2 2")
    _declare(cast, combat, "Jane", "move")
    assert wod_state(_fresh(combat)).declaration(str(cast.p["Jane"].pk)).action == "move"


def _start_again(cast, combat):
    combat_end(combat=_fresh(combat), by=cast.storyteller)
    combat = _start(cast, ("Jane", "Thug"))
    return _roll_all(cast, combat, {"Jane": 10, "Thug": 1})


def test_a_stale_or_paused_step_changes_nothing(cast):
    combat = _start(cast, ("Jane", "Thug"))
    combat = _roll_all(cast, combat, {"Jane": 10, "Thug": 1})
    token = state_token(_fresh(combat))
    _declare(cast, combat, "Thug", "dodge")
    with pytest.raises(RoundError, match="moved on"):
        _declare(cast, combat, "Jane", "dodge", at=token)
    combat_pause(combat=combat, by=cast.storyteller, paused=True)
    with pytest.raises(RoundError, match="paused"):
        _declare(cast, combat, "Jane", "dodge")
    combat_pause(combat=combat, by=cast.storyteller, paused=False)
    _declare(cast, combat, "Jane", "dodge")


def test_effects_expire_at_book_keeping_and_reminders_are_read(cast):
    """D17, with the game clock moving fifteen seconds a round."""
    combat = _start(cast, ("Jane", "Thug"))
    combat_add_effect(
        combat=combat, by=cast.storyteller, participant=cast.p["Jane"], name="Blinded", rounds=1
    )
    with pytest.raises(RoundError, match="Only the storyteller"):
        combat_add_effect(
            combat=combat, by=cast.users["Jane"], participant=cast.p["Jane"], name="x", rounds=1
        )
    combat_remind(
        combat=combat, by=cast.users["Jane"], participant=cast.p["Jane"], text="bleeding 1/round"
    )
    combat = _roll_all(cast, combat, {"Jane": 10, "Thug": 1})
    _declare(cast, combat, "Thug", "none")
    _declare(cast, combat, "Jane", "none")
    _resolve(cast, combat, "Jane")
    _resolve(cast, combat, "Thug")
    combat_book_keeping(combat=_fresh(combat), by=cast.storyteller)
    combat = _fresh(combat)
    assert combat.effects == [] and combat.work["expired"] == ["Blinded (Jane)"]
    line = SceneLogEntry.objects.filter(scene=cast.scene).last().text
    assert "Blinded (Jane)" in line and "bleeding 1/round" in line


def test_book_keeping_runs_once_a_round(cast):
    """D17: a second Book keeping in the same stage (another tab, a stale screen with a
    fresh token) is refused saying it is done, and the game clock moves fifteen seconds once."""
    combat = _start(cast, ("Jane", "Thug"))
    combat = _roll_all(cast, combat, {"Jane": 10, "Thug": 1})
    _declare(cast, combat, "Thug", "none")
    _declare(cast, combat, "Jane", "none")
    _resolve(cast, combat, "Jane")
    _resolve(cast, combat, "Thug")
    before = cast.scene.__class__.objects.get(pk=cast.scene.pk).game_time
    combat_book_keeping(combat=_fresh(combat), by=cast.storyteller)
    with pytest.raises(RoundError) as refused:
        combat_book_keeping(combat=_fresh(combat), by=cast.storyteller)
    assert str(refused.value) == "Book keeping of round 1 is done; next comes round 2 (D17)."
    assert cast.scene.__class__.objects.get(pk=cast.scene.pk).game_time == before + 15


def test_a_quick_npc_takes_damage_on_the_fight(cast):
    combat = _start(cast, ("Teddy", "Lurker"))
    combat = _roll_all(cast, combat, {"Teddy": 10, "Lurker": 1})
    _declare(cast, combat, "Lurker", "none", by=cast.storyteller)
    _declare(cast, combat, "Teddy", "attack", "Lurker")
    # Dexterity 3 + Brawl 4 = 7 dice, 3 successes; damage Strength 4 + (3 - 1) = 6 dice.
    _resolve(
        cast,
        combat,
        "Teddy",
        attack_dice="8 8 8 2 2 2 2",
        damage_dice="9 9 9 9 9 9",
        soak_dice="1 1",
    )
    assert _fresh(combat).npc_damage == {str(cast.p["Lurker"].pk): 6}


def _escape_survives(cast):
    """Jane escapes the Thug's club with 3 successes against 1: head start 2 (D9). The
    Club is 4 dice, the escape Dexterity 4 + Athletics 3 = 7."""
    combat = _start(cast, ("Jane", "Thug"))
    combat = _roll_all(cast, combat, {"Jane": 1, "Thug": 10})
    _declare(cast, combat, "Jane", "escape")
    _declare(cast, combat, "Thug", "attack", "Jane", weapon="Club")
    _resolve(cast, combat, "Thug", attack_dice="7 2 2 2", defense_dice="7 8 9 2 2 2 2")
    return _fresh(combat)


def _pursue(cast, combat, name, pursue=True):
    return combat_pursue(
        combat=_fresh(combat), by=cast.storyteller, predator=cast.p[name], pursue=pursue
    )


def test_a_surviving_escape_waits_on_the_attackers_choice_to_pursue(cast):
    """K4: the chase happens only if the attacker elects to pursue; until the choice is
    made no chase starts and the fight waits (only the storyteller taps it)."""
    from chases.models import Chase

    combat = _escape_survives(cast)
    assert not Chase.objects.filter(scene=cast.scene).exists()
    assert "does Thug pursue? (K4)" in combat.results[-1]["text"]
    assert combat.work["pursuits"] == [
        {
            "predator": str(cast.p["Thug"].pk),
            "prey": str(cast.p["Jane"].pk),
            "head_start": 2,
            "round": 1,
        }
    ]
    with pytest.raises(RoundError, match="First: does Thug pursue Jane"):
        _resolve(cast, combat, "Jane")
    with pytest.raises(RoundError, match="Only the storyteller"):
        combat_pursue(combat=combat, by=cast.users["Jane"], predator=cast.p["Thug"], pursue=False)
    with pytest.raises(RoundError, match="No escape waits on Jane"):
        _pursue(cast, combat, "Jane")
    assert _fresh(combat).work["pursuits"] and not Chase.objects.exists()


def test_an_attacker_who_lets_the_escaper_go_ends_its_part_in_the_fight(cast):
    """K4: Let go: no chase; the escaper leaves the fight, said in the log."""
    from chases.models import Chase

    combat = _escape_survives(cast)
    _pursue(cast, combat, "Thug", pursue=False)
    combat = _fresh(combat)
    assert not Chase.objects.exists() and combat.work["pursuits"] == []
    assert combat.work["out"] == [str(cast.p["Jane"].pk)]
    last = SceneLogEntry.objects.filter(scene=cast.scene).last()
    assert last.text == "Thug lets Jane go: Jane leaves the fight (K4)" and last.public


def test_a_surviving_escape_hands_over_to_a_chase(cast):
    """D9, K4: the attacker pursues: the escape's remaining successes are the head start."""
    from chases.models import Chase

    combat = _escape_survives(cast)
    _pursue(cast, combat, "Thug")
    combat = _fresh(combat)
    chase = Chase.objects.get(scene=cast.scene, ended_at__isnull=True)
    assert chase.start == "escape" and chase.origin == {"round_id": combat.pk, "round": 1}
    [pursuit] = chase.state["pursuits"]
    assert pursuit["predator"] == f"p{cast.p['Thug'].pk}" and pursuit["lead"] == 2
    texts = list(SceneLogEntry.objects.filter(scene=cast.scene).values_list("text", flat=True))
    assert "Thug pursues Jane; a chase starts, head start 2 (K4)" in texts
    # The chase's line and the round's line each took their own seq.
    seqs = list(SceneLogEntry.objects.filter(scene=cast.scene).values_list("seq", flat=True))
    assert len(seqs) == len(set(seqs))


def test_an_escape_while_a_chase_runs_tells_the_storyteller_instead_of_failing(cast):
    """K1: one chase at a time in a scene; the round goes on and the storyteller is told."""
    from chases import starting as chases
    from chases.models import Chase

    running = chases.start_chase(
        scene=cast.scene,
        by=cast.storyteller,
        predators=[cast.p["Teddy"]],
        prey=cast.p["Frank"],
        start="escape",
        head_start=3,
    )
    combat = _escape_survives(cast)
    _pursue(cast, combat, "Thug")
    combat = _fresh(combat)
    assert list(Chase.objects.filter(scene=cast.scene)) == [running]
    result = SceneLogEntry.objects.filter(scene=cast.scene, kind="combat").last().text
    assert "Thug pursues Jane" in result and "no chase started" in result
    assert "already running" in result
    assert "No chase started for Jane (head start 2, K4)" in combat.reminders[-1]["text"]
    assert _up(combat) == ("resolve", [str(cast.p["Jane"].pk)])  # the round went on


def test_every_attacker_an_escape_beat_joins_its_chase_with_its_own_lead(cast):
    """D13, K1, K4: the one escape roll beats both attacks; the second attacker joins the
    chase the first started, its Lead the escape's successes left over its own attack."""
    from chases.models import Chase

    combat = _start(cast, ("Jane", "Thug", "Teddy"))
    combat = _roll_all(cast, combat, {"Jane": 1, "Thug": 10, "Teddy": 9})
    _declare(cast, combat, "Jane", "escape")
    _declare(cast, combat, "Thug", "attack", "Jane", weapon="Club")
    _declare(cast, combat, "Teddy", "attack", "Jane")
    # Teddy 7 dice, Jane's escape 7 dice: 3 against 1; the Thug's Club 4 dice.
    _resolve(cast, combat, "Teddy", attack_dice="7 2 2 2 2 2 2", defense_dice="7 8 9 2 2 2 2")
    _pursue(cast, combat, "Teddy")
    _resolve(cast, combat, "Thug", attack_dice="2 2 2 2")  # the same escape's 3 against 0
    _pursue(cast, combat, "Thug")
    combat = _fresh(combat)
    chase = Chase.objects.get(scene=cast.scene, ended_at__isnull=True)
    leads = {p["predator"]: p["lead"] for p in chase.state["pursuits"]}
    assert leads == {f"p{cast.p['Teddy'].pk}": 2, f"p{cast.p['Thug'].pk}": 3}
    assert {s.participant.name for s in chase.sides.all()} == {"Jane", "Teddy", "Thug"}
    assert "joins the chase as another Predator, Lead 3 (K1)" in (
        SceneLogEntry.objects.filter(scene=cast.scene, kind="combat").last().text
    )
    assert not any("No chase started" in r["text"] for r in combat.reminders)


def test_an_attacker_does_not_join_a_chase_that_already_rolled(cast):
    """K1: once the chase from the escape rolled its first round, it has moved on."""
    from chases import running as chases
    from chases.models import Chase

    combat = _start(cast, ("Jane", "Thug", "Teddy"))
    combat = _roll_all(cast, combat, {"Jane": 1, "Thug": 10, "Teddy": 9})
    _declare(cast, combat, "Jane", "escape")
    _declare(cast, combat, "Thug", "attack", "Jane", weapon="Club")
    _declare(cast, combat, "Teddy", "attack", "Jane")
    _resolve(cast, combat, "Teddy", attack_dice="7 2 2 2 2 2 2", defense_dice="7 8 9 2 2 2 2")
    _pursue(cast, combat, "Teddy")
    chase = Chase.objects.get(scene=cast.scene, ended_at__isnull=True)
    chases.chase_round(
        chase=chase,
        by=cast.storyteller,
        dice={"prey": [2] * 7, f"p{cast.p['Teddy'].pk}": [2] * 5},  # Jane's 7, Teddy's 5
    )
    _resolve(cast, combat, "Thug", attack_dice="2 2 2 2")
    _pursue(cast, combat, "Thug")
    combat = _fresh(combat)
    chase.refresh_from_db()
    assert [p["predator"] for p in chase.state["pursuits"]] == [f"p{cast.p['Teddy'].pk}"]
    assert (
        "Thug does not join the chase (A Predator joins a chase only before its first round (K1))"
        in SceneLogEntry.objects.filter(scene=cast.scene, kind="combat").last().text
    )
    assert combat.reminders[-1]["text"].startswith("Thug does not join the chase after Jane")


def _grappled(cast, names=("Teddy", "Frank", "Jane")):
    """Teddy grapples Frank in round 1 (Control 3); round 2 is declared up to Jane."""
    combat = _start(cast, names)
    combat = _roll_all(cast, combat, {"Teddy": 9, "Frank": 1, "Jane": 1})
    _declare(cast, combat, "Frank", "dodge")
    if "Jane" in names:
        _declare(cast, combat, "Jane", "none")
    _declare(cast, combat, "Teddy", "grapple", "Frank")
    # Strength 4 + Brawl 4 = 8 dice, 3 successes; Frank's dodge 3 dice, none: Control 3.
    _resolve(cast, combat, "Teddy", attack_dice="8 9 10 2 2 2 2 2", defense_dice="2 2 2")
    for name in ("Jane", "Frank"):
        if name in names:
            _resolve(cast, combat, name)
    combat_book_keeping(combat=_fresh(combat), by=cast.storyteller)
    combat_next_round(combat=_fresh(combat), by=cast.storyteller)
    # Jane 4+4+10 = 18 resolves first, declares last.
    return _roll_all(cast, _fresh(combat), {"Teddy": 9, "Frank": 1, "Jane": 10})


def test_a_third_party_helps_the_victim_and_control_drops(cast):
    """G7: -1 Control per 2 successes of a helper of the Victim."""
    combat = _grappled(cast)
    _declare(cast, combat, "Frank", "resist")
    _declare(cast, combat, "Teddy", "sustain")
    with pytest.raises(RoundError, match="G5, G7"):
        _declare(cast, combat, "Jane", "assist", "Thug" if False else None)
    _declare(cast, combat, "Jane", "assist", "Frank")
    _resolve(cast, combat, "Jane", attack_dice="7 7 7 7")
    assert _fresh(combat).grapples[0]["control"] == 1


def test_a_third_party_breaks_up_the_grapple_before_either_acts(cast):
    """G5: both grapplers' actions are negated."""
    combat = _grappled(cast)
    _declare(cast, combat, "Frank", "reverse")
    _declare(cast, combat, "Teddy", "sustain")
    _declare(cast, combat, "Jane", "break_up", "Teddy")
    _resolve(cast, combat, "Jane")
    _resolve(cast, combat, "Teddy")
    combat = _fresh(combat)
    assert combat.grapples == []
    assert "negated" in combat.results[-1]["text"]


def test_a_relenting_victim_is_pinned_and_loses_its_next_action_when_released(cast):
    """G5: relent pins; a released Pin costs the Victim its next Main Phase action."""
    combat = _grappled(cast, ("Teddy", "Frank"))
    _declare(cast, combat, "Frank", "relent")
    _declare(cast, combat, "Teddy", "sustain")
    _resolve(cast, combat, "Teddy")
    assert _fresh(combat).grapples[0]["over"] == "pinned"
    _resolve(cast, combat, "Frank")
    combat_book_keeping(combat=_fresh(combat), by=cast.storyteller)
    combat_next_round(combat=_fresh(combat), by=cast.storyteller)
    combat = _roll_all(cast, _fresh(combat), {"Teddy": 9, "Frank": 1})
    with pytest.raises(RoundError, match="G2"):
        _declare(cast, combat, "Frank", "dodge")
    _declare(cast, combat, "Frank", "resist")
    _declare(cast, combat, "Teddy", "release")
    _resolve(cast, combat, "Teddy")
    _resolve(cast, combat, "Frank")
    combat_book_keeping(combat=_fresh(combat), by=cast.storyteller)
    combat_next_round(combat=_fresh(combat), by=cast.storyteller)
    combat = _roll_all(cast, _fresh(combat), {"Teddy": 9, "Frank": 1})
    # Frank has no action in this Main Phase: Teddy declares at once.
    assert _up(combat) == ("declare", [str(cast.p["Teddy"].pk)])


def test_a_single_effect_grapple_spends_the_opening_control(cast):
    """G8: all Control from the opening roll on one effect; the grapple is not sustained."""
    combat = _start(cast, ("Teddy", "Frank"))
    combat = _roll_all(cast, combat, {"Teddy": 9, "Frank": 1})
    _declare(cast, combat, "Frank", "dodge")
    _declare(cast, combat, "Teddy", "grapple", "Frank")
    _resolve(
        cast,
        combat,
        "Teddy",
        attack_dice="8 9 10 2 2 2 2 2",
        defense_dice="2 2 2",
        effect="drop",
        damage_dice="",
        soak_dice="",
    )
    combat = _fresh(combat)
    assert combat.grapples == [] and "drop (G6)" in combat.results[-1]["text"]


def test_a_caught_prey_is_handed_back_to_the_round(cast):
    """K1, D9: the chase's end signal names the round it came from."""
    from types import SimpleNamespace

    from combat.rounds import handback

    combat = _start(cast, ("Jane", "Thug"))
    chase = SimpleNamespace(prey=cast.p["Jane"])
    handback.chase_ended(None, chase=chase, outcome="escaped", origin={"round_id": combat.pk})
    assert _fresh(combat).reminders == []
    handback.chase_ended(None, chase=chase, outcome="caught", origin={"round_id": combat.pk})
    assert "Jane was caught" in _fresh(combat).reminders[0]["text"]
    assert "back in the fight" in SceneLogEntry.objects.filter(scene=cast.scene).last().text


def test_a_haste_attack_meets_the_main_phase_defense_and_stays_uncommitted(cast):
    """D4, D13: Jane dodged in the Main Phase; Teddy's haste attack meets that dodge as the
    second attack on her. D5: a committed haste attack is refused; once declared, the phase's
    last declaration is being resolved and is not changed (issue 19, bug 4)."""
    combat = _start(cast, ("Jane", "Teddy"))
    combat = _roll_all(cast, combat, {"Jane": 1, "Teddy": 10})
    _declare(cast, combat, "Jane", "dodge")
    _declare(cast, combat, "Teddy", "attack", "Jane", haste=1)
    for name in ("Teddy", "Jane"):
        _resolve(cast, combat, name, rng=random.Random(1))
    assert wod_state(_fresh(combat)).phase.name == "haste 1"
    with pytest.raises(RoundError, match="D5"):
        _declare(cast, combat, "Teddy", "attack", "Jane", maneuver="committed")
    _declare(cast, combat, "Teddy", "attack", "Jane")
    with pytest.raises(RoundError, match="D4"):
        _declare(cast, combat, "Teddy", "attack", "Jane", maneuver="committed")
    plan = resolution_preview(_fresh(combat), str(cast.p["Teddy"].pk))
    assert plan["defense_action"] == "dodge"
    assert "attack 2" in plan["defense"]["parts"]


def _typed(cast, combat, name, face_attack, face_defense):
    """Typed dice, one per die of the pools the tablet shows (D1)."""
    plan = resolution_preview(_fresh(combat), str(cast.p[name].pk))
    return {
        "attack_dice": " ".join([face_attack] * plan["attack"]["dice"]),
        "defense_dice": " ".join([face_defense] * plan["defense"]["dice"]),
    }


def test_an_effect_the_result_does_not_allow_is_skipped_and_the_roll_stands(cast):
    """G3: the storyteller chose Clinch before the roll; the Victim wins the roll, so no
    effect follows. The roll stands (logged, Control lost), it is not thrown away."""
    combat = _start(cast, ("Teddy", "Frank"))
    combat = _roll_all(cast, combat, {"Teddy": 9, "Frank": 1})
    _declare(cast, combat, "Frank", "dodge")
    _declare(cast, combat, "Teddy", "grapple", "Frank")
    _resolve(cast, combat, "Teddy", **_typed(cast, combat, "Teddy", "9", "2"))
    assert _fresh(combat).grapples
    _resolve(cast, combat, "Frank")
    combat_book_keeping(combat=_fresh(combat), by=cast.storyteller)
    combat_next_round(combat=_fresh(combat), by=cast.storyteller)
    combat = _roll_all(cast, _fresh(combat), {"Teddy": 9, "Frank": 1})
    _declare(cast, combat, "Frank", "resist")
    _declare(cast, combat, "Teddy", "sustain")
    before = _fresh(combat).grapples[0]["control"]
    _resolve(cast, combat, "Teddy", effect="clinch", **_typed(cast, combat, "Teddy", "2", "9"))
    combat = _fresh(combat)
    assert "no clinch" in combat.results[-1]["text"]
    assert len(combat.results[-1]["rolls"]) == 2
    assert not combat.grapples or combat.grapples[0]["control"] < before


def _snapshot(cast, combat):
    c = _fresh(combat)
    log = SceneLogEntry.objects.filter(scene=cast.scene).count()
    damage = {n: current_values(cast.p[n].character)["damage"] for n in ("Teddy", "Thug")}
    return (c.state, c.work, c.grapples, c.results, c.npc_damage, log, damage)


def test_typed_dice_other_than_the_pool_are_refused_and_change_nothing(cast):
    """D1: typed dice are the whole pool the tablet shows, no fewer and no more; the refusal
    names the pool's size and whose it is, and nothing is rolled, spent or logged."""
    combat = _start(cast, ("Teddy", "Frank"))
    combat = _roll_all(cast, combat, {"Teddy": 9, "Frank": 1})
    _declare(cast, combat, "Frank", "dodge")
    _declare(cast, combat, "Teddy", "grapple", "Frank")
    before = _snapshot(cast, combat)
    with pytest.raises(RoundError) as refused:
        _resolve(cast, combat, "Teddy", attack_dice="8 9 10", defense_dice="2 2 2")
    assert str(refused.value) == ("Teddy's pool is 8 dice; 3 typed: type 8 or leave it blank (D1)")
    with pytest.raises(RoundError, match=r"Teddy's pool is 8 dice; 9 typed: .* \(D1\)"):
        _resolve(cast, combat, "Teddy", attack_dice="8 9 10 2 2 2 2 2 2")
    with pytest.raises(RoundError, match=r"Frank's pool is 3 dice; 1 typed: .* \(D1\)"):
        _resolve(cast, combat, "Teddy", attack_dice="8 9 10 2 2 2 2 2", defense_dice="2")
    assert _snapshot(cast, combat) == before
    _resolve(cast, combat, "Teddy", attack_dice="8 9 10 2 2 2 2 2", defense_dice="2 2 2")
    assert _fresh(combat).grapples[0]["control"] == 3


def test_typed_damage_and_soak_dice_must_be_their_pools(cast):
    """D1 with D11, D12: the damage pool (Strength + weapon + successes over one) and the
    soak pool are typed whole too; a wrong count refuses the whole resolution, attack
    included."""
    combat = _start(cast, ("Teddy", "Thug"))
    combat = _roll_all(cast, combat, {"Teddy": 9, "Thug": 1})
    _declare(cast, combat, "Thug", "none")
    _declare(cast, combat, "Teddy", "attack", "Thug")
    before = _snapshot(cast, combat)
    attack = "8 8 8 2 2 2 2"  # 7 dice, 3 successes: damage Strength 4 + (3 - 1) = 6 dice
    damage = "9 9 2 2 2 2"
    with pytest.raises(RoundError, match=r"Teddy's damage pool is 6 dice; 2 typed: .* \(D1\)"):
        _resolve(cast, combat, "Teddy", attack_dice=attack, damage_dice="9 9")
    with pytest.raises(RoundError, match=r"Thug's soak pool is 2 dice; 1 typed: .* \(D1\)"):
        _resolve(cast, combat, "Teddy", attack_dice=attack, damage_dice=damage, soak_dice="1")
    assert _snapshot(cast, combat) == before
    _resolve(cast, combat, "Teddy", attack_dice=attack, damage_dice=damage, soak_dice="6 2")
    assert current_values(cast.p["Thug"].character)["damage"] == 1


def test_a_typed_willpower_roll_must_be_the_whole_pool(cast):
    """D1 with D16: an abort typed with fewer dice than Willpower is refused before anything
    is claimed: the same post with the right dice then goes through."""
    combat = _start(cast, ("Jane", "Thug"))
    combat = _roll_all(cast, combat, {"Jane": 10, "Thug": 1})
    _declare(cast, combat, "Thug", "attack", "Jane", weapon="Club")
    _declare(cast, combat, "Jane", "attack", "Thug")
    before = _fresh(combat).state
    with pytest.raises(RoundError, match=r"Jane's Willpower pool is 5 dice; 1 typed: .* \(D1\)"):
        combat_abort(
            combat=combat, by=cast.users["Jane"], participant=cast.p["Jane"], dice="9", key="a1"
        )
    assert _fresh(combat).state == before
    combat_abort(
        combat=combat,
        by=cast.users["Jane"],
        participant=cast.p["Jane"],
        dice="9 2 2 2 2",
        key="a1",
    )
    assert wod_state(_fresh(combat)).declaration(str(cast.p["Jane"].pk)).action == "pending"
